"""Looking up a named entry of one of the renderer's tables (instruments, styles, recipes, corpora)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from timingbench.errors import ParameterError

V = TypeVar("V")


def lookup(table: Mapping[str, V], name: str, what: str) -> V:
    """The entry ``name`` of ``table``.

    Parameters
    ----------
    table : mapping of str to any
        Name -> entry.
    name : str
        The name asked for.
    what : str
        What the table holds, for the error message (``"instrument"``).

    Returns
    -------
    entry : any
        ``table[name]``.

    Raises
    ------
    ParameterError
        If ``name`` is not a key of ``table``; the message lists the keys, sorted.
    """
    try:
        return table[name]
    except KeyError:
        raise ParameterError(f"unknown {what} {name!r}; choose one of {sorted(table)}") from None

"""Plain-text helpers for messages and legends."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["SHORTLIST_MOST", "shortlist"]

#: How many names a message lists before it counts the rest.
SHORTLIST_MOST = 10


def shortlist(names: Sequence[object], most: int = SHORTLIST_MOST, sep: str = ", ", empty: str = "none") -> str:
    """The first ``most`` names joined by ``sep``, then how many were left out.

    Parameters
    ----------
    names : sequence
        The names (anything with a ``str``), in the order to show.
    most : int
        How many to show (at least 1).
    sep : str
        Separator between names.
    empty : str
        What an empty list reads as.

    Returns
    -------
    text : str
        E.g. ``"a.wav, b.wav ... and 3 more"``.

    Examples
    --------
    >>> shortlist(["a", "b", "c"], most=2)
    'a, b ... and 1 more'
    """
    if not names:
        return empty
    most = max(1, int(most))
    shown = sep.join(str(n) for n in names[:most])
    return shown + (f" ... and {len(names) - most} more" if len(names) > most else "")

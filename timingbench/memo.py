"""Per-clip memoisation whose keys are built from the constants the computation reads.

The detectors and the identity rules measure intermediate statistics that re-scoring (the
sensitivity sweep, the chance control, ``explain``) asks for again and again on the same
clip. :func:`memoised` computes such a value once per owner (a feature bank or a clip's
family evidence, which hold the memo) and key. The key is not written by hand: it is the
computation's name, its declared ``reads`` of the parameter set with their values, and the
non-constant inputs. The computation receives the parameters through a :class:`ParamsView`
that refuses every other field, so a computation that reads a constant its key lacks fails
at once (:class:`~timingbench.errors.MemoKeyError`) instead of returning a stale value.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any, TypeVar, cast

from timingbench.errors import MemoKeyError

P = TypeVar("P")
T = TypeVar("T")

#: Whether in-memory memos keep values (switched off only to time the un-memoised path).
_MEMO_ON = [True]


def memo_on() -> bool:
    """Whether in-memory memos (:class:`MemoTable`) keep values."""
    return _MEMO_ON[0]


@contextlib.contextmanager
def memo_disabled() -> Iterator[None]:
    """Within the block every in-memory memo recomputes its value (for speed comparisons)."""
    _MEMO_ON[0] = False
    try:
        yield
    finally:
        _MEMO_ON[0] = True


class ParamsView:
    """A parameter set seen through the fields a memoised computation declared it reads.

    Parameters
    ----------
    params : Params or ParamsView
        The parameter set (a view narrows further: its fields must be among the outer
        view's).
    reads : iterable of str
        The fields that may be read; ``sub.field`` allows one field of a nested parameter
        set (``sub`` is then seen through a view of its own).
    name : str
        The computation's name (for the error).
    """

    __slots__ = ("_name", "_params", "_reads")

    def __init__(self, params: Any, reads: Iterable[str], name: str) -> None:
        object.__setattr__(self, "_params", params)
        object.__setattr__(self, "_reads", frozenset(reads))
        object.__setattr__(self, "_name", name)

    def __getattr__(self, field: str) -> Any:
        if field in self._reads:
            return getattr(self._params, field)
        nested = [r.split(".", 1)[1] for r in self._reads if r.startswith(field + ".")]
        if nested:
            return ParamsView(getattr(self._params, field), nested, self._name)
        raise MemoKeyError(f"memoised computation {self._name!r} reads {params_class(self._params)}.{field}, "
                           f"which its key lacks (declared reads: {sorted(self._reads)})")

    def __setattr__(self, field: str, value: Any) -> None:
        raise AttributeError("parameter sets are read-only")


def params_class(params: Any) -> str:
    """Name of the parameter set's class (through any views)."""
    while isinstance(params, ParamsView):
        params = object.__getattribute__(params, "_params")
    return type(params).__name__


def _value(params: Any, field: str) -> Any:
    for part in field.split("."):
        params = getattr(params, part)
    return params


def _frozen(value: Any) -> Hashable:
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    return cast(Hashable, value)


def memo_key(name: str, params: Any, reads: Iterable[str], inputs: tuple[Hashable, ...]) -> tuple[Hashable, ...]:
    """The key of :func:`memoised`: name, parameter class, each read field with its value, inputs.

    Raises
    ------
    AttributeError
        If ``reads`` names a field the parameter set does not have.
    MemoKeyError
        If ``params`` is a view that does not allow a field of ``reads``.
    """
    fields = tuple(reads)
    return (name, params_class(params), *((f, _frozen(_value(params, f))) for f in fields), *inputs)


def memoised(owner: Any, name: str, params: P, reads: Iterable[str], compute: Callable[[P], T],
             *inputs: Hashable) -> T:
    """``compute(view)`` once per ``owner`` and key; the view allows only ``reads``.

    Parameters
    ----------
    owner : object
        Holds the memo: anything with a ``memo(key, fn)`` method (a
        :class:`~timingbench.features.FeatureBank`, a clip's family evidence); without
        one, ``compute`` simply runs.
    name : str
        The computation's name (part of the key).
    params : Params
        The parameter set the computation reads.
    reads : iterable of str
        The fields of ``params`` the computation reads (their values are part of the key).
    compute : callable
        ``compute(params_view) -> value``; must not depend on anything else that varies
        between calls on one owner, besides ``inputs``.
    *inputs : hashable
        The computation's other inputs (times, frames, names), part of the key.

    Returns
    -------
    value : T

    Raises
    ------
    MemoKeyError
        If ``compute`` reads a field of ``params`` that ``reads`` does not declare.
    """
    fields = tuple(reads)
    key = memo_key(name, params, fields, inputs)
    view = cast(P, ParamsView(params, fields, name))
    memo = getattr(owner, "memo", None)
    if memo is None:
        return compute(view)
    return cast(T, memo(key, lambda: compute(view)))


def persisted(owner: Any, name: str, params: P, reads: Iterable[str], compute: Callable[[P], T],
              *inputs: Hashable) -> T:
    """:func:`memoised`, kept by ``owner.derived`` (a feature bank: on disk beside the cached bank).

    The value must be picklable; the key is a digest of :func:`memo_key`.
    """
    fields = tuple(reads)
    digest = hashlib.sha256(repr(memo_key(name, params, fields, inputs)).encode()).hexdigest()[:16]
    view = cast(P, ParamsView(params, fields, name))
    return cast(T, owner.derived(f"{name}-{digest}", lambda _owner: compute(view)))

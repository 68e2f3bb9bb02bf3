"""Per-clip memoisation whose keys are built from the constants the computation reads, and
every process-level cache of the package.

The detectors and the identity rules measure intermediate statistics that re-scoring (the
sensitivity sweep, the chance control, ``explain``) asks for again and again on the same
clip. :func:`memoised` computes such a value once per owner (a feature bank or a clip's
family evidence, which hold the memo) and key. The key is not written by hand: it is the
computation's name, its declared ``reads`` of the parameter set with their values, and the
non-constant inputs. The computation receives the parameters through a :class:`ParamsView`
that refuses every other field, so a computation that reads a constant its key lacks fails
at once (:class:`~timingbench.errors.MemoKeyError`) instead of returning a stale value.

Process-level caches (loaded models, filter banks, recently used feature banks, the
parameter sets built per configuration) live here too, and nowhere else:
:func:`process_cache` (a function's results), :func:`object_table` (values per live
object) and :func:`lru_table` (a bounded table); :func:`clear_process_caches` empties
them all.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator
from pathlib import Path
from typing import Any, Generic, TypeVar, cast

from timingbench.errors import MemoKeyError

P = TypeVar("P")
T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")

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


# ----------------------------------------------------------------------------- process-level caches

_FUNCTION_CACHES: list[Any] = []
_OBJECT_TABLES: dict[str, weakref.WeakKeyDictionary[Any, Any]] = {}
_LRU_TABLES: dict[str, LruTable[Any, Any]] = {}
_TABLES_LOCK = threading.Lock()


def process_cache(maxsize: int) -> Callable[[Callable[..., T]], functools._lru_cache_wrapper[T]]:
    """``functools.lru_cache(maxsize)``, registered so that :func:`clear_process_caches` empties it.

    For what does not change within a process: loaded models, filter banks of a grid.
    """
    def wrap(fn: Callable[..., T]) -> functools._lru_cache_wrapper[T]:
        cached = functools.lru_cache(maxsize=maxsize)(fn)
        _FUNCTION_CACHES.append(cached)
        return cached
    return wrap


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file's bytes (64 hex digits), hashed once per file version in a process.

    Memoised on the resolved path, size and modification time (ns), so a rewritten file is
    hashed again. The one file digest of the package (model weights, tarballs).
    """
    p = Path(path)
    st = p.stat()
    return _file_sha256(str(p.resolve()), st.st_size, st.st_mtime_ns)


@process_cache(32)
def _file_sha256(path_str: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path_str, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def object_table(name: str) -> weakref.WeakKeyDictionary[Any, Any]:
    """The process's table ``name`` of values per live object (an entry goes with its key)."""
    with _TABLES_LOCK:
        return _OBJECT_TABLES.setdefault(name, weakref.WeakKeyDictionary())


class LruTable(Generic[K, V]):
    """A thread-safe table that keeps the ``size`` most recently used entries.

    Parameters
    ----------
    size : int
        Entries kept (a cache size, not a threshold).
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The entry of ``key`` (now the most recently used), or None."""
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
            return hit

    def put(self, key: K, value: V) -> None:
        """Keep ``value`` under ``key``, dropping the least recently used entries beyond the size."""
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._items.clear()


def lru_table(name: str, size: int) -> LruTable[Any, Any]:
    """The process's bounded table ``name`` (made with ``size`` entries on first use)."""
    with _TABLES_LOCK:
        return _LRU_TABLES.setdefault(name, LruTable(size))


def clear_process_caches() -> None:
    """Empty every process-level cache (models are loaded again, banks rebuilt or re-read)."""
    for fn in _FUNCTION_CACHES:
        fn.cache_clear()
    with _TABLES_LOCK:
        for table in _OBJECT_TABLES.values():
            table.clear()
        for lru in _LRU_TABLES.values():
            lru.clear()

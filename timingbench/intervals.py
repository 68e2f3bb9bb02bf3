"""The interval core: validation, unions, overlap measures, matching, midpoint errors.

Every function takes intervals in seconds as an array of shape ``(n, 2)`` whose rows are
``[start, end]`` with ``start <= end``. Inputs are validated (:func:`validate_intervals`)
and then rounded to :data:`timingbench.convert.TIME_DECIMALS` decimals (1 microsecond),
so that intervals placed exactly on each other's edges touch instead of overlapping or
leaving a gap by floating-point noise. Overlap ratios are rounded to the same number of
decimals before they are compared with an IoU threshold, so a pair whose IoU is exactly
the threshold on paper is matched.

Sets of intervals are compared through their *unions* (a set is a subset of the time
line, not a multiset). A set whose union has zero total length -- no intervals, or only
zero-length ones such as the empty-prediction sentinel ``[[0, 0]]`` -- is *empty*:

- :func:`union_iou` of two empty sets is 1 (nothing was asked for and nothing was given)
  and of exactly one empty set is 0;
- :func:`generalized_iou` of two empty sets is 1 and of exactly one empty set is -1 (the
  empty-prediction convention of TAG-Bench).

The ``*_batch`` functions compute the same quantities for many query sets at once; the
sets are given as one flat ``(N, 2)`` array plus ``offsets`` of shape ``(Q + 1,)``
(set ``q`` is ``flat[offsets[q]:offsets[q + 1]]``), and the work runs in compiled
kernels. They agree with the single-set functions (tests check this on random sets).
"""

from __future__ import annotations

from typing import Literal

import numba
import numpy as np
import numpy.typing as npt
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching

from timingbench.convert import TIME_DECIMALS, round_time
from timingbench.errors import ParameterError

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
CountDiagnostic = Literal["exact", "under", "over"]

#: Scale of the rounding grid used inside compiled kernels (same as ``np.round``).
_SCALE = 10.0**TIME_DECIMALS

__all__ = [
    "validate_intervals",
    "validate_offsets",
    "merge_intervals",
    "total_length",
    "interval_iou",
    "iou_matrix",
    "union_iou",
    "generalized_iou",
    "match_greedy",
    "match_optimal",
    "midpoint_errors",
    "count_diagnostics",
    "union_iou_batch",
    "union_and_generalized_iou_batch",
    "generalized_iou_batch",
    "midpoint_mae_batch",
    "match_greedy_batch",
]


# --------------------------------------------------------------------------- validation


def validate_intervals(intervals: npt.ArrayLike, *, name: str = "intervals") -> FloatArray:
    """Check and convert intervals to a float64 array of shape ``(n, 2)``.

    Parameters
    ----------
    intervals : array_like, shape (n, 2)
        Rows ``[start, end]`` in seconds. An empty sequence gives shape ``(0, 2)``.
    name : str
        What the intervals are, used in error messages (``"reference"``, ``"row 12"``).

    Returns
    -------
    intervals : np.ndarray of float64, shape (n, 2)
        A new array (the input is never modified).

    Raises
    ------
    ParameterError
        If the array does not have shape ``(n, 2)``, holds a non-numeric, NaN or infinite
        time, or has a row with ``start > end``; the message names the first offending
        row index.
    """
    try:
        arr = np.array(intervals, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError(
            f"{name}: intervals must be numbers in seconds shaped (n, 2) like [[start, end], ...]"
        ) from None
    if arr.size == 0:
        return np.zeros((0, 2), dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ParameterError(
            f"{name}: intervals must have shape (n, 2) as [[start, end], ...], got shape "
            f"{arr.shape}"
        )
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ParameterError(
            f"{name}: interval {i} = {arr[i].tolist()} has a non-finite time; times must be "
            "finite seconds"
        )
    rev = arr[:, 0] > arr[:, 1]
    if rev.any():
        i = int(np.flatnonzero(rev)[0])
        raise ParameterError(
            f"{name}: interval {i} = {arr[i].tolist()} starts after it ends (start > end)"
        )
    return arr


def validate_offsets(offsets: npt.ArrayLike, *, n_rows: int, name: str = "offsets") -> IntArray:
    """Check the offsets of a batch of interval sets.

    Parameters
    ----------
    offsets : array_like of int, shape (q + 1,)
        Set ``k`` holds rows ``offsets[k]:offsets[k + 1]`` of the flat interval array.
    n_rows : int
        Number of rows of the flat interval array.
    name : str
        Used in error messages.

    Returns
    -------
    offsets : np.ndarray of int64, shape (q + 1,)

    Raises
    ------
    ParameterError
        If offsets are not one-dimensional, do not start at 0 and end at ``n_rows``, or
        decrease somewhere (the message names the index).
    """
    off = np.asarray(offsets)
    if off.ndim != 1 or off.size < 1 or not np.issubdtype(off.dtype, np.integer):
        raise ParameterError(f"{name}: offsets must be a 1-D integer array of length q + 1")
    off = off.astype(np.int64)
    if off[0] != 0 or off[-1] != n_rows:
        raise ParameterError(
            f"{name}: offsets must start at 0 and end at the number of rows ({n_rows}), got "
            f"{int(off[0])}..{int(off[-1])}"
        )
    dec = np.diff(off) < 0
    if dec.any():
        i = int(np.flatnonzero(dec)[0])
        raise ParameterError(f"{name}: offsets decrease at index {i + 1}")
    return off


def _prepared(intervals: npt.ArrayLike, name: str) -> FloatArray:
    return round_time(validate_intervals(intervals, name=name))


def _single(interval: npt.ArrayLike, name: str) -> tuple[float, float]:
    arr = np.asarray(interval, dtype=np.float64) if not isinstance(interval, np.ndarray) else interval
    if arr.shape == (2,):
        arr = arr.reshape(1, 2)
    v = _prepared(arr, name)
    if v.shape != (1, 2):
        raise ParameterError(f"{name}: expected one interval [start, end], got shape {v.shape}")
    return float(v[0, 0]), float(v[0, 1])


def _check_threshold(iou_threshold: float) -> float:
    t = float(iou_threshold)
    if not np.isfinite(t) or t <= 0.0 or t > 1.0:
        raise ParameterError(
            f"iou_threshold must lie in (0, 1], got {iou_threshold!r}; an IoU of 0 would "
            "match intervals that do not overlap"
        )
    return t


# --------------------------------------------------------------------------- unions


def _merge_sorted(arr: FloatArray) -> FloatArray:
    order = np.lexsort((arr[:, 1], arr[:, 0]))
    s = arr[order, 0]
    e = arr[order, 1]
    reach = np.maximum.accumulate(e)
    new = np.empty(s.size, dtype=bool)
    new[0] = True
    new[1:] = s[1:] > reach[:-1]
    starts_idx = np.flatnonzero(new)
    out = np.empty((starts_idx.size, 2), dtype=np.float64)
    out[:, 0] = s[starts_idx]
    out[:, 1] = np.maximum.reduceat(e, starts_idx)
    return out


def merge_intervals(intervals: npt.ArrayLike) -> FloatArray:
    """Union of a set of intervals as sorted, disjoint intervals.

    Overlapping and touching intervals (``end == next start`` after rounding) are merged.
    Zero-length intervals are kept unless another interval covers them.

    Parameters
    ----------
    intervals : array_like, shape (n, 2)
        Intervals in seconds, in any order.

    Returns
    -------
    merged : np.ndarray of float64, shape (k, 2)
        Sorted by start, pairwise disjoint and non-touching, ``k <= n``.

    Raises
    ------
    ParameterError
        If the intervals are malformed (see :func:`validate_intervals`).
    """
    arr = _prepared(intervals, "intervals")
    if arr.shape[0] == 0:
        return arr
    return _merge_sorted(arr)


def total_length(intervals: npt.ArrayLike) -> float:
    """Total length in seconds of the union of a set of intervals.

    Parameters
    ----------
    intervals : array_like, shape (n, 2)
        Intervals in seconds.

    Returns
    -------
    length : float
        Seconds covered by at least one interval (overlaps counted once).

    Raises
    ------
    ParameterError
        If the intervals are malformed.
    """
    m = merge_intervals(intervals)
    return float(round_time(np.sum(m[:, 1] - m[:, 0])))


# --------------------------------------------------------------------------- pairwise IoU


def interval_iou(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """Intersection over union of two single intervals.

    Parameters
    ----------
    a, b : array_like, shape (2,) or (1, 2)
        ``[start, end]`` in seconds.

    Returns
    -------
    iou : float
        In ``[0, 1]``; 0 when the union has zero length (two points have no extent).

    Raises
    ------
    ParameterError
        If either argument is not one valid interval.
    """
    sa, ea = _single(a, "a")
    sb, eb = _single(b, "b")
    inter = max(0.0, min(ea, eb) - max(sa, sb))
    union = (ea - sa) + (eb - sb) - inter
    if union <= 0.0:
        return 0.0
    return float(inter / union)


def _iou_matrix(r: FloatArray, e: FloatArray) -> FloatArray:
    inter = np.minimum(r[:, None, 1], e[None, :, 1]) - np.maximum(r[:, None, 0], e[None, :, 0])
    np.maximum(inter, 0.0, out=inter)
    union = (r[:, None, 1] - r[:, None, 0]) + (e[None, :, 1] - e[None, :, 0]) - inter
    out = np.zeros_like(inter)
    np.divide(inter, union, out=out, where=union > 0.0)
    return out


def iou_matrix(ref: npt.ArrayLike, est: npt.ArrayLike) -> FloatArray:
    """Pairwise IoU between every reference and every estimated interval.

    Parameters
    ----------
    ref : array_like, shape (n, 2)
        Reference intervals in seconds.
    est : array_like, shape (m, 2)
        Estimated intervals in seconds.

    Returns
    -------
    iou : np.ndarray of float64, shape (n, m)
        ``iou[i, j]`` is :func:`interval_iou` of ``ref[i]`` and ``est[j]``.

    Raises
    ------
    ParameterError
        If either set is malformed.
    """
    return _iou_matrix(_prepared(ref, "ref"), _prepared(est, "est"))


# --------------------------------------------------------------------------- set measures


def _union_terms(r: FloatArray, e: FloatArray) -> tuple[float, float, float, float]:
    """Lengths |R|, |E|, |R u E| and the hull length of the positive-length parts."""
    mr = _merge_sorted(r) if r.shape[0] else r
    me = _merge_sorted(e) if e.shape[0] else e
    lr = float(np.sum(mr[:, 1] - mr[:, 0]))
    le = float(np.sum(me[:, 1] - me[:, 0]))
    both = np.concatenate([mr, me])
    mb = _merge_sorted(both) if both.shape[0] else both
    lu = float(np.sum(mb[:, 1] - mb[:, 0]))
    pos = both[both[:, 1] > both[:, 0]]
    hull = float(pos[:, 1].max() - pos[:, 0].min()) if pos.shape[0] else 0.0
    return lr, le, lu, hull


def _round1(x: float) -> float:
    return float(np.round(x, TIME_DECIMALS))


def union_iou(ref: npt.ArrayLike, est: npt.ArrayLike) -> float:
    """IoU of the unions of two interval sets (TAG-Bench's one-to-many IoU).

    ``|U(ref) & U(est)| / |U(ref) | U(est)|``, lengths in seconds. An estimate must cover
    every reference occurrence, and nothing else, to score 1.

    Parameters
    ----------
    ref : array_like, shape (n, 2)
        Reference intervals in seconds (overlaps allowed).
    est : array_like, shape (m, 2)
        Estimated intervals in seconds.

    Returns
    -------
    iou : float
        In ``[0, 1]``. Both unions empty (zero total length) -> 1.0; exactly one empty
        -> 0.0.

    Raises
    ------
    ParameterError
        If either set is malformed.
    """
    lr, le, lu, _ = _union_terms(_prepared(ref, "ref"), _prepared(est, "est"))
    return _union_iou_from_terms(lr, le, lu)


def _union_iou_from_terms(lr: float, le: float, lu: float) -> float:
    lr, le, lu = _round1(lr), _round1(le), _round1(lu)
    if lr == 0.0 and le == 0.0:
        return 1.0
    if lr == 0.0 or le == 0.0:
        return 0.0
    inter = max(0.0, _round1(lr + le - lu))
    return float(inter / lu)


def generalized_iou(ref: npt.ArrayLike, est: npt.ArrayLike) -> float:
    """Generalized IoU of the unions of two interval sets.

    ``gIoU = IoU - |C \\ (R u E)| / |C|`` where ``R``, ``E`` are the unions and ``C`` is
    the smallest single interval containing both (zero-length intervals ignored). Unlike
    IoU it keeps falling as a non-overlapping estimate moves away from the reference.
    Because ``C`` is one interval, the gaps between occurrences of a multi-interval
    reference count against every estimate: an exact answer to a reference with gaps
    scores ``|R| / |C|``, not 1 (TAG-Bench reports one-to-many gIoU negative for every
    system; this is part of why). Arguments and errors as :func:`union_iou`.

    Returns
    -------
    giou : float
        In ``[-1, 1]`` and never above :func:`union_iou`. Empty-prediction convention:
        exactly one of the two unions empty (zero total length) -> -1.0; both empty ->
        1.0.
    """
    lr, le, lu, hull = _union_terms(_prepared(ref, "ref"), _prepared(est, "est"))
    return _giou_from_terms(lr, le, lu, hull)


def _giou_from_terms(lr: float, le: float, lu: float, hull: float) -> float:
    lr, le, lu, hull = _round1(lr), _round1(le), _round1(lu), _round1(hull)
    if lr == 0.0 and le == 0.0:
        return 1.0
    if lr == 0.0 or le == 0.0:
        return -1.0
    inter = max(0.0, _round1(lr + le - lu))
    return float(inter / lu - (hull - lu) / hull)


# --------------------------------------------------------------------------- matching


def _candidates(ref: npt.ArrayLike, est: npt.ArrayLike, iou_threshold: float) -> tuple[FloatArray, BoolArray]:
    """The IoU matrix rounded to ``TIME_DECIMALS`` and the mask of pairs that may match at the threshold."""
    t = _check_threshold(iou_threshold)
    m = np.round(iou_matrix(ref, est), TIME_DECIMALS)
    return m, (m >= t) & (m > 0.0)


def _greedy_pairs(m: FloatArray, hits: BoolArray) -> list[tuple[int, int]]:
    ii, jj = np.nonzero(hits)
    if ii.size == 0:
        return []
    order = np.lexsort((jj, ii, -m[ii, jj]))
    used_r: set[int] = set()
    used_e: set[int] = set()
    out: list[tuple[int, int]] = []
    for k in order:
        i, j = int(ii[k]), int(jj[k])
        if i in used_r or j in used_e:
            continue
        used_r.add(i)
        used_e.add(j)
        out.append((i, j))
    out.sort()
    return out


def match_greedy(
    ref: npt.ArrayLike, est: npt.ArrayLike, *, iou_threshold: float
) -> list[tuple[int, int]]:
    """Greedy one-to-one matching by descending IoU (MGBench span matching).

    Pairs with ``IoU >= iou_threshold`` (IoU rounded to ``TIME_DECIMALS`` decimals) are
    taken in order of decreasing IoU -- ties broken by reference index, then estimate
    index -- and a pair is kept when neither interval is already matched.

    Parameters
    ----------
    ref : array_like, shape (n, 2)
        Reference intervals in seconds.
    est : array_like, shape (m, 2)
        Estimated intervals in seconds.
    iou_threshold : float
        Minimum IoU of a match, in ``(0, 1]``.

    Returns
    -------
    matches : list of (int, int)
        ``(ref_index, est_index)`` pairs sorted by reference index.

    Raises
    ------
    ParameterError
        If the sets are malformed or the threshold is outside ``(0, 1]``.
    """
    return _greedy_pairs(*_candidates(ref, est, iou_threshold))


def match_optimal(
    ref: npt.ArrayLike, est: npt.ArrayLike, *, iou_threshold: float
) -> list[tuple[int, int]]:
    """Maximum-cardinality one-to-one matching at an IoU threshold.

    The largest set of disjoint pairs with ``IoU >= iou_threshold`` (IoU rounded to
    ``TIME_DECIMALS`` decimals), as ``mir_eval.util.match_events`` builds for events in
    a window (Hopcroft-Karp through ``scipy.sparse.csgraph``). Which maximum matching is
    returned when several exist is unspecified; its size is not. Arguments, result (pairs
    sorted by reference index) and errors as :func:`match_greedy`.
    """
    _, hits = _candidates(ref, est, iou_threshold)
    if not hits.any():
        return []
    match = maximum_bipartite_matching(csr_matrix(hits.astype(np.int8)), perm_type="column")
    return [(int(i), int(j)) for i, j in enumerate(match) if j >= 0]


# --------------------------------------------------------------------------- errors, counts


def midpoint_errors(ref: npt.ArrayLike, est: npt.ArrayLike) -> FloatArray:
    """Absolute midpoint error of each reference interval to its nearest estimate.

    For reference midpoint ``c_i`` and estimated midpoints ``c'_j``, the error is
    ``min_j |c_i - c'_j|`` (TAG-Bench's MAE: every reference is matched to the nearest
    predicted midpoint, estimates may be reused).

    Parameters
    ----------
    ref : array_like, shape (n, 2)
        Reference intervals in seconds.
    est : array_like, shape (m, 2)
        Estimated intervals in seconds.

    Returns
    -------
    errors : np.ndarray of float64, shape (n,) or (0,)
        Seconds, rounded to ``TIME_DECIMALS``. Empty (shape ``(0,)``) when there is no
        estimate: no nearest match exists and the query does not enter an MAE mean.

    Raises
    ------
    ParameterError
        If either set is malformed.
    """
    r = _prepared(ref, "ref")
    e = _prepared(est, "est")
    if e.shape[0] == 0 or r.shape[0] == 0:
        return np.zeros(0, dtype=np.float64)
    cr = (r[:, 0] + r[:, 1]) / 2.0
    ce = (e[:, 0] + e[:, 1]) / 2.0
    return round_time(np.min(np.abs(cr[:, None] - ce[None, :]), axis=1))


def count_diagnostics(n_ref: int, n_est: int) -> CountDiagnostic:
    """Compare the number of predicted intervals with the number of reference intervals.

    Parameters
    ----------
    n_ref : int
        Number of reference intervals (>= 0).
    n_est : int
        Number of predicted intervals (>= 0; 0 for a parsing failure).

    Returns
    -------
    diagnostic : {"exact", "under", "over"}
        ``"under"`` when fewer intervals were predicted than exist, ``"over"`` when more.

    Raises
    ------
    ParameterError
        If a count is negative or not a whole number.
    """
    for nm, v in (("n_ref", n_ref), ("n_est", n_est)):
        if isinstance(v, bool) or int(v) != v or v < 0:
            raise ParameterError(f"{nm} must be a non-negative whole number, got {v!r}")
    if n_est == n_ref:
        return "exact"
    return "under" if n_est < n_ref else "over"


# --------------------------------------------------------------------------- batch kernels


@numba.njit(cache=True)
def _k_merge_len(buf: FloatArray, n: int) -> tuple[float, float, float]:
    """Length of the union of buf[:n] (sorted in place) and the hull of positive parts."""
    if n == 0:
        return 0.0, np.inf, -np.inf
    order = np.argsort(buf[:n, 0], kind="mergesort")
    total = 0.0
    lo = np.inf
    hi = -np.inf
    cs = buf[order[0], 0]
    ce = buf[order[0], 1]
    for k in range(1, n):
        s = buf[order[k], 0]
        e = buf[order[k], 1]
        if s > ce:
            total += ce - cs
            if ce > cs:
                lo = min(lo, cs)
                hi = max(hi, ce)
            cs = s
            ce = e
        elif e > ce:
            ce = e
    total += ce - cs
    if ce > cs:
        lo = min(lo, cs)
        hi = max(hi, ce)
    return total, lo, hi


@numba.njit(cache=True)
def _k_union_terms(
    ref: FloatArray, roff: IntArray, est: FloatArray, eoff: IntArray
) -> FloatArray:
    q = roff.size - 1
    out = np.empty((q, 4), dtype=np.float64)
    maxn = 0
    for k in range(q):
        n = (roff[k + 1] - roff[k]) + (eoff[k + 1] - eoff[k])
        if n > maxn:
            maxn = n
    buf = np.empty((max(maxn, 1), 2), dtype=np.float64)
    for k in range(q):
        nr = roff[k + 1] - roff[k]
        ne = eoff[k + 1] - eoff[k]
        for i in range(nr):
            buf[i, 0] = ref[roff[k] + i, 0]
            buf[i, 1] = ref[roff[k] + i, 1]
        lr, _, _ = _k_merge_len(buf, nr)
        for i in range(ne):
            buf[nr + i, 0] = est[eoff[k] + i, 0]
            buf[nr + i, 1] = est[eoff[k] + i, 1]
        lu, lo, hi = _k_merge_len(buf, nr + ne)
        for i in range(ne):
            buf[i, 0] = est[eoff[k] + i, 0]
            buf[i, 1] = est[eoff[k] + i, 1]
        le, _, _ = _k_merge_len(buf, ne)
        out[k, 0] = lr
        out[k, 1] = le
        out[k, 2] = lu
        out[k, 3] = hi - lo if hi > lo else 0.0
    return out


def _batch_inputs(
    ref: npt.ArrayLike, ref_offsets: npt.ArrayLike, est: npt.ArrayLike, est_offsets: npt.ArrayLike
) -> tuple[FloatArray, IntArray, FloatArray, IntArray]:
    r = _prepared(ref, "ref")
    e = _prepared(est, "est")
    ro = validate_offsets(ref_offsets, n_rows=r.shape[0], name="ref_offsets")
    eo = validate_offsets(est_offsets, n_rows=e.shape[0], name="est_offsets")
    if ro.size != eo.size:
        raise ParameterError(
            f"ref_offsets and est_offsets describe different numbers of sets "
            f"({ro.size - 1} vs {eo.size - 1})"
        )
    return r, ro, e, eo


def _batch_terms(
    ref: npt.ArrayLike, ref_offsets: npt.ArrayLike, est: npt.ArrayLike, est_offsets: npt.ArrayLike
) -> FloatArray:
    r, ro, e, eo = _batch_inputs(ref, ref_offsets, est, est_offsets)
    return round_time(_k_union_terms(r, ro, e, eo))


def _union_iou_vec(t: FloatArray) -> FloatArray:
    lr, le, lu = t[:, 0], t[:, 1], t[:, 2]
    inter = np.maximum(round_time(lr + le - lu), 0.0)
    iou = np.zeros(t.shape[0], dtype=np.float64)
    ok = (lr > 0) & (le > 0)
    np.divide(inter, lu, out=iou, where=ok)
    iou[(lr == 0) & (le == 0)] = 1.0
    return iou


def _giou_vec(t: FloatArray) -> FloatArray:
    lr, le, lu, hull = t[:, 0], t[:, 1], t[:, 2], t[:, 3]
    ok = (lr > 0) & (le > 0)
    inter = np.maximum(round_time(lr + le - lu), 0.0)
    g = np.full(t.shape[0], -1.0)
    safe_lu = np.where(ok, lu, 1.0)
    safe_h = np.where(ok, hull, 1.0)
    g[ok] = (inter / safe_lu - (safe_h - safe_lu) / safe_h)[ok]
    g[(lr == 0) & (le == 0)] = 1.0
    return g


def union_iou_batch(
    ref: npt.ArrayLike, ref_offsets: npt.ArrayLike, est: npt.ArrayLike, est_offsets: npt.ArrayLike
) -> FloatArray:
    """:func:`union_iou` of many (reference, estimate) set pairs.

    Parameters
    ----------
    ref : array_like, shape (N, 2)
        All reference intervals, set after set, in seconds.
    ref_offsets : array_like of int, shape (q + 1,)
        Reference set ``k`` is ``ref[ref_offsets[k]:ref_offsets[k + 1]]``.
    est : array_like, shape (M, 2)
        All estimated intervals, set after set, in seconds.
    est_offsets : array_like of int, shape (q + 1,)
        Estimated set ``k`` is ``est[est_offsets[k]:est_offsets[k + 1]]``.

    Returns
    -------
    iou : np.ndarray of float64, shape (q,)

    Raises
    ------
    ParameterError
        If intervals or offsets are malformed or the two batches differ in size.
    """
    return _union_iou_vec(_batch_terms(ref, ref_offsets, est, est_offsets))


def generalized_iou_batch(
    ref: npt.ArrayLike, ref_offsets: npt.ArrayLike, est: npt.ArrayLike, est_offsets: npt.ArrayLike
) -> FloatArray:
    """:func:`generalized_iou` of many set pairs (arguments and errors as :func:`union_iou_batch`).

    Returns
    -------
    giou : np.ndarray of float64, shape (q,)
    """
    return _giou_vec(_batch_terms(ref, ref_offsets, est, est_offsets))


def union_and_generalized_iou_batch(
    ref: npt.ArrayLike, ref_offsets: npt.ArrayLike, est: npt.ArrayLike, est_offsets: npt.ArrayLike
) -> tuple[FloatArray, FloatArray]:
    """Both :func:`union_iou_batch` and :func:`generalized_iou_batch` in one pass.

    Arguments and errors as :func:`union_iou_batch`.

    Returns
    -------
    iou, giou : np.ndarray of float64, shape (q,)
    """
    t = _batch_terms(ref, ref_offsets, est, est_offsets)
    return _union_iou_vec(t), _giou_vec(t)


@numba.njit(cache=True)
def _k_midpoint_mae(ref: FloatArray, roff: IntArray, est: FloatArray, eoff: IntArray) -> FloatArray:
    q = roff.size - 1
    out = np.full(q, np.nan)
    for k in range(q):
        nr = roff[k + 1] - roff[k]
        ne = eoff[k + 1] - eoff[k]
        if nr == 0 or ne == 0:
            continue
        acc = 0.0
        for i in range(roff[k], roff[k + 1]):
            c = (ref[i, 0] + ref[i, 1]) / 2.0
            best = np.inf
            for j in range(eoff[k], eoff[k + 1]):
                d = abs(c - (est[j, 0] + est[j, 1]) / 2.0)
                if d < best:
                    best = d
            acc += np.rint(best * _SCALE) / _SCALE
        out[k] = acc / nr
    return out


def midpoint_mae_batch(
    ref: npt.ArrayLike, ref_offsets: npt.ArrayLike, est: npt.ArrayLike, est_offsets: npt.ArrayLike
) -> FloatArray:
    """Mean of :func:`midpoint_errors` per set pair (arguments and errors as :func:`union_iou_batch`).

    Returns
    -------
    mae : np.ndarray of float64, shape (q,)
        Seconds; NaN where a set has no estimate (or no reference) and so no error.
    """
    r, ro, e, eo = _batch_inputs(ref, ref_offsets, est, est_offsets)
    return _k_midpoint_mae(r, ro, e, eo)


@numba.njit(cache=True)
def _k_greedy(
    ref: FloatArray, roff: IntArray, est: FloatArray, eoff: IntArray, t: float
) -> IntArray:
    q = roff.size - 1
    cap = 0
    for k in range(q):
        cap += min(roff[k + 1] - roff[k], eoff[k + 1] - eoff[k])
    out = np.empty((cap, 3), dtype=np.int64)
    n_out = 0
    for k in range(q):
        nr = roff[k + 1] - roff[k]
        ne = eoff[k + 1] - eoff[k]
        if nr == 0 or ne == 0:
            continue
        vals = np.empty(nr * ne, dtype=np.float64)
        ci = np.empty(nr * ne, dtype=np.int64)
        cj = np.empty(nr * ne, dtype=np.int64)
        nc = 0
        for i in range(nr):
            rs = ref[roff[k] + i, 0]
            re_ = ref[roff[k] + i, 1]
            for j in range(ne):
                es = est[eoff[k] + j, 0]
                ee = est[eoff[k] + j, 1]
                inter = min(re_, ee) - max(rs, es)
                if inter < 0.0:
                    inter = 0.0
                union = (re_ - rs) + (ee - es) - inter
                if union <= 0.0:
                    continue
                v = np.rint((inter / union) * _SCALE) / _SCALE
                if v >= t and v > 0.0:
                    vals[nc] = -v
                    ci[nc] = i
                    cj[nc] = j
                    nc += 1
        if nc == 0:
            continue
        order = np.argsort(vals[:nc], kind="mergesort")
        used_r = np.zeros(nr, dtype=np.bool_)
        used_e = np.zeros(ne, dtype=np.bool_)
        start = n_out
        for c in order:
            i = ci[c]
            j = cj[c]
            if used_r[i] or used_e[j]:
                continue
            used_r[i] = True
            used_e[j] = True
            out[n_out, 0] = k
            out[n_out, 1] = i
            out[n_out, 2] = j
            n_out += 1
        # sort this set's matches by reference index (insertion sort; sets are small)
        for a in range(start + 1, n_out):
            row0 = out[a, 0]
            row1 = out[a, 1]
            row2 = out[a, 2]
            b = a - 1
            while b >= start and out[b, 1] > row1:
                out[b + 1, 0] = out[b, 0]
                out[b + 1, 1] = out[b, 1]
                out[b + 1, 2] = out[b, 2]
                b -= 1
            out[b + 1, 0] = row0
            out[b + 1, 1] = row1
            out[b + 1, 2] = row2
    return out[:n_out]


def match_greedy_batch(
    ref: npt.ArrayLike,
    ref_offsets: npt.ArrayLike,
    est: npt.ArrayLike,
    est_offsets: npt.ArrayLike,
    *,
    iou_threshold: float,
) -> IntArray:
    """:func:`match_greedy` for many set pairs (arguments as :func:`union_iou_batch`).

    Returns
    -------
    matches : np.ndarray of int64, shape (K, 3)
        Rows ``(set_index, ref_index, est_index)`` with indices local to the set, sorted
        by set then reference index -- for each set exactly the pairs of
        :func:`match_greedy`.

    Raises
    ------
    ParameterError
        If intervals or offsets are malformed, the batches differ in size, or the
        threshold is outside ``(0, 1]``.
    """
    t = _check_threshold(iou_threshold)
    r, ro, e, eo = _batch_inputs(ref, ref_offsets, est, est_offsets)
    return _k_greedy(r, ro, e, eo, t)

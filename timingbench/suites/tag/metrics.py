"""TAG-Bench metrics (Sec. 4.2, Tables 2-5): per-query scores and their group means.

Metrics are macro-averaged over queries (each query counts once, whatever its audio length
or number of intervals); see :mod:`timingbench.suites.tag` for the list. A parsing
failure is scored against the empty-prediction sentinel ``0s~0s``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from timingbench.convert import TIME_DECIMALS
from timingbench.errors import ParameterError
from timingbench.intervals import midpoint_mae_batch, union_and_generalized_iou_batch
from timingbench.params.benchmarks import TagParams

__all__ = ["TagScores", "score_queries", "summarize"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class TagScores:
    """Per-query scores, aligned with the query list they were computed for.

    Attributes
    ----------
    iou, giou : np.ndarray, shape (q,)
        Union IoU in [0, 1] and generalized IoU in [-1, 1] (sentinel rules applied).
    mae_s : np.ndarray, shape (q,)
        Midpoint MAE in seconds; NaN for a parsing failure.
    failed : np.ndarray of bool, shape (q,)
    n_gt, n_pred : np.ndarray of int64, shape (q,)
    """

    iou: FloatArray
    giou: FloatArray
    mae_s: FloatArray
    failed: npt.NDArray[np.bool_]
    n_gt: npt.NDArray[np.int64]
    n_pred: npt.NDArray[np.int64]


def score_queries(
    gt: Sequence[FloatArray], pred: Sequence[Sequence[tuple[float, float]]]
) -> TagScores:
    """Score many queries at once.

    Parameters
    ----------
    gt : sequence of np.ndarray, shape (n_k, 2)
        Ground-truth intervals of each query in seconds (``n_k >= 1``).
    pred : sequence of sequences of (float, float)
        Recovered intervals of each query in seconds; empty for a parsing failure.

    Returns
    -------
    scores : TagScores

    Raises
    ------
    ParameterError
        If the two sequences differ in length or hold malformed intervals.
    """
    if len(gt) != len(pred):
        raise ParameterError(f"{len(gt)} ground-truth sets but {len(pred)} predictions")
    q = len(gt)
    n_gt = np.fromiter((len(g) for g in gt), dtype=np.int64, count=q)
    n_pred = np.fromiter((len(p) for p in pred), dtype=np.int64, count=q)
    failed = n_pred == 0
    ref = np.concatenate(gt) if q else np.zeros((0, 2))
    ref_off = np.zeros(q + 1, dtype=np.int64)
    np.cumsum(n_gt, out=ref_off[1:])
    flat = [iv for p in pred for iv in p]
    est = np.array(flat, dtype=np.float64).reshape(-1, 2)
    est_off = np.zeros(q + 1, dtype=np.int64)
    np.cumsum(n_pred, out=est_off[1:])
    # failures score against the empty-prediction sentinel 0s~0s
    sentinel_counts = np.maximum(n_pred, 1)
    est_s = np.zeros((int(sentinel_counts.sum()), 2), dtype=np.float64)
    est_s_off = np.zeros(q + 1, dtype=np.int64)
    np.cumsum(sentinel_counts, out=est_s_off[1:])
    rows = np.flatnonzero(~failed)
    if rows.size:
        est_s[_expand(est_s_off[rows], n_pred[rows])] = est
    iou, giou = union_and_generalized_iou_batch(ref, ref_off, est_s, est_s_off)
    mae = midpoint_mae_batch(ref, ref_off, est, est_off)
    return TagScores(iou, giou, mae, failed, n_gt, n_pred)


def _expand(starts: npt.NDArray[np.int64], counts: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Concatenation of ``arange(s, s + c)`` for each start and count, vectorised."""
    total = int(counts.sum())
    group_start = np.repeat(np.cumsum(counts) - counts, counts)
    return np.repeat(starts, counts) + (np.arange(total) - group_start)


def _pct(x: float) -> float:
    return round(100.0 * x, 4)


def _group(s: TagScores, mask: npt.NDArray[np.bool_], thresholds: Sequence[float]) -> dict[str, Any]:
    n = int(mask.sum())
    if n == 0:
        return {"n": 0}
    iou = s.iou[mask]
    giou = s.giou[mask]
    failed = s.failed[mask]
    n_gt = s.n_gt[mask]
    n_pred = s.n_pred[mask]
    parsed = ~failed
    rounded = np.round(iou, TIME_DECIMALS)
    out: dict[str, Any] = {
        "n": n,
        "mIoU": _pct(float(iou.mean())),
    }
    for t in thresholds:
        out[f"R@{t:g}"] = _pct(float(np.mean(rounded >= t)))
    out["gIoU"] = _pct(float(giou.mean()))
    out["gIoU_parsed"] = _pct(float(giou[parsed].mean())) if parsed.any() else None
    out["MAE_s"] = round(float(np.mean(s.mae_s[mask][parsed])), 4) if parsed.any() else None
    out["Cvg"] = _pct(float(parsed.mean()))
    out["Fail"] = _pct(float(failed.mean()))
    out["count_acc"] = _pct(float(np.mean(n_pred == n_gt)))
    out["under"] = _pct(float(np.mean(n_pred < n_gt)))
    out["over"] = _pct(float(np.mean(n_pred > n_gt)))
    out["mean_pred"] = round(float(n_pred.mean()), 4)
    out["mean_gt"] = round(float(n_gt.mean()), 4)
    return out


def summarize(scores: TagScores, subsets: Sequence[str], *, params: TagParams) -> dict[str, Any]:
    """Macro-averaged metrics overall, by one-to-one / one-to-many and by subset.

    Parameters
    ----------
    scores : TagScores
        Per-query scores.
    subsets : sequence of str
        Subset of each query, aligned with ``scores``.
    params : TagParams
        Config section ``tag``: ``recall_iou_thresholds`` and ``one_to_many_min_intervals``.

    Returns
    -------
    groups : dict
        ``{"overall": {...}, "one_to_one": {...}, "one_to_many": {...},
        "subsets": {name: {...}}}``; each group holds ``n`` and the metrics (percentages,
        ``MAE_s`` in seconds, ``mean_pred``/``mean_gt`` in intervals).

    Raises
    ------
    ParameterError
        If ``subsets`` is not aligned with the scores.
    """
    thresholds = params.recall_iou_thresholds
    many = params.one_to_many_min_intervals
    sub = np.asarray(list(subsets), dtype=object)
    if sub.size != scores.iou.size:
        raise ParameterError(f"{sub.size} subset names for {scores.iou.size} scored queries")
    allq = np.ones(scores.iou.size, dtype=bool)
    return {
        "overall": _group(scores, allq, thresholds),
        "one_to_one": _group(scores, scores.n_gt < many, thresholds),
        "one_to_many": _group(scores, scores.n_gt >= many, thresholds),
        "subsets": {
            name: _group(scores, sub == name, thresholds) for name in sorted(set(sub.tolist()))
        },
    }

"""MGBench grounding metrics (paper Sec. 4.1, Table 2), per question and aggregated.

- **IFR**: fraction of questions whose response parses into a grounding answer -- one or
  more time spans, or an explicit empty answer ("there is no such note", ``[]``).
  Missing responses and unparseable ones do not follow the instruction.
- **MergedIoU**: IoU of the merged union of predicted spans with the merged union of
  reference spans, averaged over all questions; a response that does not follow the
  instruction scores 0, an empty answer to an empty-truth question scores 1
  (:func:`timingbench.intervals.union_iou`).
- **Span P/R/F1** at each IoU threshold (0.5, 0.7) from greedy one-to-one matching
  (:func:`timingbench.intervals.match_greedy`, ``IoU >= threshold``): matched pairs are
  true positives, unmatched predicted spans false positives, unmatched reference spans
  false negatives, summed over questions.
- **Onset / offset MAE** in milliseconds over matched pairs only (null without matches).
- Empty-answer questions are counted explicitly: correct empty answers, false alarms
  (spans given where none exist) and responses that do not follow the instruction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from timingbench.convert import round_time
from timingbench.intervals import match_greedy, union_iou
from timingbench.suites.mgbench.spans import SpanParse

__all__ = ["score_grounding_question", "aggregate_grounding"]


def score_grounding_question(
    ref: np.ndarray, parse: SpanParse, *, iou_thresholds: Sequence[float]
) -> dict[str, Any]:
    """Grounding evidence for one question.

    Parameters
    ----------
    ref : np.ndarray, shape (n, 2)
        Reference spans in seconds (n may be 0: an empty-answer question).
    parse : SpanParse
        The extracted response.
    iou_thresholds : sequence of float
        IoU thresholds of the greedy matching, each in (0, 1].

    Returns
    -------
    evidence : dict
        ``follows`` (bool), ``merged_iou`` (0 when not following), ``empty_truth``,
        ``empty_outcome`` (``correct_empty`` | ``false_alarm`` | ``missed`` | ``invalid``
        | null), and ``at`` mapping each threshold (as text) to ``tp``, ``fp``, ``fn``,
        ``matches`` (reference, prediction index pairs), ``onset_err_s``,
        ``offset_err_s`` (absolute errors of matched pairs, seconds).

    Raises
    ------
    ParameterError
        If a threshold is outside (0, 1] or the spans are malformed.
    """
    follows = parse.status != "invalid"
    est = parse.spans
    empty_truth = len(ref) == 0
    merged = float(union_iou(ref, est)) if follows else 0.0
    outcome: str | None
    if empty_truth:
        outcome = {"spans": "false_alarm", "empty": "correct_empty", "invalid": "invalid"}[parse.status]
    else:
        outcome = "missed" if parse.status == "empty" else ("invalid" if not follows else None)
    at: dict[str, Any] = {}
    for t in iou_thresholds:
        pairs = match_greedy(ref, est, iou_threshold=t) if len(ref) and len(est) else []
        ri = np.asarray([i for i, _ in pairs], dtype=np.int64)
        ei = np.asarray([j for _, j in pairs], dtype=np.int64)
        at[_tkey(t)] = {
            "tp": len(pairs),
            "fp": int(len(est) - len(pairs)),
            "fn": int(len(ref) - len(pairs)),
            "matches": [[int(i), int(j)] for i, j in pairs],
            "onset_err_s": np.abs(round_time(est[ei, 0] - ref[ri, 0])).tolist() if pairs else [],
            "offset_err_s": np.abs(round_time(est[ei, 1] - ref[ri, 1])).tolist() if pairs else [],
        }
    return {
        "follows": follows,
        "merged_iou": merged,
        "empty_truth": empty_truth,
        "empty_outcome": outcome,
        "at": at,
    }


def _tkey(t: float) -> str:
    return f"{float(t):g}"


def _div(a: float, b: float) -> float:
    return a / b if b else 0.0


def aggregate_grounding(evidence: Sequence[Mapping[str, Any]], *, iou_thresholds: Sequence[float]) -> dict[str, Any]:
    """Aggregate per-question grounding evidence into the paper's Table 2 metrics.

    Parameters
    ----------
    evidence : sequence of dict
        Outputs of :func:`score_grounding_question`.
    iou_thresholds : sequence of float

    Returns
    -------
    metrics : dict
        ``n``, ``ifr``, ``n_following``, ``merged_iou`` (mean over all questions),
        ``merged_iou_following`` (mean over following ones, null if none), and per
        threshold ``precision``, ``recall``, ``f1`` (0 when undefined), ``tp``/``fp``/
        ``fn``, ``onset_mae_ms``/``offset_mae_ms`` (null without matches); ``empty``:
        counts of empty-truth questions and their outcomes, and of ``missed``
        (empty answer on a non-empty truth).
    """
    n = len(evidence)
    following = [e for e in evidence if e["follows"]]
    out: dict[str, Any] = {
        "n": n,
        "n_following": len(following),
        "ifr": _div(len(following), n) if n else None,
        "merged_iou": float(np.mean([e["merged_iou"] for e in evidence])) if n else None,
        "merged_iou_following": float(np.mean([e["merged_iou"] for e in following])) if following else None,
    }
    for t in iou_thresholds:
        k = _tkey(t)
        tp = sum(e["at"][k]["tp"] for e in evidence)
        fp = sum(e["at"][k]["fp"] for e in evidence)
        fn = sum(e["at"][k]["fn"] for e in evidence)
        on = [x for e in evidence for x in e["at"][k]["onset_err_s"]]
        off = [x for e in evidence for x in e["at"][k]["offset_err_s"]]
        p, r = _div(tp, tp + fp), _div(tp, tp + fn)
        out[f"iou_{k}"] = {
            "tp": tp,
            "fp": fp,
            "fn": fn,
            "precision": p,
            "recall": r,
            "f1": _div(2 * p * r, p + r),
            "onset_mae_ms": 1000.0 * float(np.mean(on)) if on else None,
            "offset_mae_ms": 1000.0 * float(np.mean(off)) if off else None,
        }
    empties = [e for e in evidence if e["empty_truth"]]
    out["empty"] = {
        "n_empty_truth": len(empties),
        "correct_empty": sum(1 for e in empties if e["empty_outcome"] == "correct_empty"),
        "false_alarm": sum(1 for e in empties if e["empty_outcome"] == "false_alarm"),
        "invalid": sum(1 for e in empties if e["empty_outcome"] == "invalid"),
        "missed_nonempty": sum(1 for e in evidence if e["empty_outcome"] == "missed"),
    }
    return out

"""TAG-Bench scoring of a whole response file: evidence rows, summary and table."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from timingbench.convert import TIME_DECIMALS
from timingbench.params.benchmarks import TagParams
from timingbench.suites.tag.answers import FAILED, SENTINEL
from timingbench.suites.tag.io import TagPrediction, gc_paused, load_ground_truth, load_predictions
from timingbench.suites.tag.metrics import score_queries, summarize
from timingbench.version import __version__

__all__ = ["TagReport", "evaluate", "format_table"]


@dataclass(frozen=True)
class TagReport:
    """Everything one scoring run produces.

    Attributes
    ----------
    rows : list of dict
        One evidence row per scored query (``queries.jsonl``).
    summary : dict
        Metrics by group, counts, errors, provenance (``summary.json``).
    """

    rows: list[dict[str, Any]]
    summary: dict[str, Any]


@gc_paused()
def evaluate(
    gt_path: str | Path,
    pred_path: str | Path,
    *,
    params: TagParams,
    jobs: int = 1,
    provenance: Mapping[str, Any] | None = None,
) -> TagReport:
    """Score a TAG-Bench response file against the ground truth.

    Every valid ground-truth query is scored; one without a response row is a parsing
    failure (and reported). Responses for unknown ids are reported and ignored.

    Parameters
    ----------
    gt_path : str or Path
        Ground-truth JSONL (``id``, ``subset``, ``intervals``, ...).
    pred_path : str or Path
        Response JSONL (``id`` and ``response`` or ``intervals``).
    params : TagParams
        Config section ``tag``.
    jobs : int, optional
        Worker processes for parsing free-form answers; the report does not depend on it.
    provenance : mapping, optional
        Written into the summary after the errors (the command gives ``config_version``
        and ``config_hash``).

    Returns
    -------
    report : TagReport

    Raises
    ------
    TimingbenchError
        If a file cannot be read.
    """
    strip_reasoning = params.strip_reasoning
    queries, gt_errors = load_ground_truth(gt_path)
    preds, pred_errors = load_predictions(pred_path, jobs=jobs, strip_reasoning=strip_reasoning)
    errors = list(gt_errors) + list(pred_errors)
    known = {q.id for q in queries}
    for pid in preds:
        if pid not in known:
            errors.append(f"{pred_path}: id {pid!r} is not in the ground truth; ignored")
    chosen: list[TagPrediction] = []
    for q in queries:
        pr = preds.get(q.id)
        if pr is None:
            errors.append(f"{pred_path}: no response for id {q.id!r}; scored as a parsing failure")
            pr = TagPrediction(q.id, FAILED, "missing")
        chosen.append(pr)
    scores = score_queries([q.intervals for q in queries], [p.parsed.intervals for p in chosen])
    thresholds = params.recall_iou_thresholds
    keys = [f"{t:g}" for t in thresholds]
    hits = (np.round(scores.iou, TIME_DECIMALS)[:, None] >= np.asarray(thresholds)).tolist()
    ious = np.round(scores.iou, 6).tolist()
    gious = np.round(scores.giou, 6).tolist()
    maes = np.where(scores.failed, np.nan, np.round(scores.mae_s, 6)).tolist()
    counts = np.where(scores.n_pred == scores.n_gt, "exact",
                      np.where(scores.n_pred < scores.n_gt, "under", "over")).tolist()
    rows: list[dict[str, Any]] = [
        {
            "id": q.id,
            "subset": q.subset,
            "n_gt": n_gt,
            "track": pr.track,
            "parse_stage": pr.parsed.stage,
            "failed": failed,
            "pred_intervals": [list(iv) for iv in pr.parsed.intervals or SENTINEL],
            "n_pred": n_pred,
            "iou": iou,
            "giou": giou,
            "mae_s": None if failed else mae,
            "hits": dict(zip(keys, hit, strict=True)),
            "count": count,
        }
        for q, pr, n_gt, failed, n_pred, iou, giou, mae, hit, count in zip(
            queries, chosen, scores.n_gt.tolist(), scores.failed.tolist(),
            scores.n_pred.tolist(), ious, gious, maes, hits, counts, strict=True,
        )
    ]
    tracks: dict[str, int] = {}
    for pr in chosen:
        tracks[pr.track] = tracks.get(pr.track, 0) + 1
    summary = {
        "benchmark": "TAG-Bench",
        "ground_truth": str(gt_path),
        "responses": str(pred_path),
        "n_queries": len(queries),
        "tracks": tracks,
        "groups": summarize(scores, [q.subset for q in queries], params=params),
        "parser": {"strip_reasoning": strip_reasoning},
        "errors": errors,
        **(provenance or {}),
        "timingbench_version": __version__,
    }
    return TagReport(rows, summary)


# --------------------------------------------------------------------------- table

_COLUMNS = (
    ("n", "N", "{:d}"),
    ("mIoU", "mIoU", "{:.1f}"),
    ("R@0.3", "R@.3", "{:.1f}"),
    ("R@0.5", "R@.5", "{:.1f}"),
    ("R@0.7", "R@.7", "{:.1f}"),
    ("gIoU", "gIoU", "{:.1f}"),
    ("MAE_s", "MAE s", "{:.1f}"),
    ("Cvg", "Cvg", "{:.1f}"),
    ("Fail", "Fail", "{:.1f}"),
    ("count_acc", "CntAcc", "{:.1f}"),
    ("under", "Under", "{:.1f}"),
    ("over", "Over", "{:.1f}"),
    ("mean_pred", "#Pred", "{:.2f}"),
)


def format_table(summary: dict[str, Any]) -> str:
    """Readable table of a run's groups (percentages, MAE in seconds).

    Parameters
    ----------
    summary : dict
        ``TagReport.summary``.

    Returns
    -------
    table : str
        One line per group: overall, one-to-one, one-to-many, then each subset.
    """
    groups = summary["groups"]
    lines = [("overall", groups["overall"]), ("one-to-one", groups["one_to_one"]),
             ("one-to-many", groups["one_to_many"])]
    lines += [(f"  {name}", g) for name, g in groups["subsets"].items()]
    width = max(12, *(len(name) for name, _ in lines))
    head = f"{'group':<{width}}" + "".join(f"{title:>8}" for _, title, _ in _COLUMNS)
    out = [head, "-" * len(head)]
    for name, g in lines:
        cells = []
        for key, _, fmt in _COLUMNS:
            v = g.get(key)
            cells.append(f"{'-' if v is None else fmt.format(v):>8}")
        out.append(f"{name:<{width}}" + "".join(cells))
    tail = (f"; config {summary['config_version']} ({summary['config_hash']})"
            if "config_version" in summary else "")
    out.append(
        f"{summary['n_queries']} queries; tracks {summary['tracks']}; "
        f"{len(summary['errors'])} row error(s){tail}"
    )
    return "\n".join(out)

"""TAG-Bench scoring: temporal audio grounding answers against ground-truth intervals.

Metrics follow the TAG-Bench paper (Sec. 4.2, Tables 2-5), macro-averaged over queries
(each query counts once, whatever its audio length or number of intervals):

- **mIoU**: mean union-based IoU (:func:`timingbench.intervals.union_iou`) of the
  predicted and ground-truth interval sets.
- **R@t**: percentage of queries with union-IoU >= t, t in ``tag.recall_iou_thresholds``.
- **gIoU**: mean generalized IoU of the unions scaled to [-100, 100]; a parsing failure
  scores -100. ``gIoU_parsed`` is the same mean over parsed answers only.
- **MAE**: midpoint absolute error in seconds (each ground-truth interval to the nearest
  predicted midpoint, averaged per query), over parsed answers only, with its coverage
  **Cvg** = parsed / all = 1 - Fail.
- **Fail**: percentage of answers without a recoverable interval.
- **Count diagnostics**: count accuracy (predicted count equals ground-truth count),
  under- and over-reporting rates, mean number of predicted intervals (0 for a failure).

A parsing failure is replaced by the empty-prediction sentinel ``0s~0s``: IoU 0, a miss
at every threshold, gIoU -1, zero predicted intervals. All rates are percentages.
Groups: ``overall``, ``one_to_one`` (one ground-truth interval), ``one_to_many``
(``tag.one_to_many_min_intervals`` or more) and one group per subset.
"""

from __future__ import annotations

import gc
import math
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from timingbench import __version__
from timingbench.suites.tag_parse import ParseResult, parse_interval_list, parse_response
from timingbench.config import Config
from timingbench.convert import TIME_DECIMALS
from timingbench.errors import ParameterError, TimingbenchError
from timingbench.intervals import (
    midpoint_mae_batch,
    union_and_generalized_iou_batch,
    validate_intervals,
)
from timingbench.jsonio import iter_jsonl

FloatArray = npt.NDArray[np.float64]

__all__ = [
    "TagQuery",
    "TagPrediction",
    "TagScores",
    "load_ground_truth",
    "load_predictions",
    "score_queries",
    "summarize",
    "evaluate",
    "format_table",
    "parse_responses",
]


@dataclass(frozen=True)
class TagQuery:
    """One ground-truth row.

    Attributes
    ----------
    id : str
        Query id.
    subset : str
        Diagnostic subset name.
    intervals : np.ndarray, shape (n, 2)
        Ground-truth intervals in seconds, ``n >= 1``.
    duration_s : float or None
        Audio duration in seconds when given.
    row : dict
        The row as read (unknown keys preserved).
    """

    id: str
    subset: str
    intervals: FloatArray
    duration_s: float | None
    row: dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class TagPrediction:
    """One parsed response row.

    Attributes
    ----------
    id : str
        Query id.
    parsed : ParseResult
        The recovered intervals (empty on a parsing failure).
    track : str
        ``"free"`` (``response`` text) or ``"json"`` (constrained ``intervals`` field).
    """

    id: str
    parsed: ParseResult
    track: str


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


# --------------------------------------------------------------------------- loading


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while many small acyclic objects are built.

    Reading 100k rows creates millions of dicts, lists and floats; each allocation
    threshold crossing makes the collector traverse all of them again, which took about
    40 % of the run. Nothing built here holds reference cycles, so reference counting
    frees it all; the previous collector state is restored on exit.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _where(path: Path, line: int, rid: Any = None) -> str:
    return f"{path}:{line}" + (f" (id {rid!r})" if rid is not None else "")


@_gc_paused()
def load_ground_truth(path: str | Path) -> tuple[list[TagQuery], list[str]]:
    """Read a TAG-Bench ground-truth JSONL file (SPEC section 7).

    Each row needs ``id`` (non-empty string, unique), ``subset`` (string) and
    ``intervals`` (non-empty list of ``[start, end]`` seconds with ``start < end``);
    ``duration_s``, if present, must be a positive number. Bad rows are reported and
    skipped; the other rows load.

    Parameters
    ----------
    path : str or Path
        Ground-truth JSONL.

    Returns
    -------
    queries : list of TagQuery
        Valid rows in file order.
    errors : list of str
        One message per rejected row, naming the file, line, id and field.

    Raises
    ------
    TimingbenchError
        If the file cannot be read.
    """
    p = Path(path)
    queries: list[TagQuery] = []
    errors: list[str] = []
    seen: dict[str, int] = {}
    kept: list[tuple[str, str, float | None, dict[str, Any], int]] = []
    pairs: list[list[float]] = []
    try:
        rows = list(iter_jsonl(p))
    except OSError as exc:
        raise TimingbenchError(f"{p}: cannot read ground truth ({exc.strerror})") from None
    for line, row in rows:
        if isinstance(row, TimingbenchError):
            errors.append(str(row))
            continue
        if not isinstance(row, dict):
            errors.append(f"{_where(p, line)}: row must be a JSON object")
            continue
        rid = row.get("id")
        if not isinstance(rid, str | int) or isinstance(rid, bool) or str(rid) == "":
            errors.append(f"{_where(p, line)}: field 'id' missing or not a non-empty string")
            continue
        rid = str(rid)
        if rid in seen:
            errors.append(
                f"{_where(p, line, rid)}: duplicate id (first on line {seen[rid]}); row skipped"
            )
            continue
        seen[rid] = line
        where = _where(p, line, rid)
        subset = row.get("subset")
        if not isinstance(subset, str) or not subset:
            errors.append(f"{where}: field 'subset' missing or not a string")
            continue
        dur = row.get("duration_s")
        if dur is not None and (
            isinstance(dur, bool) or not isinstance(dur, int | float) or not _finite(dur)
            or dur <= 0
        ):
            errors.append(f"{where}: field 'duration_s' must be a positive number of seconds")
            continue
        raw = row.get("intervals")
        if not isinstance(raw, list) or not raw:
            errors.append(f"{where}: field 'intervals' must be a non-empty list of [start, end]")
            continue
        if not _plain_intervals(raw) and not _check_intervals(raw, where, errors):
            continue
        kept.append((rid, subset, None if dur is None else float(dur), row, len(raw)))
        pairs.extend(raw)
    flat = np.array(pairs, dtype=np.float64).reshape(-1, 2)
    off = 0
    for rid, subset, dur_s, row, n in kept:
        queries.append(TagQuery(rid, subset, flat[off:off + n], dur_s, row))
        off += n
    return queries, errors


_REAL_TYPES = frozenset((int, float))


def _plain_intervals(raw: list[Any]) -> bool:
    """True when every item is a ``[start, end]`` list of finite numbers with start < end.

    The common case, checked without building error context; a row that fails goes
    through :func:`_check_intervals`, which names the offending item.
    """
    for pair in raw:
        if type(pair) is not list or len(pair) != 2:
            return False
        a, b = pair
        if type(a) not in _REAL_TYPES or type(b) not in _REAL_TYPES or not -_FLOAT_MAX <= a < b <= _FLOAT_MAX:
            return False
    return True


_FLOAT_MAX = sys.float_info.max


def _finite(x: float) -> bool:
    """``math.isfinite`` that is False (not OverflowError) for an integer beyond the float range."""
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


def _check_intervals(raw: list[Any], where: str, errors: list[str]) -> bool:
    """Validate ground-truth intervals; append the error and return False on a bad item."""
    bad = next(
        (k for k, pair in enumerate(raw)
         if not (isinstance(pair, list) and len(pair) == 2
                 and all(isinstance(x, int | float) and not isinstance(x, bool)
                         for x in pair))),
        None,
    )
    if bad is not None:
        errors.append(
            f"{where}: field 'intervals' item {bad} = {raw[bad]!r} is not a [start, end] "
            "pair of numbers (seconds)"
        )
        return False
    huge = next((k for k, (a, b) in enumerate(raw) if abs(a) > _FLOAT_MAX or abs(b) > _FLOAT_MAX), None)
    if huge is not None:
        errors.append(f"{where}: field 'intervals' item {huge} holds a number beyond the float range (seconds)")
        return False
    bad_k = next((k for k, (a, b) in enumerate(raw)
                  if not (_finite(a) and _finite(b) and a < b)), None)
    if bad_k is not None:
        try:  # names the offending interval and rule
            validate_intervals(raw, name=f"{where}: field 'intervals'")
        except ParameterError as exc:
            errors.append(str(exc))
            return False
        errors.append(
            f"{where}: field 'intervals' item {bad_k} has zero length; ground-truth "
            "intervals need start < end"
        )
        return False
    return True


@_gc_paused()
def load_predictions(
    path: str | Path, *, jobs: int = 1, strip_reasoning: bool = True
) -> tuple[dict[str, TagPrediction], list[str]]:
    """Read and parse a response JSONL file (SPEC section 7).

    A row has ``id`` and either ``intervals`` (constrained-JSON track: a list of
    ``[start, end]`` pairs) or ``response`` (free text, parsed by
    :func:`timingbench.suites.tag_parse.parse_response`). A row whose ``intervals``
    hold a non-numeric time, or whose ``response`` is not a string, is reported and scored
    as a parsing failure. Duplicate ids are reported; the first row counts.

    Parameters
    ----------
    path : str or Path
        Response JSONL.
    jobs : int, optional
        Worker processes for parsing the free-form answers (see :func:`parse_responses`);
        the result does not depend on it.
    strip_reasoning : bool, optional
        Parse only the final answer of each free-form response (config
        ``tag.strip_reasoning``; see :func:`timingbench.suites.tag_parse.parse_response`).

    Returns
    -------
    predictions : dict of str to TagPrediction
    errors : list of str
        One message per bad row, naming the file, line, id and field.

    Raises
    ------
    TimingbenchError
        If the file cannot be read.
    ParameterError
        If ``jobs < 1``.
    """
    p = Path(path)
    preds: dict[str, TagPrediction] = {}
    lines: dict[str, int] = {}
    errors: list[str] = []
    try:
        rows = list(iter_jsonl(p))
    except OSError as exc:
        raise TimingbenchError(f"{p}: cannot read responses ({exc.strerror})") from None
    fail = ParseResult((), "none")
    pending = TagPrediction("", fail, "free")
    free: list[tuple[str, str]] = []
    for line, row in rows:
        if isinstance(row, TimingbenchError):
            errors.append(str(row))
            continue
        if not isinstance(row, dict):
            errors.append(f"{_where(p, line)}: row must be a JSON object")
            continue
        rid = row.get("id")
        if not isinstance(rid, str | int) or isinstance(rid, bool) or str(rid) == "":
            errors.append(f"{_where(p, line)}: field 'id' missing or not a non-empty string")
            continue
        rid = str(rid)
        if rid in lines:
            errors.append(
                f"{_where(p, line, rid)}: duplicate id (first on line {lines[rid]}); row ignored"
            )
            continue
        lines[rid] = line
        text = row.get("response")
        if type(text) is str and row.get("intervals") is None:
            free.append((rid, text))
            preds[rid] = pending  # keeps the row order; replaced once parsed
            continue
        where = _where(p, line, rid)
        if "intervals" in row and row["intervals"] is not None:
            try:
                preds[rid] = TagPrediction(rid, parse_interval_list(row["intervals"], where=where),
                                           "json")
            except ParameterError as exc:
                errors.append(f"{exc}; scored as a parsing failure")
                preds[rid] = TagPrediction(rid, fail, "json")
            continue
        text = row.get("response")
        if not isinstance(text, str):
            errors.append(
                f"{where}: field 'response' missing or not a string (and no 'intervals'); "
                "scored as a parsing failure"
            )
            preds[rid] = TagPrediction(rid, fail, "free")
            continue
        free.append((rid, text))
        preds[rid] = pending
    # identical answers (refusals, templates) are parsed once; ParseResult is immutable
    unique = list(dict.fromkeys(text for _, text in free))
    parsed = parse_responses(unique, jobs=jobs, strip_reasoning=strip_reasoning)
    parsed_by_text = dict(zip(unique, parsed, strict=True))
    for rid, text in free:
        preds[rid] = TagPrediction(rid, parsed_by_text[text], "free")
    return preds, errors


_MIN_TEXTS_PER_JOB = 5000


def _parse_chunk(texts: list[str], strip_reasoning: bool = True) -> list[ParseResult]:
    return [parse_response(t, strip_reasoning=strip_reasoning) for t in texts]


def parse_responses(
    texts: Sequence[str], *, jobs: int = 1, strip_reasoning: bool = True
) -> list[ParseResult]:
    """Parse many free-form answers, in order, optionally in worker processes.

    Parameters
    ----------
    texts : sequence of str
        The answers.
    jobs : int, optional
        Worker processes. With ``jobs > 1`` and at least ``5000`` answers per worker the
        answers are split into ``jobs`` contiguous chunks parsed in a process pool; the
        results are the same, in the same order, as with ``jobs=1``.
    strip_reasoning : bool, optional
        Parse only the final answer (see :func:`timingbench.suites.tag_parse.parse_response`).

    Returns
    -------
    results : list of ParseResult
        One per answer, aligned with ``texts``.

    Raises
    ------
    ParameterError
        If ``jobs < 1`` or an answer is not a string.
    """
    if jobs < 1:
        raise ParameterError(f"jobs must be >= 1, got {jobs}")
    n = len(texts)
    jobs = min(jobs, n // _MIN_TEXTS_PER_JOB)
    if jobs <= 1:
        return _parse_chunk(list(texts), strip_reasoning)
    size = -(-n // jobs)
    chunks = [list(texts[k:k + size]) for k in range(0, n, size)]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        parts = pool.map(_parse_chunk, chunks, [strip_reasoning] * len(chunks))
        return [r for part in parts for r in part]


# --------------------------------------------------------------------------- scoring


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


def summarize(
    scores: TagScores, subsets: Sequence[str], *, config: Config
) -> dict[str, Any]:
    """Macro-averaged metrics overall, by one-to-one / one-to-many and by subset.

    Parameters
    ----------
    scores : TagScores
        Per-query scores.
    subsets : sequence of str
        Subset of each query, aligned with ``scores``.
    config : Config
        Reads ``tag.recall_iou_thresholds`` and ``tag.one_to_many_min_intervals``.

    Returns
    -------
    groups : dict
        ``{"overall": {...}, "one_to_one": {...}, "one_to_many": {...},
        "subsets": {name: {...}}}``; each group holds ``n`` and the metrics (percentages,
        ``MAE_s`` in seconds, ``mean_pred``/``mean_gt`` in intervals).

    Raises
    ------
    ConfigError
        If a constant is missing.
    ParameterError
        If ``subsets`` is not aligned with the scores.
    """
    thresholds = [float(t) for t in config.value("tag.recall_iou_thresholds")]
    many = int(config.value("tag.one_to_many_min_intervals"))
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


@_gc_paused()
def evaluate(
    gt_path: str | Path, pred_path: str | Path, *, config: Config, jobs: int = 1
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
    config : Config
        The configuration (section ``tag``).
    jobs : int, optional
        Worker processes for parsing free-form answers; the report does not depend on it.

    Returns
    -------
    report : TagReport

    Raises
    ------
    TimingbenchError
        If a file cannot be read.
    """
    strip_reasoning = bool(config.value("tag.strip_reasoning"))
    queries, gt_errors = load_ground_truth(gt_path)
    preds, pred_errors = load_predictions(pred_path, jobs=jobs, strip_reasoning=strip_reasoning)
    errors = list(gt_errors) + list(pred_errors)
    known = {q.id for q in queries}
    for pid in preds:
        if pid not in known:
            errors.append(f"{pred_path}: id {pid!r} is not in the ground truth; ignored")
    fail = TagPrediction("", ParseResult((), "none"), "missing")
    chosen: list[TagPrediction] = []
    for q in queries:
        pr = preds.get(q.id)
        if pr is None:
            errors.append(f"{pred_path}: no response for id {q.id!r}; scored as a parsing failure")
            pr = TagPrediction(q.id, fail.parsed, "missing")
        chosen.append(pr)
    scores = score_queries([q.intervals for q in queries], [p.parsed.intervals for p in chosen])
    thresholds = [float(t) for t in config.value("tag.recall_iou_thresholds")]
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
            "pred_intervals": [list(iv) for iv in pr.parsed.intervals] or [[0.0, 0.0]],
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
        "groups": summarize(scores, [q.subset for q in queries], config=config),
        "parser": {"strip_reasoning": strip_reasoning},
        "errors": errors,
        "config_version": config.version,
        "config_hash": config.content_hash,
        "timingbench_version": __version__,
    }
    return TagReport(rows, summary)


def _count_word(n_gt: int, n_pred: int) -> str:
    if n_pred == n_gt:
        return "exact"
    return "under" if n_pred < n_gt else "over"


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
    out.append(
        f"{summary['n_queries']} queries; tracks {summary['tracks']}; "
        f"{len(summary['errors'])} row error(s); config {summary['config_version']} "
        f"({summary['config_hash']})"
    )
    return "\n".join(out)

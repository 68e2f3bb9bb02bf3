"""TAG-Bench files: ground-truth rows and response rows, read and validated (formats §7).

A bad row is reported with its file, line, id and field and skipped (ground truth) or
scored as a parsing failure (responses); the other rows load. Free-form answers are parsed
by the TAG-Bench layer of the time-span core (:mod:`timingbench.suites.tag.answers`).
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from timingbench.errors import ParameterError, TimingbenchError
from timingbench.intervals import validate_intervals
from timingbench.jsonio import is_finite_number, read_rows
from timingbench.suites.span_parse import ParseResult
from timingbench.suites.tag.answers import FAILED, parse_interval_list, parse_responses

__all__ = ["TagQuery", "TagPrediction", "load_ground_truth", "load_predictions", "gc_paused"]

FloatArray = npt.NDArray[np.float64]


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


@contextmanager
def gc_paused() -> Iterator[None]:
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


def _new_id(path: Path, line: int, row: dict[str, Any], seen: dict[str, int], errors: list[str],
            fate: str) -> str | None:
    """The row's id as a string, recorded in ``seen``; ``None`` (and one error) when it is
    missing or repeats an earlier row's (``fate`` says what happens to the repeat)."""
    rid = row.get("id")
    if not isinstance(rid, str | int) or isinstance(rid, bool) or str(rid) == "":
        errors.append(f"{_where(path, line)}: field 'id' missing or not a non-empty string")
        return None
    rid = str(rid)
    if rid in seen:
        errors.append(f"{_where(path, line, rid)}: duplicate id (first on line {seen[rid]}); row {fate}")
        return None
    seen[rid] = line
    return rid


@gc_paused()
def load_ground_truth(path: str | Path) -> tuple[list[TagQuery], list[str]]:
    """Read a TAG-Bench ground-truth JSONL file (formats §7).

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
    for line, row in read_rows(p, what="ground truth", error=TimingbenchError,
                               on_error=lambda e: errors.append(str(e))):
        rid = _new_id(p, line, row, seen, errors, "skipped")
        if rid is None:
            continue
        where = _where(p, line, rid)
        subset = row.get("subset")
        if not isinstance(subset, str) or not subset:
            errors.append(f"{where}: field 'subset' missing or not a string")
            continue
        dur = row.get("duration_s")
        if dur is not None and (not is_finite_number(dur) or dur <= 0):
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
                  if not (is_finite_number(a) and is_finite_number(b) and a < b)), None)
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


@gc_paused()
def load_predictions(
    path: str | Path, *, jobs: int = 1, strip_reasoning: bool = True
) -> tuple[dict[str, TagPrediction], list[str]]:
    """Read and parse a response JSONL file (formats §7).

    A row has ``id`` and either ``intervals`` (constrained-JSON track: a list of
    ``[start, end]`` pairs) or ``response`` (free text, parsed by
    :func:`timingbench.suites.tag.answers.parse_response`). A row whose ``intervals``
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
        ``tag.strip_reasoning``; see :func:`timingbench.suites.tag.answers.parse_response`).

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
    pending = TagPrediction("", FAILED, "free")
    free: list[tuple[str, str]] = []
    for line, row in read_rows(p, what="responses", error=TimingbenchError,
                               on_error=lambda e: errors.append(str(e))):
        rid = _new_id(p, line, row, lines, errors, "ignored")
        if rid is None:
            continue
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
                preds[rid] = TagPrediction(rid, FAILED, "json")
            continue
        text = row.get("response")
        if not isinstance(text, str):
            errors.append(
                f"{where}: field 'response' missing or not a string (and no 'intervals'); "
                "scored as a parsing failure"
            )
            preds[rid] = TagPrediction(rid, FAILED, "free")
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

"""MGBench rows: ground-truth questions and response rows, read and validated (formats §7).

Ground truth rows: ``id``, ``subset`` (``3N`` | ``2B``), ``task`` (``grounding`` |
``understanding``), ``category``, ``question``, and ``intervals`` (grounding,
``[[start, end], ...]`` in seconds, possibly empty) or ``answer`` (understanding, text).
Response rows: ``id`` and ``response`` (free text) or ``intervals`` (already extracted
spans). A bad row is reported with its file, line and field; the other rows load.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from timingbench.errors import ParameterError
from timingbench.intervals import validate_intervals
from timingbench.jsonio import is_finite_number, read_rows

__all__ = ["SUBSETS", "TASKS", "MgQuestion", "MgResponse", "Loaded", "load_ground_truth", "load_responses"]

SUBSETS = ("3N", "2B")
TASKS = ("grounding", "understanding")


@dataclass(frozen=True)
class MgQuestion:
    """One MGBench question.

    Attributes
    ----------
    id : str
    line : int
        1-based line in the ground-truth file.
    subset : str
        ``3N`` or ``2B``.
    task : str
        ``grounding`` or ``understanding``.
    category : str
        Query family (3N: ABS/REL/ORD/PAT) or concept (2B).
    question : str
    intervals : np.ndarray or None
        Reference spans, shape (n, 2), seconds (grounding; n may be 0).
    answer : str or None
        Reference text (understanding).
    """

    id: str
    line: int
    subset: str
    task: str
    category: str
    question: str
    intervals: np.ndarray | None
    answer: str | None


@dataclass(frozen=True)
class MgResponse:
    """One response row: free text and/or already extracted spans."""

    id: str
    line: int
    response: str | None
    intervals: np.ndarray | None


@dataclass
class Loaded:
    """Rows that loaded plus one error message per rejected row."""

    rows: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    #: Line of each accepted row, by id (a later row with the same id is rejected).
    lines: dict[str, int] = field(default_factory=dict, repr=False)

    def accept(self, rid: str, line: int, row: Any) -> None:
        """Keep ``row`` as the row of ``rid``, read on ``line``."""
        self.lines[rid] = line
        self.rows[rid] = row


def _id_rows(path: str | Path, out: Loaded, *, what: str) -> Iterator[tuple[int, str, str, dict[str, Any]]]:
    """Yield ``(line, where, id, row)`` for each JSON-object row with a new id.

    Rows that are not JSON objects, lack an id or repeat one ``out`` already accepted are
    reported in ``out.errors`` and skipped; the caller keeps a row with ``out.accept``.

    Raises
    ------
    ParameterError
        If the file cannot be read.
    """
    p = Path(path)
    for line, row in read_rows(p, what=what, on_error=lambda e: out.errors.append(str(e)), error=ParameterError):
        where = f"{p}:{line}"
        rid = _row_id(row)
        if rid is None:
            out.errors.append(f"{where}: field 'id' is missing or not a string/integer")
            continue
        if rid in out.lines:
            out.errors.append(f"{where}: duplicate id {rid!r} (first at line {out.lines[rid]}); row ignored")
            continue
        yield line, where, rid, row


def _row_id(row: Mapping[str, Any]) -> str | None:
    rid = row.get("id")
    if isinstance(rid, bool) or rid is None:
        return None
    if isinstance(rid, int):
        return str(rid)
    if isinstance(rid, str) and rid.strip():
        return rid.strip()
    return None


def _spans_field(value: Any, where: str) -> np.ndarray:
    """Validate a JSON ``intervals`` value: a list of ``[start, end]`` number pairs."""
    if not isinstance(value, list):
        raise ParameterError(f"{where}: field 'intervals' must be a list of [start, end] pairs in seconds")
    for k, pair in enumerate(value):
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            raise ParameterError(f"{where}: field 'intervals'[{k}] must be a [start, end] pair, got {pair!r:.60}")
        for v in pair:
            if not is_finite_number(v):
                raise ParameterError(
                    f"{where}: field 'intervals'[{k}] has a non-numeric or non-finite time {v!r:.40}; "
                    "times must be numbers of seconds"
                )
    return validate_intervals(np.asarray(value, dtype=np.float64).reshape(-1, 2), name=f"{where}: field 'intervals'")


def _norm_subset(v: Any) -> str | None:
    if not isinstance(v, str):
        return None
    t = v.strip().upper().replace("MGBENCH-", "").replace("MGBENCH", "").strip("-_ ")
    return t if t in SUBSETS else None


def load_ground_truth(path: str | Path) -> Loaded:
    """Read an MGBench ground-truth JSONL file.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    loaded : Loaded
        ``rows`` maps id -> :class:`MgQuestion` (first occurrence); ``errors`` names file,
        line and field of each rejected row (not JSON, missing/duplicate id, bad subset or
        task, missing question, non-numeric or reversed times, missing answer).

    Raises
    ------
    ParameterError
        If the file cannot be read.
    """
    out = Loaded()
    for line, where, rid, row in _id_rows(path, out, what="MGBench ground truth"):
        try:
            subset = _norm_subset(row.get("subset"))
            if subset is None:
                raise ParameterError(f"{where}: field 'subset' must be '3N' or '2B', got {row.get('subset')!r}")
            task = row.get("task")
            if task not in TASKS:
                raise ParameterError(f"{where}: field 'task' must be 'grounding' or 'understanding', got {task!r}")
            question = row.get("question")
            if not isinstance(question, str) or not question.strip():
                raise ParameterError(f"{where}: field 'question' must be a non-empty string")
            category = row.get("category")
            category = category.strip() if isinstance(category, str) and category.strip() else "unknown"
            intervals = answer = None
            if task == "grounding":
                if "intervals" not in row:
                    raise ParameterError(f"{where}: grounding row needs field 'intervals' ([] for an empty answer)")
                intervals = _spans_field(row["intervals"], where)
            else:
                answer = row.get("answer")
                if not isinstance(answer, str) or not answer.strip():
                    raise ParameterError(f"{where}: understanding row needs a non-empty string field 'answer'")
        except ParameterError as exc:
            out.errors.append(str(exc))
            continue
        out.accept(rid, line, MgQuestion(rid, line, subset, str(task), category, question.strip(), intervals, answer))
    return out


def load_responses(path: str | Path, questions: Mapping[str, MgQuestion]) -> Loaded:
    """Read MGBench response rows.

    Parameters
    ----------
    path : str or Path
        JSONL with ``id`` and ``response`` (text) and/or ``intervals`` (spans).
    questions : mapping
        Ground truth from :func:`load_ground_truth` (ids not in it are rejected).

    Returns
    -------
    loaded : Loaded
        ``rows`` maps id -> :class:`MgResponse`; ``errors`` names each rejected row
        (missing, unknown or duplicate id; non-numeric times; no response field).

    Raises
    ------
    ParameterError
        If the file cannot be read.
    """
    out = Loaded()
    for line, where, rid, row in _id_rows(path, out, what="responses"):
        if rid not in questions:
            out.errors.append(f"{where}: id {rid!r} is not a valid question of the ground truth")
            continue
        text = row.get("response", row.get("answer"))
        if text is not None and not isinstance(text, str):
            out.errors.append(f"{where}: field 'response' must be a string, got {type(text).__name__}")
            continue
        spans = None
        if row.get("intervals") is not None:
            try:
                spans = _spans_field(row["intervals"], where)
            except ParameterError as exc:
                out.errors.append(str(exc))
                continue
        if text is None and spans is None:
            out.errors.append(f"{where}: row has neither 'response' text nor 'intervals'")
            continue
        out.accept(rid, line, MgResponse(rid, line, text, spans))
    return out

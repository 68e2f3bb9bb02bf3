"""AudioRAG files: the release's ``metadata.jsonl`` and answer rows (formats §7)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from timingbench.errors import ParameterError
from timingbench.jsonio import read_rows

__all__ = ["DEFAULT_RUN", "RagItem", "RagMetadata", "RagAnswer", "load_metadata", "load_answers"]

#: Run name given to answer rows without a ``run`` field.
DEFAULT_RUN = "1"


@dataclass(frozen=True)
class RagItem:
    """One AudioRAG question.

    Attributes
    ----------
    index : int
        0-based row index in the metadata file (blank lines not counted).
    line : int
        1-based line number in the metadata file.
    audio_path : str
        Path of the audio context, relative to the release's audio root.
    data_source : str
        Source dataset (``FMA``, ``MusicNet``, ``self-collected`` ...).
    question : str
        The question text (for spoken questions: the path of the question audio).
    answer : str
        The ground-truth answer.
    attributes : Any
        The audio attribute(s) the question was built from.
    """

    index: int
    line: int
    audio_path: str
    data_source: str
    question: str
    answer: str
    attributes: Any


@dataclass
class RagMetadata:
    """Valid questions of a metadata file plus per-row errors."""

    source: str
    items: list[RagItem] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def by_index(self) -> dict[int, RagItem]:
        """Questions keyed by row index."""
        return {it.index: it for it in self.items}

    def by_path(self) -> dict[str, list[int]]:
        """Row indices keyed by ``audio_path`` (a path may carry several questions)."""
        out: dict[str, list[int]] = {}
        for it in self.items:
            out.setdefault(it.audio_path, []).append(it.index)
        return out


@dataclass(frozen=True)
class RagAnswer:
    """One answer row: the answer given in ``run`` to question ``index``."""

    line: int
    index: int
    run: str
    answer: str


def _req_str(row: Mapping[str, Any], key: str, where: str, *, allow_empty: bool = False) -> str:
    v = row.get(key)
    if not isinstance(v, str) or (not allow_empty and not v.strip()):
        raise ParameterError(f"{where}: field {key!r} must be a non-empty string, got {v!r:.60}")
    return v


def load_metadata(path: str | Path) -> RagMetadata:
    """Read an AudioRAG ``metadata.jsonl``.

    Parameters
    ----------
    path : str or Path
        The metadata file.

    Returns
    -------
    meta : RagMetadata
        Valid rows in file order; each bad row (not JSON, not an object, missing or
        non-string ``audio_path``/``question``/``answer``) gives one error naming the
        file, line and field, and the other rows still load.

    Raises
    ------
    ParameterError
        If the file cannot be read.
    """
    p = Path(path)
    meta = RagMetadata(source=str(p))
    index = -1  # counts every non-blank line, bad ones too, as the answers' ids do

    def bad_line(exc: ParameterError) -> None:
        nonlocal index
        index += 1
        meta.errors.append(str(exc))

    for line, row in read_rows(p, what="AudioRAG metadata", on_error=bad_line, error=ParameterError):
        index += 1
        where = f"{p}:{line}"
        try:
            audio_path = _req_str(row, "audio_path", where)
            question = _req_str(row, "question", where)
            answer = _req_str(row, "answer", where)
        except ParameterError as exc:
            meta.errors.append(str(exc))
            continue
        source = row.get("data_source")
        meta.items.append(
            RagItem(
                index=index,
                line=line,
                audio_path=audio_path.strip(),
                data_source=source if isinstance(source, str) and source else "unknown",
                question=question.strip(),
                answer=answer.strip(),
                attributes=row.get("attributes"),
            )
        )
    return meta


def _run_name(v: Any) -> str | None:
    if v is None:
        return DEFAULT_RUN
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float) and math.isfinite(v) and v == int(v):
        return str(int(v))
    if isinstance(v, str) and v.strip():
        return v.strip()
    return None


def _is_index(text: str) -> bool:
    """True for a plain ASCII row index (``"12"``; not ``"²"`` or a 5000-digit number)."""
    return text.isascii() and text.isdigit() and len(text) <= 18


def load_answers(path: str | Path, meta: RagMetadata) -> tuple[list[RagAnswer], list[str]]:
    """Read answer rows and tie each to a question.

    Parameters
    ----------
    path : str or Path
        Answer JSONL: ``id`` (row index, as int or digit string, or a unique
        ``audio_path``), ``answer`` (string; null means no answer), ``run`` (optional).
    meta : RagMetadata
        The questions.

    Returns
    -------
    answers : list of RagAnswer
        Valid rows in file order (first occurrence of each (run, id)).
    errors : list of str
        One message per rejected row naming file, line and field: missing id, unknown
        id, ambiguous audio path, duplicate (run, id), non-string answer, bad run.

    Raises
    ------
    ParameterError
        If the file cannot be read.
    """
    p = Path(path)
    by_index = meta.by_index()
    by_path = meta.by_path()
    answers: list[RagAnswer] = []
    errors: list[str] = []
    seen: dict[tuple[str, int], int] = {}
    for line, row in read_rows(p, what="answers", on_error=lambda e: errors.append(str(e)), error=ParameterError):
        where = f"{p}:{line}"
        rid = row.get("id")
        index: int | None = None
        if rid is None or (isinstance(rid, str) and not rid.strip()):
            errors.append(f"{where}: field 'id' is missing; give the metadata row index or audio_path")
            continue
        if isinstance(rid, bool):
            errors.append(f"{where}: field 'id' must be a row index or an audio_path, got {rid!r}")
            continue
        if isinstance(rid, int) or (isinstance(rid, str) and _is_index(rid.strip())):
            index = int(rid.strip() if isinstance(rid, str) else rid)
            if index not in by_index:
                errors.append(f"{where}: field 'id' {rid!r} is not the index of a valid metadata row")
                continue
        elif isinstance(rid, str):
            hits = by_path.get(rid.strip(), [])
            if not hits:
                errors.append(f"{where}: field 'id' {rid!r} matches no audio_path in {meta.source}")
                continue
            if len(hits) > 1:
                errors.append(
                    f"{where}: field 'id' {rid!r} is the audio_path of {len(hits)} questions "
                    f"(rows {hits}); use the row index instead"
                )
                continue
            index = hits[0]
        else:
            errors.append(f"{where}: field 'id' must be a row index or an audio_path, got {rid!r:.60}")
            continue
        run = _run_name(row.get("run"))
        if run is None:
            errors.append(f"{where}: field 'run' must be a whole number or a name, got {row.get('run')!r}")
            continue
        ans = row.get("answer")
        if ans is None:
            ans = ""
        if not isinstance(ans, str):
            errors.append(f"{where}: field 'answer' must be a string (or null), got {type(ans).__name__}")
            continue
        key = (run, index)
        if key in seen:
            errors.append(
                f"{where}: duplicate answer for id {rid!r} in run {run!r} (first at line {seen[key]}); ignored"
            )
            continue
        seen[key] = line
        answers.append(RagAnswer(line=line, index=index, run=run, answer=ans))
    return answers, errors

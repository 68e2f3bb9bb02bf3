"""AudioRAG scoring: judged accuracy averaged over runs, per source, with error types.

Ground truth is the public release's ``metadata/metadata.jsonl`` (one row per question:
``audio_path``, ``data_source``, ``attributes``, ``question``, ``answer``, ...). An answer
row (SPEC section 7) has ``id`` (the 0-based row index in the metadata file, or the row's
``audio_path`` when that path is unique), ``answer`` and ``run``.

Flow: :func:`load_metadata` -> :func:`load_answers` -> :func:`resolve_audio` (report
only; scoring does not need the audio) -> :func:`score_audiorag` with a judge
(:class:`OfflineRagJudge` or :class:`LlmRagJudge`).

The paper (AudioRAG, Sec. 4.3-4.4, Appendix B) judges each answer with an LLM, averages
accuracy over three runs and sorts wrong answers into four error types: a) reasoning,
b) audio processing, c) knowledge, d) invalid answer. A missing or empty answer is
decided without the judge: wrong, type d.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from timingbench.errors import ParameterError
from timingbench.jsonio import iter_jsonl
from timingbench.suites.judge import (
    AUDIORAG_CORRECTNESS_PROMPT,
    AUDIORAG_ERROR_TYPE_PROMPT,
    OFFLINE_LABEL,
    ChatClient,
    JudgeError,
    format_attributes,
    normalise_answer,
    offline_match,
    parse_error_type,
    parse_verdict,
)

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
    try:
        rows = list(iter_jsonl(p))
    except OSError as exc:
        raise ParameterError(f"{p}: cannot read AudioRAG metadata ({exc.strerror})") from None
    for index, (line, row) in enumerate(rows):
        where = f"{p}:{line}"
        if isinstance(row, Exception):
            meta.errors.append(str(row))
            continue
        if not isinstance(row, dict):
            meta.errors.append(f"{where}: row must be a JSON object")
            continue
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
    try:
        rows = list(iter_jsonl(p))
    except OSError as exc:
        raise ParameterError(f"{p}: cannot read answers ({exc.strerror})") from None
    for line, row in rows:
        where = f"{p}:{line}"
        if isinstance(row, Exception):
            errors.append(str(row))
            continue
        if not isinstance(row, dict):
            errors.append(f"{where}: row must be a JSON object")
            continue
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


@dataclass(frozen=True)
class AudioResolution:
    """Where the audio of each question was found.

    Attributes
    ----------
    root : str or None
        The audio root searched (None when no root was available: nothing checked).
    resolved : dict of int to str
        Row index -> existing file.
    via_fallback : list of int
        Rows found only through a fallback folder (e.g. ``MusicNet/audios_cropped``).
    unresolved : list of str
        ``audio_path`` values with no file.
    """

    root: str | None
    resolved: dict[int, str]
    via_fallback: list[int]
    unresolved: list[str]


def default_audio_root(metadata_path: str | Path, *, audio_subdir: str) -> Path | None:
    """The release's audio folder ``<release>/<audio_subdir>`` beside ``metadata/``, if present.

    Parameters
    ----------
    metadata_path : str or Path
        ``<release>/metadata/metadata.jsonl``.
    audio_subdir : str
        Config ``audiorag.audio_subdir``.

    Returns
    -------
    root : Path or None
        None when that folder does not exist (the audio check is then skipped).
    """
    cand = Path(metadata_path).resolve().parent.parent / audio_subdir
    return cand if cand.is_dir() else None


def resolve_audio(
    items: Sequence[RagItem], *, audio_root: str | Path | None, fallback_subdirs: Sequence[str]
) -> AudioResolution:
    """Find each question's audio file, with a folder fallback.

    A path ``A/B/name.wav`` that does not exist is retried as ``A/B/<sub>/name.wav`` for
    each fallback folder ``sub`` (config ``audiorag.fallback_subdirs``): the release's
    MusicNet rows name ``MusicNet/<id>.wav`` while the files sit in
    ``MusicNet/audios_cropped/<id>.wav``.

    Parameters
    ----------
    items : sequence of RagItem
        The questions.
    audio_root : str, Path or None
        Folder the ``audio_path`` values are relative to; None skips the check.
    fallback_subdirs : sequence of str
        Folder names tried between the parent folder and the file name.

    Returns
    -------
    resolution : AudioResolution

    Raises
    ------
    ParameterError
        If ``audio_root`` is given but is not a folder.
    """
    if audio_root is None:
        return AudioResolution(root=None, resolved={}, via_fallback=[], unresolved=[])
    root = Path(audio_root)
    if not root.is_dir():
        raise ParameterError(f"--audio-root {root}: not a folder")
    resolved: dict[int, str] = {}
    via: list[int] = []
    unresolved: list[str] = []
    for it in items:
        rel = Path(it.audio_path)
        direct = root / rel
        if direct.is_file():
            resolved[it.index] = str(direct)
            continue
        found = None
        for sub in fallback_subdirs:
            cand = root / rel.parent / sub / rel.name
            if cand.is_file():
                found = cand
                break
        if found is not None:
            resolved[it.index] = str(found)
            via.append(it.index)
        elif it.audio_path not in unresolved:
            unresolved.append(it.audio_path)
    return AudioResolution(root=str(root), resolved=resolved, via_fallback=via, unresolved=unresolved)


@dataclass(frozen=True)
class Judgement:
    """The verdict on one answer.

    Attributes
    ----------
    correct : bool or None
        None when the judge gave no usable verdict (the answer is then *unjudged*).
    error_type : str or None
        ``a``..``d`` for a wrong answer when known.
    note : str or None
        Why a value is missing (judge failure, malformed reply, offline judge).
    """

    correct: bool | None
    error_type: str | None
    note: str | None = None


class RagJudge(Protocol):
    """What :func:`score_audiorag` needs of a judge."""

    label: str
    kind: str

    def judge(self, *, item: RagItem, answer: str) -> Judgement:
        """Judge ``answer`` to ``item``."""
        ...


class OfflineRagJudge:
    """Normalised exact/containment match (:func:`offline_match`); error types a-c unknown.

    Parameters
    ----------
    polarity_words : sequence of str
        Config ``judge.offline_polarity_words``.
    """

    kind = "offline"
    label = OFFLINE_LABEL

    def __init__(self, *, polarity_words: Sequence[str]) -> None:
        self.polarity_words = [str(w) for w in polarity_words]

    def judge(self, *, item: RagItem, answer: str) -> Judgement:
        """Judge ``answer``; a wrong non-empty answer has no error type offline."""
        if offline_match(answer=answer, reference=item.answer, polarity_words=self.polarity_words):
            return Judgement(correct=True, error_type=None)
        return Judgement(correct=False, error_type=None, note="offline judge does not classify errors")


class LlmRagJudge:
    """The paper's protocol through an OpenAI-compatible judge.

    One request decides correctness; for a wrong answer a second request assigns the
    error type (a-d). A reply that cannot be read is asked again up to the client's
    retry count; after that the answer is unjudged (correctness) or unclassified
    (error type), with the reply quoted in the note.

    Parameters
    ----------
    client : ChatClient
    true_words, false_words : sequence of str
        Config ``judge.verdict_*_words``.
    letters : sequence of str
        The error-type letters (keys of config ``audiorag.error_types``).
    """

    kind = "llm"

    def __init__(
        self,
        *,
        client: ChatClient,
        true_words: Sequence[str],
        false_words: Sequence[str],
        letters: Sequence[str],
    ) -> None:
        self.client = client
        self.true_words = list(true_words)
        self.false_words = list(false_words)
        self.letters = list(letters)
        self.label = client.label

    def _ask_parsed(self, prompt: str, parse: Callable[[str], Any]) -> tuple[Any, str | None]:
        last = ""
        for _ in range(self.client.max_retries + 1):
            try:
                reply = self.client.ask(prompt)
            except JudgeError as exc:
                return None, str(exc)
            value = parse(reply.content)
            if value is not None:
                return value, None
            last = reply.content
        return None, f"malformed judge reply: {last[:120]!r}"

    def judge(self, *, item: RagItem, answer: str) -> Judgement:
        """Judge ``answer`` (two requests at most, each retried as described)."""
        fields = {
            "question": item.question,
            "audio_attr": format_attributes(item.attributes),
            "gt_answer": item.answer,
            "model_answer": answer,
        }
        verdict, note = self._ask_parsed(
            AUDIORAG_CORRECTNESS_PROMPT.format(**fields),
            lambda t: parse_verdict(t, true_words=self.true_words, false_words=self.false_words),
        )
        if verdict is None:
            return Judgement(correct=None, error_type=None, note=note)
        if verdict:
            return Judgement(correct=True, error_type=None)
        letter, note = self._ask_parsed(
            AUDIORAG_ERROR_TYPE_PROMPT.format(**fields),
            lambda t: parse_error_type(t, letters=self.letters),
        )
        return Judgement(correct=False, error_type=letter, note=note)


def _run_sort_key(run: str) -> tuple[int, float, str]:
    try:
        return (0, float(run), run)
    except ValueError:
        return (1, 0.0, run)


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def score_audiorag(
    meta: RagMetadata,
    answers: Sequence[RagAnswer],
    *,
    judge: RagJudge,
    error_types: Mapping[str, str],
    workers: int,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Judge every (run, question) and aggregate.

    Every valid question is scored in every run that has at least one answer row; a
    question with no answer in a run, or an empty answer, is wrong with error type ``d``
    without asking the judge.

    Parameters
    ----------
    meta : RagMetadata
        The questions.
    answers : sequence of RagAnswer
        Answer rows from :func:`load_answers`.
    judge : RagJudge
        Offline or LLM judge.
    error_types : mapping of str to str
        Letter -> name (config ``audiorag.error_types``).
    workers : int
        Concurrent judge calls (>= 1).

    Returns
    -------
    rows : list of dict
        One row per (run, question) in run then row order: ``id``, ``run``,
        ``audio_path``, ``data_source``, ``answer``, ``reference``, ``answered``,
        ``correct`` (bool or null when unjudged), ``error_type``, ``judge_note``.
    summary : dict
        ``accuracy_mean`` (mean over runs of per-run accuracy over judged answers),
        ``runs`` (per-run counts and accuracy), ``per_source`` (per-run and mean
        accuracy per ``data_source``), ``error_types`` (histogram over wrong answers,
        all runs, with ``unclassified``), ``n_questions``, ``unjudged``, ``missing``.

    Raises
    ------
    ParameterError
        If ``workers`` < 1.
    """
    if int(workers) != workers or workers < 1:
        raise ParameterError(f"judge workers must be a whole number >= 1, got {workers!r}")
    runs = sorted({a.run for a in answers}, key=_run_sort_key)
    given = {(a.run, a.index): a for a in answers}
    jobs: list[tuple[str, RagItem, RagAnswer | None]] = [
        (run, it, given.get((run, it.index))) for run in runs for it in meta.items
    ]

    def one(job: tuple[str, RagItem, RagAnswer | None]) -> Judgement:
        _, item, ans = job
        if ans is None:
            return Judgement(correct=False, error_type="d", note="no answer row")
        if not normalise_answer(ans.answer):
            return Judgement(correct=False, error_type="d", note="empty answer")
        return judge.judge(item=item, answer=ans.answer)

    if workers == 1 or len(jobs) < 2:
        verdicts = [one(j) for j in jobs]
    else:
        with ThreadPoolExecutor(max_workers=int(workers)) as pool:
            verdicts = list(pool.map(one, jobs))

    rows: list[dict[str, Any]] = []
    for (run, item, ans), v in zip(jobs, verdicts, strict=True):
        rows.append(
            {
                "id": item.index,
                "run": run,
                "audio_path": item.audio_path,
                "data_source": item.data_source,
                "answer": ans.answer if ans is not None else None,
                "reference": item.answer,
                "answered": ans is not None,
                "correct": v.correct,
                "error_type": v.error_type,
                "judge_note": v.note,
            }
        )

    per_run: dict[str, dict[str, Any]] = {}
    sources = sorted({it.data_source for it in meta.items})
    src_run: dict[str, dict[str, float | None]] = {s: {} for s in sources}
    hist: Counter[str] = Counter()
    for run in runs:
        rr = [r for r in rows if r["run"] == run]
        judged = [r for r in rr if r["correct"] is not None]
        n_ok = sum(1 for r in judged if r["correct"])
        per_run[run] = {
            "n": len(rr),
            "judged": len(judged),
            "correct": n_ok,
            "unjudged": len(rr) - len(judged),
            "missing": sum(1 for r in rr if not r["answered"]),
            "accuracy": _ratio(n_ok, len(judged)),
        }
        for s in sources:
            sj = [r for r in judged if r["data_source"] == s]
            src_run[s][run] = _ratio(sum(1 for r in sj if r["correct"]), len(sj))
        for r in rr:
            if r["correct"] is False:
                hist[r["error_type"] if r["error_type"] in error_types else "unclassified"] += 1

    def mean(values: Sequence[float | None]) -> float | None:
        vals = [v for v in values if v is not None]
        return sum(vals) / len(vals) if vals else None

    n_by_source = Counter(it.data_source for it in meta.items)
    summary: dict[str, Any] = {
        "n_questions": len(meta.items),
        "n_runs": len(runs),
        "accuracy_mean": mean([per_run[r]["accuracy"] for r in runs]),
        "runs": per_run,
        "per_source": {
            s: {"n": n_by_source[s], "accuracy_mean": mean(list(src_run[s].values())), "per_run": src_run[s]}
            for s in sources
        },
        "error_types": {
            **{letter: {"name": name, "count": hist.get(letter, 0)} for letter, name in error_types.items()},
            "unclassified": {"name": "unclassified", "count": hist.get("unclassified", 0)},
        },
        "unjudged": sum(v["unjudged"] for v in per_run.values()),
        "missing": sum(v["missing"] for v in per_run.values()),
    }
    return rows, summary

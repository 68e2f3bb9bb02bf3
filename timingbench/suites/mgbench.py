"""MGBench (MusicGroundingBench) scoring: temporal music grounding and understanding.

Ground truth rows (SPEC section 7): ``id``, ``subset`` (``3N`` | ``2B``), ``task``
(``grounding`` | ``understanding``), ``category``, ``question``, and ``intervals``
(grounding, ``[[start, end], ...]`` in seconds, possibly empty) or ``answer``
(understanding, text). Response rows: ``id`` and ``response`` (free text) or
``intervals`` (already extracted spans).

Grounding (paper Sec. 4.1), per subset and per category:

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

Understanding (paper Sec. 4.2): a judge first decides whether the response answers the
question (IFR), then its binary correctness. Global and per-concept accuracy are correct
answers over *instruction-following* answers, as in the paper's Table 3.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from timingbench.suites.answer_scope import final_answer
from timingbench.suites.judge import (
    MGBENCH_SPAN_PROMPT,
    MGBENCH_UNDERSTANDING_PROMPT,
    OFFLINE_LABEL,
    ChatClient,
    JudgeError,
    normalise_answer,
    offline_match,
    parse_follow_correct,
)
from timingbench.suites.tag_parse import parse_response
from timingbench.convert import round_time
from timingbench.errors import ParameterError
from timingbench.intervals import match_greedy, union_iou, validate_intervals
from timingbench.jsonio import iter_jsonl

SUBSETS = ("3N", "2B")
TASKS = ("grounding", "understanding")
ParseStatus = Literal["spans", "empty", "invalid"]

# --------------------------------------------------------------------------- rows


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


def _id_rows(
    path: str | Path, out: Loaded, seen: Mapping[str, int], *, what: str
) -> Iterator[tuple[int, str, str, dict[str, Any]]]:
    """Yield ``(line, where, id, row)`` for each JSON-object row with a new id.

    Rows that are not JSON objects, lack an id or repeat one already in ``seen`` are
    reported in ``out.errors`` and skipped; the caller records an id in ``seen`` once its
    row is accepted.

    Raises
    ------
    ParameterError
        If the file cannot be read.
    """
    p = Path(path)
    try:
        rows = list(iter_jsonl(p))
    except OSError as exc:
        raise ParameterError(f"{p}: cannot read {what} ({exc.strerror})") from None
    for line, row in rows:
        where = f"{p}:{line}"
        if isinstance(row, Exception):
            out.errors.append(str(row))
            continue
        if not isinstance(row, dict):
            out.errors.append(f"{where}: row must be a JSON object")
            continue
        rid = _row_id(row)
        if rid is None:
            out.errors.append(f"{where}: field 'id' is missing or not a string/integer")
            continue
        if rid in seen:
            out.errors.append(f"{where}: duplicate id {rid!r} (first at line {seen[rid]}); row ignored")
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


def _finite(v: int | float) -> bool:
    try:
        return math.isfinite(v)
    except OverflowError:  # an integer beyond the float range
        return False


def _spans_field(value: Any, where: str) -> np.ndarray:
    """Validate a JSON ``intervals`` value: a list of ``[start, end]`` number pairs."""
    if not isinstance(value, list):
        raise ParameterError(f"{where}: field 'intervals' must be a list of [start, end] pairs in seconds")
    for k, pair in enumerate(value):
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            raise ParameterError(f"{where}: field 'intervals'[{k}] must be a [start, end] pair, got {pair!r:.60}")
        for v in pair:
            if isinstance(v, bool) or not isinstance(v, int | float) or not _finite(v):
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
    seen: dict[str, int] = {}
    for line, where, rid, row in _id_rows(path, out, seen, what="MGBench ground truth"):
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
        seen[rid] = line
        out.rows[rid] = MgQuestion(rid, line, subset, str(task), category, question.strip(), intervals, answer)
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
    seen: dict[str, int] = {}
    for line, where, rid, row in _id_rows(path, out, seen, what="responses"):
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
        seen[rid] = line
        out.rows[rid] = MgResponse(rid, line, text, spans)
    return out


# --------------------------------------------------------------------------- span extraction


@dataclass(frozen=True)
class SpanParse:
    """Result of extracting spans from a response.

    Attributes
    ----------
    status : str
        ``spans`` (at least one span), ``empty`` (an explicit empty answer) or
        ``invalid`` (no grounding-style answer: the instruction was not followed).
    spans : np.ndarray
        Shape (n, 2), seconds (n = 0 unless ``status == "spans"``).
    note : str or None
        Why a response is invalid, or which spans were dropped.
    """

    status: ParseStatus
    spans: np.ndarray
    note: str | None = None


_NO_SPANS = np.zeros((0, 2), dtype=np.float64)
_WHITESPACE_RUN = re.compile(r"\s+")


def _squeeze(m: re.Match[str]) -> str:
    return "\n" if "\n" in m.group() else " "


def _is_time(v: Any) -> bool:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return False
    try:
        return math.isfinite(v)
    except OverflowError:  # an integer beyond the float range
        return False


def _json_spans(text: str) -> list[tuple[float, float]] | None:
    t = text.strip()
    if not t or t[0] not in "[{":
        return None
    try:
        doc = json.loads(t)
    except (ValueError, RecursionError):  # not JSON, an over-long integer, too deep
        return None
    if isinstance(doc, dict):
        for key in ("intervals", "spans", "segments", "answer", "timestamps"):
            if key in doc:
                doc = doc[key]
                break
        else:
            return None
    if not isinstance(doc, list):
        return None
    if len(doc) == 2 and all(isinstance(v, int | float) and not isinstance(v, bool) for v in doc):
        doc = [doc]
    out: list[tuple[float, float]] = []
    for item in doc:
        if isinstance(item, dict):
            s = item.get("start", item.get("onset"))
            e = item.get("end", item.get("offset"))
        elif isinstance(item, list | tuple) and len(item) == 2:
            s, e = item
        else:
            return None
        if not (_is_time(s) and _is_time(e)):
            return None
        out.append((float(s), float(e)))  # type: ignore[arg-type]
    return out


def extract_spans(
    text: str | None, *, empty_patterns: Sequence[str], strip_reasoning: bool = True
) -> SpanParse:
    """Regex span extractor for responses of models trained to output time spans.

    A response that is one JSON document (``[[s, e], ...]``, ``{"intervals": ...}``,
    ``[{"start":, "end":}]``) is read as such (``[]``: an explicit empty answer). Any
    other response goes through the time-span parsing core shared with TAG-Bench
    (:func:`timingbench.suites.tag_parse.parse_response`): embedded JSON, start/end
    tables, ranges (``1.2-2.0``, ``1.2 s ~ 2.0 s``, ``from 1.2 to 2.0``, ``between 1.2
    and 2.0``, ``-->``), bracketed pairs, keyed fields (``start: 1.2, end: 2.0``),
    clocks, ``ms``, spelled-out numbers, negated clauses left out. Without any span, a
    phrase matching one of ``empty_patterns`` is an explicit empty answer.

    Parameters
    ----------
    text : str or None
        The model response (None: no response).
    empty_patterns : sequence of str
        Regular expressions (case-insensitive) of explicit empty answers (config
        ``mgbench.empty_answer_patterns``), matched against the final answer with each
        run of whitespace shortened to one character.
    strip_reasoning : bool, optional
        Read only the final answer: reasoning blocks removed, only the text after the
        last final-answer marker kept (config ``mgbench.strip_reasoning``).

    Returns
    -------
    parse : SpanParse
        Spans with ``end <= start`` are dropped and named in ``note``; repeated spans
        are kept once.

    Raises
    ------
    ParameterError
        If ``text`` is neither a string nor None, or an empty-answer pattern is not a
        regular expression.
    """
    if text is not None and not isinstance(text, str):
        raise ParameterError(f"response must be a string or None, got {type(text).__name__}")
    if text is None or not text.strip():
        return SpanParse("invalid", _NO_SPANS, "no response")
    if strip_reasoning:
        text = final_answer(text)
        if not text.strip():
            return SpanParse("invalid", _NO_SPANS, "no answer after the reasoning")
    found = _json_spans(text)
    if found is not None and not found:
        return SpanParse("empty", _NO_SPANS)
    if found is not None:
        good = [(s, e) for s, e in dict.fromkeys(found) if e > s]
        bad = [(s, e) for s, e in dict.fromkeys(found) if e <= s]
    else:
        parsed = parse_response(text, strip_reasoning=False)
        good, bad = list(parsed.intervals), list(parsed.dropped)
    note = f"dropped {len(bad)} span(s) with end before start: {bad[:3]}" if bad else None
    if good:
        return SpanParse("spans", round_time(np.asarray(good, dtype=np.float64)).reshape(-1, 2), note)
    squeezed = _WHITESPACE_RUN.sub(_squeeze, text)
    for pat in empty_patterns:
        try:
            hit = re.search(pat, squeezed, flags=re.IGNORECASE | re.MULTILINE)
        except (re.error, TypeError) as exc:
            raise ParameterError(
                f"mgbench.empty_answer_patterns: {pat!r} is not a regular expression ({exc})"
            ) from None
        if hit:
            return SpanParse("empty", _NO_SPANS, note)
    return SpanParse("invalid", _NO_SPANS, note or "no time span and no explicit empty answer")


class SpanExtractor(Protocol):
    """Turns a response into spans."""

    label: str

    def extract(self, text: str | None) -> SpanParse:
        """Extract spans from ``text``."""
        ...


class RegexSpanExtractor:
    """:func:`extract_spans` with configured empty-answer patterns and reasoning rule."""

    label = "regex"

    def __init__(self, *, empty_patterns: Sequence[str], strip_reasoning: bool = True) -> None:
        self.empty_patterns = [str(p) for p in empty_patterns]
        self.strip_reasoning = bool(strip_reasoning)

    def extract(self, text: str | None) -> SpanParse:
        """Extract spans from ``text`` (see :func:`extract_spans`)."""
        return extract_spans(text, empty_patterns=self.empty_patterns,
                             strip_reasoning=self.strip_reasoning)


class LlmSpanExtractor:
    """Span extraction by an auxiliary LLM (paper Sec. 4.1, for free-form baselines).

    The LLM only rewrites the response as a JSON list of spans (``[]`` for an explicit
    empty answer, ``INVALID`` when it gives none); its reply is read by the regex
    extractor. An unreadable reply is asked again up to the client's retry count, then
    the response counts as not following the instruction.

    Parameters
    ----------
    client : ChatClient
    empty_patterns : sequence of str
        As :class:`RegexSpanExtractor`.
    """

    def __init__(self, *, client: ChatClient, empty_patterns: Sequence[str]) -> None:
        self.client = client
        self.empty_patterns = [str(p) for p in empty_patterns]
        self.label = f"llm-extractor {client.label}"

    def extract(self, text: str | None) -> SpanParse:
        """Extract spans from ``text`` through the LLM."""
        if text is None or not text.strip():
            return SpanParse("invalid", _NO_SPANS, "no response")
        last = ""
        for _ in range(self.client.max_retries + 1):
            try:
                reply = self.client.ask(MGBENCH_SPAN_PROMPT.format(response=text)).content.strip()
            except JudgeError as exc:
                return SpanParse("invalid", _NO_SPANS, f"extractor failed: {exc}")
            if reply.strip("`\"' .").casefold() == "invalid":
                return SpanParse("invalid", _NO_SPANS, "extractor: no spans given")
            body = reply.strip().strip("`").removeprefix("json").strip()
            spans = _json_spans(body)
            if spans is not None:
                good = [(s, e) for s, e in spans if e >= s]
                if not good:
                    return SpanParse("empty", _NO_SPANS)
                return SpanParse("spans", round_time(np.asarray(good, dtype=np.float64)).reshape(-1, 2))
            last = reply
        return SpanParse("invalid", _NO_SPANS, f"malformed extractor reply: {last[:120]!r}")


# --------------------------------------------------------------------------- grounding


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


# --------------------------------------------------------------------------- understanding


@dataclass(frozen=True)
class UnderstandingVerdict:
    """Judge verdict on one understanding answer (None: unjudged)."""

    follows: bool | None
    correct: bool | None
    note: str | None = None


class UnderstandingJudge(Protocol):
    """What :func:`score_mgbench` needs of an understanding judge."""

    label: str
    kind: str

    def judge(self, *, question: MgQuestion, answer: str | None) -> UnderstandingVerdict:
        """Judge ``answer`` to ``question``."""
        ...


class OfflineUnderstandingJudge:
    """Offline stand-in: follows = a non-empty answer; correct = :func:`offline_match`."""

    kind = "offline"
    label = OFFLINE_LABEL

    def __init__(self, *, polarity_words: Sequence[str]) -> None:
        self.polarity_words = [str(w) for w in polarity_words]

    def judge(self, *, question: MgQuestion, answer: str | None) -> UnderstandingVerdict:
        """Judge ``answer`` offline."""
        if answer is None or not normalise_answer(answer):
            return UnderstandingVerdict(False, False)
        ok = offline_match(answer=answer, reference=question.answer or "", polarity_words=self.polarity_words)
        return UnderstandingVerdict(True, ok)


class LlmUnderstandingJudge:
    """The paper's two-step judgement (follows, then correct) through one LLM request.

    A reply without readable ``FOLLOWS``/``CORRECT`` lines is asked again up to the
    client's retry count; after that the answer is unjudged.

    Parameters
    ----------
    client : ChatClient
    true_words, false_words : sequence of str
        Config ``judge.verdict_*_words``.
    """

    kind = "llm"

    def __init__(self, *, client: ChatClient, true_words: Sequence[str], false_words: Sequence[str]) -> None:
        self.client = client
        self.true_words = list(true_words)
        self.false_words = list(false_words)
        self.label = client.label

    def judge(self, *, question: MgQuestion, answer: str | None) -> UnderstandingVerdict:
        """Judge ``answer``; an empty answer does not follow the instruction (no request)."""
        if answer is None or not answer.strip():
            return UnderstandingVerdict(False, False, "empty answer")
        prompt = MGBENCH_UNDERSTANDING_PROMPT.format(
            question=question.question, gt_answer=question.answer, model_answer=answer
        )
        last = ""
        for _ in range(self.client.max_retries + 1):
            try:
                reply = self.client.ask(prompt)
            except JudgeError as exc:
                return UnderstandingVerdict(None, None, str(exc))
            follows, correct = parse_follow_correct(
                reply.content, true_words=self.true_words, false_words=self.false_words
            )
            if follows is not None and correct is not None:
                return UnderstandingVerdict(follows, correct)
            last = reply.content
        return UnderstandingVerdict(None, None, f"malformed judge reply: {last[:120]!r}")


def concept_group(category: str, *, groups: Sequence[str]) -> str:
    """Map a category label onto one of the concept groups (spelling-insensitive).

    ``"Bar comparison"``, ``"BarComparison"`` and ``"bar_comparison"`` all map to
    ``bar_comparison``; a label matching no group is returned unchanged.
    """

    def key(s: str) -> str:
        return re.sub(r"[^0-9a-z]", "", s.casefold())

    for g in groups:
        if key(g) == key(category):
            return g
    return category


def aggregate_understanding(
    verdicts: Sequence[tuple[str, UnderstandingVerdict]], *, groups: Sequence[str]
) -> dict[str, Any]:
    """Table 3 metrics from (concept group, verdict) pairs.

    Returns
    -------
    metrics : dict
        ``n`` (judged), ``unjudged``, ``ifr`` with ``n_following``, ``accuracy`` (correct
        over following, with ``n_correct``), ``accuracy_over_all`` (correct over judged),
        and ``per_concept``: for each group ``n``, ``n_following``, ``n_correct``,
        ``accuracy`` (over following; null if none follow).
    """
    judged = [(g, v) for g, v in verdicts if v.follows is not None and v.correct is not None]
    fol = [(g, v) for g, v in judged if v.follows]
    ok = [(g, v) for g, v in fol if v.correct]
    per: dict[str, Any] = {}
    names = list(groups) + sorted({g for g, _ in verdicts} - set(groups))
    for g in names:
        n_g = sum(1 for x, _ in judged if x == g)
        f_g = sum(1 for x, _ in fol if x == g)
        c_g = sum(1 for x, _ in ok if x == g)
        if n_g or g in groups:
            per[g] = {"n": n_g, "n_following": f_g, "n_correct": c_g, "accuracy": c_g / f_g if f_g else None}
    return {
        "n": len(judged),
        "unjudged": len(verdicts) - len(judged),
        "n_following": len(fol),
        "ifr": len(fol) / len(judged) if judged else None,
        "n_correct": len(ok),
        "accuracy": len(ok) / len(fol) if fol else None,
        "accuracy_over_all": len(ok) / len(judged) if judged else None,
        "per_concept": per,
    }


# --------------------------------------------------------------------------- evaluate


def _map(fn: Callable[[Any], Any], items: Sequence[Any], workers: int) -> list[Any]:
    if workers <= 1 or len(items) < 2:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, items))


def score_mgbench(
    questions: Mapping[str, MgQuestion],
    responses: Mapping[str, MgResponse],
    *,
    extractor: SpanExtractor,
    judge: UnderstandingJudge,
    iou_thresholds: Sequence[float],
    concept_groups: Sequence[str],
    workers: int = 1,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Score every question; a question without a response does not follow the instruction.

    Parameters
    ----------
    questions : mapping of id to MgQuestion
    responses : mapping of id to MgResponse
    extractor : SpanExtractor
        Regex or LLM span extractor (used when a response has no ``intervals``).
    judge : UnderstandingJudge
        Offline or LLM judge for understanding questions.
    iou_thresholds : sequence of float
        Config ``mgbench.iou_thresholds``.
    concept_groups : sequence of str
        Config ``mgbench.concept_groups``.
    workers : int
        Concurrent extractor/judge requests.

    Returns
    -------
    rows : list of dict
        One row per question in ground-truth order, with the evidence.
    summary : dict
        ``grounding``: per subset (``3N``, ``2B``) the metrics of
        :func:`aggregate_grounding` plus ``per_category``; ``understanding``: per subset
        the metrics of :func:`aggregate_understanding`; ``missing``: question ids without
        a response.

    Raises
    ------
    ParameterError
        If a threshold is outside (0, 1] or ``workers`` < 1.
    """
    if int(workers) != workers or workers < 1:
        raise ParameterError(f"workers must be a whole number >= 1, got {workers!r}")
    qs = sorted(questions.values(), key=lambda q: q.line)
    missing = [q.id for q in qs if q.id not in responses]

    def ground(q: MgQuestion) -> SpanParse:
        r = responses.get(q.id)
        if r is None:
            return SpanParse("invalid", _NO_SPANS, "no response row")
        if r.intervals is not None:
            return SpanParse("spans" if len(r.intervals) else "empty", r.intervals)
        return extractor.extract(r.response)

    def understand(q: MgQuestion) -> UnderstandingVerdict:
        r = responses.get(q.id)
        if r is None:
            return UnderstandingVerdict(False, False, "no response row")
        return judge.judge(question=q, answer=r.response)

    gq = [q for q in qs if q.task == "grounding"]
    uq = [q for q in qs if q.task == "understanding"]
    parses = dict(zip([q.id for q in gq], _map(ground, gq, int(workers)), strict=True))
    verdicts = dict(zip([q.id for q in uq], _map(understand, uq, int(workers)), strict=True))

    rows: list[dict[str, Any]] = []
    evid: dict[str, dict[str, Any]] = {}
    for q in qs:
        base: dict[str, Any] = {"id": q.id, "subset": q.subset, "task": q.task, "category": q.category}
        resp = responses.get(q.id)
        base["response"] = resp.response if resp is not None else None
        if q.task == "grounding":
            ref = q.intervals if q.intervals is not None else _NO_SPANS
            parse = parses[q.id]
            ev = score_grounding_question(ref, parse, iou_thresholds=iou_thresholds)
            evid[q.id] = ev
            base.update(
                {
                    "reference": ref.tolist(),
                    "parse_status": parse.status,
                    "predicted": parse.spans.tolist(),
                    "parse_note": parse.note,
                    **ev,
                }
            )
        else:
            v = verdicts[q.id]
            base.update(
                {
                    "concept": concept_group(q.category, groups=concept_groups),
                    "reference": q.answer,
                    "follows": v.follows,
                    "correct": v.correct,
                    "judge_note": v.note,
                }
            )
        rows.append(base)

    grounding: dict[str, Any] = {}
    understanding: dict[str, Any] = {}
    for subset in SUBSETS:
        g = [q for q in gq if q.subset == subset]
        if g:
            block = aggregate_grounding([evid[q.id] for q in g], iou_thresholds=iou_thresholds)
            block["per_category"] = {
                c: aggregate_grounding([evid[q.id] for q in g if q.category == c], iou_thresholds=iou_thresholds)
                for c in sorted({q.category for q in g})
            }
            grounding[subset] = block
        u = [q for q in uq if q.subset == subset]
        if u:
            understanding[subset] = aggregate_understanding(
                [(concept_group(q.category, groups=concept_groups), verdicts[q.id]) for q in u],
                groups=concept_groups,
            )
    summary = {
        "n_questions": len(qs),
        "n_grounding": len(gq),
        "n_understanding": len(uq),
        "grounding": grounding,
        "understanding": understanding,
        "missing": missing,
    }
    return rows, summary

"""MGBench span extraction: the time-span parsing core plus MGBench's own answer rules.

MGBench (paper Sec. 4.1) reads the spans of models trained to output them with regular
expressions, and recovers those of free-form baselines through an auxiliary LLM that only
rewrites the answer as a JSON list. Both extractors here read spans with the shared core
(:mod:`timingbench.suites.span_parse`); this layer adds what MGBench's metrics need:

- a response that is one JSON document is read as such, and ``[]`` is an *explicit empty
  answer* (15 % of questions have one, Sec. 3.2.2);
- without a span, a phrase matching a configured empty-answer pattern (config
  ``mgbench.empty_answer_patterns``) is an explicit empty answer too;
- anything else does not follow the instruction (``invalid``: it counts against IFR).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from timingbench.convert import round_time
from timingbench.errors import ParameterError
from timingbench.params.benchmarks import MgbenchParams
from timingbench.suites.answer_scope import final_answer
from timingbench.suites.judge import MGBENCH_SPAN_PROMPT, ChatClient, JudgeError
from timingbench.suites.span_parse import clean_spans, document_spans, parse_spans

__all__ = ["ParseStatus", "SpanParse", "NO_SPANS", "extract_spans", "SpanExtractor", "RegexSpanExtractor",
           "LlmSpanExtractor"]

ParseStatus = Literal["spans", "empty", "invalid"]


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


#: No spans: shape (0, 2).
NO_SPANS = np.zeros((0, 2), dtype=np.float64)
_WHITESPACE_RUN = re.compile(r"\s+")


def _squeeze(m: re.Match[str]) -> str:
    return "\n" if "\n" in m.group() else " "


def _dropped_note(bad: Sequence[tuple[float, float]]) -> str | None:
    return f"dropped {len(bad)} span(s) with end before start: {list(bad[:3])}" if bad else None


def _as_spans(good: Sequence[tuple[float, float]]) -> np.ndarray:
    """Spans rounded for scoring; a time that rounding overflows (beyond ~1e302 s) is no time."""
    with np.errstate(over="ignore", invalid="ignore"):
        spans = round_time(np.asarray(good, dtype=np.float64)).reshape(-1, 2)
    return spans[np.isfinite(spans).all(axis=1)]


def extract_spans(
    text: str | None, *, empty_patterns: Sequence[str], strip_reasoning: bool = True
) -> SpanParse:
    """Regex span extractor for responses of models trained to output time spans.

    A response that is one JSON document (``[[s, e], ...]``, ``{"intervals": ...}``,
    ``[{"start":, "end":}]``) is read as such (``[]``: an explicit empty answer). Any
    other response goes through the time-span parsing core shared with TAG-Bench
    (:func:`timingbench.suites.span_parse.parse_spans`): embedded JSON, start/end
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
        return SpanParse("invalid", NO_SPANS, "no response")
    if strip_reasoning:
        text = final_answer(text)
        if not text.strip():
            return SpanParse("invalid", NO_SPANS, "no answer after the reasoning")
    found = document_spans(text)
    if found is not None and not found:
        return SpanParse("empty", NO_SPANS)
    if found is not None:
        good, bad = clean_spans(found)
    else:
        parsed = parse_spans(text, strip_reasoning=False)
        good, bad = parsed.intervals, parsed.dropped
    note = _dropped_note(bad)
    spans = _as_spans(good)
    if len(spans):
        return SpanParse("spans", spans, note)
    squeezed = _WHITESPACE_RUN.sub(_squeeze, text)
    for pat in empty_patterns:
        try:
            hit = re.search(pat, squeezed, flags=re.IGNORECASE | re.MULTILINE)
        except (re.error, TypeError) as exc:
            raise ParameterError(
                f"mgbench.empty_answer_patterns: {pat!r} is not a regular expression ({exc})"
            ) from None
        if hit:
            return SpanParse("empty", NO_SPANS, note)
    return SpanParse("invalid", NO_SPANS, note or "no time span and no explicit empty answer")


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

    @classmethod
    def from_params(cls, params: MgbenchParams) -> RegexSpanExtractor:
        """The extractor of config section ``mgbench``."""
        return cls(empty_patterns=params.empty_answer_patterns, strip_reasoning=params.strip_reasoning)

    def extract(self, text: str | None) -> SpanParse:
        """Extract spans from ``text`` (see :func:`extract_spans`)."""
        return extract_spans(text, empty_patterns=self.empty_patterns,
                             strip_reasoning=self.strip_reasoning)


class LlmSpanExtractor:
    """Span extraction by an auxiliary LLM (paper Sec. 4.1, for free-form baselines).

    The LLM only rewrites the response as a JSON list of spans (``[]`` for an explicit
    empty answer, ``INVALID`` when it gives none); its reply is read by the core's
    :func:`~timingbench.suites.span_parse.document_spans` and its spans pass the same
    :func:`~timingbench.suites.span_parse.clean_spans` rule as the regex extractor's (a
    reply whose every span is reversed does not follow the instruction). An unreadable
    reply is asked again up to the client's retry count, then the response counts as not
    following the instruction.

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
            return SpanParse("invalid", NO_SPANS, "no response")
        last = ""
        for _ in range(self.client.max_retries + 1):
            try:
                reply = self.client.ask(MGBENCH_SPAN_PROMPT.format(response=text)).content.strip()
            except JudgeError as exc:
                return SpanParse("invalid", NO_SPANS, f"extractor failed: {exc}")
            if reply.strip("`\"' .").casefold() == "invalid":
                return SpanParse("invalid", NO_SPANS, "extractor: no spans given")
            body = reply.strip().strip("`").removeprefix("json").strip()
            spans = document_spans(body)
            if spans is not None:
                if not spans:
                    return SpanParse("empty", NO_SPANS)
                good, bad = clean_spans(spans)
                kept = _as_spans(good)
                if not len(kept):
                    return SpanParse("invalid", NO_SPANS, _dropped_note(bad) or "extractor: no usable span")
                return SpanParse("spans", kept, _dropped_note(bad))
            last = reply
        return SpanParse("invalid", NO_SPANS, f"malformed extractor reply: {last[:120]!r}")

"""The TAG-Bench layer of the time-span parsing core.

TAG-Bench (Sec. 4.2) recovers timestamps with a deterministic rule-based cascade -- the
shared core, :func:`timingbench.suites.span_parse.parse_spans` -- and adds two rules of its
own, kept here:

- an answer from which the cascade recovers no interval is a *parsing failure*, scored
  against the empty-prediction sentinel ``0s~0s`` (:data:`SENTINEL`): IoU 0, a miss at
  every threshold, gIoU -1, zero predicted intervals;
- the constrained-JSON track reads a row's ``intervals`` field directly
  (:func:`parse_interval_list`) instead of free text.

Many answers are parsed by :func:`parse_responses` (in worker processes for large files).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from timingbench.errors import ParameterError
from timingbench.suites.span_parse import ParseResult, clean_spans, parse_spans, time_value_seconds

__all__ = ["SENTINEL", "FAILED", "parse_response", "parse_interval_list", "parse_responses"]

#: The empty-prediction sentinel ``0s~0s`` a parsing failure is scored against.
SENTINEL: tuple[tuple[float, float], ...] = ((0.0, 0.0),)

#: The result of an answer that yields no interval (or of a missing or bad row).
FAILED = ParseResult((), "none")


def parse_response(text: str, *, strip_reasoning: bool = True) -> ParseResult:
    """Recover the intervals a free-form TAG-Bench answer states (the core's cascade).

    Parameters
    ----------
    text : str
        The model's answer.
    strip_reasoning : bool, optional
        Parse only the final answer (config ``tag.strip_reasoning``; see
        :func:`timingbench.suites.span_parse.parse_spans`).

    Returns
    -------
    result : ParseResult
        ``result.failed`` when no interval was recovered: a parsing failure, scored
        against :data:`SENTINEL`.

    Raises
    ------
    ParameterError
        If ``text`` is not a string.
    """
    return parse_spans(text, strip_reasoning=strip_reasoning)


def parse_interval_list(value: Any, *, where: str) -> ParseResult:
    """Read the constrained-JSON track's ``intervals`` field.

    Parameters
    ----------
    value : Any
        The decoded field: a list of ``[start, end]`` pairs in seconds (numbers, or time
        strings such as ``"00:12.5"``).
    where : str
        Location used in error messages (``"responses.jsonl:12 (id q7)"``).

    Returns
    -------
    result : ParseResult
        Stage ``"json"``; failed when the list is empty or holds no interval with
        ``start < end``.

    Raises
    ------
    ParameterError
        If the field is not a list of pairs or holds a time that is not a number or a
        time string.
    """
    if not isinstance(value, list):
        raise ParameterError(f"{where}: field 'intervals' must be a list of [start, end] pairs")
    raw: list[tuple[float, float]] = []
    for k, pair in enumerate(value):
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            raise ParameterError(
                f"{where}: field 'intervals' item {k} must be a [start, end] pair, got {pair!r}"
            )
        ends = [time_value_seconds(x) for x in pair]
        if ends[0] is None or ends[1] is None:
            raise ParameterError(
                f"{where}: field 'intervals' item {k} = {pair!r} holds a non-numeric time"
            )
        raw.append((ends[0], ends[1]))
    got = clean_spans(raw)[0]
    return ParseResult(got, "json") if got else FAILED


_MIN_TEXTS_PER_JOB = 5000


def _parse_chunk(texts: list[str], strip_reasoning: bool = True) -> list[ParseResult]:
    return [parse_spans(t, strip_reasoning=strip_reasoning) for t in texts]


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
        Parse only the final answer (see :func:`parse_response`).

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

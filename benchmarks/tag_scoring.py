"""Benchmark: TAG-Bench scoring of 100k synthetic queries.

Builds a synthetic ground-truth file and a free-form response file (mixed answer styles,
one-to-many queries, refusals) and times, in the same process:

- ``evaluate`` end to end (read both JSONL files, parse every answer, score, summarise,
  build the evidence rows), with ``jobs=1`` and ``jobs=--jobs``;
- baseline: the end-to-end path as it was before the parser and loader speed-ups (a copy
  of the old parser cascade and loaders kept in this script), on the same files; every
  parse result and evidence row must be identical to the current ones;
- the scoring step alone (``score_queries`` + ``summarize``) on the parsed intervals;
- baseline: the same scoring done query by query with the single-set interval functions
  (``union_iou``, ``generalized_iou``, ``midpoint_errors``) in a Python loop.

Wall and CPU time (this process, plus worker processes for ``jobs > 1``) are reported as
min / median over the repeats, with the core count and load average, because the
development machine is shared.

Run: ``.venv/bin/python benchmarks/tag_scoring.py [--queries 100000] [--repeats 3] [--jobs 2]``
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from timingbench import __version__
from timingbench.suites.tag import (
    TagPrediction,
    TagQuery,
    TagReport,
    _count_word,
    _where,
    evaluate,
    score_queries,
    summarize,
)
from timingbench.suites.tag_parse import ParseResult, parse_interval_list, parse_response
from timingbench.config import Config, load_config
from timingbench.convert import TIME_DECIMALS
from timingbench.errors import ParameterError, TimingbenchError
from timingbench.intervals import (
    generalized_iou,
    midpoint_errors,
    union_iou,
    validate_intervals,
)
from timingbench.jsonio import iter_jsonl

# ======================================================================= baseline
# The parser cascade and loaders as they were before the speed-ups (commit a372cba),
# kept verbatim apart from names so the end-to-end figure has a same-process baseline.

# --------------------------------------------------------------------------- normalisation

_SMALL = {
    "zero": 0, "oh": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
    "eighteen": 18, "nineteen": 19,
}
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}
_NUMWORDS = set(_SMALL) | set(_TENS) | {"hundred"}
_UNIT_WORD = r"(?:hours?|minutes?|seconds?|milliseconds?|mins?|secs?)"

_DASHES = re.compile(r"[\u2010-\u2015\u2212\u2e3a\u2e3b\ufe58\ufe63\uff0d]")
_ARROWS = re.compile(r"\s*(?:-+>|=>|\u2192|\u27f6)\s*")
_WORD = re.compile(r"[a-z]+")
_ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\s+(" + _UNIT_WORD + r")\b")
_HALF = re.compile(r"\b(\d+)\s+and\s+a\s+half\s+(" + _UNIT_WORD + r")\b")
_HALF_A = re.compile(r"\bhalf\s+(?:a|an)\s+(" + _UNIT_WORD + r")\b")
_A_UNIT = re.compile(r"\b(?:a|an)\s+(hour|minute|second|millisecond)\b")
_UNIT_AND_HALF = re.compile(r"\b(\d+)\s+(" + _UNIT_WORD + r")\s+and\s+a\s+half\b")
_MS_FIELD = re.compile(
    r"\b(start|end|begin|onset|offset|from|to)(?:\s+time)?\s*(?:\(\s*)?(?:ms|milliseconds)"
    r"(?:\s*\))?([\"']?\s*[:=]\s*[\"']?)(\d+(?:\.\d+)?)(?![\d.:])"
)


def _spell_numbers(text: str) -> str:
    """Replace runs of number words ("one hundred and twenty-five") by digits."""
    words = list(_WORD.finditer(text))
    out: list[str] = []
    pos = 0
    i = 0
    while i < len(words):
        if words[i].group() not in _NUMWORDS or words[i].group() == "oh":
            i += 1
            continue
        cur = 0
        last = ""
        j = i
        last_end = words[i].start()
        while j < len(words):
            wj = words[j].group()
            if (
                last == "hundred"
                and wj == "and"
                and j + 1 < len(words)
                and words[j + 1].group() in _NUMWORDS
                and words[j + 1].group() != "hundred"
            ):
                j += 1  # "one hundred and five"
                continue
            if j > i and not re.fullmatch(r"[ \t-]+", text[last_end:words[j].start()]):
                if not (last == "hundred" and re.fullmatch(r"\s+and\s+", text[last_end:words[j].start()])):
                    break
            if wj in _SMALL and (
                last in ("", "hundred") or (last == "tens" and 0 < _SMALL[wj] < 10)
            ):
                cur += _SMALL[wj]
                last = "small"
            elif wj in _TENS and last in ("", "hundred"):
                cur += _TENS[wj]
                last = "tens"
            elif wj == "hundred" and last == "small":
                cur *= 100
                last = "hundred"
            else:
                break
            last_end = words[j].end()
            j += 1
        value = str(cur)
        # "three point five"
        if j + 1 < len(words) and words[j].group() == "point" and words[j + 1].group() in _SMALL:
            digits = []
            k = j + 1
            while k < len(words) and words[k].group() in _SMALL and _SMALL[words[k].group()] < 10:
                digits.append(str(_SMALL[words[k].group()]))
                last_end = words[k].end()
                k += 1
            if digits:
                value += "." + "".join(digits)
                j = k
        out.append(text[pos:words[i].start()])
        out.append(value)
        pos = last_end
        i = j
    out.append(text[pos:])
    return "".join(out)


_ANY_NUMWORD = re.compile(r"\b(?:" + "|".join(sorted(_NUMWORDS - {"oh"})) + r")\b")
_ANY_A_UNIT = re.compile(r"\ban?\s+" + _UNIT_WORD)


def _normalise(text: str) -> str:
    t = text.lower()
    if not t.isascii():
        t = _DASHES.sub("-", t).replace("\u00a0", " ")
    if ">" in t or not text.isascii():
        t = _ARROWS.sub(" --> ", t)
    t = t.replace("_", " ")
    # the cheap tests skip substitutions that cannot apply (most answers need none)
    if _ANY_NUMWORD.search(t):
        t = _spell_numbers(t)
    if "half" in t:
        t = _HALF.sub(r"\1.5 \2", t)
        t = _HALF_A.sub(r"0.5 \1", t)
    if _ANY_A_UNIT.search(t):
        t = _A_UNIT.sub(r"1 \1", t)
        t = _UNIT_AND_HALF.sub(r"\1.5 \2", t)
    t = _ORDINAL.sub(r"\1 \2", t)
    if "ms" in t or "milli" in t:
        t = _MS_FIELD.sub(r"\1\2\3ms", t)
    return t


# --------------------------------------------------------------------------- time atoms

_UNIT_RANK = {"h": 3, "m": 2, "s": 1, "ms": 0}
_UNIT_FACTOR = {3: 3600.0, 2: 60.0, 1: 1.0, 0: 0.001}
_UNITS = (
    ("ms", r"milliseconds?|msecs?|ms"),
    ("h", r"hours?|hrs?|h"),
    ("m", r"minutes?|mins?|m"),
    ("s", r"seconds?|secs?|s"),
)
_UNIT_RE = "|".join(f"(?P<u_{k}>{p})" for k, p in _UNITS)
_ATOM = re.compile(
    r"(?P<clock>(?<![\d.:])\d{1,3}:\d{2}(?::\d{2})?(?:[.,]\d{1,3})?(?![\d:]))"
    r"|(?:(?<![a-z0-9.])|(?<=\d[hm]))(?P<num>\d+(?:\.\d+)?)(?:\s*(?:" + _UNIT_RE + r")(?![a-z]))?"
)


@dataclass
class _Item:
    start: int
    end: int
    number: float  # the number as written (seconds for clocks)
    rank: int | None  # smallest unit rank; None for bare numbers; 1 for clocks
    clock: bool = False

    @property
    def bare(self) -> bool:
        return self.rank is None

    def seconds(self, rank: int | None = None) -> float:
        if self.clock or self.rank is not None:
            return self.number
        return self.number * _UNIT_FACTOR[1 if rank is None else rank]


def _clock_seconds(s: str) -> float:
    frac = 0.0
    m = re.match(r"([\d:]+)(?:[.,](\d+))?$", s)
    if m is None:  # pragma: no cover - the regex guarantees the form
        raise ParameterError(f"not a clock time: {s!r}")
    if m.group(2):
        frac = float("0." + m.group(2))
    parts = [int(p) for p in m.group(1).split(":")]
    value = 0
    for p in parts:
        value = value * 60 + p
    return value + frac


_COMPOUND_GAP = re.compile(r"\s*(?:,\s*|and\s+|,\s*and\s+)?")


def _atoms(t: str) -> list[_Item]:
    items: list[_Item] = []
    for m in _ATOM.finditer(t):
        if m.group("clock"):
            items.append(_Item(m.start(), m.end(), _clock_seconds(m.group("clock")), 1, True))
            continue
        unit = next((k for k, _ in _UNITS if m.group(f"u_{k}")), None)
        num = float(m.group("num"))
        if unit is None:
            nxt = t[m.end():m.end() + 1]
            if nxt.isalpha() or (nxt != "" and nxt in "%$"):
                continue
            items.append(_Item(m.start(), m.end(), num, None))
            continue
        rank = _UNIT_RANK[unit]
        value = num * _UNIT_FACTOR[rank]
        prev = items[-1] if items else None
        if (
            prev is not None
            and not prev.clock
            and prev.rank is not None
            and prev.rank > rank
            and prev.rank != 0
            and _COMPOUND_GAP.fullmatch(t[prev.end:m.start()])
        ):
            prev.number += value
            prev.rank = rank
            prev.end = m.end()
            continue
        items.append(_Item(m.start(), m.end(), value, rank))
    return items


def _parse_time(text: str) -> float | None:
    """Seconds of a single time expression ("1:02.5", "62.5 s", "1 min 2.5 s", "62.5").

    Parameters
    ----------
    text : str
        One time expression; a bare number is read as seconds.

    Returns
    -------
    seconds : float or None
        None when the text does not hold exactly one time.
    """
    items = _atoms(_normalise(text))
    if len(items) != 1:
        return None
    return items[0].seconds()


# --------------------------------------------------------------------------- pairing

_RANGE_GAP = re.compile(
    r"\s*(?:-{1,2}>?|~|(?:up\s+)?(?:to|until|till|til|through|thru)(?:\s+the)?|-->)\s*"
)
_AND_GAP = re.compile(r"\s*(?:s\s+)?and\s*")
_COMMA_GAP = re.compile(r"\s*[,;]\s*")
_START_KW = re.compile(r"\b(?:start\w*|begin\w*|began|onset|from|between)\b")
_BETWEEN = re.compile(r"\b(?:between|from)\s*(?:the\s+)?$")
_END_KW = re.compile(r"\b(?:end|ends|ending|ended|stop|stops|stopping|stopped|offset|finish\w*)\b")
_OPEN = re.compile(r"[\[(<{]\s*[\"']?\s*$")
_CLOSE = re.compile(r"^\s*[\"']?\s*[\])>}]")
_FOLLOW_WORD = re.compile(r"^\s*([a-z]+)")
_OK_FOLLOWERS = {
    "in", "of", "and", "or", "the", "into", "where", "when", "while", "during", "within",
    "on", "at", "as", "is", "are", "was", "were", "with", "then", "after", "before",
    "approximately", "roughly", "about", "respectively", "mark", "range", "region",
    "window", "interval", "segment", "timestamp", "timestamps", "which", "that", "for",
    "there", "it", "this", "but", "so", "also", "again",
}


_NOT_TIME_BEFORE = re.compile(
    r"\b(?:chapters?|pages?|verses?|lines?|items?|numbers?|steps?|tracks?|episodes?|levels?"
    r"|ages?|aged|grades?|scores?|versions?|questions?|rows?|slides?|rooms?|parts?|sections?"
    r"|points?|players?|people|persons?|times)\s*$"
)


def _year_like(a: _Item, b: _Item) -> bool:
    return all(x.bare and x.number.is_integer() and 1800 <= x.number <= 2100 for x in (a, b))


def _pair(t: str, a: _Item, b: _Item, prev_end: int) -> tuple[float, float] | None:
    gap = t[a.end:b.start]
    before = t[prev_end:a.start]
    after = t[b.end:b.end + 40]
    kind = None
    if _RANGE_GAP.fullmatch(gap):
        kind = "range"
    elif _AND_GAP.fullmatch(gap) and _BETWEEN.search(before):
        kind = "range"
    elif _COMMA_GAP.fullmatch(gap) and _OPEN.search(before) and _CLOSE.search(after):
        kind = "array"
    elif len(gap) <= 80 and _END_KW.search(gap) and (
        _START_KW.search(before[-60:]) or _START_KW.search(gap)
    ):
        kind = "start_end"
    if kind is None:
        return None
    if a.bare and b.bare:
        if _year_like(a, b) or _NOT_TIME_BEFORE.search(before):
            return None
        guarded = (
            kind in ("array", "start_end")
            or _START_KW.search(before[-30:]) is not None
        )
        if not guarded:
            fw = _FOLLOW_WORD.match(after)
            if fw is not None and fw.group(1) not in _OK_FOLLOWERS:
                return None
            if after[:1] in ("%", "$"):
                return None
        return a.seconds(), b.seconds()
    if a.bare:
        return a.seconds(None if b.clock else b.rank), b.seconds()
    if b.bare:
        return a.seconds(), b.seconds(None if a.clock else a.rank)
    return a.seconds(), b.seconds()


_SENTENCE_END = re.compile(r"(?<!\d)[.!?](?!\d)|[;\n]")
_NEGATION = re.compile(
    r"\b(?:there\s+(?:is|are|was|were)\s+no"
    r"|no\s+(?:such\s+)?(?:\w+\s+){0,2}?(?:event|events|sound|sounds|occurrence|occurrences"
    r"|instance|instances|segment|segments|mention|mentions)\b"
    r"|(?:does|do|did|is|are|was|were)(?:\s*n't|\s+not)\s+(?:\w+\s+)?(?:occur|appear|present"
    r"|contain|happen|found|detected|heard|audible|exist)"
    r"|(?:not|never)\s+(?:be\s+)?(?:heard|detected|found|present|audible|mentioned)"
    r"|(?:cannot|can't|could\s*not|couldn't|unable\s+to)\s+(?:find|locate|detect|hear|identify)"
    r"|none)\b"
)


def _negated(t: str, pos: int) -> bool:
    starts = [m.end() for m in _SENTENCE_END.finditer(t, 0, pos)]
    begin = starts[-1] if starts else 0
    return _NEGATION.search(t[begin:pos]) is not None


def _text_intervals(t: str) -> list[tuple[float, float]]:
    items = _atoms(t)
    out: list[tuple[float, float]] = []
    i = 0
    prev_end = 0
    while i < len(items) - 1:
        got = _pair(t, items[i], items[i + 1], prev_end)
        if got is None:
            prev_end = items[i].end
            i += 1
            continue
        if not _negated(t, items[i].start):
            out.append(got)
        prev_end = items[i + 1].end
        i += 2
    return out


# --------------------------------------------------------------------------- JSON stage

_START_KEYS = {"start", "start time", "begin", "begin time", "onset", "from", "start s",
               "start sec", "start seconds", "start timestamp", "start ms", "begin ms",
               "onset ms", "start time ms", "start time s", "st", "s"}
_END_KEYS = {"end", "end time", "stop", "offset", "to", "end s", "end sec", "end seconds",
             "end timestamp", "end ms", "stop ms", "offset ms", "end time ms", "end time s",
             "et", "e", "finish"}


def _json_value_seconds(v: Any, *, ms: bool) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        x = float(v)
    elif isinstance(v, str):
        p = _parse_time(v)
        if p is None:
            return None
        x = p
        if ms and re.fullmatch(r"\s*\d+(?:\.\d+)?\s*", v):
            return x / 1000.0
        return x
    else:
        return None
    if not math.isfinite(x):
        return None
    return x / 1000.0 if ms else x


def _json_intervals(obj: Any, depth: int = 0) -> list[tuple[float, float]]:
    if depth > 20:
        return []
    out: list[tuple[float, float]] = []
    if isinstance(obj, dict):
        keys = {str(k).lower().replace("_", " ").replace("-", " ").strip(): k for k in obj}
        sk = next((keys[k] for k in keys if k in _START_KEYS), None)
        ek = next((keys[k] for k in keys if k in _END_KEYS), None)
        if sk is not None and ek is not None:
            s = _json_value_seconds(obj[sk], ms="ms" in str(sk).lower().split("_") or
                                    str(sk).lower().endswith("ms"))
            e = _json_value_seconds(obj[ek], ms="ms" in str(ek).lower().split("_") or
                                    str(ek).lower().endswith("ms"))
            if s is not None and e is not None:
                return [(s, e)]
        for v in obj.values():
            out.extend(_json_intervals(v, depth + 1))
        return out
    if isinstance(obj, list):
        if len(obj) == 2 and all(isinstance(x, int | float | str) for x in obj):
            s = _json_value_seconds(obj[0], ms=False)
            e = _json_value_seconds(obj[1], ms=False)
            if s is not None and e is not None:
                return [(s, e)]
        for v in obj:
            out.extend(_json_intervals(v, depth + 1))
        return out
    if isinstance(obj, str):
        return _text_intervals(_normalise(obj))
    return out


def _json_objects(text: str) -> Iterator[Any]:
    dec = json.JSONDecoder()
    i = 0
    n = len(text)
    while i < n:
        j = min((k for k in (text.find("{", i), text.find("[", i)) if k >= 0), default=-1)
        if j < 0:
            return
        try:
            obj, end = dec.raw_decode(text, j)
        except json.JSONDecodeError:
            i = j + 1
            continue
        yield obj
        i = end


# --------------------------------------------------------------------------- public API


def _clean(raw: list[tuple[float, float]]) -> tuple[tuple[float, float], ...]:
    seen: set[tuple[float, float]] = set()
    out: list[tuple[float, float]] = []
    for s, e in raw:
        s, e = round(s, 6), round(e, 6)
        if not (math.isfinite(s) and math.isfinite(e)) or s < 0 or not s < e:
            continue
        if (s, e) in seen:
            continue
        seen.add((s, e))
        out.append((s, e))
    return tuple(out)


def baseline_parse_response(text: str) -> ParseResult:
    """``parse_response`` as before this change: recover the intervals an answer states.

    Parameters
    ----------
    text : str
        The model's answer.

    Returns
    -------
    result : ParseResult
        The intervals in seconds (``start < end``) and the stage that found them;
        ``result.failed`` when none was found.

    Raises
    ------
    ParameterError
        If ``text`` is not a string.
    """
    if not isinstance(text, str):
        raise ParameterError(f"response must be a string, got {type(text).__name__}")
    if "{" in text or "[" in text:
        found: list[tuple[float, float]] = []
        for obj in _json_objects(text):
            if isinstance(obj, dict | list):
                found.extend(_json_intervals(obj))
        got = _clean(found)
        if got:
            return ParseResult(got, "json")
    got = _clean(_text_intervals(_normalise(text)))
    return ParseResult(got, "text") if got else ParseResult((), "none")




def baseline_load_ground_truth(path: str | Path) -> tuple[list[TagQuery], list[str]]:
    """``load_ground_truth`` as before this change."""
    p = Path(path)
    queries: list[TagQuery] = []
    errors: list[str] = []
    seen: dict[str, int] = {}
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
        where = _where(p, line, rid)
        if rid in seen:
            errors.append(f"{where}: duplicate id (first on line {seen[rid]}); row skipped")
            continue
        seen[rid] = line
        subset = row.get("subset")
        if not isinstance(subset, str) or not subset:
            errors.append(f"{where}: field 'subset' missing or not a string")
            continue
        dur = row.get("duration_s")
        if dur is not None and (
            isinstance(dur, bool) or not isinstance(dur, int | float) or not math.isfinite(dur)
            or dur <= 0
        ):
            errors.append(f"{where}: field 'duration_s' must be a positive number of seconds")
            continue
        raw = row.get("intervals")
        if not isinstance(raw, list) or not raw:
            errors.append(f"{where}: field 'intervals' must be a non-empty list of [start, end]")
            continue
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
            continue
        bad_k = next((k for k, (a, b) in enumerate(raw)
                      if not (math.isfinite(a) and math.isfinite(b) and a < b)), None)
        if bad_k is not None:
            try:  # names the offending interval and rule
                validate_intervals(raw, name=f"{where}: field 'intervals'")
            except ParameterError as exc:
                errors.append(str(exc))
                continue
            errors.append(
                f"{where}: field 'intervals' item {bad_k} has zero length; ground-truth "
                "intervals need start < end"
            )
            continue
        iv = np.array(raw, dtype=np.float64)
        queries.append(TagQuery(rid, subset, iv, None if dur is None else float(dur), row))
    return queries, errors


def baseline_load_predictions(path: str | Path) -> tuple[dict[str, TagPrediction], list[str]]:
    """``load_predictions`` as before this change."""
    p = Path(path)
    preds: dict[str, TagPrediction] = {}
    lines: dict[str, int] = {}
    errors: list[str] = []
    try:
        rows = list(iter_jsonl(p))
    except OSError as exc:
        raise TimingbenchError(f"{p}: cannot read responses ({exc.strerror})") from None
    fail = ParseResult((), "none")
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
        where = _where(p, line, rid)
        if rid in lines:
            errors.append(f"{where}: duplicate id (first on line {lines[rid]}); row ignored")
            continue
        lines[rid] = line
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
        preds[rid] = TagPrediction(rid, baseline_parse_response(text), "free")
    return preds, errors


def baseline_evaluate(gt_path: str | Path, pred_path: str | Path, *, config: Config) -> TagReport:
    """``evaluate`` as before this change."""
    queries, gt_errors = baseline_load_ground_truth(gt_path)
    preds, pred_errors = baseline_load_predictions(pred_path)
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
    maes = np.round(scores.mae_s, 6).tolist()
    n_gt = scores.n_gt.tolist()
    n_pred = scores.n_pred.tolist()
    failed = scores.failed.tolist()
    rows: list[dict[str, Any]] = []
    for k, (q, pr) in enumerate(zip(queries, chosen, strict=True)):
        rows.append({
            "id": q.id,
            "subset": q.subset,
            "n_gt": n_gt[k],
            "track": pr.track,
            "parse_stage": pr.parsed.stage,
            "failed": failed[k],
            "pred_intervals": [list(iv) for iv in pr.parsed.intervals] or [[0.0, 0.0]],
            "n_pred": n_pred[k],
            "iou": ious[k],
            "giou": gious[k],
            "mae_s": None if failed[k] else maes[k],
            "hits": dict(zip(keys, hits[k], strict=True)),
            "count": _count_word(n_gt[k], n_pred[k]),
        })
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
        "parser": {"strip_reasoning": bool(config.value("tag.strip_reasoning"))},
        "errors": errors,
        "config_version": config.version,
        "config_hash": config.content_hash,
        "timingbench_version": __version__,
    }
    return TagReport(rows, summary)



# ======================================================================= benchmark


STYLES = (
    lambda s, e: f"The event occurs from {s:.2f} to {e:.2f} seconds.",
    lambda s, e: f"[{s:.2f}, {e:.2f}]",
    lambda s, e: f"Start: {int(s // 60):02d}:{s % 60:05.2f}, End: {int(e // 60):02d}:{e % 60:05.2f}",
    lambda s, e: f'{{"start": {s:.3f}, "end": {e:.3f}}}',
    lambda s, e: f"{s:.1f}s - {e:.1f}s",
)


def _make(folder: Path, q: int, rng: np.random.Generator) -> tuple[Path, Path]:
    gt_rows, pred_rows = [], []
    for k in range(q):
        dur = float(rng.choice([10.0, 60.0, 1200.0]))
        n = 1 if rng.random() < 0.78 else int(rng.integers(2, 8))
        s = np.sort(rng.uniform(0, dur * 0.9, n))
        e = s + rng.uniform(0.2, dur * 0.05, n)
        gt_rows.append({"id": f"q{k}", "audio_path": f"a{k}.wav", "duration_s": dur,
                        "subset": ["word", "event", "semantic", "long_desc"][k % 4],
                        "query": "x", "intervals": np.round(np.stack([s, e], 1), 3).tolist()})
        if rng.random() < 0.15:
            pred_rows.append({"id": f"q{k}", "response": "Sorry, I cannot find it."})
            continue
        m = int(rng.integers(1, n + 1))
        js = np.sort(rng.uniform(0, dur * 0.9, m))
        je = js + rng.uniform(0.2, dur * 0.05, m)
        style = STYLES[k % len(STYLES)]
        text = " and ".join(style(a, b) for a, b in zip(js, je, strict=True))
        pred_rows.append({"id": f"q{k}", "response": text})
    gt = folder / "gt.jsonl"
    pred = folder / "pred.jsonl"
    gt.write_text("".join(json.dumps(r) + "\n" for r in gt_rows))
    pred.write_text("".join(json.dumps(r) + "\n" for r in pred_rows))
    return gt, pred


def _timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """Run ``fn``; return its result, wall seconds and CPU seconds (self + children)."""
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p0 = time.process_time()
    out = fn()
    wall = time.perf_counter() - t0
    cpu = time.process_time() - p0
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu += (c1.ru_utime + c1.ru_stime) - (c0.ru_utime + c0.ru_stime)
    return out, wall, cpu


def _line(name: str, t: list[float]) -> str:
    return f"{name:<50} min {min(t):7.3f} s  median {statistics.median(t):7.3f} s"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2, help="worker processes for the jobs run")
    ap.add_argument("--skip-baseline", action="store_true", help="skip the old end-to-end path")
    args = ap.parse_args()
    cfg = load_config()
    rng = np.random.default_rng(20260101)
    runs: dict[str, tuple[list[float], list[float]]] = {}

    def record(name: str, wall: float, cpu: float) -> None:
        runs.setdefault(name, ([], []))
        runs[name][0].append(wall)
        runs[name][1].append(cpu)

    with tempfile.TemporaryDirectory() as tmp:
        gt, pred = _make(Path(tmp), args.queries, rng)
        evaluate(gt, pred, config=cfg)  # warm-up: compile kernels
        names = ["evaluate, jobs=1", f"evaluate, jobs={args.jobs}"]
        if not args.skip_baseline:
            names.append("baseline evaluate (old parser and loaders)")
        base = None
        for _ in range(args.repeats):
            rep, wall, cpu = _timed(lambda: evaluate(gt, pred, config=cfg))
            record(names[0], wall, cpu)
            rep_j, wall, cpu = _timed(lambda: evaluate(gt, pred, config=cfg, jobs=args.jobs))
            record(names[1], wall, cpu)
            if rep_j.rows != rep.rows or rep_j.summary != rep.summary:
                raise SystemExit(f"jobs={args.jobs} changed the report")
            if not args.skip_baseline:
                base, wall, cpu = _timed(lambda: baseline_evaluate(gt, pred, config=cfg))
                record(names[2], wall, cpu)
        if base is not None:
            if base.rows != rep.rows or base.summary != rep.summary:
                raise SystemExit("the report differs from the baseline's")
            texts = [json.loads(x)["response"] for x in pred.read_text().splitlines()]
            old = [baseline_parse_response(t) for t in texts]
            new = [parse_response(t) for t in texts]
            n_diff = sum(a != b for a, b in zip(old, new, strict=True))
            if n_diff:
                raise SystemExit(f"{n_diff} parse results differ from the baseline's")
        t_score, t_base = [], []
        gts = [np.array(json.loads(x)["intervals"]) for x in gt.read_text().splitlines()]
        preds = [[tuple(iv) for iv in r["pred_intervals"]] if not r["failed"] else []
                 for r in rep.rows]
        subsets = [r["subset"] for r in rep.rows]
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            s = score_queries(gts, preds)
            summarize(s, subsets, config=cfg)
            t_score.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            base_iou, base_giou = [], []
            for g, p in zip(gts, preds, strict=True):
                est = p if p else [(0.0, 0.0)]
                base_iou.append(union_iou(g, est))
                base_giou.append(generalized_iou(g, est))
                midpoint_errors(g, p)
            t_base.append(time.perf_counter() - t0)
        np.testing.assert_allclose(s.iou, base_iou, atol=1e-12)
        np.testing.assert_allclose(s.giou, base_giou, atol=1e-12)
    o = rep.summary["groups"]["overall"]
    print(f"cores available: {os.cpu_count()}; queries: {args.queries}; repeats: {args.repeats}; "
          f"Fail {o['Fail']:.1f} %; one-to-many {rep.summary['groups']['one_to_many']['n']}")
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f}")
    if base is not None:
        print("baseline reports and parse results: identical to the current ones")
    for name, (walls, cpus) in runs.items():
        print(_line(f"{name}: wall", walls))
        print(_line(f"{name}: CPU", cpus))
    if not args.skip_baseline:
        b = runs[names[2]]
        c = runs[names[0]]
        print(f"end-to-end speed-up vs baseline (median, jobs=1): wall "
              f"{statistics.median(b[0]) / statistics.median(c[0]):.1f}x, CPU "
              f"{statistics.median(b[1]) / statistics.median(c[1]):.1f}x")
    print(_line("scoring only (batch kernels): wall", t_score))
    print(_line("baseline: per-query loop, single-set functions", t_base))
    print(f"scoring speed-up vs per-query loop (median): "
          f"{statistics.median(t_base) / statistics.median(t_score):.1f}x")


if __name__ == "__main__":
    main()

"""The time-span parsing core: deterministic recovery of time intervals from model answers.

One core serves TAG-Bench (:mod:`timingbench.suites.tag.answers`) and MGBench's regex and
LLM span extractors (:mod:`timingbench.suites.mgbench.spans`); each paper's own rules (the
TAG-Bench failure sentinel and constrained-JSON track, MGBench's explicit empty answers and
instruction following) are thin layers on top. The cascade follows TAG-Bench's answer
parsing (Sec. 4.2: no language model, no semantic rescue); every rule is listed with an
example in ``docs/tag.md``:

0. **Final answer** (``strip_reasoning``): reasoning
   blocks are removed and only the text after the last final-answer marker is read
   (:mod:`timingbench.suites.answer_scope`; config ``tag.strip_reasoning``
   and ``mgbench.strip_reasoning``).
1. **Normalisation**: lower case; dashes, tildes and arrows unified; ``_`` read as a space;
   ``t=`` and approximate ``~``/``≈`` before a number dropped; spelled-out numbers ("two
   minutes and five seconds", "three point five") turned into digits; ordinals before a
   unit ("the 12th second") and ``start_ms: 3200`` style millisecond fields made explicit.
2. **JSON**: every JSON object or array embedded in the answer is decoded; intervals are
   read from ``{start, end}``-like keys (``start_time``/``end_time``, ``startTime``,
   ``Start (s)``, ``begin``, ``onset``/``offset``, ``*_ms`` in milliseconds), from
   ``[start, end]`` pairs (numbers or time strings) and from string values holding an
   interval expression.
3. **Tables** (when JSON gave nothing): rows of tables with start and end columns, and
   ``start,end`` lines, are rewritten as ranges (:mod:`timingbench.suites.answer_tables`).
4. **Time expressions**: hh:mm:ss and mm:ss clocks with optional fractions (``.`` or
   ``,``), numbers with units (h, min, s, ms and their spellings) and compounds of
   decreasing units ("1 min 5 s", "1h2m3s") become times; bare numbers are kept as
   candidates.
5. **Pairing**: consecutive times form an interval when joined by a range operator
   ("-", "~", "to", "until", "till", "through", "-->"), by "and" after "between", by a
   comma inside brackets ("[3.2, 4.8]"), or by a start ... end pattern ("starts at 3 s and
   ends at 5 s", "start: 00:12, end: 00:15"), or by a start keyword, a start and a
   duration with a unit ("starts at 12 s, lasting 3 seconds", "from 1:05 for 4 s").
   A bare number takes its partner's unit
   ("12.5-14s"); two bare numbers form an interval only in brackets, after "from",
   "between" or a start keyword, or when no non-time word follows them ("2-3 dogs" is not
   an interval).
6. **Filtering**: an interval in a negated clause ("no laughter can be heard between 0
   and 48 s", "laughter is absent from 0 to 48 s") is dropped, a positive clause of the
   same answer still counts; an interval must have ``start < end`` (reversed pairs are
   reported in ``ParseResult.dropped``); exact duplicates are dropped, order is kept.

An answer with no interval left is a parsing failure (``ParseResult.failed``); what a
failure means is the layer's decision (TAG-Bench: the empty-prediction sentinel ``0s~0s``;
MGBench: an explicit empty answer or not following the instruction). A single timestamp
("the word is spoken at 3.5 s") is not an interval and so counts as a failure.

A whole answer that is one JSON document of spans (``[[s, e], ...]``, ``{"intervals": ...}``)
is read strictly by :func:`document_spans` (MGBench reads ``[]`` as an explicit empty
answer); every interval, from any stage, goes through :func:`clean_spans`.

Every step is linear in the length of the answer (hostile inputs are tested in
``tests/test_parse_robustness.py``); the only error raised is :class:`ParameterError`.
"""

from __future__ import annotations

import json
import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from timingbench.convert import TIME_DECIMALS
from timingbench.errors import ParameterError
from timingbench.jsonio import is_finite_number
from timingbench.memo import process_cache
from timingbench.suites.answer_scope import final_answer
from timingbench.suites.answer_tables import rewrite_tables

__all__ = ["ParseResult", "clean_spans", "document_spans", "parse_spans", "parse_time", "time_value_seconds"]


@dataclass(frozen=True)
class ParseResult:
    """Intervals recovered from one answer.

    Attributes
    ----------
    intervals : tuple of (float, float)
        ``(start, end)`` in seconds, in the order stated, ``start < end``.
    stage : str
        ``"json"`` or ``"text"`` (the stage that produced them) or ``"none"``.
    dropped : tuple of (float, float)
        Pairs the answer stated with ``end <= start`` (seconds, in the order stated),
        left out of ``intervals``.
    """

    intervals: tuple[tuple[float, float], ...]
    stage: str
    dropped: tuple[tuple[float, float], ...] = ()

    @property
    def failed(self) -> bool:
        """True when no interval was recovered (a parsing failure)."""
        return not self.intervals


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
_TILDES = re.compile(r"[\u301c\uff5e\u223c]")
# The lookbehinds start a match only where a run of spaces or dashes begins, so a long run
# is scanned once, not once per position.
_ARROWS = re.compile(r"(?<!\s)\s*(?:(?<!-)-+>|=>|\u2192|\u27f6)\s*")
_CJK_UNITS = (("\u6beb\u79d2", " ms"), ("\u79d2", " s"))
# "t=3.2s", "t = 3.2 s": the variable name of a time
_T_EQUALS = re.compile(r"\bt[ \t]{0,3}=[ \t]{0,3}(?=\d)")
# "~3.2 s", "\u2248 4 s": an approximate time, not a range operator (after a start of text,
# an opening bracket or punctuation, or a preposition)
_APPROX = re.compile(
    r"(?:^|(?<=[(\[,:=])|(?<=[(\[,:=] )|(?<=\bto )|(?<=\band )|(?<=\bat )|(?<=\bfrom )"
    r"|(?<=\bis )|(?<=\bbetween )|(?<=\buntil )|(?<=\btill )|(?<=\baround )|(?<=\babout ))"
    r"~ ?(?=\d)|\u2248 ?(?=\d)"
)
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
            elif wj == "hundred" and last == "small" and cur < 100:  # once per number
                cur *= 100
                last = "hundred"
            else:
                break
            last_end = words[j].end()
            j += 1
        if j == i:  # a word that cannot start a number ("hundred" alone)
            i += 1
            continue
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


_ORDINAL_HINT = re.compile(r"\d(?:st|nd|rd|th)")


def _normalise(text: str) -> str:
    t = text.lower()
    plain = text.isascii()
    if not plain:
        t = _DASHES.sub("-", t).replace("\u00a0", " ").replace("\u2019", "'")
        t = _TILDES.sub("~", t)
        for cjk, unit in _CJK_UNITS:
            if cjk in t:
                t = t.replace(cjk, unit)
    if ">" in t or not plain:
        t = _ARROWS.sub(" --> ", t)
    if "=" in t:
        t = _T_EQUALS.sub("", t)
    if "~" in t or not plain:
        t = _APPROX.sub("", t)
    if "_" in t:
        t = t.replace("_", " ")
    # Cheap necessary conditions skip substitutions that cannot apply (most answers need
    # none): every match of _ANY_NUMWORD / _ANY_A_UNIT is a whole run of letters, so it
    # is among the words of the text, and _ORDINAL needs a digit before st/nd/rd/th.
    words = set(_WORD.findall(t))
    if not _NUMWORDS.isdisjoint(words) and _ANY_NUMWORD.search(t):
        t = _spell_numbers(t)
        words = set(_WORD.findall(t))
    if "half" in t:
        t = _HALF.sub(r"\1.5 \2", t)
        t = _HALF_A.sub(r"0.5 \1", t)
        words = set(_WORD.findall(t))
    if ("a" in words or "an" in words) and _ANY_A_UNIT.search(t):
        t = _A_UNIT.sub(r"1 \1", t)
        t = _UNIT_AND_HALF.sub(r"\1.5 \2", t)
    if _ORDINAL_HINT.search(t):
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


@dataclass(slots=True)
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


_CLOCK_PARTS = re.compile(r"([\d:]+)(?:[.,](\d+))?$")


def _clock_seconds(s: str) -> float:
    frac = 0.0
    m = _CLOCK_PARTS.match(s)
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


_DIGIT = re.compile(r"\d")
_UNIT_OF_GROUP = {f"u_{k}": k for k, _ in _UNITS}


def _atom_matches(t: str) -> Iterator[re.Match[str]]:
    """The matches of ``_ATOM.finditer(t)``, trying only positions that hold a digit.

    Both alternatives of ``_ATOM`` begin with a digit, so the leftmost match from any
    position starts at a digit; matching there (lookbehinds see the whole string) gives
    the same matches as scanning every position.
    """
    pos = 0
    find = _DIGIT.search
    match = _ATOM.match
    while True:
        d = find(t, pos)
        if d is None:
            return
        p = d.start()
        m = match(t, p)
        if m is None:
            pos = p + 1
            continue
        yield m
        pos = m.end()


def _atoms(t: str) -> list[_Item]:
    items: list[_Item] = []
    for m in _atom_matches(t):
        group = m.lastgroup
        if group == "clock":
            items.append(_Item(m.start(), m.end(), _clock_seconds(m.group(1)), 1, True))
            continue
        num = float(m.group(2))
        if group == "num":
            nxt = t[m.end():m.end() + 1]
            if nxt.isalpha() or (nxt != "" and nxt in "%$"):
                continue
            items.append(_Item(m.start(), m.end(), num, None))
            continue
        rank = _UNIT_RANK[_UNIT_OF_GROUP[group]]  # type: ignore[index]
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


def parse_time(text: str) -> float | None:
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
    r"\s*(?:-{1,2}>?|~|(?:(?:,\s*)?and\s+(?:(?:going|lasting|continuing|running|extending)\s+))?"
    r"(?:up\s+)?(?:to|until|till|til|through|thru)(?:\s+the)?|-->)\s*"
)
_AND_GAP = re.compile(r"\s*(?:s\s+)?and\s*")
_COMMA_GAP = re.compile(r"\s*[,;]\s*")
_START_KW = re.compile(r"\b(?:start\w*|begin\w*|began|onset|from|between)\b")
_BETWEEN = re.compile(r"\b(?:between|from)\s*(?:the\s+)?$")
_END_KW = re.compile(r"\b(?:end|ends|ending|ended|stop|stops|stopping|stopped|offset|finish\w*)\b")
_DURATION_GAP = re.compile(
    r"\s*(?:,\s*)?(?:and\s+)?(?:lasting|lasts|(?:which|that)\s+lasts|for"
    r"|(?:lasting|lasts)\s+for|(?:with|for)\s+(?:a\s+)?duration\s+of|(?:with\s+)?(?:a\s+)?duration\s*:?)"
    r"(?:\s+(?:about|approximately|roughly|around))?\s*"
)
#: Only this much text before a pair is looked at for the words that qualify it.
_BEFORE_CHARS = 60
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
    before = t[max(prev_end, a.start - _BEFORE_CHARS):a.start]
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
    elif (
        b.rank is not None
        and not b.clock
        and len(gap) <= 80
        and _DURATION_GAP.fullmatch(gap)
        and _START_KW.search(before[-30:]) is not None
    ):
        # "starts at 12 s, lasting 3 seconds", "from 1:05 for 4 s": a start and a duration
        start = a.seconds(b.rank) if a.bare else a.seconds()
        return start, start + b.seconds()
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


# Negation scope. A clause ends at a sentence end, a semicolon, a line break, a
# contrastive conjunction, ", and"/", or"/", then", or an "and" that starts a new clause.
_CLAUSE_END = re.compile(
    r"(?<!\d)[.!?](?!\d)|[;\n]|,[ \t]{0,3}(?:and|or|then)\b"
    r"|\b(?:but|however|whereas|although|though|yet|except|while)\b"
    r"|\band[ \t]{1,3}(?=(?:then|there|it|no|nothing|again|also|later|afterwards?)\b)"
)
# Negation cues: a negated subject ("no laughter", "nothing", "neither"), a negated verb
# ("cannot", "does not", "doesn't", "never"), absence ("absent", "missing", "inaudible",
# "without X") and failure ("unable to", "failed to"). Not cues: an interjection ("No, ..."),
# exclusivity about other times ("no other", "nothing else", "not elsewhere", "not
# again"), hedges ("not sure", "can't be certain", "not exactly", "not only") and
# continuity ("without interruption", "does not stop").
_NEG_CUE = re.compile(
    r"\bno\b(?![ \t]*[,.!?:;)]|[ \t]+(?:other|further|more|additional|longer|later|earlier"
    r"|sooner|problem|problems|worries|doubt|question)\b)"
    r"|\b(?:none|nothing|nowhere|neither|nor)\b(?![ \t]+(?:else|other)\b)"
    r"|\b(?:never|absent|absence|missing|inaudible)\b"
    r"|\bwithout\b(?![ \t]+(?:any[ \t]+)?(?:interruptions?|pauses?|breaks?|a[ \t]+break|stopping"
    r"|gaps?|doubt|overlap)\b)"
    r"|(?:\bnot|\bcannot|n't)\b(?![ \t]+(?:(?:be|been|completely|entirely|fully|totally|100%|quite)"
    r"[ \t]+)?(?:sure|certain|exactly|precisely|only|just|clear|confident|know|elsewhere|again"
    r"|otherwise|stop|end|anywhere[ \t]+else)\b)"
    r"|\bunable[ \t]+to\b|\bfail(?:s|ed)?[ \t]+to\b"
)
# Every cue contains one of these substrings ("not", "none", "nothing", "nowhere", "nor"
# and "cannot" contain "no"), so a text holding none of them has no negated clause.
_NEGATION_HINT = re.compile(r"no|n't|never|neither|without|absen|missing|inaudible|unable|fail")
# Words that may stand before an interval that opens its clause ("Between 0 and 48 s, no
# laughter can be heard": the cue after the interval still negates it).
_LEAD_WORDS = frozenset({"from", "between", "during", "in", "at", "within", "around", "about",
                         "approximately", "roughly", "over", "the", "and", "answer"})
_LEAD_STRIP = " \t*-\u2022:()[]>#"
_MAX_LEAD_CHARS = 40


class _NegationScope:
    """Which positions of a normalised answer lie in a negated clause.

    A position is negated when a negation cue precedes it in its clause, or when it
    belongs to an interval that opens its clause and the clause holds a cue anywhere.
    Clause ends and cues are found once, so checking many intervals stays linear.
    """

    def __init__(self, t: str) -> None:
        self.t = t
        self.cues: list[int] | None = None  # found on the first query
        self.ends: list[int] = []

    def negated(self, pos: int) -> bool:
        if self.cues is None:
            t = self.t
            self.cues = [m.start() for m in _NEG_CUE.finditer(t)] if _NEGATION_HINT.search(t) else []
            if self.cues:
                self.ends = [m.end() for m in _CLAUSE_END.finditer(t)]
        if not self.cues:
            return False
        k = bisect_right(self.ends, pos)
        begin = self.ends[k - 1] if k else 0
        stop = self.ends[k] if k < len(self.ends) else len(self.t)
        c = bisect_left(self.cues, begin)
        if c >= len(self.cues) or self.cues[c] >= stop:
            return False  # no cue in the clause
        if self.cues[c] < pos:
            return True  # a cue before the interval
        lead = self.t[begin:pos]
        if len(lead) > _MAX_LEAD_CHARS:
            return False
        return all(w in _LEAD_WORDS for w in lead.strip(_LEAD_STRIP).split())


def _text_intervals(t: str) -> list[tuple[float, float]]:
    items = _atoms(t)
    out: list[tuple[float, float]] = []
    scope = _NegationScope(t)
    i = 0
    prev_end = 0
    while i < len(items) - 1:
        got = _pair(t, items[i], items[i + 1], prev_end)
        if got is None:
            prev_end = items[i].end
            i += 1
            continue
        if not scope.negated(items[i].start):
            out.append(got)
        prev_end = items[i + 1].end
        i += 2
    return out


# --------------------------------------------------------------------------- JSON stage

_START_KEYS = {"start", "start time", "begin", "begin time", "onset", "from", "start s",
               "start sec", "start seconds", "start timestamp", "start ms", "begin ms",
               "onset ms", "start time ms", "start time s", "st", "s", "t start", "t0",
               "onset s", "onset sec", "onset time", "begin s", "start time sec", "start at"}
_END_KEYS = {"end", "end time", "stop", "offset", "to", "end s", "end sec", "end seconds",
             "end timestamp", "end ms", "stop ms", "offset ms", "end time ms", "end time s",
             "et", "e", "finish", "t end", "t1", "offset s", "offset sec", "offset time",
             "stop s", "end time sec", "end at"}
_KEY_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_KEY_SEP = re.compile(r"[^a-z0-9]+")


@process_cache(maxsize=4096)
def _key_words(k: str) -> str:
    """A JSON key as lower-case words: ``"startTime"``, ``"start_time"``, ``"Start (s)"``."""
    return " ".join(_KEY_SEP.sub(" ", _KEY_CAMEL.sub(r"\1 \2", k[:64]).lower()).split())


@process_cache(maxsize=4096)
def _ms_key(k: str) -> bool:
    words = _key_words(k).split()
    return bool(words) and words[-1] in ("ms", "milliseconds", "msec")


def time_value_seconds(v: Any, *, ms: bool = False) -> float | None:
    """Seconds of one JSON time value: a number, or a string holding one time expression.

    Parameters
    ----------
    v : Any
        A decoded JSON value.
    ms : bool, optional
        The value is in milliseconds (a key ending in ``ms``); a time string with a unit
        keeps its own unit.

    Returns
    -------
    seconds : float or None
        None for anything that is not a finite time (booleans, null, containers, numbers
        beyond the float range).
    """
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        try:
            x = float(v)
        except OverflowError:  # an integer beyond the float range
            return None
    elif isinstance(v, str):
        p = parse_time(v)
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
        keys = {_key_words(str(k)): k for k in obj}
        sk = next((keys[k] for k in keys if k in _START_KEYS), None)
        ek = next((keys[k] for k in keys if k in _END_KEYS), None)
        if sk is not None and ek is not None:
            s = time_value_seconds(obj[sk], ms=_ms_key(str(sk)))
            e = time_value_seconds(obj[ek], ms=_ms_key(str(ek)))
            if s is not None and e is not None:
                return [(s, e)]
        for v in obj.values():
            out.extend(_json_intervals(v, depth + 1))
        return out
    if isinstance(obj, list):
        if len(obj) == 2 and all(isinstance(x, int | float | str) for x in obj):
            s = time_value_seconds(obj[0], ms=False)
            e = time_value_seconds(obj[1], ms=False)
            if s is not None and e is not None:
                return [(s, e)]
        for v in obj:
            out.extend(_json_intervals(v, depth + 1))
        return out
    if isinstance(obj, str):
        return _text_intervals(_normalise(obj))
    return out


_DECODER = json.JSONDecoder()
#: Failed decoding attempts may scan this many characters per character of the answer
#: (plus a constant) before the JSON stage gives up: nested unclosed brackets would
#: otherwise make the search quadratic in the answer's length.
_JSON_SCAN_PER_CHAR = 8
_JSON_SCAN_EXTRA = 4096
_JSON_NESTING_COST = 1024  # least charge for a decode that ran out of nesting depth
#: Each decode first sees this many characters, four times more while it runs out of
#: input: a decoding error's report costs time in proportion to the text decoded.
_JSON_WINDOW = 512
#: An error this close to the window's end may be the window's end, not the JSON's.
_JSON_END_MARGIN = 16
# A bracket that can start a JSON array or object ("{" before a key or "}", "[" before a
# value or "]").
_JSON_START = re.compile(r"\{(?=[ \t\n\r]*+[\"}])|\[(?=[ \t\n\r]*+[\[{\"\-0-9tfn\]])")


def _decode_at(text: str, j: int) -> tuple[Any, int, int]:
    """Decode the JSON value starting at ``text[j]``.

    Returns
    -------
    value, end, cost
        The value and the index after it (``None, -1`` when there is none) and the
        number of characters a failed attempt scanned (0 on success).
    """
    n = len(text)
    w = _JSON_WINDOW
    while True:
        chunk = text[j:j + w]
        try:
            obj, end = _DECODER.raw_decode(chunk)
        except json.JSONDecodeError as exc:
            near_end = exc.pos >= len(chunk) - _JSON_END_MARGIN or exc.msg.startswith("Unterminated")
            if j + w < n and near_end:
                w *= 4
                continue
            return None, -1, exc.pos + 1
        except (ValueError, RecursionError):  # an over-long integer, too deep a nesting
            return None, -1, max(len(chunk), _JSON_NESTING_COST)
        return obj, j + end, 0


def _json_objects(text: str) -> Iterator[Any]:
    """Every JSON object or array embedded in ``text``, left to right."""
    n = len(text)
    budget = _JSON_SCAN_PER_CHAR * n + _JSON_SCAN_EXTRA
    i = 0
    while i < n and budget > 0:
        m = _JSON_START.search(text, i)
        if m is None:
            return
        obj, end, cost = _decode_at(text, m.start())
        if end < 0:
            budget -= cost
            i = m.start() + 1
            continue
        yield obj
        i = end


# --------------------------------------------------------------------------- public API


Spans = tuple[tuple[float, float], ...]


def clean_spans(raw: Iterable[tuple[float, float]]) -> tuple[Spans, Spans]:
    """The rule every recovered interval passes: kept intervals and reversed pairs.

    Times are rounded to 6 decimals (:data:`timingbench.convert.TIME_DECIMALS`) first, so
    two pairs that round alike are one interval and a pair that rounds to zero length is
    reversed. Pairs with a non-finite time or a negative start are left out; exact
    duplicates are kept once, in the order stated.

    Parameters
    ----------
    raw : iterable of (float, float)
        ``(start, end)`` pairs in seconds, as stated.

    Returns
    -------
    kept, dropped : tuple of (float, float)
        Intervals with ``0 <= start < end``, and pairs with ``end <= start``.
    """
    seen: set[tuple[float, float]] = set()
    out: list[tuple[float, float]] = []
    dropped: list[tuple[float, float]] = []
    for s, e in raw:
        s, e = round(s, TIME_DECIMALS), round(e, TIME_DECIMALS)
        if not (math.isfinite(s) and math.isfinite(e)) or s < 0:
            continue
        if (s, e) in seen:
            continue
        seen.add((s, e))
        (out if s < e else dropped).append((s, e))
    return tuple(out), tuple(dropped)


# The commonest JSON answers, a bare ``[start, end]`` pair and a flat
# ``{"start": .., "end": ..}`` object, read without the decoder. Numbers are restricted to
# plain JSON decimals (no sign, exponent or leading zero, at most 9 + 9 digits), which
# json decodes to the same floats as ``float`` does. When the pair is not an interval the
# full cascade runs, so these paths only ever return what the cascade returns.
_JSON_NUMBER = r"((?:0|[1-9][0-9]{0,8})(?:\.[0-9]{1,9})?)"
_JSON_WS = r"[ \t\n\r]*"
_FAST_PAIR = re.compile(
    r"\s*\[" + _JSON_WS + _JSON_NUMBER + _JSON_WS + "," + _JSON_WS + _JSON_NUMBER + _JSON_WS
    + r"\]\s*"
)
_FAST_OBJECT = re.compile(
    r"\s*\{" + _JSON_WS + r'"(?:start|start_time|begin|onset)"' + _JSON_WS + ":" + _JSON_WS
    + _JSON_NUMBER + _JSON_WS + "," + _JSON_WS + r'"(?:end|end_time|offset)"' + _JSON_WS + ":"
    + _JSON_WS + _JSON_NUMBER + _JSON_WS + r"\}\s*"
)


def _fast_json(text: str) -> ParseResult | None:
    m = _FAST_PAIR.fullmatch(text) or _FAST_OBJECT.fullmatch(text)
    if m is None:
        return None
    got = clean_spans([(float(m.group(1)), float(m.group(2)))])[0]
    return ParseResult(got, "json") if got else None


def parse_spans(text: str, *, strip_reasoning: bool = True) -> ParseResult:
    """Recover the intervals a free-form answer states.

    Parameters
    ----------
    text : str
        The model's answer.
    strip_reasoning : bool, optional
        Read only the final answer: reasoning blocks removed, and only the text after
        the last final-answer marker kept (:func:`timingbench.suites.answer_scope.final_answer`).

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
    fast = _fast_json(text)
    if fast is not None:
        return fast
    if strip_reasoning:
        text = final_answer(text)
    dropped: tuple[tuple[float, float], ...] = ()
    if "{" in text or "[" in text:
        found: list[tuple[float, float]] = []
        for obj in _json_objects(text):
            if isinstance(obj, dict | list):
                found.extend(_json_intervals(obj))
        got, dropped = clean_spans(found)
        if got:
            return ParseResult(got, "json", dropped)
    got, dropped_text = clean_spans(_text_intervals(_normalise(rewrite_tables(text, parse_time))))
    if got:
        return ParseResult(got, "text", dropped_text)
    return ParseResult((), "none", dropped or dropped_text)


# --------------------------------------------------------------------------- whole documents

#: Keys under which a JSON object answer holds its list of spans.
DOCUMENT_KEYS = ("intervals", "spans", "segments", "answer", "timestamps")


def document_spans(text: str) -> list[tuple[float, float]] | None:
    """The spans of an answer that is one JSON document of spans, read strictly.

    The document is a list of ``[start, end]`` number pairs or ``{"start"/"onset",
    "end"/"offset"}`` objects, a single ``[start, end]`` pair, or an object holding such a
    list under one of :data:`DOCUMENT_KEYS`. Unlike the JSON stage of :func:`parse_spans`,
    which reads intervals wherever they sit in an answer, this reads the whole answer or
    nothing, so that an empty list (``[]``) can be told apart from an answer without spans.

    Parameters
    ----------
    text : str
        The answer (final answer only, when the caller strips reasoning).

    Returns
    -------
    spans : list of (float, float) or None
        The pairs as stated (not cleaned: see :func:`clean_spans`), ``[]`` for an empty
        list; None when the text is not such a document (prose, other JSON, a non-numeric
        or non-finite time).
    """
    t = text.strip()
    if not t or t[0] not in "[{":
        return None
    try:
        doc = json.loads(t)
    except (ValueError, RecursionError):  # not JSON, an over-long integer, too deep
        return None
    if isinstance(doc, dict):
        for key in DOCUMENT_KEYS:
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
        if not (is_finite_number(s) and is_finite_number(e)):
            return None
        out.append((float(s), float(e)))
    return out

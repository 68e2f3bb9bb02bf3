"""Regenerate ``tag_answer_forms.jsonl``: free-form answers in many surface forms.

Each row holds an answer of the kind audio language models write, the form it belongs to
and the intervals it states (``expected``, seconds, in stated order, reversed and
repeated intervals left out). The expected intervals are computed from the numbers put
into the templates, never by running the parser. Run from the repository root:
``.venv/bin/python tests/data/tag_make_forms.py``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

Row = tuple[str, list[list[float]]]
Template = Callable[[random.Random], Row]

SOUNDS = ["dog barking", "laughter", "a car horn", "the word 'river'", "applause", "footsteps",
          "a siren", "the violin solo", "coughing", "a door slam"]


def _iv(rng: random.Random, dur: float = 60.0, decimals: int = 1) -> tuple[float, float]:
    s = round(rng.uniform(0.0, dur * 0.8), decimals)
    e = round(s + rng.uniform(0.5, dur * 0.15), decimals)
    return s, e


def _mmss(t: float, frac: int = 1) -> str:
    m, s = divmod(t, 60.0)
    width = 3 + frac if frac else 2
    return f"{int(m):02d}:{s:0{width}.{frac}f}"


def _hms(t: float, frac: int = 0, sep: str = ".") -> str:
    h, rem = divmod(t, 3600.0)
    m, s = divmod(rem, 60.0)
    width = 3 + frac if frac else 2
    return f"{int(h):02d}:{int(m):02d}:" + f"{s:0{width}.{frac}f}".replace(".", sep)


def _snd(rng: random.Random) -> str:
    return rng.choice(SOUNDS)


_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
         "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
         "eighteen", "nineteen"]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty"]


def _words(n: int) -> str:
    if n < 20:
        return _ONES[n]
    t, o = divmod(n, 10)
    return _TENS[t] + ("" if o == 0 else "-" + _ONES[o])


def _r(x: float, d: int = 6) -> float:
    return round(x, d)


FORMS: dict[str, list[Template]] = {}


def form(name: str) -> Callable[[Template], Template]:
    def add(fn: Template) -> Template:
        FORMS.setdefault(name, []).append(fn)
        return fn
    return add


# ----------------------------------------------------------------- SRT / VTT


@form("srt")
def _srt1(rng: random.Random) -> Row:
    s, e = _iv(rng, 300, 3)
    return f"1\n{_hms(s, 3, ',')} --> {_hms(e, 3, ',')}\n{_snd(rng)}", [[s, e]]


@form("srt")
def _srt2(rng: random.Random) -> Row:
    a, b = _iv(rng, 100, 3)
    c, d = _iv(rng, 100, 3)
    c, d = _r(c + 120), _r(d + 120)
    return (f"1\n{_hms(a, 3, ',')} --> {_hms(b, 3, ',')}\nlaughter\n\n2\n"
            f"{_hms(c, 3, ',')} --> {_hms(d, 3, ',')}\nlaughter"), [[a, b], [c, d]]


@form("vtt")
def _vtt1(rng: random.Random) -> Row:
    s, e = _iv(rng, 50, 3)
    return f"WEBVTT\n\n{_mmss(s, 3)} --> {_mmss(e, 3)}\n{_snd(rng)}", [[s, e]]


@form("vtt")
def _vtt2(rng: random.Random) -> Row:
    s, e = _iv(rng, 3000, 3)
    return f"WEBVTT\n\n{_hms(s, 3)} --> {_hms(e, 3)} align:start\n<v Speaker>{_snd(rng)}", [[s, e]]


# ----------------------------------------------------------------- clock forms


@form("hh:mm:ss")
def _hms1(rng: random.Random) -> Row:
    s, e = _iv(rng, 5000, 0)
    return f"The topic is discussed from {_hms(s)} to {_hms(e)}.", [[s, e]]


@form("hh:mm:ss")
def _hms2(rng: random.Random) -> Row:
    s, e = _iv(rng, 3000, 1)
    return f"Segment: {_hms(s, 1)} - {_hms(e, 1)}", [[s, e]]


@form("mm:ss")
def _mmss1(rng: random.Random) -> Row:
    s, e = _iv(rng, 600, 0)
    return f"You can hear {_snd(rng)} at {_mmss(s, 0)}-{_mmss(e, 0)}.", [[s, e]]


@form("mm:ss")
def _mmss2(rng: random.Random) -> Row:
    s, e = _iv(rng, 600, 2)
    return f"Between {_mmss(s, 2)} and {_mmss(e, 2)}.", [[s, e]]


# ----------------------------------------------------------------- dashes and tildes


@form("en dash / tilde")
def _dash1(rng: random.Random) -> Row:
    s, e = _iv(rng)
    return f"{_snd(rng).capitalize()}: {s}\u2013{e} s", [[s, e]]


@form("en dash / tilde")
def _dash2(rng: random.Random) -> Row:
    s, e = _iv(rng)
    return f"{s} s \u2014 {e} s", [[s, e]]


@form("en dash / tilde")
def _dash3(rng: random.Random) -> Row:
    s, e = _iv(rng)
    return f"The event spans {s}s~{e}s.", [[s, e]]


@form("en dash / tilde")
def _dash4(rng: random.Random) -> Row:
    s, e = _iv(rng)
    return f"{s}\uff5e{e}\u79d2 ({s}s \uff5e {e}s)", [[s, e]]


# ----------------------------------------------------------------- from ... until


@form("from ... until")
def _until1(rng: random.Random) -> Row:
    s, e = _iv(rng)
    return f"It continues from {s} seconds until {e} seconds.", [[s, e]]


@form("from ... until")
def _until2(rng: random.Random) -> Row:
    s, e = _iv(rng, 500, 0)
    return f"From {_mmss(s, 0)} till {_mmss(e, 0)} the speaker talks about it.", [[s, e]]


@form("from ... until")
def _until3(rng: random.Random) -> Row:
    s, e = _iv(rng)
    return f"Starting from {s}s and going until {e}s.", [[s, e]]


# ----------------------------------------------------------------- t=


@form("t=")
def _t1(rng: random.Random) -> Row:
    s, e = _iv(rng)
    return f"t={s}s to t={e}s", [[s, e]]


@form("t=")
def _t2(rng: random.Random) -> Row:
    s, e = _iv(rng)
    return f"The onset is near t = {s} s and it ends at t = {e} s.", [[s, e]]


@form("t=")
def _t3(rng: random.Random) -> Row:
    s, e = _iv(rng)
    return f"[t={s}s, t={e}s]", [[s, e]]


# ----------------------------------------------------------------- milliseconds


@form("ms")
def _ms1(rng: random.Random) -> Row:
    s, e = _iv(rng, 20, 3)
    return f"from {round(s * 1000)} ms to {round(e * 1000)} ms", [[s, e]]


@form("ms")
def _ms2(rng: random.Random) -> Row:
    s, e = _iv(rng, 20, 3)
    return f"{round(s * 1000)}-{round(e * 1000)}ms", [[s, e]]


@form("ms")
def _ms3(rng: random.Random) -> Row:
    s, e = _iv(rng, 20, 3)
    return f"start_ms={round(s * 1000)}, end_ms={round(e * 1000)}", [[s, e]]


# ----------------------------------------------------------------- spelled out


@form("spelled-out")
def _sp1(rng: random.Random) -> Row:
    s = rng.randint(1, 40)
    e = s + rng.randint(1, 15)
    return f"From {_words(s)} seconds to {_words(e)} seconds.", [[float(s), float(e)]]


@form("spelled-out")
def _sp2(rng: random.Random) -> Row:
    m = rng.randint(1, 5)
    s = rng.randint(1, 20)
    e = s + rng.randint(2, 30)
    return (f"It starts at {_words(m)} minutes and {_words(s)} seconds and ends at "
            f"{_words(m)} minutes and {_words(e)} seconds."), [[m * 60.0 + s, m * 60.0 + e]]


@form("spelled-out")
def _sp3(rng: random.Random) -> Row:
    s = rng.randint(1, 30)
    return f"between {_words(s)} and {_words(s + 4)} and a half seconds", [[float(s), s + 4.5]]


# ----------------------------------------------------------------- start + duration


@form("start + duration")
def _dur1(rng: random.Random) -> Row:
    s, e = _iv(rng)
    d = _r(e - s, 1)
    return f"It starts at {s} s and lasts {d} seconds.", [[s, _r(s + d)]]


@form("start + duration")
def _dur2(rng: random.Random) -> Row:
    s = float(rng.randint(5, 500))
    d = float(rng.randint(2, 20))
    return f"The chorus begins at {_mmss(s, 0)}, lasting {int(d)} seconds.", [[s, s + d]]


@form("start + duration")
def _dur3(rng: random.Random) -> Row:
    s, e = _iv(rng)
    d = _r(e - s, 1)
    return f"Onset at {s} s with a duration of {d} s.", [[s, _r(s + d)]]


# ----------------------------------------------------------------- bullets


@form("bullets")
def _bul1(rng: random.Random) -> Row:
    ivs = sorted(_iv(rng, 100) for _ in range(3))
    text = "Occurrences:\n" + "\n".join(f"- {a} s \u2013 {b} s" for a, b in ivs)
    return text, [[a, b] for a, b in ivs]


@form("bullets")
def _bul2(rng: random.Random) -> Row:
    ivs = sorted(_iv(rng, 500, 0) for _ in range(2))
    text = "\n".join(f"* {_mmss(a, 0)} - {_mmss(b, 0)}" for a, b in ivs)
    return text, [[a, b] for a, b in ivs]


@form("bullets")
def _bul3(rng: random.Random) -> Row:
    ivs = sorted(_iv(rng, 100) for _ in range(2))
    text = "\n".join(f"{k}) {a}-{b}s" for k, (a, b) in enumerate(ivs, 1))
    return text, [[a, b] for a, b in ivs]


@form("bullets")
def _bul4(rng: random.Random) -> Row:
    ivs = sorted(_iv(rng, 100) for _ in range(2))
    text = "\n".join(f"\u2022 **{a}s \u2192 {b}s**" for a, b in ivs)
    return text, [[a, b] for a, b in ivs]


# ----------------------------------------------------------------- JSON


@form("JSON keys")
def _js1(rng: random.Random) -> Row:
    s, e = _iv(rng, 60, 2)
    return json.dumps([{"start_time": s, "end_time": e}]), [[s, e]]


@form("JSON keys")
def _js2(rng: random.Random) -> Row:
    s, e = _iv(rng, 60, 2)
    return "```json\n" + json.dumps({"startTime": s, "endTime": e}) + "\n```", [[s, e]]


@form("JSON keys")
def _js3(rng: random.Random) -> Row:
    (a, b), (c, d) = sorted([_iv(rng, 60, 2), _iv(rng, 60, 2)])
    return json.dumps({"segments": [{"onset": a, "offset": b}, {"onset": c, "offset": d}]}), [[a, b], [c, d]]


@form("JSON keys")
def _js4(rng: random.Random) -> Row:
    s, e = _iv(rng, 500, 0)
    return json.dumps({"timestamps": [{"from": _mmss(s, 0), "to": _mmss(e, 0)}]}), [[s, e]]


@form("JSON keys")
def _js5(rng: random.Random) -> Row:
    s, e = _iv(rng, 60, 2)
    return "Result: " + json.dumps({"t_start": s, "t_end": e}), [[s, e]]


@form("JSON keys")
def _js6(rng: random.Random) -> Row:
    s, e = _iv(rng, 60, 2)
    return json.dumps([{"Start (s)": s, "End (s)": e}]), [[s, e]]


# ----------------------------------------------------------------- tables


@form("markdown table, start/end columns")
def _tab1(rng: random.Random) -> Row:
    ivs = sorted(_iv(rng, 60) for _ in range(2))
    rows = "\n".join(f"| {k} | {_mmss(a)} | {_mmss(b)} |" for k, (a, b) in enumerate(ivs, 1))
    return "| # | Start | End |\n|---|-------|-----|\n" + rows, [[a, b] for a, b in ivs]


@form("markdown table, start/end columns")
def _tab2(rng: random.Random) -> Row:
    ivs = sorted(_iv(rng, 60) for _ in range(3))
    rows = "\n".join(f"| {k} | {a} | {b} |" for k, (a, b) in enumerate(ivs, 1))
    return ("Here are the occurrences:\n\n| Occurrence | Start (s) | End (s) |\n"
            "|:---:|:---:|:---:|\n" + rows + "\n\nAll times are approximate."), [[a, b] for a, b in ivs]


@form("markdown table, start/end columns")
def _tab3(rng: random.Random) -> Row:
    ivs = sorted(_iv(rng, 20, 3) for _ in range(2))
    rows = "\n".join(f"| {_snd(rng)} | {round(a * 1000)} | {round(b * 1000)} | high |" for a, b in ivs)
    return "| Event | Onset (ms) | Offset (ms) | Confidence |\n|---|---|---|---|\n" + rows, [[a, b] for a, b in ivs]


@form("markdown table, start/end columns")
def _tab4(rng: random.Random) -> Row:
    s, e = _iv(rng, 3000, 0)
    return ("| **Begin** | **End** |\n| --- | --- |\n" f"| {_hms(s)} | {_hms(e)} |"), [[s, e]]


@form("markdown table, one range per cell")
def _tabr1(rng: random.Random) -> Row:
    ivs = sorted(_iv(rng, 60) for _ in range(2))
    rows = "\n".join(f"| {k} | {a}\u2013{b} s |" for k, (a, b) in enumerate(ivs, 1))
    return "| # | Time range |\n|---|---|\n" + rows, [[a, b] for a, b in ivs]


@form("markdown table, one range per cell")
def _tabr2(rng: random.Random) -> Row:
    s, e = _iv(rng, 600, 0)
    return f"| Sound | Time |\n|---|---|\n| {_snd(rng)} | {_mmss(s, 0)} - {_mmss(e, 0)} |", [[s, e]]


@form("plain-text table")
def _ptab1(rng: random.Random) -> Row:
    ivs = sorted(_iv(rng, 60) for _ in range(2))
    rows = "\n".join(f"{k:<6}{a:<10}{b:<10}" for k, (a, b) in enumerate(ivs, 1))
    return "No.   Start     End\n" + rows, [[a, b] for a, b in ivs]


@form("plain-text table")
def _ptab2(rng: random.Random) -> Row:
    ivs = sorted(_iv(rng, 60) for _ in range(2))
    rows = "\n".join(f"{_snd(rng)}\t{a}\t{b}" for a, b in ivs)
    return "label\tonset\toffset\n" + rows, [[a, b] for a, b in ivs]


@form("plain-text table")
def _ptab3(rng: random.Random) -> Row:
    s, e = _iv(rng, 600, 0)
    return ("+-------+--------+--------+\n| Event | From   | To     |\n+-------+--------+--------+\n"
            f"| A     | {_mmss(s, 0)}  | {_mmss(e, 0)}  |\n+-------+--------+--------+"), [[s, e]]


@form("CSV start,end")
def _csv1(rng: random.Random) -> Row:
    ivs = sorted(_iv(rng, 60, 2) for _ in range(2))
    return "start,end\n" + "\n".join(f"{a},{b}" for a, b in ivs), [[a, b] for a, b in ivs]


@form("CSV start,end")
def _csv2(rng: random.Random) -> Row:
    ivs = sorted(_iv(rng, 60, 2) for _ in range(2))
    return ("```csv\nstart_time,end_time,label\n"
            + "\n".join(f"{a},{b},{_snd(rng)}" for a, b in ivs) + "\n```"), [[a, b] for a, b in ivs]


@form("CSV start,end")
def _csv3(rng: random.Random) -> Row:
    s, e = _iv(rng, 60, 2)
    return f"{s}, {e}", [[s, e]]


# ----------------------------------------------------------------- prose with several intervals


@form("prose, several intervals")
def _multi1(rng: random.Random) -> Row:
    (a, b), (c, d) = sorted([_iv(rng, 30), _iv(rng, 30)])
    c, d = _r(c + 30), _r(d + 30)
    return (f"The dog barks twice: first from {a} to {b} seconds, and again between {c} and "
            f"{d} seconds."), [[a, b], [c, d]]


@form("prose, several intervals")
def _multi2(rng: random.Random) -> Row:
    ivs = sorted(_iv(rng, 100) for _ in range(3))
    text = ", ".join(f"{a}-{b}s" for a, b in ivs)
    return f"Footsteps are heard at {text}.", [[a, b] for a, b in ivs]


@form("prose, several intervals")
def _multi3(rng: random.Random) -> Row:
    (a, b), (c, d) = sorted([_iv(rng, 200, 0), _iv(rng, 200, 0)])
    c, d = _r(c + 200), _r(d + 200)
    return (f"The speaker mentions it from {_mmss(a, 0)} to {_mmss(b, 0)}; later, from "
            f"{_mmss(c, 0)} to {_mmss(d, 0)}, the topic returns."), [[a, b], [c, d]]


# ----------------------------------------------------------------- distractor numbers


@form("distractor numbers")
def _dis1(rng: random.Random) -> Row:
    s, e = _iv(rng)
    return (f"In this 60-second clip recorded at 44.1 kHz, the 2 speakers laugh from {s} to "
            f"{e} s."), [[s, e]]


@form("distractor numbers")
def _dis2(rng: random.Random) -> Row:
    s, e = _iv(rng)
    return (f"There are 3 candidate segments; segment 2 ({s}-{e} s) matches with 95% "
            "confidence."), [[s, e]]


@form("distractor numbers")
def _dis3(rng: random.Random) -> Row:
    s, e = _iv(rng)
    return (f"Recorded in 2019-2020, this track has 2-3 dogs; the loudest bark is from {s} to "
            f"{e} seconds."), [[s, e]]


# ----------------------------------------------------------------- reasoning


@form("reasoning block")
def _think1(rng: random.Random) -> Row:
    a, b = _iv(rng)
    s, e = _iv(rng)
    return (f"<think>At first I thought {a}-{b} s, but that is a different sound.</think> "
            f"Answer: {s}s - {e}s"), [[s, e]]


@form("reasoning block")
def _think2(rng: random.Random) -> Row:
    a, b = _iv(rng)
    s, e = _iv(rng)
    return (f"<thinking>\nCandidates: {a} to {b} seconds (too quiet).\n</thinking>\n\nThe "
            f"{_snd(rng)} occurs from {s} to {e} seconds."), [[s, e]]


@form("reasoning block")
def _think3(rng: random.Random) -> Row:
    a, b = _iv(rng)
    s, e = _iv(rng)
    return (f"<reasoning>The segment {a}s-{b}s has speech, not laughter.</reasoning>"
            f"[{s}, {e}]"), [[s, e]]


@form("reasoning block")
def _think4(rng: random.Random) -> Row:
    a, b = _iv(rng)
    return f"<think>Let me listen. Maybe {a} to {b} seconds? I need to check again", []


@form("reasoning block")
def _think5(rng: random.Random) -> Row:
    a, b = _iv(rng)
    s, e = _iv(rng)
    return (f"Okay, the user wants the timestamps. Around {a}-{b} s there is a bark, but it "
            f"is too short.\n</think>\n\n{s}-{e} s"), [[s, e]]


@form("reasoning prefix, final marker")
def _marker1(rng: random.Random) -> Row:
    a, b = _iv(rng)
    s, e = _iv(rng)
    return (f"Let me analyze the audio. The first candidate at {a}-{b} s is a door. "
            f"Final answer: {s}-{e} s"), [[s, e]]


@form("reasoning prefix, final marker")
def _marker2(rng: random.Random) -> Row:
    a, b = _iv(rng)
    s, e = _iv(rng)
    return (f"Step 1: I scan the clip.\nStep 2: I compare the event at {a} to {b} seconds "
            f"with the query.\n\n**Answer**: {s} s \u2013 {e} s"), [[s, e]]


@form("reasoning prefix, final marker")
def _marker3(rng: random.Random) -> Row:
    a, b = _iv(rng)
    s, e = _iv(rng)
    return (f"Reasoning: the sound between {a} and {b} seconds is music.\n\n**Final Answer**\n"
            f"From {s} to {e} seconds."), [[s, e]]


@form("reasoning prefix, final marker")
def _marker4(rng: random.Random) -> Row:
    a, b = _iv(rng)
    s, e = _iv(rng)
    return (f"<think>{a}-{b}?</think>\nI considered the range {a}-{b} s first.\nAnswer: "
            f"[{s}, {e}]"), [[s, e]]


# ----------------------------------------------------------------- more interval forms


@form("h/min/s compounds")
def _cmp1(rng: random.Random) -> Row:
    m = rng.randint(1, 9)
    a = rng.randint(0, 40)
    b = a + rng.randint(2, 19)
    return f"from {m} min {a} s to {m} min {b} s", [[m * 60.0 + a, m * 60.0 + b]]


@form("h/min/s compounds")
def _cmp2(rng: random.Random) -> Row:
    m = rng.randint(1, 9)
    a = rng.randint(10, 40)
    b = a + rng.randint(2, 19)
    return f"{m}m{a}s-{m}m{b}s", [[m * 60.0 + a, m * 60.0 + b]]


@form("h/min/s compounds")
def _cmp3(rng: random.Random) -> Row:
    m = rng.randint(0, 59)
    a = rng.randint(0, 40)
    return (f"From 1h {m}m {a}s to 1h {m}m {a + 7}s."), [[3600.0 + 60 * m + a, 3600.0 + 60 * m + a + 7]]


@form("brackets")
def _br1(rng: random.Random) -> Row:
    s, e = _iv(rng, 60, 2)
    return f"The answer is [{s}s, {e}s].", [[s, e]]


@form("brackets")
def _br2(rng: random.Random) -> Row:
    s, e = _iv(rng, 60, 2)
    return f"({s}, {e})", [[s, e]]


@form("brackets")
def _br3(rng: random.Random) -> Row:
    (a, b), (c, d) = sorted([_iv(rng, 60, 2), _iv(rng, 60, 2)])
    return f"Intervals: [[{a}, {b}], [{c}, {d}]]", [[a, b], [c, d]]


@form("start/end fields")
def _se1(rng: random.Random) -> Row:
    s, e = _iv(rng, 600, 0)
    return f"Start: {_mmss(s, 0)}, End: {_mmss(e, 0)}", [[s, e]]


@form("start/end fields")
def _se2(rng: random.Random) -> Row:
    s, e = _iv(rng)
    return f"start={s} end={e}", [[s, e]]


@form("start/end fields")
def _se3(rng: random.Random) -> Row:
    s, e = _iv(rng)
    return f"**Start time:** {s} s\n**End time:** {e} s", [[s, e]]


@form("start/end fields")
def _se4(rng: random.Random) -> Row:
    s, e = _iv(rng)
    return f"Onset {s} s / offset {e} s", [[s, e]]


@form("arrows")
def _arr1(rng: random.Random) -> Row:
    s, e = _iv(rng)
    return f"{s}s -> {e}s", [[s, e]]


@form("arrows")
def _arr2(rng: random.Random) -> Row:
    s, e = _iv(rng, 600, 0)
    return f"{_snd(rng).capitalize()}: {_mmss(s, 0)} \u2192 {_mmss(e, 0)}", [[s, e]]


@form("minutes")
def _min1(rng: random.Random) -> Row:
    a = rng.randint(1, 10)
    return f"About {a}-{a + 2} minutes into the recording.", [[a * 60.0, (a + 2) * 60.0]]


@form("minutes")
def _min2(rng: random.Random) -> Row:
    a = rng.randint(1, 10)
    return f"between {a}.5 and {a + 1} min", [[a * 60.0 + 30.0, (a + 1) * 60.0]]


@form("seconds words")
def _sec1(rng: random.Random) -> Row:
    s, e = _iv(rng)
    return f"from {s} sec to {e} sec", [[s, e]]


@form("seconds words")
def _sec2(rng: random.Random) -> Row:
    s, e = _iv(rng)
    return f"{s} secs \u2013 {e} secs", [[s, e]]


@form("seconds words")
def _sec3(rng: random.Random) -> Row:
    s, e = _iv(rng)
    return f"The engine runs from {s} seconds through {e} seconds.", [[s, e]]


# ----------------------------------------------------------------- failures


def _fixed(name: str, rows: list[Row]) -> None:
    for row in rows:
        FORMS.setdefault(name, []).append(lambda rng, row=row: row)


_fixed("lone timestamp", [
    ("The word is spoken at 3.5 s.", []),
    ("At 00:12.", []),
    ("The siren can be heard at around 1:20.", []),
    ("It happens at the 45 second mark.", []),
    ("Timestamp: 12.8s", []),
    ("The door slams once, at t=7.2 s.", []),
    ("The keyword 'river' is said at 00:01:05.", []),
    ("Peak loudness: 14.2 seconds.", []),
    ("The bell rings at approximately 3 minutes.", []),
])

_fixed("refusal", [
    ("I'm sorry, but I can't process audio files.", []),
    ("I cannot find this sound in the audio.", []),
    ("As an AI language model, I am unable to listen to recordings.", []),
    ("Sorry, I don't know.", []),
    ("I could not locate the requested segment.", []),
    ("", []),
    ("Unfortunately, the audio could not be processed.", []),
    ("I'm unable to determine when the laughter occurs.", []),
    ("<think>The user asks about 3-5 s.</think>", []),
])

_fixed("negation", [
    ("No laughter can be heard between 0 and 48 seconds.", []),
    ("Laughter cannot be heard between 0 and 48 seconds.", []),
    ("No laughter occurs from 0 to 48 s.", []),
    ("Laughter is absent from 0 to 48 s.", []),
    ("There is no dog barking between 0 and 30 seconds.", []),
    ("The siren does not occur between 00:10 and 00:20.", []),
    ("Between 0 and 48 s, no laughter can be heard.", []),
    ("The keyword doesn't appear from 0 to 12 s.", []),
    ("The car horn is missing from 5 to 10 s.", []),
    ("The recording plays without applause from 0 to 60 s.", []),
    ("Laughter is not present between 2 and 9 seconds.", []),
    ("The speaker never mentions it between 1:00 and 2:00.", []),
    ("I can’t hear any coughing from 3 to 7 s.", []),
    ("No laughter from 0 to 20 s, but laughter occurs from 20.5 to 23 s.", [[20.5, 23.0]]),
    ("There is no barking from 0 to 5 s; barking is heard from 5.2 to 8.9 s.", [[5.2, 8.9]]),
    ("The dog barks from 3 to 5 s and there is no barking after that.", [[3.0, 5.0]]),
    ("The dog barks from 3 to 5 s and nowhere else.", [[3.0, 5.0]]),
    ("Applause only from 10 to 14 s, no other applause.", [[10.0, 14.0]]),
    ("I'm not completely sure, but it seems to be between 4 and 6 seconds.", [[4.0, 6.0]]),
    ("No problem! The cough is from 2.2 to 2.9 s.", [[2.2, 2.9]]),
    ("The violin plays from 1:05 to 1:20 without interruption.", [[65.0, 80.0]]),
    ("The laughter, which occurs from 12 to 15 s, is not repeated.", [[12.0, 15.0]]),
    ("Nothing matching the query occurs between 00:00 and 00:30.", []),
    ("Neither speaker laughs from 10 s to 20 s.", []),
    ("The word is spoken from 3 to 4 s, not from 10 to 12 s.", [[3.0, 4.0]]),
])

_fixed("vague", [
    ("Near the beginning of the recording.", []),
    ("Throughout the whole clip.", []),
    ("In the second half of the audio.", []),
    ("It happens several times, mostly towards the end.", []),
    ("The audio is 30 seconds long and contains speech.", []),
    ("Somewhere in the middle.", []),
    ("Right after the intro, for a few seconds.", []),
    ("It is heard 2-3 times during the clip.", []),
    ("Sales grew 10-15% in 2019-2020, the speaker says.", []),
])

_fixed("reversed", [
    ("From 15 s to 12 s.", []),
    ("The siren sounds from 8 to 6 s and from 10 to 14 s.", [[10.0, 14.0]]),
    ("[9.5, 3.2]", []),
    ("Start: 00:20, End: 00:15", []),
    ('{"start": 7.0, "end": 2.0}', []),
])

_fixed("restated", [
    ("The dog barks from 3 to 5 s. To repeat: 3-5 s.", [[3.0, 5.0]]),
    ("3.0-5.0 s (00:03-00:05)", [[3.0, 5.0]]),
    ("The phrase is repeated twice: 3-4s, then 3-4s again.", [[3.0, 4.0]]),
    ("Answer: 12.5-14 s. In other words, the event lies between 12.5 and 14 seconds.",
     [[12.5, 14.0]]),
    ('[[1, 2], [1, 2], [5, 6]]', [[1.0, 2.0], [5.0, 6.0]]),
])

_fixed("hedged", [
    ("approximately 3-5 s", [[3.0, 5.0]]),
    ("roughly between 00:10 and 00:14, though the boundaries are unclear", [[10.0, 14.0]]),
    ("~3.2 to ~4.8 s", [[3.2, 4.8]]),
    ("Probably about 12 s to 15 s, give or take.", [[12.0, 15.0]]),
    ("\u2248 2.5 \u2013 \u2248 4 seconds", [[2.5, 4.0]]),
])


def main() -> None:
    rng = random.Random(20260123)
    rows = []
    for name, templates in FORMS.items():
        fixed = all(getattr(t, "__defaults__", None) for t in templates)
        reps = 1 if fixed else max(2, -(-10 // len(templates)))
        for k, tmpl in enumerate(templates):
            for _ in range(reps):
                text, expected = tmpl(rng)
                rows.append({"form": name, "template": k, "response": text,
                             "expected": [[float(a), float(b)] for a, b in expected]})
    out = Path(__file__).resolve().parent / "tag_answer_forms.jsonl"
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                   encoding="utf-8")
    print(f"wrote {len(rows)} rows in {len(FORMS)} forms to {out}")


if __name__ == "__main__":
    main()

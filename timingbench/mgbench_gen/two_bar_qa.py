"""MGBench-2B question-answer pairs: grounding and understanding over seven concept groups.

Every question is derived from the labels of :mod:`timingbench.mgbench_gen.two_bar`
(which are derived from the notes). Grounding answers are the spans of the target notes
(one per note, or one per run of consecutive notes for a bar, a region or a pattern);
understanding answers are short texts with the notes that evidence them.

Concept groups (paper Table 1 / Table 3): rhythm, tonality, interval, bar_comparison,
chord, repetition, harmonic_pattern.
"""

from __future__ import annotations

import numpy as np

from timingbench.mgbench_gen.excerpt import Candidate, Excerpt
from timingbench.mgbench_gen.theory import (
    HARMONIC_PATTERN_NAMES,
    INTERVAL_NAMES,
    PITCH_CLASS_NAMES,
    roman,
)

CONCEPTS = ("rhythm", "tonality", "interval", "bar_comparison", "chord", "repetition", "harmonic_pattern")



def _bar_notes(ex: Excerpt, bar: int) -> tuple[int, ...]:
    return tuple(i for i, lab in enumerate(ex.note_labels) if lab["bar"] == bar)


def _article(name: str) -> str:
    return "an" if name[0] in "aeiou" else "a"


def _compare(a: float, b: float) -> int:
    """1 when bar 1 wins, 2 when bar 2 wins, 0 on a tie (within 1e-9)."""
    if abs(a - b) < 1e-9:
        return 0
    return 1 if a > b else 2


def grounding_candidates(ex: Excerpt) -> list[Candidate]:
    """All grounding questions the excerpt supports, empty answers included."""
    labs = ex.note_labels
    lb = ex.labels
    out: dict[str, Candidate] = {}
    n = len(ex.notes)
    every = tuple(range(n))
    bars = {b: _bar_notes(ex, b) for b in (1, 2)}

    def add(concept: str, template: str, question: str, targets: tuple[int, ...], merge: bool = False) -> None:
        out.setdefault(question, Candidate("grounding", concept, template, question, targets, merge))

    # rhythm
    add("rhythm", "downbeats", "Locate the downbeat note(s).", tuple(i for i in every if labs[i]["downbeat"]))
    for b in (1, 2):
        add("rhythm", "bar", f"Locate bar {b}.", bars[b], True)
        for beat in range(1, int(lb["beats_per_bar"]) + 1):
            add("rhythm", "beat", f"Locate the note(s) starting on beat {beat} of bar {b}.",
                tuple(i for i in bars[b] if labs[i]["on_beat"] and labs[i]["beat"] == beat))
    add("rhythm", "off_beat", "Locate the note(s) starting off the beat.",
        tuple(i for i in every if not labs[i]["on_beat"]))
    # tonality
    tonic = str(lb["tonic"])
    add("tonality", "tonic", "Locate the note(s) on the tonic.",
        tuple(i for i in every if labs[i]["scale_degree"] == 1))
    for d in range(2, 8):
        add("tonality", "degree", f"Locate the note(s) on scale degree {d}.",
            tuple(i for i in every if labs[i]["scale_degree"] == d))
    add("tonality", "tonic_name", f"Locate the note(s) on {tonic}.",
        tuple(i for i in every if PITCH_CLASS_NAMES[ex.notes[i].pitch % 12] == tonic))
    # interval
    for size in range(13):
        targets = tuple(i for i in every if labs[i]["interval_in"] is not None and abs(labs[i]["interval_in"]) == size)
        if size == 0:
            add("interval", "interval", "Locate the repeated note(s).", targets)
            continue
        name = INTERVAL_NAMES[size]
        add("interval", "interval", f"Locate the note(s) reached by {_article(name)} {name}.", targets)
        for word, sign in (("ascending", 1), ("descending", -1)):
            add("interval", "directed_interval", f"Locate the note(s) reached by {_article(word)} {word} {name}.",
                tuple(i for i in targets if labs[i]["interval_in"] * sign > 0))
    # bar comparison
    counts = {b: len(bars[b]) for b in (1, 2)}
    means = {b: float(np.mean([ex.notes[i].pitch for i in bars[b]])) for b in (1, 2)}
    top = max(x.pitch for x in ex.notes)
    more = _compare(counts[1], counts[2])
    higher = _compare(means[1], means[2])
    add("bar_comparison", "more_notes", "Locate the bar with more notes.", bars[more] if more else (), True)
    add("bar_comparison", "fewer_notes", "Locate the bar with fewer notes.", bars[3 - more] if more else (), True)
    add("bar_comparison", "higher_bar", "Locate the bar with the higher average pitch.",
        bars[higher] if higher else (), True)
    add("bar_comparison", "highest_in", "Locate the bar containing the highest note.",
        tuple(i for b in (1, 2) if any(ex.notes[j].pitch == top for j in bars[b]) for i in bars[b]), True)
    # chord
    chords = list(lb["chords"])
    mode = str(lb["mode"])
    for d in range(7):
        label = roman(mode, d)
        add("chord", "chord_region", f"Locate the region where the harmony is {label}.",
            tuple(i for b in (1, 2) if chords[b - 1] == label for i in bars[b]), True)
    for b in (1, 2):
        add("chord", "chord_tones", f"Locate the chord tones of bar {b}.",
            tuple(i for i in bars[b] if labs[i]["chord_tone"]))
    add("chord", "non_chord_tones", "Locate the non-chord tones.", tuple(i for i in every if not labs[i]["chord_tone"]))
    # repetition
    rep = str(lb["repetition"])
    add("repetition", "exact", "Locate the exact repetition of the first bar.",
        bars[2] if rep == "exact repetition" else (), True)
    add("repetition", "rhythm", "Locate the bar that repeats the rhythm of the first bar.",
        bars[2] if rep != "no repetition" else (), True)
    add("repetition", "sequence", "Locate the sequence (the first bar transposed within the key).",
        bars[2] if rep == "sequence" else (), True)
    # harmonic pattern
    for name in HARMONIC_PATTERN_NAMES:
        add("harmonic_pattern", "pattern", f"Locate the {name}.", every if lb["harmonic_pattern"] == name else (), True)
    return list(out.values())


def understanding_candidates(ex: Excerpt) -> list[Candidate]:
    """All understanding questions of the excerpt, each with its answer and evidence notes."""
    labs = ex.note_labels
    lb = ex.labels
    n = len(ex.notes)
    every = tuple(range(n))
    bars = {b: _bar_notes(ex, b) for b in (1, 2)}
    out: list[Candidate] = []

    def add(concept: str, template: str, question: str, answer: str, evidence: tuple[int, ...]) -> None:
        out.append(Candidate("understanding", concept, template, question, evidence, True, answer))

    add("rhythm", "meter", "What is the time signature of this clip?", str(lb["meter"]),
        tuple(i for i in every if labs[i]["downbeat"]))
    for b in (1, 2):
        add("rhythm", "note_count", f"How many notes does bar {b} contain?", str(len(bars[b])), bars[b])
    add("tonality", "mode", "Is this clip in a major or a minor key?", str(lb["mode"]), every)
    add("tonality", "tonic", "What is the tonic of this clip?", str(lb["tonic"]),
        tuple(i for i in every if labs[i]["scale_degree"] == 1))
    add("tonality", "key", "What key is this clip in?", f"{lb['tonic']} {lb['mode']}", every)
    sizes = [abs(lab["interval_in"]) if lab["interval_in"] is not None else None for lab in labs]
    for size in sorted({s for s in sizes if s is not None} | {3, 4, 7, 12}):
        name = INTERVAL_NAMES[size] if size else "repeated note"
        hits = tuple(j for i in every if sizes[i] == size for j in (i - 1, i))
        add("interval", "presence", f"Does the melody contain {_article(name)} {name} between consecutive notes?",
            "yes" if hits else "no", tuple(sorted(set(hits))))
        if hits:
            count = sum(1 for s in sizes if s == size)
            add("interval", "count", f"How many times does {_article(name)} {name} occur between consecutive notes?",
                str(count), tuple(sorted(set(hits))))
    big = max((s for s in sizes if s is not None), default=0)
    add("interval", "largest", "What is the largest interval between consecutive notes?",
        INTERVAL_NAMES[big] if big else "unison",
        tuple(sorted({j for i in every if sizes[i] == big for j in (i - 1, i)})))
    more = _compare(len(bars[1]), len(bars[2]))
    add("bar_comparison", "more_notes", "Which bar has more notes, the first or the second?",
        ("the first bar", "the second bar")[more - 1] if more else "they have the same number of notes", every)
    higher = _compare(float(np.mean([ex.notes[i].pitch for i in bars[1]])),
                      float(np.mean([ex.notes[i].pitch for i in bars[2]])))
    add("bar_comparison", "higher", "Which bar is higher in pitch on average, the first or the second?",
        ("the first bar", "the second bar")[higher - 1] if higher else "neither, they are equally high", every)
    same_rhythm = lb["repetition"] != "no repetition"
    add("bar_comparison", "same_rhythm", "Do the two bars have the same rhythm?", "yes" if same_rhythm else "no", every)
    add("chord", "progression", "What is the chord progression of this clip (Roman numerals, one chord per bar)?",
        str(lb["chord_progression"]), every)
    for b in (1, 2):
        add("chord", "bar_chord", f"What chord underlies bar {b} (Roman numeral)?", str(lb["chords"][b - 1]), bars[b])
    add("repetition", "type", "What type of repetition does this clip contain?", str(lb["repetition"]), every)
    add("harmonic_pattern", "type", "What harmonic pattern does this clip contain?", str(lb["harmonic_pattern"]), every)
    return out

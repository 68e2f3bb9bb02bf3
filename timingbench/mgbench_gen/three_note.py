"""MGBench-3N: clips of one to three sequential piano notes and their grounding queries.

Material (paper Sec. 3.2.1): strictly monophonic clips of 1.5-5.0 s over all 88 keys;
one-, two- and three-note clips balanced within a split; two-note clips span repeated
notes through octave leaps (0-12 semitones, either direction); three-note clips cover the
four contours up-up, down-down, up-down and down-up with steps of 1-12 semitones.

Queries (Sec. 3.2.2) come in four families, each answered by the spans of its target
notes (one span per note):

- ``ABS``: absolute attributes (MIDI pitch, pitch name, pitch class, above/below a pitch);
- ``REL``: relative comparisons (highest, lowest, longest, shortest, higher/lower than the
  first or last note, same pitch as the first note);
- ``ORD``: ordinal references (first, second, third, last, second-to-last note);
- ``PAT``: patterns and pairs (a pair a given number of semitones apart, ascending /
  descending / repeated pairs, steps and leaps, a three-note contour).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from timingbench.errors import ParameterError
from timingbench.mgbench_gen.excerpt import Candidate, Excerpt, GenNote, on_tick_grid
from timingbench.mgbench_gen.theory import (
    HIGHEST_KEY,
    LOWEST_KEY,
    PITCH_CLASS_NAMES,
    contour_name,
    pitch_name,
)

FAMILIES = ("ABS", "REL", "ORD", "PAT")
CONTOURS = ("up-up", "down-down", "up-down", "down-up")
_ORDINALS = ("first", "second", "third")


@dataclass(frozen=True)
class ThreeNoteParams:
    """Sampling ranges of MGBench-3N clips (config ``mgbench_gen``).

    Attributes
    ----------
    duration_s : tuple of float
        Clip length range in seconds.
    velocity : tuple of int
        MIDI velocity range.
    min_note_s : float
        Shortest note in seconds.
    edge_s : tuple of float
        Range of the silence before the first note and after the last one, seconds.
    max_gap_s : float
        Longest silence between two notes, seconds.
    max_interval : int
        Largest interval between consecutive notes, semitones.
    """

    duration_s: tuple[float, float]
    velocity: tuple[int, int]
    min_note_s: float
    edge_s: tuple[float, float]
    max_gap_s: float
    max_interval: int


def _pitches(rng: np.random.Generator, n: int, *, max_interval: int) -> list[int]:
    if n == 1:
        return [int(rng.integers(LOWEST_KEY, HIGHEST_KEY + 1))]
    if n == 2:
        size = int(rng.integers(0, max_interval + 1))
        step = size if size == 0 or rng.random() < 0.5 else -size
    else:
        contour = CONTOURS[int(rng.integers(len(CONTOURS)))]
        sizes = [int(rng.integers(1, max_interval + 1)) for _ in range(2)]
        steps = [s if c == "up" else -s for s, c in zip(sizes, contour.split("-"), strict=True)]
    deltas = [0, step] if n == 2 else [0, steps[0], steps[0] + steps[1]]
    lo = LOWEST_KEY - min(deltas)
    hi = HIGHEST_KEY - max(deltas)
    first = int(rng.integers(lo, hi + 1))
    return [first + d for d in deltas]


def sample_clip(rng: np.random.Generator, *, clip_id: str, n_notes: int, params: ThreeNoteParams) -> Excerpt:
    """Sample one MGBench-3N clip.

    Parameters
    ----------
    rng : np.random.Generator
        The clip's own generator (seeded from the split seed and the clip index).
    clip_id : str
    n_notes : int
        1, 2 or 3.
    params : ThreeNoteParams

    Returns
    -------
    excerpt : Excerpt
        Notes on the MIDI tick grid; labels ``n_notes``, ``interval`` (two-note clips,
        signed semitones) and ``contour`` (three-note clips).

    Raises
    ------
    ParameterError
        If ``n_notes`` is not 1, 2 or 3.
    """
    if n_notes not in (1, 2, 3):
        raise ParameterError(f"an MGBench-3N clip holds 1-3 notes, got {n_notes!r}")
    p = params
    duration = round(float(rng.uniform(*p.duration_s)), 2)
    lead, tail = (float(rng.uniform(*p.edge_s)) for _ in range(2))
    avail = duration - lead - tail
    # note lengths and gaps as shares of the available time, each note at least min_note_s
    gaps = [float(rng.uniform(0.0, p.max_gap_s)) for _ in range(n_notes - 1)]
    while sum(gaps) > avail - n_notes * p.min_note_s:
        gaps = [g / 2 for g in gaps]
    weights = rng.uniform(1.0, 3.0, size=n_notes)
    free = avail - sum(gaps) - n_notes * p.min_note_s
    lengths = [p.min_note_s + free * float(w) / float(weights.sum()) for w in weights]
    pitches = _pitches(rng, n_notes, max_interval=p.max_interval)
    notes: list[GenNote] = []
    t = lead
    for k in range(n_notes):
        on, off = on_tick_grid(t), on_tick_grid(t + lengths[k])
        notes.append(GenNote(on, off, pitches[k], int(rng.integers(p.velocity[0], p.velocity[1] + 1))))
        t += lengths[k] + (gaps[k] if k < n_notes - 1 else 0.0)
    labels: dict[str, object] = {"n_notes": n_notes}
    if n_notes == 2:
        labels["interval"] = pitches[1] - pitches[0]
    if n_notes == 3:
        labels["contour"] = contour_name((pitches[1] - pitches[0], pitches[2] - pitches[1]))
    note_labels = [{"index": k + 1, "pitch_name": pitch_name(n.pitch)} for k, n in enumerate(notes)]
    return Excerpt(clip_id, "3N", duration, notes, note_labels, labels)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- queries


def _idx(flags: list[bool]) -> tuple[int, ...]:
    """Indices of the true flags."""
    return tuple(i for i, f in enumerate(flags) if f)


def candidates(ex: Excerpt, rng: np.random.Generator) -> list[Candidate]:
    """Every grounding question of the four families that the clip supports.

    Parameterised templates get a handful of values each: the clip's own pitches plus
    absent ones (empty answers), thresholds just below / above the notes.

    Parameters
    ----------
    ex : Excerpt
        An MGBench-3N clip.
    rng : np.random.Generator
        Draws the absent pitches.

    Returns
    -------
    candidates : list of Candidate
        Unique questions (``targets`` empty for empty answers).
    """
    notes = ex.notes
    n = len(notes)
    pitches = [x.pitch for x in notes]
    out: dict[str, Candidate] = {}

    def add(family: str, template: str, question: str, targets: tuple[int, ...]) -> None:
        out.setdefault(question, Candidate("grounding", family, template, question, targets))

    present = sorted(set(pitches))
    absent = [int(v) for v in rng.choice([q for q in range(LOWEST_KEY, HIGHEST_KEY + 1) if q not in pitches],
                                         size=4, replace=False)]
    near = [q for q in (pitches[0] + 1, pitches[-1] - 1, pitches[0] + 12) if LOWEST_KEY <= q <= HIGHEST_KEY
            and q not in pitches]
    for q in present + absent + near:
        add("ABS", "midi_pitch", f"Locate the note(s) whose pitch is {q} (MIDI).", _idx([p == q for p in pitches]))
        add("ABS", "pitch_name", f"Locate the note(s) whose pitch is {pitch_name(q)}.",
            _idx([p == q for p in pitches]))
    for pc in sorted({q % 12 for q in present + absent}):
        add("ABS", "pitch_class", f"Locate the note(s) with pitch class {PITCH_CLASS_NAMES[pc]}.",
            _idx([p % 12 == pc for p in pitches]))
    for k in range(1, 13):
        lo_thr, hi_thr = min(pitches) - k, max(pitches) + k
        if lo_thr >= LOWEST_KEY:
            add("ABS", "above_pitch", f"Locate the note(s) higher than {lo_thr} (MIDI).",
                _idx([p > lo_thr for p in pitches]))
        if hi_thr <= HIGHEST_KEY:
            add("ABS", "below_pitch", f"Locate the note(s) lower than {hi_thr} (MIDI).",
                _idx([p < hi_thr for p in pitches]))
    for q in present:
        add("ABS", "above_pitch", f"Locate the note(s) higher than {q} (MIDI).", _idx([p > q for p in pitches]))
        add("ABS", "below_pitch", f"Locate the note(s) lower than {q} (MIDI).", _idx([p < q for p in pitches]))

    lengths = [x.offset_s - x.onset_s for x in notes]
    add("REL", "highest", "Locate the highest note.", _idx([p == max(pitches) for p in pitches]))
    add("REL", "lowest", "Locate the lowest note.", _idx([p == min(pitches) for p in pitches]))
    add("REL", "longest", "Locate the longest note.", (int(np.argmax(lengths)),))
    add("REL", "shortest", "Locate the shortest note.", (int(np.argmin(lengths)),))
    for ref, name in ((0, "first"), (n - 1, "last")):
        rp = pitches[ref]
        add("REL", f"higher_than_{name}", f"Locate the note(s) higher than the {name} note.",
            _idx([p > rp for p in pitches]))
        add("REL", f"lower_than_{name}", f"Locate the note(s) lower than the {name} note.",
            _idx([p < rp for p in pitches]))
    add("REL", "same_as_first", "Locate the later note(s) with the same pitch as the first note.",
        tuple(i for i in range(1, n) if pitches[i] == pitches[0]))

    for k, word in enumerate(_ORDINALS):
        add("ORD", "ordinal", f"Locate the {word} note.", (k,) if k < n else ())
    add("ORD", "last", "Locate the last note.", (n - 1,))
    add("ORD", "second_to_last", "Locate the second-to-last note.", (n - 2,) if n >= 2 else ())

    steps = [pitches[i + 1] - pitches[i] for i in range(n - 1)]

    def pairs(flags: list[bool]) -> tuple[int, ...]:
        return tuple(sorted({j for i, f in enumerate(flags) if f for j in (i, i + 1)}))

    sizes = sorted(set(abs(d) for d in steps) | {int(v) for v in rng.choice(13, size=3, replace=False)})
    for s in sizes:
        add("PAT", "pair_interval", f"Locate the pair of notes separated by {s} semitone(s).",
            pairs([abs(d) == s for d in steps]))
    add("PAT", "ascending_pair", "Locate the ascending pair of notes.", pairs([d > 0 for d in steps]))
    add("PAT", "descending_pair", "Locate the descending pair of notes.", pairs([d < 0 for d in steps]))
    add("PAT", "repeated_pair", "Locate the repeated note pair.", pairs([d == 0 for d in steps]))
    add("PAT", "octave_pair", "Locate the pair of notes an octave apart.", pairs([abs(d) == 12 for d in steps]))
    add("PAT", "step_target", "Locate the note(s) reached by a step (1 or 2 semitones).",
        tuple(i + 1 for i, d in enumerate(steps) if 1 <= abs(d) <= 2))
    add("PAT", "leap_target", "Locate the note(s) reached by a leap (more than 2 semitones).",
        tuple(i + 1 for i, d in enumerate(steps) if abs(d) > 2))
    contour = ex.labels.get("contour")
    for c in CONTOURS:
        add("PAT", "contour", f"Locate the three notes forming a {c} contour.", (0, 1, 2) if contour == c else ())
    return list(out.values())


def pick(cands: list[Candidate], rng: np.random.Generator, *, family_order: list[str],
         empty: bool, exclude: set[str]) -> Candidate | None:
    """One candidate: the first family of ``family_order`` with a fitting question, then a
    template uniformly, then a question of that template uniformly.

    Parameters
    ----------
    cands : list of Candidate
    rng : np.random.Generator
    family_order : list of str
        Families (or concept groups) in order of preference.
    empty : bool
        Whether the question must have an empty answer.
    exclude : set of str
        Questions already used for this clip.

    Returns
    -------
    candidate : Candidate or None
        None when no family has a fitting question left.
    """
    for fam in family_order:
        pool = [c for c in cands if c.category == fam and c.empty == empty and c.question not in exclude]
        if not pool:
            continue
        templates = sorted({c.template for c in pool})
        t = templates[int(rng.integers(len(templates)))]
        sub = [c for c in pool if c.template == t]
        return sub[int(rng.integers(len(sub)))]
    return None

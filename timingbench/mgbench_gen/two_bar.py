"""MGBench-2B: validated two-bar monophonic piano excerpts built from sampled controls.

Controls (paper Sec. 3.3.1): meter, tempo, mode (major / natural minor), tonic pitch
class, register, interval tendency, one chord per bar, repetition type and harmonic-
pattern type. A control set is realised as notes: a rhythm pattern per bar (positions in
beats, exact fractions), chord tones on the beats, scale steps or leaps between them
following the interval tendency, and the second bar derived from the first according to
the repetition type. Labels are then *derived from the finished notes* (bar, beat,
downbeat, scale degree, chord tone, incoming interval; the repetition type and the
harmonic pattern) and :func:`validate` checks them against the controls.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from timingbench.mgbench_gen.excerpt import Excerpt, GenNote, on_tick_grid
from timingbench.mgbench_gen.theory import (
    HARMONIC_PATTERNS,
    HIGHEST_KEY,
    LOWEST_KEY,
    MODES,
    PITCH_CLASS_NAMES,
    diatonic_index,
    pitch_of_diatonic_index,
    roman,
    scale_degree,
    triad_pitch_classes,
)

F = Fraction
#: Beats per bar of each meter (6/8 counts two dotted-quarter beats).
BEATS_PER_BAR = {"2/4": 2, "3/4": 3, "4/4": 4, "6/8": 2}
#: Rhythm patterns per meter: note lengths in beats, each summing to one bar.
RHYTHMS: dict[str, tuple[tuple[Fraction, ...], ...]] = {
    "2/4": ((F(1), F(1)), (F(1, 2), F(1, 2), F(1)), (F(1), F(1, 2), F(1, 2)),
            (F(1, 2),) * 4, (F(3, 2), F(1, 2))),
    "3/4": ((F(1),) * 3, (F(2), F(1)), (F(1), F(2)), (F(1), F(1, 2), F(1, 2), F(1)),
            (F(1, 2), F(1, 2), F(1), F(1)), (F(3, 2), F(1, 2), F(1))),
    "4/4": ((F(1),) * 4, (F(2), F(1), F(1)), (F(1), F(1), F(2)), (F(2), F(2)),
            (F(1, 2), F(1, 2), F(1), F(1), F(1)), (F(1), F(1, 2), F(1, 2), F(2)),
            (F(3, 2), F(1, 2), F(1), F(1)), (F(1), F(1), F(1, 2), F(1, 2), F(1))),
    "6/8": ((F(1), F(1)), (F(2, 3), F(1, 3), F(1)), (F(1, 3), F(1, 3), F(1, 3), F(1)),
            (F(1), F(2, 3), F(1, 3)), (F(1, 3),) * 6, (F(2, 3), F(1, 3), F(2, 3), F(1, 3))),
}
REGISTERS = {"low": 48, "middle": 60, "high": 72}
#: Probability that a note off the beat moves by a scale step, per interval tendency.
TENDENCIES = {"stepwise": 0.85, "mixed": 0.55, "leaping": 0.25}
#: Tolerance of beat positions read back from tick-quantised times (one tick, 0.52 ms, is at
#: most 0.0014 beats at 160 BPM).
_GRID_TOL_BEATS = 0.005
REPETITIONS = ("exact repetition", "sequence", "rhythmic repetition", "no repetition")


@dataclass(frozen=True)
class TwoBarParams:
    """Sampling ranges of MGBench-2B excerpts (config ``mgbench_gen``).

    Attributes
    ----------
    meters : tuple of str
        Meters to sample from (keys of :data:`BEATS_PER_BAR`).
    tempo_bpm : tuple of float
        Tempo range in beats per minute.
    articulation : tuple of float
        Range of the sounding share of each note's metric length.
    edge_s : tuple of float
        Silence before the first and after the last note, seconds.
    velocity : tuple of int
        MIDI velocity range of notes off the downbeat (downbeats get the top of it).
    max_duration_s : float
        Excerpts longer than this are dropped.
    """

    meters: tuple[str, ...]
    tempo_bpm: tuple[float, float]
    articulation: tuple[float, float]
    edge_s: tuple[float, float]
    velocity: tuple[int, int]
    max_duration_s: float


@dataclass(frozen=True)
class Controls:
    """The sampled control variables of one excerpt."""

    meter: str
    tempo_bpm: float
    mode: str
    tonic: int
    register: str
    tendency: str
    degrees: tuple[int, int]
    harmonic_pattern: str
    repetition: str


class InvalidExcerpt(Exception):
    """A realised excerpt failed validation (the generator draws again)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def sample_controls(rng: np.random.Generator, params: TwoBarParams) -> Controls:
    """Draw one control set; the repetition type is drawn among those the chords allow
    (an exact repetition needs the same chord in both bars, a sequence different ones)."""
    meter = params.meters[int(rng.integers(len(params.meters)))]
    tempo = float(round(rng.uniform(*params.tempo_bpm)))
    mode = MODES[int(rng.integers(2))]
    tonic = int(rng.integers(12))
    register = list(REGISTERS)[int(rng.integers(len(REGISTERS)))]
    tendency = list(TENDENCIES)[int(rng.integers(len(TENDENCIES)))]
    name, firsts, second = HARMONIC_PATTERNS[int(rng.integers(len(HARMONIC_PATTERNS)))]
    first = firsts[int(rng.integers(len(firsts)))]
    allowed = [r for r in REPETITIONS if r != ("sequence" if first == second else "exact repetition")]
    repetition = allowed[int(rng.integers(len(allowed)))]
    return Controls(meter, tempo, mode, tonic, register, tendency, (first, second), name, repetition)


def _nearest_chord_tone(target: int, pcs: tuple[int, ...], lo: int, hi: int) -> int:
    cands = [p for p in range(lo, hi + 1) if p % 12 in pcs]
    return min(cands, key=lambda p: (abs(p - target), p))


def _bar_pitches(rng: np.random.Generator, c: Controls, positions: list[Fraction], degree: int,
                 prev: int | None, lo: int, hi: int) -> list[int]:
    pcs = triad_pitch_classes(c.tonic, c.mode, degree)
    step_p = TENDENCIES[c.tendency]
    out: list[int] = []
    for pos in positions:
        last = out[-1] if out else prev
        if last is None:
            p = _nearest_chord_tone((lo + hi) // 2, pcs, lo, hi)
        elif pos.denominator == 1:  # on a beat: a chord tone, by step or leap
            near = [q for q in range(lo, hi + 1) if q % 12 in pcs and q != last]
            if rng.random() < step_p:
                p = min(near, key=lambda q: (abs(q - last), q))
            else:
                far = [q for q in near if 3 <= abs(q - last) <= 12] or near
                p = far[int(rng.integers(len(far)))]
        else:
            idx = diatonic_index(last, c.tonic % 12, c.mode)
            if idx is None:
                raise InvalidExcerpt("a note outside the key")
            if rng.random() < step_p:
                move = int(rng.choice([-1, 1]))
            else:
                move = int(rng.choice([-4, -3, -2, 2, 3, 4]))
            p = pitch_of_diatonic_index(idx + move, c.tonic % 12, c.mode)
            if not lo <= p <= hi:
                p = pitch_of_diatonic_index(idx - move, c.tonic % 12, c.mode)
        out.append(int(p))
    return out


def realise(rng: np.random.Generator, c: Controls, params: TwoBarParams, *, clip_id: str) -> Excerpt:
    """Turn controls into notes and derived labels.

    Raises
    ------
    InvalidExcerpt
        If the excerpt fails :func:`validate` (too long, a repetition that the pitches
        did not realise, ...).
    """
    beats = BEATS_PER_BAR[c.meter]
    beat_s = 60.0 / c.tempo_bpm
    patterns = RHYTHMS[c.meter]
    r1 = patterns[int(rng.integers(len(patterns)))]
    if c.repetition == "no repetition":
        others = [r for r in patterns if r != r1]
        r2 = others[int(rng.integers(len(others)))]
    else:
        r2 = r1
    pos1 = [sum(r1[:k], F(0)) for k in range(len(r1))]
    pos2 = [sum(r2[:k], F(0)) for k in range(len(r2))]
    center = REGISTERS[c.register] + c.tonic
    lo, hi = max(LOWEST_KEY, center - 7), min(HIGHEST_KEY, center + 14)
    p1 = _bar_pitches(rng, c, pos1, c.degrees[0], None, lo, hi)
    if c.repetition == "exact repetition":
        p2 = list(p1)
    elif c.repetition == "sequence":
        shift = c.degrees[1] - c.degrees[0]
        idx = [diatonic_index(p, c.tonic % 12, c.mode) for p in p1]
        options = [shift, shift - 7, shift + 7]
        fits = [s for s in options
                if all(lo - 5 <= pitch_of_diatonic_index(i + s, c.tonic % 12, c.mode) <= hi + 5
                       for i in idx if i is not None)]
        if not fits:
            raise InvalidExcerpt("sequence leaves the register")
        s = min(fits, key=abs)
        p2 = [pitch_of_diatonic_index(i + s, c.tonic % 12, c.mode) for i in idx if i is not None]
    else:
        p2 = _bar_pitches(rng, c, pos2, c.degrees[1], p1[-1], lo, hi)
    lead = float(rng.uniform(*params.edge_s))
    tail = float(rng.uniform(*params.edge_s))
    notes: list[GenNote] = []
    metric: list[tuple[int, Fraction, Fraction]] = []
    vlo, vhi = params.velocity
    for bar, (rhythm, positions, pitches) in enumerate(((r1, pos1, p1), (r2, pos2, p2))):
        for length, pos, pitch in zip(rhythm, positions, pitches, strict=True):
            start = lead + (bar * beats + float(pos)) * beat_s
            art = float(rng.uniform(*params.articulation))
            vel = int(rng.integers(vhi - 10, vhi + 1)) if pos == 0 else int(rng.integers(vlo, vhi - 10))
            notes.append(GenNote(on_tick_grid(start), on_tick_grid(start + float(length) * beat_s * art), pitch, vel))
            metric.append((bar, pos, length))
    duration = round(lead + 2 * beats * beat_s + tail, 2)
    ex = Excerpt(clip_id, "2B", duration, notes)
    ex.labels = {
        "meter": c.meter, "beats_per_bar": beats, "tempo_bpm": c.tempo_bpm, "mode": c.mode,
        "tonic": PITCH_CLASS_NAMES[c.tonic], "register": c.register, "interval_tendency": c.tendency,
        "chords": [roman(c.mode, d) for d in c.degrees],
        "chord_progression": "-".join(roman(c.mode, d) for d in c.degrees),
        "harmonic_pattern": c.harmonic_pattern, "repetition": c.repetition,
        "first_beat_s": lead, "beat_s": beat_s,
        "bars": [[on_tick_grid(lead + k * beats * beat_s),
                  on_tick_grid(lead + (k + 1) * beats * beat_s)] for k in (0, 1)],
    }
    ex.note_labels = derive_note_labels(ex, c)
    for k, (_bar, pos, length) in enumerate(metric):
        ex.note_labels[k]["beat_position"] = str(pos)
        ex.note_labels[k]["metric_length_beats"] = str(length)
    validate(ex, c, params)
    return ex


def derive_note_labels(ex: Excerpt, c: Controls) -> list[dict[str, Any]]:
    """Per-note labels computed from the note times and pitches alone (not the controls'
    rhythm): bar and beat from the tempo grid, downbeat, scale degree, chord tone of the
    bar's chord, signed incoming interval in semitones."""
    beats = BEATS_PER_BAR[c.meter]
    beat_s = 60.0 / c.tempo_bpm
    lead = float(ex.labels["first_beat_s"])
    out: list[dict[str, Any]] = []
    for k, n in enumerate(ex.notes):
        pos_beats = (n.onset_s - lead) / beat_s
        bar = int(math.floor((pos_beats + _GRID_TOL_BEATS) / beats))
        in_bar = pos_beats - bar * beats
        on_beat = abs(in_bar - round(in_bar)) < _GRID_TOL_BEATS
        degree = c.degrees[min(max(bar, 0), 1)]
        out.append({
            "bar": bar + 1,
            "beat": int(math.floor(in_bar + _GRID_TOL_BEATS)) + 1,
            "on_beat": bool(on_beat),
            "downbeat": bool(on_beat and round(in_bar) == 0),
            "scale_degree": scale_degree(n.pitch, c.tonic, c.mode),
            "chord": roman(c.mode, degree),
            "chord_tone": n.pitch % 12 in triad_pitch_classes(c.tonic, c.mode, degree),
            "interval_in": None if k == 0 else n.pitch - ex.notes[k - 1].pitch,
        })
    return out


def derived_repetition(ex: Excerpt, c: Controls) -> str:
    """Repetition type read from the notes: same rhythm and pitches (exact), same rhythm
    and one constant diatonic shift (sequence), same rhythm (rhythmic), else none."""
    bars = [[(lab["beat_position"], lab["metric_length_beats"], n.pitch)
             for n, lab in zip(ex.notes, ex.note_labels, strict=True) if lab["bar"] == b] for b in (1, 2)]
    if [(p, ln) for p, ln, _ in bars[0]] != [(p, ln) for p, ln, _ in bars[1]]:
        return "no repetition"
    if [q for _, _, q in bars[0]] == [q for _, _, q in bars[1]]:
        return "exact repetition"
    shifts = {(diatonic_index(b, c.tonic % 12, c.mode) or 0) - (diatonic_index(a, c.tonic % 12, c.mode) or 0)
              for (_, _, a), (_, _, b) in zip(bars[0], bars[1], strict=True)}
    return "sequence" if len(shifts) == 1 else "rhythmic repetition"


def derived_pattern(degrees: tuple[int, int]) -> str | None:
    """Harmonic-pattern type of a two-chord progression (0-based degrees), or None."""
    for name, firsts, second in HARMONIC_PATTERNS:
        if degrees[0] in firsts and degrees[1] == second:
            return name
    return None


def validate(ex: Excerpt, c: Controls, params: TwoBarParams) -> None:
    """Check an excerpt: length, strict monophony, note boundaries, beat and bar assignment,
    and agreement of every stored label with the controls.

    Raises
    ------
    InvalidExcerpt
        Naming the first failed check.
    """
    if ex.duration_s > params.max_duration_s:
        raise InvalidExcerpt(f"longer than {params.max_duration_s:g} s")
    for k, n in enumerate(ex.notes):
        if not (0.0 <= n.onset_s < n.offset_s <= ex.duration_s):
            raise InvalidExcerpt("note boundaries outside the clip or reversed")
        if not LOWEST_KEY <= n.pitch <= HIGHEST_KEY:
            raise InvalidExcerpt("pitch outside the 88 keys")
        if k and n.onset_s < ex.notes[k - 1].offset_s:
            raise InvalidExcerpt("overlapping notes (not monophonic)")
        if k and abs(n.pitch - ex.notes[k - 1].pitch) > 12:
            raise InvalidExcerpt("a leap beyond an octave")
    beats = BEATS_PER_BAR[c.meter]
    for lab in ex.note_labels:
        pos = F(lab["beat_position"])
        if lab["bar"] not in (1, 2) or lab["beat"] != int(pos) + 1 or not 0 <= pos < beats:
            raise InvalidExcerpt("beat or bar assignment disagrees with the rhythm")
        if lab["downbeat"] != (pos == 0) or lab["on_beat"] != (pos.denominator == 1):
            raise InvalidExcerpt("downbeat flag disagrees with the rhythm")
        if lab["scale_degree"] is None:
            raise InvalidExcerpt("a note outside the key")
        if lab["on_beat"] and not lab["chord_tone"]:
            raise InvalidExcerpt("a note on the beat is not a chord tone")
    if not any(lab["bar"] == 2 for lab in ex.note_labels) or not any(lab["bar"] == 1 for lab in ex.note_labels):
        raise InvalidExcerpt("a bar without notes")
    if derived_repetition(ex, c) != c.repetition:
        raise InvalidExcerpt(f"notes realise {derived_repetition(ex, c)!r}, not {c.repetition!r}")
    if derived_pattern(c.degrees) != c.harmonic_pattern:
        raise InvalidExcerpt("chords do not form the harmonic pattern")
    for b in (1, 2):
        if {lab["chord"] for lab in ex.note_labels if lab["bar"] == b} != {ex.labels["chords"][b - 1]}:
            raise InvalidExcerpt(f"note chord labels of bar {b} disagree with the bar's chord")


def sample_excerpt(seed_words: list[int], params: TwoBarParams, *, clip_id: str,
                   max_attempts: int) -> tuple[Excerpt, dict[str, int]]:
    """Draw controls and realise them until the excerpt validates.

    Parameters
    ----------
    seed_words : list of int
        Seed of the excerpt; attempt ``a`` uses ``seed_words + [a]``.
    params : TwoBarParams
    clip_id : str
    max_attempts : int

    Returns
    -------
    excerpt : Excerpt
    dropped : dict
        Rejected attempts counted by reason.

    Raises
    ------
    InvalidExcerpt
        If no attempt validates.
    """
    dropped: dict[str, int] = {}
    for a in range(max_attempts):
        rng = np.random.default_rng([*seed_words, a])
        c = sample_controls(rng, params)
        try:
            return realise(rng, c, params, clip_id=clip_id), dropped
        except InvalidExcerpt as exc:
            dropped[exc.reason] = dropped.get(exc.reason, 0) + 1
    raise InvalidExcerpt(f"{clip_id}: no valid excerpt in {max_attempts} attempts ({dropped})")

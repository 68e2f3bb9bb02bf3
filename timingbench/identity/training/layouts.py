"""Seeded multitrack clip layouts for the family evidence model's training and test data.

A layout is one short clip: a tempo, a key, and 1-6 parts of distinct families. Each part
is a General MIDI program in one role and register, active over one or two spans of the
clip, so families enter and leave inside it (the frame labels change over time). Span
patterns: present throughout (a pre-existing layer), entering, leaving, entering then
leaving, and a gap in the middle.

Vocals parts are real singing (the vocals family has no soundfont program unless the
recipe makes the choirs vocals). Clips without vocals often (:data:`HARD_NEGATIVE_P`) hold
a sustained pad, string or organ part: the sounds most like a voice, labelled not-vocals.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from timingbench.identity.training.programs import (
    DEFAULT_CHOIR_FAMILY,
    FAMILIES,
    REAL_SINGING,
    Program,
    hard_negative_programs,
    instrument_spec,
    programs_for,
)
from timingbench.render.arrangement import Grid, Note, generate_part, random_harmony

#: Span patterns and their probabilities.
PATTERNS = ("whole", "enter", "exit", "enter_exit", "gap")
PATTERN_P = (0.34, 0.32, 0.14, 0.10, 0.10)
#: Probabilities of 1..6 families in a clip (sparse to busy).
N_FAMILIES_P = (0.12, 0.18, 0.22, 0.20, 0.16, 0.12)
#: Probability that a clip without vocals gets a sustained pad, string or organ part (added,
#: or in place of a family when the clip already has six; an existing part of its family
#: is made that program).
HARD_NEGATIVE_P = 0.5


@dataclass
class PartLayout:
    """One family's part in a clip.

    Attributes
    ----------
    family : str
        formats §1 family.
    program : Program
        Its General MIDI program.
    role : str
        Part role (articulation).
    spans : list of (float, float)
        Active spans in seconds.
    gain_db : float
        Mix gain of the stem in dB.
    notes : list of Note
        The generated notes (seconds).
    real_vocals : bool
        True when the stem is real singing (``program`` is then
        :data:`~timingbench.identity.training.programs.REAL_SINGING` and there are no notes).
    hard_negative : bool
        True when the hard-negative rule chose this part's program.
    """

    family: str
    program: Program
    role: str
    spans: list[tuple[float, float]]
    gain_db: float
    notes: list[Note] = field(default_factory=list)
    real_vocals: bool = False
    hard_negative: bool = False


@dataclass
class ClipLayout:
    """One training clip: its seed, length, tempo and parts."""

    index: int
    duration_s: float
    bpm: float
    parts: list[PartLayout]


def _spans(pattern: str, rng: np.random.Generator, dur: float, edge_s: float) -> list[tuple[float, float]]:
    lo, hi = edge_s, dur - edge_s
    if pattern == "whole":
        return [(0.0, dur)]
    if pattern == "enter":
        return [(float(rng.uniform(lo, hi)), dur)]
    if pattern == "exit":
        return [(0.0, float(rng.uniform(lo, hi)))]
    a = float(rng.uniform(lo, hi - 2.0))
    b = float(rng.uniform(a + 2.0, hi))
    if pattern == "enter_exit":
        return [(a, b)]
    return [(0.0, a), (b, dur)]  # gap


def sample_layout(index: int, *, seed: int, duration_s: float, edge_s: float, real_vocals_p: float,
                  choir_family: str = DEFAULT_CHOIR_FAMILY,
                  hard_negative_p: float = HARD_NEGATIVE_P) -> ClipLayout:
    """Draw the layout of clip ``index`` of a data set made with ``seed``.

    Parameters
    ----------
    index : int
        Clip index; with ``seed`` it fixes every random choice.
    seed : int
        Data set seed.
    duration_s : float
        Clip length in seconds.
    edge_s : float
        Entrances and exits lie at least this far from the clip's edges (seconds).
    real_vocals_p : float
        Probability that a vocals part is real singing instead of a soundfont voice, where
        the vocals family has soundfont programs (``choir_family="vocals"``); where it has
        none, every vocals part is real singing. 0 means no real singing is available:
        such a clip then has no vocals part.
    choir_family : str
        Family of the choir programs
        (:data:`~timingbench.identity.training.programs.CHOIR_FAMILIES`).
    hard_negative_p : float
        Probability that a clip without vocals gets a sustained pad, string or organ part
        (:func:`~timingbench.identity.training.programs.hard_negative_programs`).

    Returns
    -------
    layout : ClipLayout

    Raises
    ------
    ParameterError
        If ``choir_family`` is not one of the choir families.
    """
    table = programs_for(choir_family)
    negatives = hard_negative_programs(choir_family)
    rng = np.random.default_rng([int(seed), int(index)])
    k = int(rng.choice(np.arange(1, 7), p=N_FAMILIES_P))
    fams = [FAMILIES[i] for i in sorted(rng.choice(len(FAMILIES), size=k, replace=False))]
    if "vocals" in fams and not table["vocals"] and real_vocals_p <= 0.0:
        fams.remove("vocals")  # no voice to sing it
    forced: dict[str, tuple[Program, str]] = {}
    hard_draw, hard_pick, hard_slot = float(rng.random()), int(rng.integers(len(negatives))), int(rng.integers(6))
    if "vocals" not in fams and hard_draw < hard_negative_p:
        fam, prog, role = negatives[hard_pick]
        forced[fam] = (prog, role)
        if fam not in fams:
            if len(fams) >= len(N_FAMILIES_P):
                fams.pop(hard_slot % len(fams))
            fams = sorted([*fams, fam], key=FAMILIES.index)
    bpm = float(rng.uniform(60.0, 160.0))
    grid = Grid(bpm=bpm, origin_s=float(rng.uniform(-1.0, 0.0)), swing=bool(rng.random() < 0.1))
    harmony = random_harmony(rng)
    parts: list[PartLayout] = []
    for fam in fams:
        progs = table[fam]
        real = fam == "vocals" and (bool(rng.random() < real_vocals_p) or (not progs and real_vocals_p > 0.0))
        if real:
            prog, role = REAL_SINGING, REAL_SINGING.roles[0]
        elif fam in forced:
            prog, role = forced[fam]
        else:
            prog = progs[int(rng.integers(len(progs)))]
            role = str(prog.roles[int(rng.integers(len(prog.roles)))])
        pattern = PATTERNS[int(rng.choice(len(PATTERNS), p=PATTERN_P))]
        spans = _spans(pattern, rng, duration_s, edge_s)
        notes: list[Note] = []
        if not real:
            spec = instrument_spec(fam, prog, role=role, shift=int(rng.integers(-7, 8)))
            level = float(rng.uniform(0.7, 1.15))
            for t0, t1 in spans:
                notes.extend(generate_part(spec, grid=grid, harmony=harmony, rng=rng, t0=t0, t1=t1, level=level))
            if not notes:
                continue
        parts.append(PartLayout(fam, prog, role, spans, float(rng.uniform(-12.0, 0.0)), notes, real,
                                hard_negative=fam in forced))
    return ClipLayout(index, duration_s, bpm, parts)

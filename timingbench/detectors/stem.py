"""Stem-isolable instruments (bass, guitar, piano, vocals): sustained level flips of a stem.

An event is a sustained presence flip of the instrument's separated stem relative to its
own loudness reference (paper Sec. IV-B). Entrances need measured absence before at two
scales (whole-clip bound, strict 3 s window); exits need sustained absence after.

The reference is the stem's own level on the far side of the candidate: the level it
rises to after an entrance, the level it falls from before an exit. A dedicated stem
(demucs) flips from near silence; a coarse stem (the ``dsp`` backend's ``other`` stem,
which carries every instrument above the bass register, or its low-harmonic ``bass`` stem,
which carries the low notes of every instrument) shows a new instrument as a *rise* over
the bed that was already there. Both are found the same way:

1. **Where.** A level-step curve compares, at every frame, the mean stem level (dB) over
   the following ``stem.step_after_s`` with its mean over the preceding ``stem.step_before_s``.
   Its local maxima above ``stem.step_min_db`` (entrances; minima for exits) inside the
   search window are the candidates. An entrance is snapped to the earliest stem onset
   accent just before the step; an exit is placed where the stem first falls
   ``stem.exit_drop_db`` under the level it had.
2. **Whether.** ``level_change``, ``absence_before`` / ``absence_after`` and
   ``persistence`` gates with the ``stem`` constants, all relative to the stem's level on
   the far side of the candidate.
3. **Who.** Not decided here. An entrance on a coarse stem, which cannot tell piano from
   guitar from vocals, names the family evidence as what its identity rests on; one on a
   dedicated (demucs) stem names the stem itself; exits name nothing. The scorer applies
   the identity gate (:func:`timingbench.scoring.run_detector`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from timingbench.curves import (
    Grid,
    accent,
    local_peaks,
    moving_average,
    strongest_apart,
    window_means,
)
from timingbench.families import registry
from timingbench.gates import (
    absence_after,
    absence_before,
    level_change,
    persistence,
)
from timingbench.memo import memoised
from timingbench.params.base import zero_if_off
from timingbench.params.detectors import StemParams
from timingbench.verdicts import Candidate, EventContext

if TYPE_CHECKING:
    from timingbench.features.bank import FeatureBank, Stem

#: Separated stem that carries each stem-isolable family (the ``stem`` of its registry row).
STEM_OF_FAMILY = {f.name: f.stem for f in registry().rows if f.stem is not None}

#: The constants :func:`_step_curves` reads (its memo key).
STEP_READS = ("step_gap_s", "step_before_s", "step_after_s", "smooth_s")
F64 = npt.NDArray[np.float64]


def smoothed_db(env_db: npt.ArrayLike, frames: int) -> F64:
    """Centred moving average of a dB envelope over ``frames`` frames (edges held)."""
    return moving_average(env_db, frames, edges="hold")


def level_step(env_db: npt.ArrayLike, *, before: int, after: int, gap: int = 0) -> F64:
    """Mean level after each frame minus the mean level before it, in dB.

    ``out[f] = mean(env[f + gap : f + gap + after]) - mean(env[f - gap - before : f - gap])``;
    frames whose windows would leave the envelope read the edge value (held). For a clean
    step the result is a triangle peaking exactly at the step.

    Parameters
    ----------
    env_db : array_like, shape (n,)
        Level envelope in dB.
    before, after : int
        Window lengths in frames (at least 1).
    gap : int
        Frames left out on each side of ``f`` (the transition itself).

    Returns
    -------
    step : np.ndarray of float64, shape (n,)
    """
    x = np.asarray(env_db, dtype=np.float64)
    if x.size == 0:
        return np.zeros(0)
    pre, post = window_means(x, before=max(int(before), 1), after=max(int(after), 1), gap=max(int(gap), 0),
                             edges="hold")
    return np.asarray(post - pre, dtype=np.float64)


def _local_extrema(step: F64, lo: int, hi: int, *, min_value: float, separation: int) -> list[int]:
    """Frames in ``[lo, hi)`` where ``step`` peaks at ``>= min_value``, strongest first kept.

    The curve's first and last frames are never peaks; a peak suppresses every weaker
    peak within ``separation`` frames of it.
    """
    peaks = local_peaks(step, max(lo, 1), min(hi, step.size - 1), edges="neighbours", strict_right=True,
                        min_value=min_value)
    return strongest_apart(step, peaks, separation=separation + 1)


def _step_curves(bank: FeatureBank, stem: Stem, grid: Grid, params: StemParams) -> tuple[F64, F64]:
    """The stem's smoothed envelope and level-step curve (memoised per bank, stem and the constants they read)."""

    def compute(p: StemParams) -> tuple[F64, F64]:
        gap = grid.frames(p.step_gap_s) if p.step_gap_s else 0
        env = smoothed_db(stem.envelope_db, grid.frames(p.smooth_s))
        return env, level_step(env, before=grid.frames(p.step_before_s), after=grid.frames(p.step_after_s), gap=gap)

    return memoised(bank, "stem-step", params, STEP_READS, compute, stem.name, stem.backend)


def detect_stem(bank: FeatureBank, ctx: EventContext, params: StemParams) -> list[Candidate]:
    """Candidates for an entrance or exit of a stem-isolable instrument.

    Parameters
    ----------
    bank : FeatureBank
        The clip's feature bank.
    ctx : EventContext
        The instructed event and its search window (seconds).
    params : StemParams
        The ``stem`` section (detector and gate constants).

    Returns
    -------
    candidates : list of Candidate
        Empty when the stem shows no level step inside the window (or ``step_min_db``
        is switched off): the detector never guesses.
    """
    name = STEM_OF_FAMILY[ctx.family]
    if name not in bank.stems_available():
        # the backend has no stem for this instrument (dsp fallback, or no 6-stem weights):
        # the coarse "other" stem carries it and identity comes from the family evidence
        name = "other"
    stem = bank.stem(name)
    coarse = name == "other" or stem.backend != "demucs"
    grid = bank.grid
    step_min = params.step_min_db
    env, step = _step_curves(bank, stem, grid, params)
    if step_min is None or env.size == 0:
        return []
    span = grid.span(ctx.window_lo_s, ctx.window_hi_s)
    sep = grid.frames(params.step_separation_s)
    end_s = float(bank.duration_s)
    if ctx.kind == "instrument_entry":
        peaks = _local_extrema(step, span.start, span.stop, min_value=step_min, separation=sep)
        return [_entry(f, env, step, stem, grid, params, coarse, end_s) for f in peaks]
    peaks = _local_extrema(-step, span.start, span.stop, min_value=step_min, separation=sep)
    out = []
    for f in peaks:
        cand = _exit(f, env, step, grid, params, end_s)
        if ctx.window_lo_s <= cand.time_s <= ctx.window_hi_s:
            out.append(cand)
    return out


def _frames_or_zero(grid: Grid, seconds: float | None) -> int:
    """Frames of an optional reach: a switched-off reach (None) is 0 s, i.e. one frame."""
    return grid.frames(zero_if_off(seconds))


def _present(env: F64, ref: float, below_db: float | None) -> npt.NDArray[np.bool_]:
    """Frames within ``below_db`` of ``ref``; every frame when the bound is switched off."""
    return env >= ref - (below_db if below_db is not None else np.inf)


def _entry(
    f: int, env: F64, step: F64, stem: Stem, grid: Grid, params: StemParams, coarse: bool, end_s: float,
) -> Candidate:
    back = _frames_or_zero(grid, params.snap_back_s)
    fwd = _frames_or_zero(grid, params.snap_forward_s)
    rel = zero_if_off(params.accent_rel_height)
    snapped = accent(np.asarray(stem.onset), f - back, f + fwd + 1, rel_height=rel, edges="open")
    t = grid.time(f if snapped is None else snapped)
    after = env[grid.span(t, t + params.step_after_s)]
    ref = float(np.median(after)) if after.size else float(env[f])
    cand = Candidate(t, stats={"step_s": round(grid.time(f), 4), "step_db": round(float(step[f]), 2),
                                  "stem": stem.name, "coarse": coarse, "ref_db": round(ref, 2)})
    present = _present(env, ref, params.present_below_ref_db)
    cand.apply("level_change", level_change(env, grid, t_s=t, rising=True, params=params.level))
    cand.apply("absence_before", absence_before(env, grid, t_s=t, ref_db=ref, params=params.absence))
    cand.apply("persistence", persistence(present, grid, t_s=t, clip_end_s=end_s, want_present=True,
                                          params=params.persistence))
    cand.identity = "family" if coarse else "stem"
    return cand


def _exit(f: int, env: F64, step: F64, grid: Grid, params: StemParams, end_s: float) -> Candidate:
    before = env[grid.span(grid.time(f) - params.step_before_s, grid.time(f))]
    ref = float(np.median(before)) if before.size else float(env[f])
    drop = params.exit_drop_db
    reach = _frames_or_zero(grid, params.exit_search_s)
    frame = f
    if drop is not None:
        lo = max(f - reach, 0)
        under = np.flatnonzero(env[lo : f + reach + 1] <= ref - drop)
        if under.size:
            frame = int(under[0]) + lo
    t = grid.time(frame)
    cand = Candidate(t, stats={"step_s": round(grid.time(f), 4), "step_db": round(float(step[f]), 2),
                                  "ref_db": round(ref, 2)})
    present = _present(env, ref, params.present_below_ref_db)
    cand.apply("level_change", level_change(env, grid, t_s=t, rising=False, params=params.level))
    cand.apply("absence_after", absence_after(env, grid, t_s=t, ref_db=ref, clip_end_s=end_s,
                                              params=params.absence))
    cand.apply("persistence", persistence(present, grid, t_s=t, clip_end_s=end_s, want_present=False,
                                          params=params.persistence))
    return cand

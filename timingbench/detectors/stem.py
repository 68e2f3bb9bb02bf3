"""Stem-isolable instruments (bass, guitar, piano, vocals): sustained presence flips.

An event is a sustained presence flip of the instrument's separated stem relative to its
own loudness reference (paper Sec. IV-B). Entrances need measured absence before at two
scales (whole-clip bound, strict 3 s window); exits need sustained absence after. When
the stems come from the coarse ``dsp`` backend they cannot tell piano from guitar from
vocals, so the semantic family gate is applied as identity evidence.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from timingbench.config import Config
from timingbench.detectors.base import (
    Candidate,
    EventContext,
    Grid,
    falling_crossings,
    rising_crossings,
    snap_to_accent,
)
from timingbench.features.kernels import hysteresis
from timingbench.gates import (
    absence_after,
    absence_before,
    level_change,
    persistence,
    semantic_family,
)

#: Separated stem that carries each stem-isolable family.
STEM_OF_FAMILY = {"bass": "bass", "guitar": "guitar", "piano": "piano", "vocals": "vocals"}


def smoothed_db(env_db: np.ndarray, frames: int) -> np.ndarray:
    """Moving average (centred) of a dB envelope over ``frames`` frames."""
    if frames <= 1:
        return np.asarray(env_db, dtype=np.float64)
    k = np.ones(frames) / frames
    padded = np.pad(np.asarray(env_db, dtype=np.float64), (frames // 2, frames - 1 - frames // 2), mode="edge")
    return np.convolve(padded, k, mode="valid")


def detect_stem(
    bank: Any, ctx: EventContext, config: Config, *, family_evidence: Any = None
) -> list[Candidate]:
    """Candidates for an entrance or exit of a stem-isolable instrument.

    Parameters
    ----------
    bank : FeatureBank
        The clip's feature bank.
    ctx : EventContext
        The instructed event and its search window.
    config : Config
        Reads the ``stem`` and ``gates`` sections.
    family_evidence : FamilyEvidence, optional
        Identity evidence used when the stem comes from the ``dsp`` backend.

    Returns
    -------
    candidates : list of Candidate
    """
    name = STEM_OF_FAMILY[ctx.family]
    if name not in bank.stems_available():
        # the backend has no stem for this instrument (dsp fallback, or no 6-stem weights):
        # the coarse "other" stem carries it and identity comes from the semantic gate
        name = "other"
    stem = bank.stem(name)
    grid = Grid(sr=bank.sr, hop=bank.hop, n_frames=bank.n_frames)
    env = smoothed_db(np.asarray(stem.envelope_db), grid.frames(config.value("stem.smooth_s") or 0.0))
    ref = float(stem.loud_level_db)
    below = config.value("stem.present_below_ref_db")
    hyst = config.value("stem.hysteresis_db") or 0.0
    if below is None:
        return []
    present = hysteresis(env, high=ref - below, low=ref - below - hyst)
    onset = np.asarray(stem.onset)
    span = grid.span(ctx.window_lo_s, ctx.window_hi_s)
    end_s = bank.duration_s
    use_sem = name == "other" or getattr(stem, "backend", "dsp") != "demucs"
    out: list[Candidate] = []
    if ctx.kind == "instrument_entry":
        back = grid.frames(config.value("stem.snap_back_s") or 0.0)
        rel = config.value("stem.accent_rel_height") or 0.0
        for c in rising_crossings(present, span.start, span.stop):
            f = snap_to_accent(onset, c - back, c + 2, rel_height=rel)
            t = grid.time(c if f is None else f)
            cand = Candidate(t, evidence={"crossing_s": round(grid.time(c), 4)})
            for name, (v, e) in (
                ("absence_before", absence_before(env, grid, t_s=t, ref_db=ref, config=config)),
                ("persistence", persistence(present, grid, t_s=t, clip_end_s=end_s, want_present=True, config=config)),
                ("level_change", level_change(env, grid, t_s=t, rising=True, config=config)),
            ):
                cand.gates[name], cand.evidence[name] = v, e
            _identity(cand, family_evidence, ctx, config, use_sem)
            out.append(cand)
    else:
        drop = config.value("stem.exit_drop_db")
        one_s = grid.frames(1.0)
        for c in falling_crossings(present, span.start, min(span.stop + one_s, grid.n)):
            t = grid.time(_exit_frame(env, c, one_s, drop))
            if not ctx.window_lo_s <= t <= ctx.window_hi_s:
                continue
            cand = Candidate(t, evidence={"crossing_s": round(grid.time(c), 4)})
            for name, (v, e) in (
                ("absence_after", absence_after(env, grid, t_s=t, ref_db=ref, clip_end_s=end_s, config=config)),
                ("persistence", persistence(present, grid, t_s=grid.time(c), clip_end_s=end_s, want_present=False, config=config)),
                ("level_change", level_change(env, grid, t_s=t, rising=False, config=config)),
            ):
                cand.gates[name], cand.evidence[name] = v, e
            out.append(cand)
    return out


def _exit_frame(env: np.ndarray, crossing: int, one_s: int, drop_db: float | None) -> int:
    """Frame where the envelope first falls ``drop_db`` under its median of the preceding second.

    The search walks back from the presence crossing over at most one second.
    """
    if drop_db is None:
        return crossing
    lo = max(crossing - 2 * one_s, 0)
    ref = float(np.median(env[lo : max(crossing - one_s, lo + 1)]))
    seg = env[max(crossing - one_s, 0) : crossing + 1]
    below = np.flatnonzero(seg <= ref - drop_db)
    return int(below[0]) + max(crossing - one_s, 0) if below.size else crossing


def _identity(cand: Candidate, evidence: Any, ctx: EventContext, config: Config, use: bool) -> None:
    if use:
        v, e = semantic_family(evidence, ctx.family, t_s=cand.time_s, config=config)
    else:
        v, e = "exempt", {"reason": "stem_identity"}
    cand.gates["semantic_family"], cand.evidence["semantic_family"] = v, e

"""Percussion entrances and exits on a rectified onset density (paper Sec. IV-B).

The routed onset curve is the drum stem's onset strength. Its rectified density is the
trailing 1 s mean of the curve above its leading-window noise floor: it rises at the
first hit of a train and falls one window after the last. Detections snap to the
underlying accent. Entrance absence is checked on the *unrectified* stem envelope so
quiet pre-existing percussion cannot be erased by the rectification.
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
from timingbench.features.kernels import hysteresis, rectified_onset_density
from timingbench.gates import (
    absence_after,
    absence_before,
    level_change,
    persistence,
    semantic_family,
)


def _density(bank: Any, config: Config) -> tuple[Any, np.ndarray, np.ndarray, Grid]:
    grid = Grid(sr=bank.sr, hop=bank.hop, n_frames=bank.n_frames)

    stem = bank.stem("drums")
    onset = np.asarray(stem.onset, dtype=np.float64)
    floor = float(np.percentile(onset, config.value("percussion.floor_percentile") or 0.0))
    dens = rectified_onset_density(
        onset, window_frames=grid.frames(config.value("percussion.density_window_s")), floor=floor
    )
    ref = float(np.percentile(dens, config.value("percussion.reference_percentile")))
    hi = config.value("percussion.present_rel")
    lo = config.value("percussion.absent_rel")
    hi = 0.0 if hi is None else hi
    lo = hi if lo is None else min(lo, hi)
    present = hysteresis(dens, high=hi * ref, low=lo * ref) if ref > 0 else np.zeros(len(dens), bool)
    return stem, dens, present, grid


def detect_percussion(
    bank: Any, ctx: EventContext, config: Config, *, family_evidence: Any = None,
    use_semantic: bool = False,
) -> list[Candidate]:
    """Candidates for a percussion ``instrument_entry`` or ``instrument_exit``.

    Parameters
    ----------
    bank : FeatureBank
        The clip's feature bank (drum stem, frame grid).
    ctx : EventContext
        The instructed event and its search window.
    config : Config
        Reads the ``percussion`` and ``gates`` sections.
    family_evidence : FamilyEvidence, optional
        Used only when ``use_semantic`` (stems from the coarse ``dsp`` backend).
    use_semantic : bool
        Apply the semantic family gate as identity evidence.

    Returns
    -------
    candidates : list of Candidate
    """
    stem, dens, present, grid = _density(bank, config)
    onset = np.asarray(stem.onset)
    env = np.asarray(stem.envelope_db)
    ref = float(stem.loud_level_db)
    lo, hi = grid.span(ctx.window_lo_s, ctx.window_hi_s).start, grid.span(ctx.window_lo_s, ctx.window_hi_s).stop
    win = grid.frames(config.value("percussion.density_window_s"))
    rel = config.value("percussion.accent_rel_height") or 0.0
    end_s = bank.duration_s
    out: list[Candidate] = []
    if ctx.kind == "instrument_entry":
        for c in rising_crossings(present, lo, hi):
            f = snap_to_accent(onset, c - win, c + 2, rel_height=rel)
            t = grid.time(c if f is None else f)
            cand = Candidate(t, evidence={"crossing_s": round(grid.time(c), 4)})
            v, e = absence_before(env, grid, t_s=t, ref_db=ref, config=config)
            cand.gates["absence_before"], cand.evidence["absence_before"] = v, e
            v, e = persistence(present, grid, t_s=t, clip_end_s=end_s, want_present=True, config=config)
            cand.gates["persistence"], cand.evidence["persistence"] = v, e
            v, e = level_change(env, grid, t_s=t, rising=True, config=config)
            cand.gates["level_change"], cand.evidence["level_change"] = v, e
            _semantic(cand, family_evidence, ctx, config, use_semantic)
            out.append(cand)
    else:
        for c in falling_crossings(present, lo, min(hi + win, grid.n)):
            # the density falls one window after the last hit: search that window for it
            seg_lo = max(c - win - grid.frames(0.2), 0)
            f = _last_accent(onset, seg_lo, c, rel)
            t = grid.time(c if f is None else f)
            if not ctx.window_lo_s <= t <= ctx.window_hi_s:
                continue
            cand = Candidate(t, evidence={"crossing_s": round(grid.time(c), 4)})
            v, e = absence_after(env, grid, t_s=t, ref_db=ref, clip_end_s=end_s, config=config)
            cand.gates["absence_after"], cand.evidence["absence_after"] = v, e
            v, e = persistence(present, grid, t_s=grid.time(c), clip_end_s=end_s, want_present=False, config=config)
            cand.gates["persistence"], cand.evidence["persistence"] = v, e
            v, e = level_change(env, grid, t_s=t, rising=False, config=config)
            cand.gates["level_change"], cand.evidence["level_change"] = v, e
            out.append(cand)
    return out


def _last_accent(onset: np.ndarray, lo: int, hi: int, rel: float) -> int | None:
    lo, hi = max(lo, 0), min(hi, len(onset))
    if hi - lo < 3:
        return None
    seg = onset[lo:hi]
    top = float(seg.max())
    if top <= 0:
        return None
    peaks = np.flatnonzero((seg[1:-1] >= seg[:-2]) & (seg[1:-1] >= seg[2:]) & (seg[1:-1] >= rel * top)) + 1
    return int(peaks[-1]) + lo if peaks.size else None


def _semantic(cand: Candidate, evidence: Any, ctx: EventContext, config: Config, use: bool) -> None:
    if use:
        v, e = semantic_family(evidence, ctx.family, t_s=cand.time_s, config=config)
    else:
        v, e = "exempt", {"reason": "stem_identity"}
    cand.gates["semantic_family"], cand.evidence["semantic_family"] = v, e

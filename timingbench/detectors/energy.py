"""``mix_energy_increase``: a sustained rise of the mix level against the preceding window."""

from __future__ import annotations

from typing import Any

import numpy as np

from timingbench.config import Config
from timingbench.detectors.base import Candidate, EventContext, Grid, fraction_true, snap_to_accent
from timingbench.detectors.mix import sound_mask
from timingbench.detectors.stem import smoothed_db


def window_means(x: np.ndarray, before: int, after: int) -> tuple[np.ndarray, np.ndarray]:
    """``mean(x[n-before:n])`` and ``mean(x[n:n+after])`` for every frame ``n``.

    Frames without a full window on either side get NaN in both.
    """
    v = np.asarray(x, dtype=np.float64)
    c = np.concatenate(([0.0], np.cumsum(v)))
    n = len(v)
    pre = np.full(n, np.nan)
    post = np.full(n, np.nan)
    idx = np.arange(before, n - after + 1)
    if idx.size:
        pre[idx] = (c[idx] - c[idx - before]) / before
        post[idx] = (c[idx + after] - c[idx]) / after
    return pre, post


def rise_curve(level_db: np.ndarray, before: int, after: int) -> np.ndarray:
    """``mean(level[n:n+after]) - mean(level[n-before:n])`` for every frame (dB).

    Frames without a full window on either side get ``-inf``.
    """
    pre, post = window_means(level_db, before, after)
    return np.where(np.isfinite(pre), post - pre, -np.inf)


def detect_energy(bank: Any, ctx: EventContext, config: Config) -> list[Candidate]:
    """Candidates for ``mix_energy_increase`` (the strongest sustained rise in the window).

    Parameters
    ----------
    bank : FeatureBank
    ctx : EventContext
    config : Config
        Reads the ``energy`` section.

    Returns
    -------
    candidates : list of Candidate
        Local maxima of the rise curve inside the search window, each gated on music
        sounding over the preceding window (``energy.min_music_before_fraction`` of its
        frames above the silence line: a rise out of silence is a start), on the rise
        reaching ``energy.min_rise_db`` (``level_change``) and on the onset density after it
        keeping at least ``energy.min_density_ratio`` of the density before it
        (``density_change``: a louder mix with clearly fewer attacks is a swell, not more
        music). Each is snapped to the first onset peak within ``energy.snap_s`` reaching
        ``energy.accent_rel_height`` of the strongest one there.
    """
    grid = Grid(sr=bank.sr, hop=bank.hop, n_frames=bank.n_frames)
    # every level under the silence line is the same silence (digital zero must not outweigh music)
    line = float(bank.loudness.loud_level_db) - float(config.value("mix.silence_below_loud_db"))
    level_db = np.maximum(np.asarray(bank.rms_db, dtype=np.float64), line)
    level = smoothed_db(level_db, grid.frames(config.value("energy.smooth_s") or 0.0))
    before = grid.frames(float(config.value("energy.before_s")))
    after = grid.frames(float(config.value("energy.after_s")))
    rise = rise_curve(level, before, after)
    onset = np.asarray(bank.onset_full, dtype=np.float64)
    dens_pre, dens_post = window_means(onset, before, after)
    span = grid.span(ctx.window_lo_s, ctx.window_hi_s)
    seg = rise[span]
    min_rise = config.value("energy.min_rise_db")
    min_dens = config.value("energy.min_density_ratio")
    rel = config.value("energy.accent_rel_height") or 0.0
    snap = grid.frames(float(config.value("energy.snap_s")))
    min_sound = config.value("energy.min_music_before_fraction")
    sound = sound_mask(bank, config)
    out: list[Candidate] = []
    if not seg.size or not np.isfinite(seg).any():
        return out
    mid = seg[1:-1]
    peaks = np.flatnonzero((mid > seg[:-2]) & (mid >= seg[2:]) & np.isfinite(mid)) + 1 + span.start
    if not peaks.size:
        peaks = np.array([span.start + int(np.nanargmax(np.where(np.isfinite(seg), seg, -np.inf)))])
    # keep the strongest rises only: a section change shows as one dominant peak
    peaks = sorted(peaks.tolist(), key=lambda p: -rise[p])[: int(config.value("energy.max_candidates"))]
    for p in sorted(peaks):
        f = snap_to_accent(onset, p - snap, p + snap, rel_height=rel)
        t = grid.time(p if f is None else f)
        cand = Candidate(t, evidence={"rise_db": round(float(rise[p]), 2), "peak_s": round(grid.time(p), 4)})
        held = fraction_true(sound, slice(max(p - before, 0), p))
        cand.gates["music_before"] = "pass" if min_sound is None or held >= min_sound else "fail"
        cand.evidence["music_before"] = {"sounding_fraction": round(held, 3)}
        cand.gates["level_change"] = "pass" if min_rise is None or rise[p] >= min_rise else "fail"
        ratio = float(dens_post[p] / dens_pre[p]) if dens_pre[p] > 0 else float("inf")
        cand.gates["density_change"] = "pass" if min_dens is None or ratio >= min_dens else "fail"
        cand.evidence["density_change"] = {"onset_ratio": round(ratio, 3)}
        out.append(cand)
    return out

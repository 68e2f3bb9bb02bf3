"""``mix_energy_increase``: a sustained rise of the mix level against the preceding window."""

from __future__ import annotations

from typing import Any

import numpy as np

from timingbench.config import Config
from timingbench.detectors.base import Candidate, EventContext, Grid, snap_to_accent
from timingbench.detectors.stem import smoothed_db


def rise_curve(level_db: np.ndarray, before: int, after: int) -> np.ndarray:
    """``mean(level[n:n+after]) - mean(level[n-before:n])`` for every frame (dB).

    Frames without a full window on either side get ``-inf``.
    """
    x = np.asarray(level_db, dtype=np.float64)
    c = np.concatenate(([0.0], np.cumsum(x)))
    n = len(x)
    out = np.full(n, -np.inf)
    idx = np.arange(before, n - after + 1)
    if idx.size:
        out[idx] = (c[idx + after] - c[idx]) / after - (c[idx] - c[idx - before]) / before
    return out


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
        Local maxima of the rise curve inside the search window, each gated on the rise
        reaching ``energy.min_rise_db`` (``level_change``) and on the onset density not
        falling (``density_change``).
    """
    grid = Grid(sr=bank.sr, hop=bank.hop, n_frames=bank.n_frames)
    level = smoothed_db(np.asarray(bank.rms_db), grid.frames(config.value("energy.smooth_s") or 0.0))
    before = grid.frames(float(config.value("energy.before_s")))
    after = grid.frames(float(config.value("energy.after_s")))
    rise = rise_curve(level, before, after)
    onset = np.asarray(bank.onset_full, dtype=np.float64)
    dens = rise_curve(onset, before, after)
    span = grid.span(ctx.window_lo_s, ctx.window_hi_s)
    seg = rise[span]
    min_rise = config.value("energy.min_rise_db")
    rel = config.value("energy.accent_rel_height") or 0.0
    out: list[Candidate] = []
    if not seg.size or not np.isfinite(seg).any():
        return out
    mid = seg[1:-1]
    peaks = np.flatnonzero((mid > seg[:-2]) & (mid >= seg[2:]) & np.isfinite(mid)) + 1 + span.start
    if not peaks.size:
        peaks = np.array([span.start + int(np.nanargmax(np.where(np.isfinite(seg), seg, -np.inf)))])
    # keep the strongest rises only: a section change shows as one dominant peak
    peaks = sorted(peaks.tolist(), key=lambda p: -rise[p])[:3]
    for p in sorted(peaks):
        f = snap_to_accent(onset, p - grid.frames(0.5), p + grid.frames(0.5), rel_height=rel)
        t = grid.time(p if f is None else f)
        cand = Candidate(t, evidence={"rise_db": round(float(rise[p]), 2), "peak_s": round(grid.time(p), 4)})
        cand.gates["level_change"] = "pass" if min_rise is None or rise[p] >= min_rise else "fail"
        cand.gates["density_change"] = "pass" if dens[p] >= 0 else "fail"
        cand.evidence["density_change"] = {"onset_rise": round(float(dens[p]), 4)}
        out.append(cand)
    return out

"""``mix_energy_increase``: a sustained rise of the mix level against the preceding window."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from timingbench.curves import accent, fraction_true, local_peaks, moving_average
from timingbench.curves import window_means as _window_means
from timingbench.detectors.mix import sound_mask
from timingbench.params.base import zero_if_off
from timingbench.params.detectors import EnergyParams, MixParams
from timingbench.verdicts import Candidate, EventContext

if TYPE_CHECKING:
    from timingbench.features.bank import FeatureBank


def window_means(x: np.ndarray, before: int, after: int) -> tuple[np.ndarray, np.ndarray]:
    """``mean(x[n-before:n])`` and ``mean(x[n:n+after])`` for every frame ``n``.

    Frames without a full window on either side get NaN in both.
    """
    return _window_means(np.asarray(x, dtype=np.float64), before=before, after=after, edges="nan")


def rise_curve(level_db: np.ndarray, before: int, after: int) -> np.ndarray:
    """``mean(level[n:n+after]) - mean(level[n-before:n])`` for every frame (dB).

    Frames without a full window on either side get ``-inf``.
    """
    pre, post = window_means(level_db, before, after)
    return np.where(np.isfinite(pre), post - pre, -np.inf)


def detect_energy(bank: FeatureBank, ctx: EventContext, params: EnergyParams, *, mix: MixParams) -> list[Candidate]:
    """Candidates for ``mix_energy_increase`` (the strongest sustained rise in the window).

    Parameters
    ----------
    bank : FeatureBank
    ctx : EventContext
    params : EnergyParams
        The ``energy`` section.
    mix : MixParams
        The silence line (``mix.silence_below_loud_db``, ``mix.silence_hysteresis_db``).

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
    grid = bank.grid
    # every level under the silence line is the same silence (digital zero must not outweigh music)
    line = float(bank.loudness.loud_level_db) - mix.silence_below_loud_db
    level_db = np.maximum(np.asarray(bank.rms_db, dtype=np.float64), line)
    level = moving_average(level_db, grid.frames(params.smooth_s), edges="hold")
    before = grid.frames(params.before_s)
    after = grid.frames(params.after_s)
    rise = rise_curve(level, before, after)
    onset = np.asarray(bank.onset_full, dtype=np.float64)
    dens_pre, dens_post = window_means(onset, before, after)
    span = grid.span(ctx.window_lo_s, ctx.window_hi_s)
    seg = rise[span]
    min_rise = params.min_rise_db
    min_dens = params.min_density_ratio
    rel = zero_if_off(params.accent_rel_height)
    snap = grid.frames(params.snap_s)
    min_sound = params.min_music_before_fraction
    sound = sound_mask(bank, mix)
    out: list[Candidate] = []
    if not seg.size or not np.isfinite(seg).any():
        return out
    peaks = local_peaks(rise, span.start, span.stop, edges="interior", strict_left=True)
    peaks = peaks[np.isfinite(rise[peaks])]
    if not peaks.size:
        peaks = np.array([span.start + int(np.nanargmax(np.where(np.isfinite(seg), seg, -np.inf)))])
    # keep the strongest rises only: a section change shows as one dominant peak
    top = sorted(peaks.tolist(), key=lambda p: -rise[p])[: params.max_candidates]
    for p in sorted(top):
        f = accent(onset, p - snap, p + snap, rel_height=rel, edges="open")
        t = grid.time(p if f is None else f)
        cand = Candidate(t, stats={"rise_db": round(float(rise[p]), 2), "peak_s": round(grid.time(p), 4)})
        held = fraction_true(sound, slice(max(p - before, 0), p))
        cand.apply("music_before", ("pass" if min_sound is None or held >= min_sound else "fail",
                                    {"sounding_fraction": round(held, 3)}))
        cand.apply("level_change", ("pass" if min_rise is None or rise[p] >= min_rise else "fail",
                                    {"rise_db": round(float(rise[p]), 2)}))
        ratio = float(dens_post[p] / dens_pre[p]) if dens_pre[p] > 0 else float("inf")
        cand.apply("density_change", ("pass" if min_dens is None or ratio >= min_dens else "fail",
                                      {"onset_ratio": round(ratio, 3)}))
        out.append(cand)
    return out

"""Whole-mix events: music start after silence, end, pause (paper Sec. IV-B).

Silence is the mix level 35 dB or more below the clip's loud level, with hysteresis. An
ending is two edges:

- the **first edge** — an abrupt cut (the level falls to silence within a few frames),
  the last accent before the music is gone (snapped on the onset curve), or, for a
  gradual fade with no stop instant, the point where the level falls 23 dB below the
  loud level;
- the **decay** requirement — the mix is gone within 3 s of the first edge and stays
  down (to the end of the audio for ``music_end``; for a bounded quiet interval for
  ``music_pause``, after which music may resume).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from timingbench.convert import frame_period_s, frame_rate_hz
from timingbench.curves import (
    Grid,
    accent,
    falling_crossings,
    fraction_true,
    local_peaks,
    moving_average,
    rising_crossings,
)
from timingbench.features.kernels import hysteresis
from timingbench.params.base import zero_if_off
from timingbench.params.detectors import MixParams
from timingbench.verdicts import Candidate, EventContext

if TYPE_CHECKING:
    from timingbench.features.bank import FeatureBank


def sound_mask(bank: FeatureBank, params: MixParams) -> np.ndarray:
    """Frames where the mix is audible (above the silence line, with hysteresis; none when it is off)."""
    loud = float(bank.loudness.loud_level_db)
    line = loud - params.silence_below_loud_db
    hyst = zero_if_off(params.silence_hysteresis_db)
    return hysteresis(np.asarray(bank.rms_db, dtype=np.float64), high=line + hyst, low=line)


def detect_start(bank: FeatureBank, ctx: EventContext, params: MixParams) -> list[Candidate]:
    """Candidates for ``music_start_after_silence``.

    Gates: ``absence_before`` (the mix quiet over ``windows.strict_s`` before the
    candidate and over the whole prefix; evidence ``quiet_strict``, ``quiet_prefix``) and
    ``persistence`` (evidence ``held_fraction``).
    """
    grid = bank.grid
    sound = sound_mask(bank, params)
    span = grid.span(ctx.window_lo_s, ctx.window_hi_s)
    back = grid.frames(zero_if_off(params.snap_back_s))
    fwd = grid.frames(params.start_snap_forward_s)
    rel = zero_if_off(params.accent_rel_height)
    onset = np.asarray(bank.onset_full, dtype=np.float64)
    quiet_min = params.quiet_min_fraction
    prefix_min = params.start_prefix_min_fraction
    strict = params.windows.strict_s
    guard = params.start_guard_s
    out: list[Candidate] = []
    crossings = rising_crossings(sound, span.start, span.stop)
    if span.start == 0 and sound[0]:
        crossings = [0] + crossings  # music from the first frame: judged (and rejected) below
    for c in crossings:
        f = accent(onset, c - back, c + fwd + 1, rel_height=rel, edges="open")
        t = grid.time(c if f is None else f)
        cand = Candidate(t, stats={"crossing_s": round(grid.time(c), 4)})
        quiet_strict = 1.0 - fraction_true(sound, grid.span(t - strict, t - guard)) if t > guard else 0.0
        quiet_prefix = 1.0 - fraction_true(sound, grid.span(0.0, t - guard)) if t > guard else 0.0
        ok = (quiet_min is None or quiet_strict >= quiet_min) and (prefix_min is None or quiet_prefix >= prefix_min)
        cand.gates["absence_before"] = "pass" if ok else "fail"
        cand.stats["absence_before"] = {"quiet_strict": round(quiet_strict, 3), "quiet_prefix": round(quiet_prefix, 3)}
        dur, fmin = params.windows.persistence_s, params.persistence_min_fraction
        if fmin is None:
            cand.gates["persistence"] = "pass"
        else:
            held = fraction_true(sound, grid.span(t, min(t + dur, bank.duration_s)))
            cand.gates["persistence"] = "pass" if held >= fmin else "fail"
            cand.stats["persistence"] = {"held_fraction": round(held, 3)}
        out.append(cand)
    return out


def detect_stop(bank: FeatureBank, ctx: EventContext, params: MixParams) -> list[Candidate]:
    """Candidates for ``music_end`` and ``music_pause`` (first edge + decay).

    Every frame where the mix falls under the silence line inside the search window
    (extended by the decay budget) is a possible "gone" point; its first edge is looked
    for in the decay budget before it (:func:`first_edge`). An edge outside the search
    window, or no edge at all, gives no candidate.
    """
    grid = bank.grid
    sound = sound_mask(bank, params)
    budget = params.decay_budget_s
    quiet_min = params.quiet_min_fraction
    curves = EdgeCurves.from_bank(bank, grid, params)
    span = grid.span(ctx.window_lo_s, ctx.window_hi_s + budget)
    end_s = bank.duration_s
    out: list[Candidate] = []
    gone_frames = falling_crossings(sound, span.start, span.stop)
    if bank.clip_duration_s <= ctx.window_hi_s + budget and sound[-1]:
        gone_frames.append(grid.n)  # the audio itself ends while music sounds: an abrupt cut
    for g in gone_frames:
        g_s = grid.time(g)
        edge = first_edge(curves, grid, g, params=params)
        if edge is None:
            continue
        kind, t, ev = edge
        if not ctx.window_lo_s <= t <= ctx.window_hi_s:
            continue
        if any(abs(c.time_s - t) < frame_period_s(sr=grid.sr, hop=grid.hop) for c in out):
            continue  # the level dipped under the line and back: the same ending again
        cand = Candidate(t, stats={"edge": kind, "gone_s": round(g_s, 4), **ev})
        cand.gates["decay"] = "pass" if g_s - t <= budget + 1e-9 else "fail"
        cand.stats["decay"] = {"gone_after_s": round(g_s - t, 3)}
        if ctx.kind == "music_end":
            stay = grid.span(g_s, end_s)
        else:  # a bounded quiet interval from the first edge, after which music may resume
            stay = grid.span(g_s, min(t + params.pause_quiet_s, end_s))
        quiet = 1.0 - fraction_true(sound, stay) if stay.stop > stay.start else 1.0
        cand.gates["stays_down"] = "pass" if quiet_min is None or quiet >= quiet_min else "fail"
        cand.stats["stays_down"] = {"quiet_fraction": round(quiet, 3)}
        out.append(cand)
    return out


@dataclass(frozen=True)
class EdgeCurves:
    """The curves an ending is read from, on the bank's frame grid.

    Attributes
    ----------
    level_db : np.ndarray, shape (n,)
        Mix level in dB.
    smooth_db : np.ndarray, shape (n,)
        ``level_db`` averaged over ``mix.level_smooth_s``.
    mean_square : np.ndarray, shape (n,)
        Linear mean square of the mix (for sub-frame cut placement).
    onset : np.ndarray, shape (n,)
        Full-band onset strength.
    loud_db : float
        The clip's loud level in dB.
    """

    level_db: np.ndarray
    smooth_db: np.ndarray
    mean_square: np.ndarray
    onset: np.ndarray
    loud_db: float

    @classmethod
    def from_bank(cls, bank: FeatureBank, grid: Grid, params: MixParams) -> EdgeCurves:
        """Curves of ``bank``."""
        level = np.asarray(bank.rms_db, dtype=np.float64)
        rms = np.asarray(bank.rms, dtype=np.float64)
        return cls(level_db=level, smooth_db=moving_average(level, grid.frames(params.level_smooth_s), edges="hold"),
                   mean_square=rms * rms, onset=np.asarray(bank.onset_full, dtype=np.float64),
                   loud_db=float(bank.loudness.loud_level_db))


def first_edge(
    curves: EdgeCurves, grid: Grid, gone: int, *, params: MixParams
) -> tuple[str, float, dict[str, Any]] | None:
    """The first edge of the ending whose mix is gone at frame ``gone``.

    An abrupt fall from musical level is a cut. Otherwise the level before ``gone`` is
    fitted as a plateau and a linear fall: a steep fall (faster than
    ``fade_max_slope``) is the release of the last sound, and the edge is the last
    accent before it; a gradual fall is a fade, whose edge is the fade point unless the
    last accent precedes the fall (a natural decay from a final hit).

    Parameters
    ----------
    curves : EdgeCurves
    grid : Grid
    gone : int
        First frame under the silence line (``grid.n`` when the audio ends sounding).
    params : MixParams

    Returns
    -------
    edge : tuple of (str, float, dict) or None
        ``(kind, time_s, evidence)`` with kind ``cut`` | ``accent`` | ``fade``; None when
        no edge can be placed.
    """
    if gone >= grid.n:  # the file ends while music sounds
        return "cut", grid.time(grid.n - 1), {}
    cut = _cut_time(curves, grid, gone, params=params)
    if cut is not None:
        return "cut", cut, {}
    fade = _fade_fit(curves, grid, gone, params=params)
    if fade is None:
        return None
    ev: dict[str, Any] = {"fade": {k: round(v, 3) for k, v in fade.items()}}
    steep = params.fade_max_slope_db_per_s is not None and -fade["slope_db_per_s"] > params.fade_max_slope_db_per_s
    hi = grid.frame(fade["start_s"]) + grid.frames(params.accent_guard_s) if steep else gone
    acc = _last_accent(curves, grid, gone, hi, params=params)
    if acc is not None:
        ev["accent_s"] = round(grid.time(acc), 4)
        if steep or grid.time(acc) <= fade["start_s"] + params.accent_guard_s:
            return "accent", grid.time(acc), ev
    if steep or fade["point_s"] >= grid.time(gone):
        return None
    return "fade", fade["point_s"], ev


def _cut_time(curves: EdgeCurves, grid: Grid, gone: int, *, params: MixParams) -> float | None:
    """Time of an abrupt cut before ``gone``, or None when the fall is not abrupt.

    A centred analysis frame straddling the cut holds half of the pre-cut energy, so the
    cut is where the mean square crosses half of its level just before the fall.
    """
    if params.cut_max_fall_s is None or params.cut_from_below_loud_db is None:
        return None
    k = grid.frames(params.cut_max_fall_s)
    top = gone - k - 1
    if top < 1 or curves.level_db[top] < curves.loud_db - params.cut_from_below_loud_db:
        return None
    ms = curves.mean_square
    ref = float(np.median(ms[max(top - grid.frames(params.cut_reference_s), 0) : top + 1]))
    half = 0.5 * ref
    above = [j for j in range(top, gone) if ms[j] >= half]
    j = above[-1] if above else top
    nxt = ms[j + 1] if j + 1 < grid.n else 0.0
    frac = (ms[j] - half) / (ms[j] - nxt) if ms[j] > nxt else 0.0
    return grid.time(j + min(max(frac, 0.0), 1.0))


def _last_accent(curves: EdgeCurves, grid: Grid, gone: int, hi: int, *, params: MixParams) -> int | None:
    """Frame of the last accent in the decay budget before ``gone`` (and before ``hi``).

    An accent is an onset peak of at least ``mix.last_accent_rel_height`` of the largest
    onset in the budget span (``mix.decay_budget_s``) that sounds above the fade point (the
    mix within ``mix.fade_point_below_loud_db`` of the loud level over the
    ``mix.level_smooth_s`` after it), stands ``mix.accent_min_ratio_after`` times above
    every onset after it (past ``mix.accent_guard_s``) up to ``hi``, and ``mix.accent_min_ratio_floor``
    times above the median onset of the budget span: nothing of its size follows, so the
    music rings out from it. None when no peak qualifies.
    """
    if params.fade_point_below_loud_db is None:
        return None
    lo = max(gone - grid.frames(params.decay_budget_s), 1)
    hi = min(hi, gone)
    on = curves.onset
    if hi - lo < 3:
        return None
    guard = grid.frames(params.accent_guard_s)
    after = grid.frames(params.level_smooth_s)
    peaks = local_peaks(on, lo, hi, edges="neighbours")
    peaks = peaks[on[peaks] > 0]
    floor_db = curves.loud_db - params.fade_point_below_loud_db
    onset_floor = float(np.median(on[lo:gone]))
    onset_top = float(on[lo:gone].max())
    for p in peaks[::-1]:
        if params.last_accent_rel_height is not None and on[p] < params.last_accent_rel_height * onset_top:
            continue
        if float(curves.level_db[p : p + after].max()) < floor_db:
            continue
        if params.accent_min_ratio_floor is not None and on[p] < params.accent_min_ratio_floor * onset_floor:
            continue
        rest = on[p + guard : hi]
        if (params.accent_min_ratio_after is None or not rest.size
                or on[p] >= params.accent_min_ratio_after * float(rest.max())):
            return int(p)
    return None


def _fade_fit(curves: EdgeCurves, grid: Grid, gone: int, *, params: MixParams) -> dict[str, float] | None:
    """Fit a level plateau followed by a linear fall in dB over the frames before ``gone``.

    Returns the plateau level, the fall's start, its slope and the fade point (where
    the fitted fall is ``mix.fade_point_below_loud_db`` under the plateau), or None without
    a fall.
    """
    if params.fade_point_below_loud_db is None:
        return None
    lo = max(gone - grid.frames(params.fade_fit_window_s), 0)
    y = curves.smooth_db[lo:gone]
    n = y.size
    if n < grid.frames(params.fade_fit_min_s):
        return None
    margin = grid.frames(params.fade_hinge_margin_s)
    x = np.arange(n, dtype=np.float64)
    # least squares of y on [1, max(x - s, 0)] for every hinge s at once (suffix sums)
    def suffix(v: np.ndarray) -> np.ndarray:
        return np.concatenate((np.cumsum(v[::-1])[::-1][1:], [0.0]))

    s0, s1, s2 = suffix(np.ones(n)), suffix(x), suffix(x * x)
    sy, sxy = suffix(y), suffix(x * y)
    hs = x
    sum_h = s1 - hs * s0
    sum_hh = s2 - 2 * hs * s1 + hs * hs * s0
    sum_hy = sxy - hs * sy
    total_y, total_yy = float(y.sum()), float((y * y).sum())
    det = n * sum_hh - sum_h * sum_h
    valid = (np.arange(n) >= margin) & (np.arange(n) < n - margin) & (det > 1e-9)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = (sum_hh * total_y - sum_h * sum_hy) / det
        b = (n * sum_hy - sum_h * total_y) / det
        sse = total_yy - a * total_y - b * sum_hy
    valid &= b < 0
    if not valid.any():
        return None
    s = int(np.flatnonzero(valid)[np.argmin(sse[valid])])
    best = (float(sse[s]), s, float(a[s]), float(b[s]))
    _, s, plateau, slope = best
    fps = frame_rate_hz(sr=grid.sr, hop=grid.hop)
    point = lo + s + params.fade_point_below_loud_db / -slope
    return {"plateau_db": plateau - curves.loud_db, "start_s": grid.time(lo + s),
            "slope_db_per_s": slope * fps, "point_s": grid.time(point)}

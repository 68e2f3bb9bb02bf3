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

from typing import Any

import numpy as np

from timingbench.config import Config
from timingbench.detectors.base import (
    Candidate,
    EventContext,
    Grid,
    falling_crossings,
    fraction_true,
    rising_crossings,
    snap_to_accent,
)
from timingbench.detectors.stem import smoothed_db
from timingbench.features.kernels import hysteresis


def sound_mask(bank: Any, config: Config) -> np.ndarray:
    """Frames where the mix is audible (above the silence line, with hysteresis)."""
    loud = float(bank.loudness.loud_level_db)
    line = loud - float(config.value("mix.silence_below_loud_db"))
    hyst = config.value("mix.silence_hysteresis_db") or 0.0
    return hysteresis(np.asarray(bank.rms_db, dtype=np.float64), high=line + hyst, low=line)


def detect_start(bank: Any, ctx: EventContext, config: Config) -> list[Candidate]:
    """Candidates for ``music_start_after_silence``."""
    grid = Grid(sr=bank.sr, hop=bank.hop, n_frames=bank.n_frames)
    sound = sound_mask(bank, config)
    span = grid.span(ctx.window_lo_s, ctx.window_hi_s)
    back = grid.frames(config.value("mix.snap_back_s") or 0.0)
    rel = config.value("mix.accent_rel_height") or 0.0
    onset = np.asarray(bank.onset_full, dtype=np.float64)
    quiet_min = config.value("mix.quiet_min_fraction")
    prefix_min = config.value("mix.start_prefix_min_fraction")
    strict = config.value("gates.absence_strict_window_s") or 0.0
    out: list[Candidate] = []
    crossings = rising_crossings(sound, span.start, span.stop)
    if span.start == 0 and sound[0]:
        crossings = [0] + crossings  # music from the first frame: judged (and rejected) below
    for c in crossings:
        f = snap_to_accent(onset, c - back, c + 2, rel_height=rel)
        t = grid.time(c if f is None else f)
        cand = Candidate(t, evidence={"crossing_s": round(grid.time(c), 4)})
        quiet_strict = 1.0 - fraction_true(sound, grid.span(t - strict, t - 0.05)) if t > 0.05 else 0.0
        quiet_prefix = 1.0 - fraction_true(sound, grid.span(0.0, t - 0.05)) if t > 0.05 else 0.0
        ok = (quiet_min is None or quiet_strict >= quiet_min) and (prefix_min is None or quiet_prefix >= prefix_min)
        cand.gates["absence_before"] = "pass" if ok else "fail"
        cand.evidence["absence_before"] = {"quiet_strict": round(quiet_strict, 3), "quiet_prefix": round(quiet_prefix, 3)}
        dur = config.value("mix.persistence_s")
        fmin = config.value("mix.persistence_min_fraction")
        if dur is None or fmin is None:
            cand.gates["persistence"] = "pass"
        else:
            held = fraction_true(sound, grid.span(t, min(t + dur, bank.duration_s)))
            cand.gates["persistence"] = "pass" if held >= fmin else "fail"
            cand.evidence["persistence"] = {"held_fraction": round(held, 3)}
        out.append(cand)
    return out


def detect_stop(bank: Any, ctx: EventContext, config: Config) -> list[Candidate]:
    """Candidates for ``music_end`` and ``music_pause`` (first edge + decay)."""
    grid = Grid(sr=bank.sr, hop=bank.hop, n_frames=bank.n_frames)
    sound = sound_mask(bank, config)
    rms_db = np.asarray(bank.rms_db, dtype=np.float64)
    loud = float(bank.loudness.loud_level_db)
    budget = float(config.value("mix.decay_budget_s"))
    onset = np.asarray(bank.onset_full, dtype=np.float64)
    rel = config.value("mix.accent_rel_height") or 0.0
    fade_db = config.value("mix.fade_point_below_loud_db")
    cut_s = config.value("mix.cut_max_fall_s")
    quiet_min = config.value("mix.quiet_min_fraction") or 1.0
    span = grid.span(ctx.window_lo_s, ctx.window_hi_s + budget)
    smooth = smoothed_db(rms_db, grid.frames(0.1))
    end_s = bank.duration_s
    out: list[Candidate] = []
    gone_frames = falling_crossings(sound, span.start, span.stop)
    if bank.clip_duration_s <= ctx.window_hi_s + budget and sound[-1]:
        gone_frames.append(grid.n)  # the audio itself ends while music sounds: an abrupt cut
    for g in gone_frames:
        g_s = grid.time(g)
        lo = max(g - grid.frames(budget), 0)
        kind, edge = _first_edge(grid, rms_db, smooth, onset, lo, g, loud, rel, fade_db, cut_s)
        t = grid.time(edge)
        if not ctx.window_lo_s <= t <= ctx.window_hi_s:
            continue
        cand = Candidate(t, evidence={"edge": kind, "gone_s": round(g_s, 4)})
        cand.gates["decay"] = "pass" if g_s - t <= budget + 1e-9 else "fail"
        cand.evidence["decay"] = {"gone_after_s": round(g_s - t, 3)}
        if ctx.kind == "music_end":
            stay = grid.span(g_s, end_s)
            quiet = 1.0 - fraction_true(sound, stay) if stay.stop > stay.start else 1.0
        else:
            q = config.value("mix.pause_min_quiet_s")
            bound = min(q if q is not None else 0.0, float(config.value("mix.pause_quiet_s")))
            stay = grid.span(g_s, min(g_s + bound, end_s))
            quiet = 1.0 - fraction_true(sound, stay) if stay.stop > stay.start else 1.0
        cand.gates["stays_down"] = "pass" if quiet >= quiet_min else "fail"
        cand.evidence["stays_down"] = {"quiet_fraction": round(quiet, 3)}
        out.append(cand)
    return out


def _first_edge(
    grid: Grid, rms_db: np.ndarray, smooth: np.ndarray, onset: np.ndarray, lo: int, gone: int,
    loud: float, rel: float, fade_db: float | None, cut_s: float | None,
) -> tuple[str, int]:
    """Classify the ending before frame ``gone`` and return (edge kind, edge frame)."""
    if gone >= grid.n:  # the file ends while music sounds
        return "cut", grid.n - 1
    if cut_s is not None:
        k = grid.frames(cut_s)
        before = rms_db[max(gone - k - 1, 0)]
        if before >= loud - (fade_db if fade_db is not None else 23.0):
            # a fall from musical level to silence within a few frames: an abrupt cut
            drop = rms_db[max(gone - k - 1, 0) : gone + 1]
            step = int(np.argmin(np.diff(drop))) if drop.size > 1 else 0
            return "cut", max(gone - k - 1, 0) + step + 1
    acc = None
    seg = onset[lo:gone]
    if seg.size > 2 and seg.max() > 0:
        top = float(onset[max(lo - grid.frames(3.0), 0):gone].max())
        peaks = np.flatnonzero((seg[1:-1] >= seg[:-2]) & (seg[1:-1] >= seg[2:]) & (seg[1:-1] >= rel * top)) + 1
        if peaks.size:
            acc = int(peaks[-1]) + lo
    fade = None
    if fade_db is not None:
        above = np.flatnonzero(smooth[:gone] >= loud - fade_db)
        if above.size:
            fade = int(above[-1]) + 1
    if acc is not None and (fade is None or acc >= fade - 1):
        return "accent", acc
    if fade is not None:
        return "fade", min(fade, gone)
    return "gone", gone

"""Rejection gates shared by the detectors.

Each gate returns ``(verdict, evidence)``: the verdict is ``pass`` | ``fail`` |
``exempt`` and the evidence holds the numbers it rests on (levels in dB re the signal's
own reference, durations in seconds): the statistic it thresholded, kept next to the
verdict (``events.jsonl`` ``evidence``). Each gate takes its parameter set
(:class:`~timingbench.params.detectors.AbsenceParams`, ``PersistenceParams``,
``LevelChangeParams``) from the detector that applies it; a threshold that is switched
off (``None``) skips that check. Gates only veto candidates; they never move or create one.

Gates:

- **absence_before** — an entrance needs measured absence before it, at two scales: a
  whole-clip bound (a high percentile of the level from the clip start up to the
  candidate) and a strict immediate window (3 s by convention).
- **absence_after** — an exit needs sustained absence after it.
- **persistence** — the new state must hold for a while after the candidate.
- **level_change** — the level must change by a minimum amount across the candidate.
- ``semantic_family`` (instrument identity) is applied by the scorer, never by a detector
  (:func:`timingbench.scoring.run_detector`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from timingbench.curves import Grid, fraction_true
from timingbench.params.detectors import AbsenceParams, LevelChangeParams, PersistenceParams
from timingbench.verdicts import FAIL, PASS, GateVerdict

FloatArray = npt.NDArray[np.floating[Any]]


def _level(x: FloatArray, sl: slice, pct: float) -> float | None:
    seg = x[sl]
    return float(np.percentile(seg, pct)) if seg.size else None


def absence_before(
    env_db: FloatArray, grid: Grid, *, t_s: float, ref_db: float, params: AbsenceParams
) -> GateVerdict:
    """Absence before an entrance at two scales.

    Parameters
    ----------
    env_db : np.ndarray, shape (n,)
        Level envelope of the target's signal in dB.
    grid : Grid
        The bank's frame grid.
    t_s : float
        Candidate time in seconds.
    ref_db : float
        The signal's own loudness reference in dB.
    params : AbsenceParams
        The applying detector's absence constants. The strict check is off when
        ``absence_strict_below_ref_db`` is None, the whole-clip check when
        ``absence_whole_below_ref_db`` or ``absence_whole_percentile`` is None.

    Returns
    -------
    verdict : str
    evidence : dict
        ``strict_db`` and ``whole_db`` (levels relative to ``ref_db``, None when the
        span before the candidate is empty, which fails: absence was not measured).
    """
    return judge_absence_before(absence_levels(env_db, grid, t_s=t_s, params=params), ref_db=ref_db, params=params)


def absence_levels(
    env_db: FloatArray, grid: Grid, *, t_s: float, params: AbsenceParams
) -> tuple[float | None, float | None] | None:
    """What :func:`absence_before` measures: the strict-window and whole-span levels before ``t_s`` (dB).

    None when no audio precedes the candidate (past the guard); a level is None when its
    span is empty or (whole span) ``absence_whole_percentile`` is switched off. Independent
    of the thresholds, so a caller may keep it and re-judge (:func:`judge_absence_before`).
    """
    end = t_s - params.absence_guard_s
    if end <= 0.0:
        return None
    strict = _level(env_db, grid.span(end - params.windows.strict_s, end), params.absence_strict_percentile)
    pct = params.absence_whole_percentile
    return strict, (None if pct is None else _level(env_db, grid.span(0.0, end), pct))


def judge_absence_before(
    levels: tuple[float | None, float | None] | None, *, ref_db: float, params: AbsenceParams
) -> GateVerdict:
    """The absence-before verdict on measured levels (:func:`absence_levels`) against the thresholds."""
    ev: dict[str, Any] = {"strict_db": None, "whole_db": None}
    if levels is None:
        return FAIL, ev  # no audio before the candidate: absence cannot be shown
    strict, whole = levels
    strict_db = params.absence_strict_below_ref_db
    whole_db = params.absence_whole_below_ref_db
    ok = True
    if strict_db is not None and strict is not None:
        ev["strict_db"] = round(strict - ref_db, 2)
        ok &= strict - ref_db <= -strict_db
    if whole_db is not None and whole is not None:
        ev["whole_db"] = round(whole - ref_db, 2)
        ok &= whole - ref_db <= -whole_db
    return (PASS if ok else FAIL), ev


def absence_after(
    env_db: FloatArray, grid: Grid, *, t_s: float, ref_db: float, clip_end_s: float, params: AbsenceParams,
) -> GateVerdict:
    """Sustained absence after an exit.

    Reads ``absence_guard_s``, ``windows.strict_s``, ``absence_strict_below_ref_db``
    (None: the gate passes) and ``absence_strict_percentile``. The window is cut at
    ``clip_end_s``; an empty window fails (nothing was measured). Evidence: ``after_db``.
    """
    below = params.absence_strict_below_ref_db
    if below is None:
        return PASS, {"after_db": None}
    t0 = t_s + params.absence_guard_s
    lvl = _level(env_db, grid.span(t0, min(t0 + params.windows.strict_s, clip_end_s)),
                 params.absence_strict_percentile)
    if lvl is None:
        return FAIL, {"after_db": None}
    return (PASS if lvl - ref_db <= -below else FAIL), {"after_db": round(lvl - ref_db, 2)}


def persistence(
    present: npt.NDArray[np.bool_], grid: Grid, *, t_s: float, clip_end_s: float,
    want_present: bool, params: PersistenceParams,
) -> GateVerdict:
    """The new state (present after an entrance, absent after an exit) must hold.

    Reads ``windows.persistence_s``, ``persistence_min_fraction`` (None: the gate passes) and
    ``persistence_min_span_fraction``. The window is cut at ``clip_end_s``; a candidate
    with less than ``persistence_min_span_fraction`` of the window left before the end of
    the audio fails (nothing shows that its new state holds). Evidence: ``held_fraction``.
    """
    dur, frac_min = params.windows.persistence_s, params.persistence_min_fraction
    if frac_min is None:
        return PASS, {"held_fraction": None}
    end = min(t_s + dur, clip_end_s)
    if end - t_s < params.persistence_min_span_fraction * dur:
        return FAIL, {"held_fraction": None}
    frac = fraction_true(present, grid.span(t_s, end))
    if not want_present:
        frac = 1.0 - frac
    return (PASS if frac >= frac_min else FAIL), {"held_fraction": round(frac, 3)}


def level_change(
    env_db: FloatArray, grid: Grid, *, t_s: float, rising: bool, params: LevelChangeParams
) -> GateVerdict:
    """The level must rise (entrances) or fall (exits) across the candidate.

    Compares the mean level (dB) over ``level_window_s`` after the candidate with the
    window before it; ``level_min_change_db`` None passes. Evidence: ``change_db``.
    """
    win, min_db = params.level_window_s, params.level_min_change_db
    if min_db is None:
        return PASS, {"change_db": None}
    before = env_db[grid.span(t_s - win, t_s)]
    after = env_db[grid.span(t_s, t_s + win)]
    if not before.size or not after.size:
        return FAIL, {"change_db": None}
    change = float(after.mean() - before.mean())
    ok = change >= min_db if rising else -change >= min_db
    return (PASS if ok else FAIL), {"change_db": round(change, 2)}

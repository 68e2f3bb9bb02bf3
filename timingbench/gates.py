"""Rejection gates shared by the detectors.

Each gate returns ``(verdict, evidence)``: the verdict is ``pass`` | ``fail`` |
``exempt`` and the evidence holds the numbers it rests on (levels in dB re the signal's
own reference, durations in seconds). A gate whose controlling constant is disabled in
the configuration (it reads ``None``) skips that check. Gates only veto candidates; they
never move or create one.

Gates:

- **absence_before** — an entrance needs measured absence before it, at two scales: a
  whole-clip bound (a high percentile of the level from the clip start up to the
  candidate) and a strict immediate window (3 s by convention).
- **absence_after** — an exit needs sustained absence after it.
- **persistence** — the new state must hold for a while after the candidate.
- **level_change** — the level must change by a minimum amount across the candidate.
- **semantic_family** — the target family's evidence must rise across the candidate and
  have been quiet before (rejection-only; see :mod:`timingbench.features.semantic`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from timingbench.config import Config
from timingbench.detectors.base import EXEMPT, FAIL, PASS, Grid, fraction_true

Verdict = tuple[str, dict[str, Any]]
FloatArray = npt.NDArray[np.floating[Any]]


def _level(x: FloatArray, sl: slice, pct: float) -> float | None:
    seg = x[sl]
    return float(np.percentile(seg, pct)) if seg.size else None


def absence_before(
    env_db: FloatArray, grid: Grid, *, t_s: float, ref_db: float, config: Config, prefix: str = "gates"
) -> Verdict:
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
    config : Config
        Reads ``<prefix>.absence_guard_s``, ``<prefix>.absence_strict_window_s``,
        ``<prefix>.absence_strict_below_ref_db``, ``<prefix>.absence_strict_percentile``,
        ``<prefix>.absence_whole_below_ref_db``, ``<prefix>.absence_whole_percentile``.
    prefix : str
        Config section holding the constants (detectors may have their own).

    Returns
    -------
    verdict : str
    evidence : dict
        ``strict_db`` and ``whole_db`` (levels relative to ``ref_db``, None when the
        span before the candidate is empty, which fails: absence was not measured).
    """
    guard = config.value(f"{prefix}.absence_guard_s") or 0.0
    strict_w = config.value(f"{prefix}.absence_strict_window_s")
    strict_db = config.value(f"{prefix}.absence_strict_below_ref_db")
    strict_pct = config.value(f"{prefix}.absence_strict_percentile")
    whole_db = config.value(f"{prefix}.absence_whole_below_ref_db")
    whole_pct = config.value(f"{prefix}.absence_whole_percentile")
    end = t_s - guard
    ev: dict[str, Any] = {"strict_db": None, "whole_db": None}
    if end <= 0.0:
        return FAIL, ev  # no audio before the candidate: absence cannot be shown
    ok = True
    if strict_w is not None and strict_db is not None and strict_pct is not None:
        lvl = _level(env_db, grid.span(end - strict_w, end), strict_pct)
        if lvl is not None:
            ev["strict_db"] = round(lvl - ref_db, 2)
            ok &= lvl - ref_db <= -strict_db
    if whole_db is not None and whole_pct is not None:
        lvl = _level(env_db, grid.span(0.0, end), whole_pct)
        if lvl is not None:
            ev["whole_db"] = round(lvl - ref_db, 2)
            ok &= lvl - ref_db <= -whole_db
    return (PASS if ok else FAIL), ev


def absence_after(
    env_db: FloatArray, grid: Grid, *, t_s: float, ref_db: float, clip_end_s: float,
    config: Config, prefix: str = "gates",
) -> Verdict:
    """Sustained absence after an exit.

    Reads ``<prefix>.absence_guard_s``, ``<prefix>.absence_after_window_s``,
    ``<prefix>.absence_strict_below_ref_db`` and ``<prefix>.absence_strict_percentile``.
    The window is cut at ``clip_end_s``; an empty window fails (nothing was measured).
    """
    guard = config.value(f"{prefix}.absence_guard_s") or 0.0
    win = config.value(f"{prefix}.absence_after_window_s")
    below = config.value(f"{prefix}.absence_strict_below_ref_db")
    pct = config.value(f"{prefix}.absence_strict_percentile")
    if win is None or below is None or pct is None:
        return PASS, {"after_db": None}
    lvl = _level(env_db, grid.span(t_s + guard, min(t_s + guard + win, clip_end_s)), pct)
    if lvl is None:
        return FAIL, {"after_db": None}
    return (PASS if lvl - ref_db <= -below else FAIL), {"after_db": round(lvl - ref_db, 2)}


def persistence(
    present: npt.NDArray[np.bool_], grid: Grid, *, t_s: float, clip_end_s: float,
    want_present: bool, config: Config, prefix: str = "gates",
) -> Verdict:
    """The new state (present after an entrance, absent after an exit) must hold.

    Reads ``<prefix>.persistence_s``, ``<prefix>.persistence_min_fraction`` and
    ``<prefix>.persistence_min_span_fraction``. The window is cut at ``clip_end_s``; a
    candidate with less than ``persistence_min_span_fraction`` of the window left before
    the end of the audio fails (nothing shows that its new state holds).
    """
    dur = config.value(f"{prefix}.persistence_s")
    frac_min = config.value(f"{prefix}.persistence_min_fraction")
    if dur is None or frac_min is None:
        return PASS, {"held_fraction": None}
    end = min(t_s + dur, clip_end_s)
    span_min = config.value(f"{prefix}.persistence_min_span_fraction")
    if span_min is not None and end - t_s < float(span_min) * dur:
        return FAIL, {"held_fraction": None}
    frac = fraction_true(present, grid.span(t_s, end))
    if not want_present:
        frac = 1.0 - frac
    return (PASS if frac >= frac_min else FAIL), {"held_fraction": round(frac, 3)}


def level_change(
    env_db: FloatArray, grid: Grid, *, t_s: float, rising: bool, config: Config, prefix: str = "gates"
) -> Verdict:
    """The level must rise (entrances) or fall (exits) across the candidate.

    Reads ``<prefix>.level_window_s`` and ``<prefix>.level_min_change_db``; compares the
    mean level (dB) in the window after the candidate with the window before it.
    """
    win = config.value(f"{prefix}.level_window_s")
    min_db = config.value(f"{prefix}.level_min_change_db")
    if win is None or min_db is None:
        return PASS, {"change_db": None}
    before = env_db[grid.span(t_s - win, t_s)]
    after = env_db[grid.span(t_s, t_s + win)]
    if not before.size or not after.size:
        return FAIL, {"change_db": None}
    change = float(after.mean() - before.mean())
    ok = change >= min_db if rising else -change >= min_db
    return (PASS if ok else FAIL), {"change_db": round(change, 2)}


def semantic_family(
    evidence: Any, family: str, *, t_s: float, config: Config
) -> Verdict:
    """The target family's evidence must rise across the candidate (rejection-only).

    Parameters
    ----------
    evidence : FamilyEvidence or None
        Windowed family evidence of the clip; None when no backend is available.
    family : str
        SPEC section 1 family of the target.
    t_s : float
        Candidate time in seconds.
    config : Config
        Passed to :func:`timingbench.features.semantic.family_rise`.

    Returns
    -------
    verdict : str
        ``exempt`` (with ``reason``) when there is no evidence or the backend cannot
        judge the family.
    evidence : dict
    """
    if evidence is None:
        return EXEMPT, {"reason": "model_unavailable"}
    from timingbench.features.semantic import family_rise

    verdict, detail = family_rise(evidence, family, candidate_s=t_s, config=config)
    return verdict, dict(detail)


def semantic_family_exit(
    evidence: Any, family: str, *, t_s: float, config: Config
) -> Verdict:
    """The target family's evidence must show it leaving across the candidate (rejection-only).

    ``exempt`` when there is no evidence or the backend does not judge exits
    (see :func:`timingbench.features.semantic.family_fall`).
    """
    if evidence is None:
        return EXEMPT, {"reason": "model_unavailable"}
    from timingbench.features.semantic import family_fall

    verdict, detail = family_fall(evidence, family, candidate_s=t_s, config=config)
    return verdict, dict(detail)

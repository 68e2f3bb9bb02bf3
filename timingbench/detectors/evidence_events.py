"""Instrument entrances and exits found as flips of the trained family evidence.

Used by the stem-isolable families when no dedicated stem exists (the ``dsp`` fallback),
and by percussion for its absence and persistence checks, whenever the ``trained``
family evidence judges the family (:mod:`timingbench.evidence`).

1. **Where.** The change head's probability that the family entered (left) is read over
   the search window; its local maxima of at least ``evidence.entry_min_prob``
   (``exit_min_prob``), ``evidence.candidate_separation_s`` apart, are the candidates.
   The change head answers over a few seconds, so each candidate is refined to the
   steepest step of the family's presence within ``evidence.refine_s`` of the peak (mean
   presence over the ``evidence.step_s`` after minus the ``step_s`` before; the reverse
   for exits), then snapped to the earliest accent of the bank's onset curve (full mix)
   reaching ``evidence.snap_rel_height`` of the span's maximum within ``evidence.snap_s``
   of that step, so the time comes from the signal and the identity from the evidence.
2. **Whether.** ``absence_before`` (entrances) / ``absence_after`` (exits) on the family's
   presence at the paper's two scales (strict context and whole clip before), and
   ``persistence`` of the new state, then the ``semantic_family`` gate (the change head).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from timingbench.curves import Grid, accent, local_peaks, strongest_apart, window_means
from timingbench.gates import IdentityParams, semantic_family, semantic_family_exit
from timingbench.params.analysis import EvidenceParams
from timingbench.params.detectors import PersistenceParams
from timingbench.verdicts import FAIL, PASS, Candidate, EventContext, GateVerdict

F64 = npt.NDArray[np.float64]


def judges(evidence: Any, family: str) -> bool:
    """True when ``evidence`` is the trained backend's and it judges ``family``."""
    return evidence is not None and getattr(evidence, "backend", None) == "trained" \
        and family in evidence.curves and family not in evidence.exempt and evidence.times.size > 0


def _peaks(curve: F64, times: F64, lo_s: float, hi_s: float, *, floor: float, sep_s: float) -> list[int]:
    """Local maxima of ``curve`` at times in ``[lo_s, hi_s]`` reaching ``floor``, at least ``sep_s`` apart."""
    inside = (times >= lo_s) & (times <= hi_s)
    if not inside.any():
        return []
    peaks = local_peaks(curve, 0, curve.size, edges="neighbours", strict_right=True, min_value=floor)
    return strongest_apart(curve, peaks[inside[peaks]], separation=sep_s, positions=times)


def presence_step(presence: F64, times: F64, t_s: float, *, reach_s: float, step_s: float, rising: bool) -> float:
    """Instant within ``reach_s`` of ``t_s`` where the presence steps most (up when ``rising``)."""
    sel = np.flatnonzero(np.abs(times - t_s) <= reach_s)
    if sel.size == 0:
        return t_s
    hop = float(np.median(np.diff(times))) if times.size > 1 else 1.0
    k = max(int(round(step_s / hop)), 1)
    before, after = window_means(presence, before=k, after=k, edges="clip", at=sel)
    step = after - before if rising else before - after
    return float(times[sel[int(np.argmax(step))]])


def presence_absence(evidence: Any, family: str, *, t_s: float, params: EvidenceParams, entry: bool) -> GateVerdict:
    """Absence of the family before an entrance (after an exit) on its presence, at two scales.

    Strict: the ``evidence.quiet_percentile`` percentile over the ``evidence.context_s``
    before ``t_s`` (after, for exits; ``evidence.guard_s`` left out). Whole: the
    ``evidence.whole_percentile`` percentile from the clip start (to the clip end, for
    exits). Each must be at most ``evidence.quiet_max``. No frame on a side fails.
    """
    def levels() -> tuple[float, float] | None:
        times, pres = evidence.times, evidence.curves[family]
        g, c = params.guard_s, params.context_s
        if entry:
            strict = (times >= t_s - g - c) & (times < t_s - g)
            whole = times < t_s - g
        else:
            strict = (times > t_s + g) & (times <= t_s + g + c)
            whole = times > t_s + g
        if not strict.any():
            return None
        return (round(float(np.percentile(pres[strict], params.quiet_percentile)), 4),
                round(float(np.percentile(pres[whole], params.whole_percentile)), 4))

    memo = getattr(evidence, "memo", None)
    got = levels() if memo is None else memo(
        ("presence-absence", family, entry, t_s, params.guard_s, params.context_s, params.quiet_percentile,
         params.whole_percentile), levels)
    ev: dict[str, Any] = {"strict": None, "whole": None}
    if got is None:
        return FAIL, ev
    ev["strict"], ev["whole"] = got
    most = params.quiet_max
    ok = most is None or (ev["strict"] <= most and ev["whole"] <= most)
    return (PASS if ok else FAIL), ev


def presence_persistence(evidence: Any, family: str, *, t_s: float, clip_end_s: float, params: PersistenceParams,
                         present_prob: float | None, want_present: bool) -> GateVerdict:
    """The new state must hold: share of ``params.persistence_s`` after ``t_s`` with presence at least ``present_prob``.

    ``params`` is the calling detector's persistence set, read like
    :func:`timingbench.gates.persistence`; ``present_prob`` is ``evidence.present_prob``.
    The gate passes when ``persistence_min_fraction`` or ``present_prob`` is switched off.
    """
    dur, need, level = params.persistence_s, params.persistence_min_fraction, present_prob
    if need is None or level is None:
        return PASS, {"held_fraction": None}
    end = min(t_s + dur, clip_end_s)
    if end - t_s < params.persistence_min_span_fraction * dur:
        return FAIL, {"held_fraction": None}
    sel = (evidence.times >= t_s) & (evidence.times <= end)
    if not sel.any():
        return FAIL, {"held_fraction": None}
    on = evidence.curves[family][sel] >= level
    frac = float(on.mean()) if want_present else float(1.0 - on.mean())
    return (PASS if frac >= need else FAIL), {"held_fraction": round(frac, 3)}


def evidence_candidates(bank: Any, ctx: EventContext, evidence: Any, *, persistence_params: PersistenceParams,
                        identity: IdentityParams) -> list[Candidate]:
    """Entrance/exit candidates of ``ctx.family`` from the trained evidence (module docstring).

    Parameters
    ----------
    bank : FeatureBank
        Reads ``onset_full``, ``sr``, ``hop``, ``n_frames`` and ``duration_s``.
    ctx : EventContext
        The instructed event and its search window.
    evidence : FamilyEvidence
        Trained evidence that judges ``ctx.family`` (see :func:`judges`).
    persistence_params : PersistenceParams
        The calling detector's persistence constants.
    identity : IdentityParams
        ``identity.trained`` (the ``evidence`` section) places and gates the candidates.

    Returns
    -------
    candidates : list of Candidate
        Empty when the evidence never shows the change inside the window.
    """
    sec = identity.trained
    entry = ctx.kind == "instrument_entry"
    curve = (evidence.entered if entry else evidence.left)[ctx.family]
    floor = sec.entry_min_prob if entry else sec.exit_min_prob
    if floor is None:
        return []
    grid = Grid(sr=bank.sr, hop=bank.hop, n_frames=bank.n_frames)
    onset = np.asarray(bank.onset_full, dtype=np.float64)
    snap = sec.snap_s
    end_s = float(bank.duration_s)
    out: list[Candidate] = []
    for i in _peaks(curve, evidence.times, ctx.window_lo_s - snap, ctx.window_hi_s + snap, floor=floor,
                    sep_s=sec.candidate_separation_s):
        t_peak = float(evidence.times[i])
        t_step = presence_step(evidence.curves[ctx.family], evidence.times, t_peak,
                               reach_s=sec.refine_s, step_s=sec.step_s, rising=entry)
        f = accent(onset, grid.frame(t_step - snap), grid.frame(t_step + snap) + 1,
                   rel_height=sec.snap_rel_height, edges="open")
        t = grid.time(f) if f is not None else t_step
        if not ctx.window_lo_s <= t <= ctx.window_hi_s:
            continue
        cand = Candidate(t, evidence={"evidence_peak_s": round(t_peak, 4), "presence_step_s": round(t_step, 4),
                                      "change": round(float(curve[i]), 4), "snapped": f is not None})
        name = "absence_before" if entry else "absence_after"
        cand.apply(name, presence_absence(evidence, ctx.family, t_s=t, params=sec, entry=entry))
        cand.apply("persistence", presence_persistence(evidence, ctx.family, t_s=t, clip_end_s=end_s,
                                                       params=persistence_params, present_prob=sec.present_prob,
                                                       want_present=entry))
        sem = semantic_family if entry else semantic_family_exit
        cand.apply("semantic_family", sem(evidence, ctx.family, t_s=t, params=identity))
        out.append(cand)
    return out

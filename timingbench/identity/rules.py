"""Is this family's change here? Every identity rule of the scorer, in one module.

The feature layer (:mod:`timingbench.identity.providers`) computes family evidence
curves; this module decides with them. The detectors call it; nothing else judges
instrument identity.

**One window convention.** For a candidate at ``t`` seconds, the *before* side holds the
evidence frames with times in ``[t - guard - context, t - guard]`` and the *after* side
those in ``[t + guard, t + guard + context]`` (both cut at the clip's edges: near an
edge the context that exists is used). The trained evidence uses ``evidence.guard_s`` and
``evidence.context_s``; the taggers use half their analysis window as the guard (so
only windows lying wholly before or after ``t`` count) and ``semantic.context_s``.

**Trained evidence** (:mod:`timingbench.evidence`: presence, entered, left per family):

- *presence on the family's own time scale*: before any statistic, a family's presence is
  summarised by its running maximum over ``evidence.presence_span_s`` (per family in
  ``evidence.presence_span_s_by_family``), taken inside each side, so a drum kit counts
  as present between its hits rather than frame by frame;
- *where* (:func:`trained_candidates`): every local peak of the change head ("entered",
  or "left" for exits) reaching ``evidence.entry_min_prob`` (``exit_min_prob``) inside
  the search window (widened by ``evidence.gate_reach_s``), and the window's own edge
  when the curve is still climbing there, is a candidate, placed at the centre of the
  peak's run of frames at ``evidence.peak_rel_height`` of its height or more (a clear
  entrance saturates the head over a plateau around it); it is refined to the steepest
  step of the summarised presence within ``evidence.refine_s`` (inside the window) and
  snapped to the earliest onset accent within ``evidence.snap_s`` of that step (for an
  entrance of a family listed in ``evidence.snap_back_s_by_family``, from that long before
  the step: a kit's presence rises a few frames after its first hit);
- *whether*: the change head's peak near the candidate is the primary identity evidence
  (gate ``semantic_family``: :func:`trained_verdict`); absence before an entrance
  (after an exit) and persistence of the new state read the summarised presence under
  the rule ``evidence.decision_rule``:

  - ``rise`` — on the clip's own scale: the presence on the quiet side, at the strict
    context and from the clip's start (end, for exits), must lie at least
    ``evidence.min_logit_rise`` log-odds under the presence on the sounding side (and both
    at most ``evidence.quiet_max``); the new state holds where the summarised
    presence stays past the midpoint of the two levels and past ``evidence.present_prob``;
  - ``change`` — absence as under ``rise``; the new state is not checked frame by frame,
    because the change head's "entered" ("left") already compares the 3 s after the
    instant with the 3 s before it;
  - ``absolute`` — against fixed levels: the quiet side's presence at most
    ``evidence.quiet_max``, the new state at least ``evidence.present_prob``.

**Taggers** (musicnn, CLAP): :func:`family_rise` (the paper's log-odds rise with a quiet
bound), :func:`family_fall` (exits are not judged), :func:`tagger_family_fall` (the
percussion low route's exit identity) and :func:`timbre_match`.

Every gate here only vetoes: none moves a detection or creates one from nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np
import numpy.typing as npt
from scipy.ndimage import maximum_filter1d

from timingbench.convert import TIME_DECIMALS
from timingbench.curves import Grid, accent, local_peaks, strongest_apart, window_means
from timingbench.errors import ConfigError, ParameterError
from timingbench.families import FAMILY_NAMES
from timingbench.identity.window import context_masks, logit_rise
from timingbench.memo import memoised
from timingbench.verdicts import (
    EXEMPT,
    FAIL,
    PASS,
    Candidate,
    EventContext,
    GateOutcome,
    GateVerdict,
)

if TYPE_CHECKING:
    from timingbench.identity.evidence import FamilyEvidence
    from timingbench.params.analysis import EvidenceParams, SemanticParams
    from timingbench.params.detectors import PersistenceParams

F64 = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]
#: The decision rules of the trained evidence (``evidence.decision_rule``).
DECISION_RULES = ("rise", "change", "absolute")


@dataclass(frozen=True)
class IdentityParams:
    """What the identity rules read: the taggers' and the trained evidence's constants.

    Attributes
    ----------
    semantic : SemanticParams
        The ``semantic`` section (musicnn / CLAP evidence).
    evidence_params : EvidenceParams
        The ``evidence`` section (the trained evidence network).
    """

    semantic: SemanticParams
    evidence_params: EvidenceParams


# --------------------------------------------------------------------------- the window convention


def _check_family(family: str) -> None:
    if family not in FAMILY_NAMES:
        raise ParameterError(
            f"family {family!r} carries no instrument identity; use one of {list(FAMILY_NAMES)}"
        )


def _check_candidate(family: str, candidate_s: float) -> None:
    _check_family(family)
    if not np.isfinite(candidate_s):
        raise ParameterError(f"candidate_s must be a finite number of seconds, got {candidate_s!r}")



# --------------------------------------------------------------------------- trained evidence


def judges(evidence: FamilyEvidence | None, family: str) -> TypeGuard[FamilyEvidence]:
    """True when ``evidence`` is the trained backend's and it judges ``family``."""
    return evidence is not None and evidence.has_change_heads \
        and family in evidence.curves and family not in evidence.exempt and evidence.times.size > 0


def presence_span_s(family: str, params: EvidenceParams) -> float:
    """The span (s) over which ``family``'s presence is summarised (its running maximum)."""
    return float(dict(params.presence_span_s_by_family or {}).get(family, params.presence_span_s))


def _hop(times: F64) -> float:
    return float(np.median(np.diff(times))) if times.size > 1 else 1.0


def _span_frames(family: str, params: EvidenceParams, times: F64) -> int:
    """:func:`presence_span_s` in evidence frames (at least one)."""
    return max(int(round(presence_span_s(family, params) / _hop(times))), 1)


def summarised(presence: F64, mask: Mask, frames: int, *, align: str = "centre") -> F64:
    """Running maximum of ``presence`` over ``frames`` frames, taken inside the frames ``mask`` selects.

    ``mask`` selects one contiguous side, so the maximum never reaches across the
    candidate into the other side. ``align`` places the window: ``centre``, ``trailing``
    (the frame and the ``frames - 1`` before it: a rise stays where the first hit is) or
    ``leading`` (the frame and those after it: a fall stays at the last hit).
    """
    seg = np.asarray(presence, dtype=np.float64)[mask]
    if frames <= 1 or seg.size == 0:
        return seg
    if align == "centre":
        return np.asarray(maximum_filter1d(seg, size=frames, mode="nearest"), dtype=np.float64)
    pad = np.full(frames - 1, seg[0] if align == "trailing" else seg[-1])
    ext = np.concatenate([pad, seg]) if align == "trailing" else np.concatenate([seg, pad])
    win = np.lib.stride_tricks.sliding_window_view(ext, frames)
    return np.asarray(win.max(axis=1), dtype=np.float64)


#: The constants :func:`side_levels` reads (its memo key).
SIDE_LEVEL_READS = ("context_s", "guard_s", "quiet_percentile", "whole_percentile", "presence_span_s",
                    "presence_span_s_by_family")


@dataclass(frozen=True)
class SideLevels:
    """What the trained rules read around a candidate (probabilities; None when a side is empty).

    Attributes
    ----------
    quiet : float or None
        ``evidence.quiet_percentile`` percentile of the summarised presence on the side
        where the family must be absent (before an entrance, after an exit).
    sounding : float or None
        Median of the summarised presence on the side where it must sound.
    whole : float or None
        ``evidence.whole_percentile`` percentile from the clip start up to the quiet side's
        end (from its start to the clip end, for exits).
    quiet_s, sounding_s : float
        Seconds of context measured on each side (less than ``context_s`` near the edges).
    """

    quiet: float | None
    sounding: float | None
    whole: float | None
    quiet_s: float
    sounding_s: float


def side_levels(evidence: FamilyEvidence, family: str, *, t_s: float, params: EvidenceParams,
                entry: bool) -> SideLevels:
    """The quiet-side, sounding-side and whole-clip levels of ``family`` around ``t_s`` (:class:`SideLevels`)."""
    def compute(params: EvidenceParams) -> SideLevels:
        times = np.asarray(evidence.times, dtype=np.float64)
        pres = np.asarray(evidence.curves[family], dtype=np.float64)
        hop = _hop(times)
        k = _span_frames(family, params, times)
        pre, post = context_masks(times, t_s, context_s=params.context_s, guard_s=params.guard_s)
        quiet_m, loud_m = (pre, post) if entry else (post, pre)
        c = np.round(times, TIME_DECIMALS)
        whole_m = (c <= round(t_s - params.guard_s, TIME_DECIMALS)) if entry \
            else (c >= round(t_s + params.guard_s, TIME_DECIMALS))
        q, loud, whole = summarised(pres, quiet_m, k), summarised(pres, loud_m, k), summarised(pres, whole_m, k)
        return SideLevels(
            quiet=float(np.percentile(q, params.quiet_percentile)) if q.size else None,
            sounding=float(np.median(loud)) if loud.size else None,
            whole=float(np.percentile(whole, params.whole_percentile)) if whole.size else None,
            quiet_s=round(float(quiet_m.sum()) * hop, 4), sounding_s=round(float(loud_m.sum()) * hop, 4))

    return memoised(evidence, "side-levels", params, SIDE_LEVEL_READS, compute, family, entry, t_s)


def array_side_levels(presence: F64, times: F64, t_s: float, *, context_s: float, guard_s: float,
                      pct: float, quiet_side: str) -> tuple[float | None, float | None]:
    """Raw presence before and after ``t_s`` (no summary span): the ``pct`` percentile on ``quiet_side``, the median
    on the other.

    For evaluations on arrays of network outputs; the scorer's rules use :func:`side_levels`.
    """
    pre, post = context_masks(times, t_s, context_s=context_s, guard_s=guard_s)
    b = a = None
    if pre.any():
        b = float(np.percentile(presence[pre], pct)) if quiet_side == "before" else float(np.median(presence[pre]))
    if post.any():
        a = float(np.percentile(presence[post], pct)) if quiet_side == "after" else float(np.median(presence[post]))
    return b, a


def change_near(curve: F64, times: F64, t_s: float, reach_s: float) -> float | None:
    """Highest change probability within ``reach_s`` of ``t_s`` (None when no frame lies there)."""
    near = np.abs(times - t_s) <= reach_s
    return float(np.max(curve[near])) if near.any() else None


def _rule(params: EvidenceParams) -> str:
    rule = str(params.decision_rule)
    if rule not in DECISION_RULES:
        raise ConfigError(f"evidence.decision_rule: unknown rule {rule!r}; use one of {', '.join(DECISION_RULES)}")
    return rule


def trained_verdict(ev: Any, family: str, *, t_s: float, params: EvidenceParams,
                    kind: str) -> tuple[GateOutcome, dict[str, Any]]:
    """The change head's verdict on ``family`` entering (``kind='entry'``) or leaving at ``t_s``.

    Gate ``semantic_family`` of the trained evidence: the highest "entered" ("left")
    probability within ``evidence.gate_reach_s`` of ``t_s`` must reach
    ``evidence.entry_min_prob`` (``exit_min_prob``).

    Returns
    -------
    verdict : str
        ``pass`` | ``fail`` | ``exempt`` (family not judged, or no evidence frame near ``t_s``).
    detail : dict
        ``backend``, ``change`` (probability), ``reason`` (``no_change`` or the exemption).
    """
    detail: dict[str, Any] = {"backend": ev.backend, "change": None, "reason": None}
    if family in ev.exempt or family not in ev.curves:
        detail["reason"] = ev.exempt.get(family, "not_in_vocabulary")
        return EXEMPT, detail
    changes = (ev.entered if kind == "entry" else ev.left)[family]
    ch = change_near(changes, ev.times, t_s, params.gate_reach_s)
    if ch is None:
        detail["reason"] = "insufficient_context"
        return EXEMPT, detail
    detail["change"] = round(ch, 4)
    need = params.entry_min_prob if kind == "entry" else params.exit_min_prob
    if need is not None and ch < need:
        detail["reason"] = "no_change"
        return FAIL, detail
    return PASS, detail


def presence_absence(evidence: FamilyEvidence, family: str, *, t_s: float, params: EvidenceParams,
                     entry: bool) -> GateVerdict:
    """Absence of the family before an entrance (after an exit), on the summarised presence.

    ``rise`` and ``change`` rules: ``logit(sounding) - logit(quiet)`` and
    ``logit(sounding) - logit(whole)`` (probabilities clipped to ``evidence.prob_clip``) must
    reach ``evidence.min_logit_rise``, and ``quiet`` and ``whole`` may not exceed
    ``evidence.quiet_max`` (when set). ``absolute`` rule:
    ``quiet`` and ``whole`` at most ``evidence.quiet_max``. A quiet side with no frame
    (the candidate lies within ``guard_s`` of the clip's edge) fails: absence was not
    measured, and so does one with less than ``evidence.min_context_s`` of frames (the
    start of the music is not an entrance over it); a sounding side with no frame fails
    under the ``rise`` and ``change`` rules.

    Evidence: ``strict`` (quiet-side level), ``whole`` (``whole_level`` under the ``rise``
    rule, where it is judged through ``whole_rise``), ``sounding``, ``rise``, ``whole_rise``
    (log-odds), ``context_s`` (seconds measured on the quiet side).
    """
    lv = side_levels(evidence, family, t_s=t_s, params=params, entry=entry)
    rule = _rule(params)
    ev: dict[str, Any] = {"strict": _r4(lv.quiet), "whole" if rule == "absolute" else "whole_level": _r4(lv.whole),
                          "sounding": _r4(lv.sounding), "rise": None, "whole_rise": None, "context_s": lv.quiet_s}
    if lv.quiet is None or lv.whole is None or lv.quiet_s < params.min_context_s:
        return FAIL, ev
    most = params.quiet_max
    bounded = most is None or (lv.quiet <= most and lv.whole <= most)
    if rule == "absolute":
        return (PASS if bounded else FAIL), ev
    if lv.sounding is None:
        return FAIL, ev
    clip = params.prob_clip
    rise = logit_rise(lv.quiet, lv.sounding, clip=clip)
    whole_rise = logit_rise(lv.whole, lv.sounding, clip=clip)
    ev.update(rise=round(rise, 4), whole_rise=round(whole_rise, 4))
    need = params.min_logit_rise
    risen = need is None or (rise >= need and whole_rise >= need)
    return (PASS if risen and bounded else FAIL), ev


def presence_persistence(evidence: FamilyEvidence, family: str, *, t_s: float, clip_end_s: float,
                         params: PersistenceParams, evidence_params: EvidenceParams,
                         want_present: bool) -> GateVerdict:
    """The new state must hold over the ``params.persistence_s`` after ``t_s`` (summarised presence).

    The share of that span where the summarised presence is on the new side of a level
    must reach ``params.persistence_min_fraction``: the midpoint of the quiet-side and
    sounding-side levels, and at least (entering) or at most (leaving)
    ``evidence.present_prob`` when it is set (``rise`` rule), or ``evidence.present_prob``
    alone (``absolute``);
    under the ``change`` rule the gate passes (the change head judged the new state), and
    under the others it passes too when the change head's peak within
    ``evidence.gate_reach_s`` reaches ``evidence.confident_change`` (a change the head is sure
    of over its 3 s context, on a family whose presence the network under-reads).
    ``params`` is the calling detector's persistence set. The gate passes when
    ``persistence_min_fraction`` (or, under ``absolute``, ``present_prob``) is off; it
    fails when less than ``persistence_min_span_fraction`` of the span is left in the clip.
    Evidence: ``held_fraction``, ``level``.
    """
    dur, need = params.persistence_s, params.persistence_min_fraction
    rule = _rule(evidence_params)
    if need is None or rule == "change":
        return PASS, {"held_fraction": None, "level": None}
    if rule == "absolute":
        if evidence_params.present_prob is None:
            return PASS, {"held_fraction": None, "level": None}
        level: float | None = evidence_params.present_prob
    else:
        lv = side_levels(evidence, family, t_s=t_s, params=evidence_params, entry=want_present)
        level = None if lv.quiet is None or lv.sounding is None else 0.5 * (lv.quiet + lv.sounding)
        if level is not None and evidence_params.present_prob is not None:
            # entering: at least the fixed present level; leaving: at most it
            level = (max(level, evidence_params.present_prob) if want_present
                     else min(level, evidence_params.present_prob))
    end = min(t_s + dur, clip_end_s)
    if end - t_s < params.persistence_min_span_fraction * dur or level is None:
        return FAIL, {"held_fraction": None, "level": _r4(level)}
    times = np.asarray(evidence.times, dtype=np.float64)
    sel = (times >= t_s) & (times <= end)
    if not sel.any():
        return FAIL, {"held_fraction": None, "level": _r4(level)}
    held = summarised(evidence.curves[family], sel, _span_frames(family, evidence_params, times))
    on = held >= level if want_present else held <= level
    frac = float(on.mean())
    ev: dict[str, Any] = {"held_fraction": round(frac, 3), "level": _r4(level)}
    sure = evidence_params.confident_change
    if frac < need and sure is not None:
        ch = change_near((evidence.entered if want_present else evidence.left)[family], times, t_s,
                         evidence_params.gate_reach_s)
        ev["confident_change"] = None if ch is None else round(ch, 4)
        if ch is not None and ch >= sure:
            return PASS, ev
    return (PASS if frac >= need else FAIL), ev


def _r4(x: float | None) -> float | None:
    return None if x is None else round(float(x), 4)


def change_peaks(curve: F64, times: F64, lo_s: float, hi_s: float, *, floor: float, sep_s: float) -> list[int]:
    """Frames where the change head peaks inside ``[lo_s, hi_s]`` at ``floor`` or more, ``sep_s`` apart.

    Local maxima, plus the span's first (last) frame when the curve is still falling
    into (climbing out of) the span there and reaches ``floor``: a peak just outside the
    span is not missed.
    """
    inside = np.flatnonzero((times >= lo_s) & (times <= hi_s))
    if inside.size == 0:
        return []
    peaks = local_peaks(curve, 0, curve.size, edges="neighbours", strict_right=True, min_value=floor)
    found = set(int(p) for p in peaks[(peaks >= inside[0]) & (peaks <= inside[-1])])
    a, b = int(inside[0]), int(inside[-1])
    if curve[a] >= floor and a > 0 and curve[a - 1] > curve[a]:
        found.add(a)
    if curve[b] >= floor and b + 1 < curve.size and curve[b + 1] > curve[b]:
        found.add(b)
    return strongest_apart(curve, np.array(sorted(found), dtype=np.intp), separation=sep_s, positions=times)


def peak_centre(curve: F64, times: F64, i: int, *, rel: float) -> float:
    """Centre (s) of the run of frames around peak ``i`` where ``curve`` stays at ``rel`` of the peak or more.

    The change head answers "entered within the 3 s after, against the 3 s before" for every
    frame, so a clear entrance gives a plateau near 1 around the true instant; its local
    maximum can fall anywhere on the plateau, its centre does not.
    """
    level = rel * float(curve[i])
    lo = hi = i
    while lo > 0 and curve[lo - 1] >= level:
        lo -= 1
    while hi + 1 < curve.size and curve[hi + 1] >= level:
        hi += 1
    return float(0.5 * (times[lo] + times[hi]))


def presence_step(presence: F64, times: F64, t_s: float, *, reach_s: float, step_s: float, rising: bool,
                  lo_s: float = -np.inf, hi_s: float = np.inf) -> float:
    """Instant within ``reach_s`` of ``t_s`` (and inside ``[lo_s, hi_s]``) where the presence steps most.

    The step is the mean over the ``step_s`` after minus the ``step_s`` before (up when
    ``rising``); ``t_s`` when no frame qualifies.
    """
    sel = np.flatnonzero((np.abs(times - t_s) <= reach_s) & (times >= lo_s) & (times <= hi_s))
    if sel.size == 0:
        return t_s
    k = max(int(round(step_s / _hop(times))), 1)
    before, after = window_means(presence, before=k, after=k, edges="clip", at=sel)
    step = after - before if rising else before - after
    return float(times[sel[int(np.argmax(step))]])


def trained_gates(cand: Candidate, evidence: FamilyEvidence, ctx: EventContext, *, clip_end_s: float,
                  persistence_params: PersistenceParams, identity: IdentityParams) -> None:
    """Apply the trained evidence's three gates to ``cand``: absence, persistence, the change head."""
    entry = ctx.kind == "instrument_entry"
    sec = identity.evidence_params
    cand.apply("absence_before" if entry else "absence_after",
               presence_absence(evidence, ctx.family, t_s=cand.time_s, params=sec, entry=entry))
    cand.apply("persistence", presence_persistence(evidence, ctx.family, t_s=cand.time_s, clip_end_s=clip_end_s,
                                                   params=persistence_params, evidence_params=sec, want_present=entry))
    cand.apply("semantic_family", trained_verdict(evidence, ctx.family, t_s=cand.time_s, params=sec,
                                                  kind="entry" if entry else "exit"))


def trained_candidates(onset: npt.ArrayLike, grid: Grid, ctx: EventContext, evidence: FamilyEvidence, *,
                       persistence_params: PersistenceParams, identity: IdentityParams,
                       clip_end_s: float) -> list[Candidate]:
    """Entrance/exit candidates of ``ctx.family`` where the change head peaks (module docstring).

    Parameters
    ----------
    onset : array_like, shape (n_frames,)
        The onset curve the time is snapped to (the mix's, or a family's route), on ``grid``.
    grid : Grid
        The bank's frame grid.
    ctx : EventContext
        The instructed event and its search window.
    evidence : FamilyEvidence
        Trained evidence that judges ``ctx.family`` (see :func:`judges`).
    persistence_params : PersistenceParams
        The calling detector's persistence constants.
    identity : IdentityParams
        ``identity.evidence_params`` (the ``evidence`` section) places and gates the candidates.
    clip_end_s : float
        Length of the audio in seconds.

    Returns
    -------
    candidates : list of Candidate
        Empty when the change head never reaches its floor inside the window.
    """
    sec = identity.evidence_params
    entry = ctx.kind == "instrument_entry"
    curve = np.asarray((evidence.entered if entry else evidence.left)[ctx.family], dtype=np.float64)
    floor = sec.entry_min_prob if entry else sec.exit_min_prob
    if floor is None:
        return []
    times = np.asarray(evidence.times, dtype=np.float64)
    pres = np.asarray(evidence.curves[ctx.family], dtype=np.float64)
    held = summarised(pres, np.ones(pres.size, dtype=bool), _span_frames(ctx.family, sec, times),
                      align="trailing" if entry else "leading")
    onset = np.asarray(onset, dtype=np.float64)
    lo_w, hi_w = ctx.window_lo_s, ctx.window_hi_s
    reach, snap = sec.gate_reach_s, sec.snap_s
    out: list[Candidate] = []
    for i in change_peaks(curve, times, lo_w - reach, hi_w + reach, floor=floor, sep_s=sec.candidate_separation_s):
        t_peak = peak_centre(curve, times, i, rel=sec.peak_rel_height)
        t_step = presence_step(held, times, t_peak, reach_s=sec.refine_s, step_s=sec.step_s, rising=entry,
                               lo_s=lo_w, hi_s=hi_w)
        back = float(dict(sec.snap_back_s_by_family or {}).get(ctx.family, snap)) if entry else snap
        f = accent(onset, grid.frame(t_step - back), grid.frame(t_step + snap) + 1,
                   rel_height=sec.snap_rel_height, edges="open")
        t = grid.time(f) if f is not None else t_step
        if not lo_w <= t <= hi_w:
            t, f = t_step, None
        if not lo_w <= t <= hi_w:
            continue
        cand = Candidate(t, stats={"evidence_peak_s": round(t_peak, 4), "presence_step_s": round(t_step, 4),
                                      "change": round(float(curve[i]), 4), "snapped": f is not None})
        trained_gates(cand, evidence, ctx, clip_end_s=clip_end_s, persistence_params=persistence_params,
                      identity=identity)
        out.append(cand)
    return out


def gate_score(presence: F64, changes: F64, times: F64, t_s: float, *, params: EvidenceParams,
               kind: str) -> float | None:
    """One number for the trained identity at ``t_s``: ``min(change, 1 - quiet-side presence)`` (None without context).

    Used by the evidence evaluation (AUC of the decision at true and decoy instants).
    """
    ch = change_near(changes, times, t_s, params.gate_reach_s)
    pre, post = context_masks(times, t_s, context_s=params.context_s, guard_s=params.guard_s)
    quiet = pre if kind == "entry" else post
    if ch is None or not quiet.any() or not (post if kind == "entry" else pre).any():
        return None
    return min(ch, 1.0 - float(np.percentile(presence[quiet], params.quiet_percentile)))


def observed_entrant(ev: Any, *, t_s: float, params: EvidenceParams) -> tuple[str | None, dict[str, float]]:
    """The judged family most likely to have entered at ``t_s`` and every family's entry probability."""
    reach = params.gate_reach_s
    probs = {f: change_near(ev.entered[f], ev.times, t_s, reach) for f in sorted(ev.curves)}
    have = {f: p for f, p in probs.items() if p is not None}
    if not have:
        return None, {}
    return max(have, key=lambda f: have[f]), {f: round(p, 4) for f, p in have.items()}


# --------------------------------------------------------------------------- taggers (musicnn, CLAP)


def _tagger_masks(ev: Any, t_s: float, context_s: float) -> tuple[Mask, Mask]:
    """The window convention with half the analysis window as the guard: windows wholly before / after."""
    return context_masks(ev.times, t_s, context_s=context_s, guard_s=float(ev.window_s) / 2.0)


def _levels(curve: F64, pre: Mask, post: Mask, pct: float, *, after_statistic: str = "median") -> tuple[float, float]:
    after = curve[post]
    if after_statistic == "median":
        return float(np.percentile(curve[pre], pct)), float(np.median(after))
    if after_statistic == "max":
        return float(np.percentile(curve[pre], pct)), float(np.max(after))
    raise ParameterError(f"semantic.after_statistic_by_family: unknown statistic {after_statistic!r}; "
                         "use 'median' or 'max'")


def _family_setting(table: Mapping[str, Any] | None, family: str, default: Any) -> Any:
    """Per-family override of a gate setting (a ``semantic.*_by_family`` table), else ``default``."""
    return (table or {}).get(family, default)


def family_rise(
    ev: Any, family: str, *, candidate_s: float, semantic: SemanticParams, evidence_params: EvidenceParams
) -> tuple[GateOutcome, dict[str, Any]]:
    """Semantic family gate of an entrance: the family must rise across the candidate and have been quiet before.

    With the trained evidence this is :func:`trained_verdict` (the change head). With a
    tagger, the evidence of the windows lying wholly before the candidate (within
    ``semantic.context_s``) is summarised by its ``semantic.pre_percentile`` percentile,
    that of the windows wholly after it by their median. The gate passes when the rise in
    log-odds (:func:`logit_rise`) is at least ``semantic.min_logit_rise`` and
    ``before <= semantic.quiet_max``. ``semantic.context_s_by_family`` and
    ``semantic.after_statistic_by_family`` (``median`` | ``max``) override the context
    and the after statistic for the families they list. A disabled constant skips its
    check. Rejection-only.

    Parameters
    ----------
    ev : FamilyEvidence
        The clip's evidence (:func:`timingbench.identity.providers.family_evidence`).
    family : str
        formats §1 family of the instructed event.
    candidate_s : float
        Candidate time in seconds.
    semantic, evidence_params : SemanticParams, EvidenceParams
        The taggers' gate constants; the trained evidence's (``trained`` backend).

    Returns
    -------
    verdict : str
        ``pass`` | ``fail`` | ``exempt``.
    detail : dict
        ``backend``, ``before``, ``after`` (probabilities), ``rise`` (log-odds), rounded to
        4 decimals, and ``reason`` (``no_rise``, ``not_quiet_before``, or the exemption:
        ``not_in_vocabulary``, ``unreliable_for_generated_audio``, ``model_unavailable``,
        ``insufficient_context`` when no window lies wholly before or after the candidate).

    Raises
    ------
    ParameterError
        If ``family`` is not an instrument family or ``candidate_s`` is not finite.
    """
    _check_candidate(family, candidate_s)
    if ev.has_change_heads:
        return trained_verdict(ev, family, t_s=float(candidate_s), params=evidence_params, kind="entry")
    detail: dict[str, Any] = {"backend": ev.backend, "before": None, "after": None, "rise": None,
                              "reason": None}
    if family in ev.exempt or family not in ev.curves:
        detail["reason"] = ev.exempt.get(family, "not_in_vocabulary")
        return EXEMPT, detail
    sec = semantic
    context_s = float(_family_setting(sec.context_s_by_family, family, sec.context_s))
    pre, post = _tagger_masks(ev, float(candidate_s), context_s)
    if not pre.any() or not post.any():
        detail["reason"] = "insufficient_context"
        return EXEMPT, detail
    before, after = _levels(ev.curves[family], pre, post, sec.pre_percentile,
                            after_statistic=str(_family_setting(sec.after_statistic_by_family, family, "median")))
    rise = logit_rise(before, after, clip=sec.prob_clip)
    detail.update(before=round(before, 4), after=round(after, 4), rise=round(rise, 4))
    min_rise, quiet_max = sec.min_logit_rise, sec.quiet_max
    if min_rise is not None and rise < float(min_rise):
        detail["reason"] = "no_rise"
        return FAIL, detail
    if quiet_max is not None and before > float(quiet_max):
        detail["reason"] = "not_quiet_before"
        return FAIL, detail
    return PASS, detail


def family_fall(
    ev: Any, family: str, *, candidate_s: float, evidence_params: EvidenceParams
) -> tuple[GateOutcome, dict[str, Any]]:
    """Semantic family gate of an exit: the family must leave across the candidate.

    Only the ``trained`` backend answers this question (:func:`trained_verdict`); the
    taggers' evidence is ``exempt`` with reason ``exit_not_judged``.

    Raises
    ------
    ParameterError
        If ``family`` is not an instrument family or ``candidate_s`` is not finite.
    """
    _check_candidate(family, candidate_s)
    if not ev.has_change_heads:
        return EXEMPT, {"backend": ev.backend, "reason": "exit_not_judged"}
    return trained_verdict(ev, family, t_s=float(candidate_s), params=evidence_params, kind="exit")


def tagger_family_fall(evidence: FamilyEvidence, family: str, *, t_s: float, min_logit_fall: float | None,
                       semantic: SemanticParams) -> GateVerdict:
    """Exit identity on a tagger: the family's evidence falls in log-odds across ``t_s``.

    Before = median of the windows wholly before the candidate, after = the
    ``semantic.pre_percentile`` percentile of those wholly after (within
    ``semantic.context_s``), mirroring :func:`family_rise`. Evidence: ``before``,
    ``after``, ``fall`` and ``reason``.

    Raises
    ------
    ConfigError
        If ``min_logit_fall`` (``percussion.identity_min_logit_fall``) is switched off.
    """
    ev: dict[str, Any] = {"before": None, "after": None, "fall": None, "reason": None}
    if family in evidence.exempt or family not in evidence.curves:
        ev["reason"] = evidence.exempt.get(family, "not_in_vocabulary")
        return EXEMPT, ev
    pre, post = _tagger_masks(evidence, t_s, semantic.context_s)
    if not pre.any() or not post.any():
        ev["reason"] = "insufficient_context"
        return EXEMPT, ev
    curve = np.asarray(evidence.curves[family], dtype=np.float64)
    before = float(np.median(curve[pre]))
    after = float(np.percentile(curve[post], semantic.pre_percentile))
    fall = logit_rise(after, before, clip=semantic.prob_clip)
    ev.update(before=round(before, 4), after=round(after, 4), fall=round(fall, 4))
    if min_logit_fall is None:
        raise ConfigError("constant 'percussion.identity_min_logit_fall' is disabled; the low route needs it")
    ok = fall >= min_logit_fall
    ev["reason"] = None if ok else "no_fall"
    return (PASS if ok else FAIL), ev


def timbre_match(
    ev: Any, family: str, *, after_s: float, semantic: SemanticParams, evidence_params: EvidenceParams
) -> dict[str, Any]:
    """Does the layer that appeared at ``after_s`` sound like the requested family?

    Separate from the timing score (paper Sec. IV-F). Among the families the backend can
    judge, the one whose evidence rises most across ``after_s`` is the observed family
    (evidence_params: the highest "entered" probability within ``evidence.gate_reach_s``;
    taggers: the largest log-odds rise, with the windows and statistics of
    :func:`family_rise`, against zero evidence when nothing precedes the event); the event
    matches when it is the requested one.

    Parameters
    ----------
    ev : FamilyEvidence
        The clip's evidence.
    family : str
        Requested formats §1 family.
    after_s : float
        The event time in seconds (the detection, or the instructed time when none).
    semantic, evidence_params : SemanticParams, EvidenceParams
        The ``semantic`` section; the ``evidence`` section for the trained backend.

    Returns
    -------
    match : dict
        ``match`` (bool, or None when the family is exempt or there is no window after
        the event), ``observed_family``, ``rise`` and ``after`` of the requested family,
        ``backend`` and ``reason`` (the exemption, or None).

    Raises
    ------
    ParameterError
        If ``family`` is not an instrument family or ``after_s`` is not finite.
    """
    _check_family(family)
    if not np.isfinite(after_s):
        raise ParameterError(f"after_s must be a finite number of seconds, got {after_s!r}")
    out: dict[str, Any] = {"match": None, "observed_family": None, "rise": None, "after": None,
                           "backend": ev.backend, "reason": None}
    if family in ev.exempt or family not in ev.curves:
        out["reason"] = ev.exempt.get(family, "not_in_vocabulary")
        return out
    if ev.has_change_heads:
        observed, probs = observed_entrant(ev, t_s=float(after_s), params=evidence_params)
        if observed is None:
            out["reason"] = "insufficient_context"
            return out
        out.update(match=observed == family, observed_family=observed, entered=probs.get(family))
        return out
    pre, post = _tagger_masks(ev, float(after_s), semantic.context_s)
    if not post.any():
        out["reason"] = "insufficient_context"
        return out
    pct, clip = semantic.pre_percentile, semantic.prob_clip
    score: dict[str, float] = {}
    for fam, curve in sorted(ev.curves.items()):
        after = float(np.median(curve[post]))
        before = float(np.percentile(curve[pre], pct)) if pre.any() else 0.0
        score[fam] = logit_rise(before, after, clip=clip)
        if fam == family:
            out["after"] = round(after, 4)
    observed = max(score, key=lambda f: (score[f], f == family))
    out.update(match=observed == family, observed_family=observed, rise=round(score[family], 4))
    return out


# --------------------------------------------------------------------------- the gates of the detectors


def semantic_family(evidence: FamilyEvidence | None, family: str, *, t_s: float, params: IdentityParams) -> GateVerdict:
    """The target family's evidence must rise across the candidate (rejection-only).

    Parameters
    ----------
    evidence : FamilyEvidence or None
        Windowed family evidence of the clip; None when no backend is available.
    family : str
        formats §1 family of the target.
    t_s : float
        Candidate time in seconds.
    params : IdentityParams
        Passed to :func:`timingbench.identity.family_rise`.

    Returns
    -------
    verdict : str
        ``exempt`` (with ``reason``) when there is no evidence or the backend cannot
        judge the family.
    evidence : dict
    """
    if evidence is None:
        return EXEMPT, {"reason": "model_unavailable"}
    verdict, detail = family_rise(evidence, family, candidate_s=t_s, semantic=params.semantic,
                                  evidence_params=params.evidence_params)
    return verdict, dict(detail)


def semantic_family_exit(evidence: FamilyEvidence | None, family: str, *, t_s: float,
                         params: IdentityParams) -> GateVerdict:
    """The target family's evidence must show it leaving across the candidate (rejection-only).

    ``exempt`` when there is no evidence or the backend does not judge exits
    (see :func:`timingbench.identity.family_fall`).
    """
    if evidence is None:
        return EXEMPT, {"reason": "model_unavailable"}
    verdict, detail = family_fall(evidence, family, candidate_s=t_s, evidence_params=params.evidence_params)
    return verdict, dict(detail)

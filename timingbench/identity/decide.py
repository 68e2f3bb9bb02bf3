"""Judged families: the family's own presence finds the event, and says whether and when.

For an ``instrument_entry`` / ``instrument_exit`` of a family the evidence judges, the
family's presence (log-odds, :meth:`~timingbench.identity.evidence.FamilyEvidence.presence_logit`)
over the search window is fitted by its best two-level step
(:func:`~timingbench.identity.changepoint.best_step`: up for an entrance, down for an exit).

- :func:`measure` returns the statistics of that step, with no threshold: the change
  point, the two levels (medians of the columns before and after it), the step's size
  (signed: positive the asked way) and the seconds of columns on each side. It is memoised
  on the evidence under the window and the constants it reads.
- :func:`step_gates` is the one place that answers "verified or not": gate
  ``family_change`` (the size reaches ``presence.entry_min_step_by_family``, or
  ``exit_min_step_by_family``), ``absence_before``
  (``absence_after`` for an exit: the quiet side's level at most
  ``presence.quiet_max_by_family``) and ``family_present`` (the sounding side's level at
  least ``presence.present_min_by_family``). A table entry that is null is not checked
  (``exempt`` in the row).
- *When*: the change point is snapped to the strongest onset of the family's route within
  ``presence.snap_s`` (:data:`ROUTES`: percussive onsets for percussion, the low band's rise
  for bass, harmonic onsets otherwise); an exit to the strongest fall of the route's level.
  Where the route shows none, the change point itself is kept.

Near the clip's start (an entrance) or end (an exit) the quiet side may hold less than
``presence.min_side_s`` of columns: the step is then decided on what exists, down to
``presence.min_pre_roll_s``, and the row says how much there was (``pre_roll_s``).

:func:`presence_candidates` is what a detector calls: one candidate at most.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np
import numpy.typing as npt

from timingbench.convert import grid_hop_s
from timingbench.curves import Grid, accent, window_means
from timingbench.errors import ConfigError, ParameterError
from timingbench.identity.changepoint import Step, best_step
from timingbench.identity.window import context_masks
from timingbench.memo import memoised
from timingbench.verdicts import EXEMPT, FAIL, PASS, Candidate, EventContext, GateVerdict

if TYPE_CHECKING:
    from timingbench.features.bank import FeatureBank
    from timingbench.identity.evidence import FamilyEvidence
    from timingbench.params.presence import PresenceParams

F64 = npt.NDArray[np.float64]
#: The constants :func:`measure` reads (its memo key).
MEASURE_READS = ("min_side_s", "min_pre_roll_s", "prob_clip")
#: Where a family's event time is snapped: the bank curve of its route.
ROUTES = {"percussion": "percussive", "bass": "low"}
#: The route of every other family.
DEFAULT_ROUTE = "harmonic"


def judged_by_presence(evidence: FamilyEvidence | None, family: str) -> TypeGuard[FamilyEvidence]:
    """True when ``evidence`` judges ``family`` (a judged family its provider can see).

    The evidence's exempt table holds the registry's exempt families and those the
    provider cannot hear; ``curves`` holds the others.
    """
    return evidence is not None and family in evidence.curves and family not in evidence.exempt \
        and evidence.times.size > 0


@dataclass(frozen=True)
class PresenceMeasure:
    """What :func:`measure` found: the step and the context it was fitted on.

    Attributes
    ----------
    step : Step or None
        The best step the asked way (None: the window holds no such step).
    quiet_s : float
        Seconds of columns on the quiet side (before an entrance, after an exit); 0 without a step.
    short_context : bool
        The quiet side is shorter than ``presence.min_side_s`` (the clip's edge is near).
    """

    step: Step | None
    quiet_s: float
    short_context: bool


def measure(evidence: FamilyEvidence, family: str, *, entry: bool, lo_s: float, hi_s: float,
            params: PresenceParams) -> PresenceMeasure:
    """The best presence step of ``family`` inside ``[lo_s, hi_s]`` (module docstring; no threshold).

    Parameters
    ----------
    evidence : FamilyEvidence
        The clip's evidence; it judges ``family`` (:func:`judged_by_presence`).
    family : str
        The event's family.
    entry : bool
        An entrance (a step up) or an exit (a step down).
    lo_s, hi_s : float
        The search window in seconds.
    params : PresenceParams
        The ``presence`` section.

    Returns
    -------
    measure : PresenceMeasure
    """
    def compute(p: PresenceParams) -> PresenceMeasure:
        times, z = evidence.presence_logit(family, prob_clip=p.prob_clip)
        if times.size < 2:
            return PresenceMeasure(None, 0.0, False)
        hop = grid_hop_s(times)
        # the quiet side may be shorter where the window reaches the clip's edge on that side
        at_start = lo_s <= float(times[0]) + p.min_side_s
        at_end = hi_s >= float(times[-1]) - p.min_side_s
        need_before = p.min_pre_roll_s if entry and at_start else p.min_side_s
        need_after = p.min_pre_roll_s if not entry and at_end else p.min_side_s
        step = best_step(z, times, lo_s=lo_s, hi_s=hi_s, rising=entry, min_before_s=need_before - 0.5 * hop,
                         min_after_s=need_after - 0.5 * hop)
        if step is None:
            return PresenceMeasure(None, 0.0, False)
        quiet = step.before_s if entry else step.after_s
        return PresenceMeasure(step, quiet, quiet < p.min_side_s - 0.5 * hop)

    return memoised(evidence, "presence-step", params, MEASURE_READS, compute, family, entry,
                    round(float(lo_s), 6), round(float(hi_s), 6))


def _level_gate(level: float, bound: float | None, *, at_most: bool) -> GateVerdict:
    stats = {"level": round(level, 4), "bound": bound}
    if bound is None:
        return EXEMPT, {**stats, "reason": "not_checked"}
    ok = level <= bound if at_most else level >= bound
    return (PASS if ok else FAIL), stats


def step_gates(found: PresenceMeasure, family: str, *, entry: bool,
           params: PresenceParams, source: str = "") -> list[tuple[str, GateVerdict]]:
    """The gates of a measured step, in order: ``family_change``, ``absence_before`` (``absence_after``),
    ``family_present``.

    Parameters
    ----------
    found : PresenceMeasure
        :func:`measure`'s result; its step must not be None.
    family : str
        The event's family (its entries of the per-family tables).
    entry : bool
        An entrance or an exit.
    params : PresenceParams
        The ``presence`` section.
    source : str
        The evidence's backend: ``stems`` and ``singing`` read their own tables
        (``presence.*_by_evidence``), every other the per-family ones
        (:meth:`~timingbench.params.presence.PresenceParams.thresholds`).

    Returns
    -------
    gates : list of (str, GateVerdict)

    Raises
    ------
    ParameterError
        If ``found`` holds no step.
    """
    step = found.step
    if step is None:
        raise ParameterError("step_gates() needs a measured step; measure() found none in the window (no candidate)")
    need, quiet_max, present_min = params.thresholds(source, family, entry=entry)
    size = {"size": round(step.size, 4), "min_step": need, "before": round(step.before, 4),
            "after": round(step.after, 4), "change_point_s": round(step.time_s, 4)}
    change: GateVerdict = (EXEMPT if need is None else PASS if step.size >= need else FAIL), size
    quiet, sounding = (step.before, step.after) if entry else (step.after, step.before)
    absence = _level_gate(quiet, quiet_max, at_most=True)
    present = _level_gate(sounding, present_min, at_most=False)
    return [("family_change", change), ("absence_before" if entry else "absence_after", absence),
            ("family_present", present)]


def route_curve(bank: FeatureBank, family: str, *, entry: bool, fall_span_s: float) -> F64:
    """The bank curve an event of ``family`` is snapped to (module docstring), on the bank's grid.

    Entrances: the route's onset strength (``onset_percussive``, the low band's positive
    rise in dB per frame, ``onset_harmonic``). Exits: the fall of the route's level (dB)
    from the ``fall_span_s`` seconds (``presence.fall_span_s``) before each frame to the span
    after it, where positive.
    """
    route = ROUTES.get(family, DEFAULT_ROUTE)

    def compute() -> F64:
        if route == "low":
            level = np.asarray(bank.bands_db["low"], dtype=np.float64)
        else:
            level = np.asarray(bank.percussive_rms_db if route == "percussive" else bank.harmonic_rms_db,
                               dtype=np.float64)
        if entry:
            if route == "low":
                rise = np.zeros(level.size)
                rise[1:] = np.maximum(np.diff(level), 0.0)
                return rise
            return np.asarray(bank.onset_percussive if route == "percussive" else bank.onset_harmonic,
                              dtype=np.float64)
        k = max(bank.grid.frames(fall_span_s), 1)
        before, after = window_means(level, before=k, after=k, edges="clip")
        return np.asarray(np.maximum(np.nan_to_num(before - after, nan=0.0), 0.0), dtype=np.float64)

    return bank.memo(("presence-route", route, entry, fall_span_s), compute)


def snapped_time(curve: F64, grid: Grid, t_s: float, *, snap_s: float, lo_s: float, hi_s: float) -> float | None:
    """Time (s) of the strongest peak of ``curve`` within ``snap_s`` of ``t_s`` and inside ``[lo_s, hi_s]``.

    None when the span holds no positive peak.
    """
    a, b = max(t_s - snap_s, lo_s), min(t_s + snap_s, hi_s)
    if b < a:
        return None
    f = accent(curve, grid.frame(a), grid.frame(b) + 1, rel_height=1.0, edges="open")
    return None if f is None else float(grid.time(f))


def presence_candidates(bank: FeatureBank, ctx: EventContext, evidence: FamilyEvidence, *,
                        params: PresenceParams) -> list[Candidate]:
    """The event's candidate from the family's presence step (module docstring): one at most.

    Parameters
    ----------
    bank : FeatureBank
        The clip's feature bank (the route curves the time is snapped to).
    ctx : EventContext
        The instructed event and its search window.
    evidence : FamilyEvidence
        The clip's evidence; it judges ``ctx.family``.
    params : PresenceParams
        The ``presence`` section.

    Returns
    -------
    candidates : list of Candidate
        Empty when the window holds no step the asked way (the event is ``none``, rejected by
        ``detection``).
    """
    entry = ctx.kind == "instrument_entry"
    found = measure(evidence, ctx.family, entry=entry, lo_s=ctx.window_lo_s, hi_s=ctx.window_hi_s, params=params)
    if found.step is None:
        return []
    t_cp = found.step.time_s
    curve = route_curve(bank, ctx.family, entry=entry, fall_span_s=params.fall_span_s)
    snapped = snapped_time(curve, bank.grid, t_cp, snap_s=params.snap_s,
                           lo_s=ctx.window_lo_s, hi_s=ctx.window_hi_s)
    t = t_cp if snapped is None else snapped
    stats: dict[str, Any] = {"detector": "presence", "change_point_s": round(t_cp, 4), "snapped": snapped is not None,
                             "route": ROUTES.get(ctx.family, DEFAULT_ROUTE), "quiet_side_s": found.quiet_s}
    if found.short_context:
        stats["pre_roll_s" if entry else "post_roll_s"] = found.quiet_s
    cand = Candidate(float(min(max(t, ctx.window_lo_s), ctx.window_hi_s)), stats=stats)
    for name, verdict in step_gates(found, ctx.family, entry=entry, params=params, source=evidence.backend):
        cand.apply(name, verdict)
    return [cand]


def judging(evidence: FamilyEvidence | None, family: str) -> tuple[FamilyEvidence, ...]:
    """The evidences that decide ``family``'s events on this clip (the registry's ``judged_by``), or ()."""
    return () if evidence is None else tuple(evidence.judges.get(family, ()))


def located_by_stem(judges: tuple[FamilyEvidence, ...]) -> bool:
    """True when a judged family's events are located by its stem detector (its stem's level judges it):
    the ``stems`` evidence is among ``judges``. Otherwise the first evidence's presence finds them
    (:func:`presence_candidates`)."""
    return any(j.backend == "stems" for j in judges)


def level_step_at(evidence: FamilyEvidence, family: str, t_s: float, *, entry: bool,
                  params: PresenceParams) -> dict[str, Any]:
    """The step of ``family``'s presence across a located candidate at ``t_s`` (no threshold).

    The presence over ``[t - presence.level_span_s, t - presence.level_gap_s]`` (before) and
    ``[t + level_gap_s, t + level_span_s]`` (after), each read at the evidence's
    ``presence.level_percentile_by_evidence`` (its ``default`` entry for an evidence it does not
    name); the step is ``after - before``
    for an entrance, ``before - after`` for an exit. Where the quiet side (before an entrance,
    after an exit) holds no column (the candidate is at the clip's edge), its level is the
    presence's least value over the clip: nothing sounded beyond the clip's edge, and the row
    says so (``quiet_side: clip_floor``). A quiet side shorter than ``level_span_s`` is read on
    the columns that exist, and the row says how long it was (``pre_roll_s`` / ``post_roll_s``).

    Returns
    -------
    stats : dict
        ``before``, ``after``, ``step`` (NaN without a sounding side) and the quiet side's seconds.
    """
    def compute() -> dict[str, Any]:
        times, z = evidence.presence_logit(family, prob_clip=params.prob_clip)
        span, gap = params.level_span_s, params.level_gap_s
        pre, post = context_masks(times, t_s, context_s=span - gap, guard_s=gap)
        before, after = z[pre], z[post]
        hop = grid_hop_s(times, default=0.0)
        stats: dict[str, Any] = {}
        quiet, sounding = (before, after) if entry else (after, before)
        q = params.threshold(params.level_percentile_by_evidence, evidence.backend)
        if q is None:
            raise ConfigError(f"presence.level_percentile_by_evidence: no entry for {evidence.backend!r}, "
                              "and no default")
        floor = float(np.min(z)) if z.size else float("nan")
        quiet_level = float(np.percentile(quiet, q)) if quiet.size else floor
        sounding_level = float(np.percentile(sounding, q)) if sounding.size else float("nan")
        quiet_s = quiet.size * hop
        if not quiet.size:
            stats["quiet_side"] = "clip_floor"
        if quiet_s < span - gap - hop:
            stats["pre_roll_s" if entry else "post_roll_s"] = round(min(quiet_s, span), 4)
        b, a = (quiet_level, sounding_level) if entry else (sounding_level, quiet_level)
        step = a - b if entry else b - a
        return {"before": round(b, 4), "after": round(a, 4), "step": round(step, 4), **stats}

    return evidence.memo(("level-step", family, entry, round(float(t_s), 6), params.level_span_s,
                          params.level_gap_s, params.prob_clip,
                          tuple(sorted(dict(params.level_percentile_by_evidence or {}).items()))), compute)


def located_verdict(judges: tuple[FamilyEvidence, ...], family: str, t_s: float, *, entry: bool,
                    params: PresenceParams) -> GateVerdict:
    """Gate ``semantic_family`` of a candidate located by its stem detector: the judging evidences decide.

    Each evidence's step across the candidate (:func:`level_step_at`) must reach its least step
    and its quiet side must stay at most its quiet level (``presence.*_by_evidence``, per family);
    every evidence must pass. The gate never moves or creates a candidate.

    Parameters
    ----------
    judges : tuple of FamilyEvidence
        The evidences that decide the family on this clip (:func:`judging`), not empty.
    family : str
        The event's family.
    t_s : float
        The candidate's time (s).
    entry : bool
        An entrance or an exit.
    params : PresenceParams
        The ``presence`` section.

    Returns
    -------
    verdict : tuple of (str, dict)
        ``pass`` or ``fail``; statistics ``decided_by`` (the evidences, in order) and, per
        evidence, its step, levels, thresholds and ``pass``.

    Raises
    ------
    ParameterError
        If ``judges`` is empty.
    """
    if not judges:
        raise ParameterError("located_verdict() needs the evidences that judge the family (none given)")
    stats: dict[str, Any] = {"decided_by": [j.backend for j in judges]}
    ok = True
    for ev in judges:
        m = level_step_at(ev, family, t_s, entry=entry, params=params)
        need, quiet_max, _ = params.thresholds(ev.backend, family, entry=entry)
        quiet = m["before"] if entry else m["after"]
        passed = bool(np.isfinite(m["step"])) and (need is None or m["step"] >= need) \
            and (quiet_max is None or quiet <= quiet_max)
        stats[ev.backend] = {**m, "min_step": need, "quiet_max": quiet_max, "pass": passed}
        ok = ok and passed
    return (PASS if ok else FAIL), stats


#: What a candidate's identity can rest on (:attr:`timingbench.verdicts.Candidate.identity`).
IDENTITY_SOURCES = ("family", "stem")


def identity_verdict(evidence: FamilyEvidence | None, family: str, *, entry: bool, source: str) -> GateVerdict:
    """Gate ``semantic_family`` of a candidate whose family the evidence does not judge.

    A judged family's events never get here: :func:`presence_candidates` finds and decides
    them. Every other candidate's identity is unverified, so the gate is ``exempt``; its
    statistics say why.

    Parameters
    ----------
    evidence : FamilyEvidence or None
        The clip's family evidence; None when no backend ran.
    family : str
        The event's family.
    entry : bool
        An entrance (True) or an exit.
    source : str
        What the detector said the candidate's identity rests on (:data:`IDENTITY_SOURCES`).

    Returns
    -------
    verdict : tuple of (str, dict)
        ``exempt`` and ``reason``: ``stem_identity`` (the candidate's own stem), the
        registry's or the backend's exemption, ``not_in_vocabulary``, ``model_unavailable``,
        ``insufficient_context`` (no evidence column in the clip) or ``exit_not_judged``
        (a backend with no change heads on an exit); ``backend`` (and ``change``, or
        ``before`` / ``after`` / ``rise``, all null) when a backend ran.

    Raises
    ------
    ParameterError
        If ``source`` is not one of :data:`IDENTITY_SOURCES` or ``evidence`` judges ``family``.
    """
    if source not in IDENTITY_SOURCES:
        raise ParameterError(f"candidate identity source {source!r}; use one of {list(IDENTITY_SOURCES)}")
    if source == "stem":
        return EXEMPT, {"reason": "stem_identity"}
    if evidence is None or evidence.backend == "none":  # "none": only the judging evidences ride on it
        return EXEMPT, {"reason": "model_unavailable"}
    if judged_by_presence(evidence, family):
        raise ParameterError(f"family {family!r} is judged by its presence; its events are decided there")
    unseen = family in evidence.exempt or family not in evidence.curves
    reason = evidence.exempt.get(family, "not_in_vocabulary") if unseen else "insufficient_context"
    if evidence.has_change_heads:
        return EXEMPT, {"backend": evidence.backend, "change": None, "reason": reason}
    if not entry:
        return EXEMPT, {"backend": evidence.backend, "reason": "exit_not_judged"}
    return EXEMPT, {"backend": evidence.backend, "before": None, "after": None, "rise": None, "reason": reason}

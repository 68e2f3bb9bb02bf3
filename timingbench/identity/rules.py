"""Identity measures of the alternative evidence: change heads, tagger rises, the timbre match.

The scorer decides judged families in :mod:`timingbench.identity.decide`; this module
holds what the offline evaluations (:mod:`timingbench.calibration.evidence_auc`,
:mod:`timingbench.identity.training.evaluate`) and the timbre match read.

**One window convention.** For an instant ``t`` the *before* side holds the evidence
frames with times in ``[t - guard - context, t - guard]`` and the *after* side those in
``[t + guard, t + guard + context]`` (cut at the clip's edges). The network's change
heads use ``evidence.guard_s`` and ``evidence.context_s``; the taggers use half their
analysis window as the guard (only windows lying wholly before or after ``t`` count) and
``semantic.context_s``.

- :func:`trained_verdict` — the change head's highest "entered" ("left") probability
  within ``evidence.gate_reach_s``; :func:`gate_score` and :func:`observed_entrant` read
  the same heads;
- :func:`family_rise` — the paper's log-odds rise of a tagger's family evidence, with a
  quiet bound before;
- :func:`timbre_match` — which family's evidence rose most at an event (paper Sec. IV-F),
  separate from the timing score.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from timingbench.errors import ParameterError
from timingbench.families import FAMILY_NAMES
from timingbench.identity.window import context_masks, logit_rise
from timingbench.verdicts import (
    EXEMPT,
    FAIL,
    PASS,
    GateOutcome,
)

if TYPE_CHECKING:
    from timingbench.params.analysis import EvidenceParams, SemanticParams

F64 = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]


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


def array_side_levels(presence: F64, times: F64, t_s: float, *, context_s: float, guard_s: float,
                      pct: float, quiet_side: str) -> tuple[float | None, float | None]:
    """Raw presence before and after ``t_s`` (no summary span): the ``pct`` percentile on ``quiet_side``, the median
    on the other.

    For evaluations on arrays of network outputs.
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

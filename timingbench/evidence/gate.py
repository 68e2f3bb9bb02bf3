"""Gate decisions from the trained family evidence: did family X come in (go out) here?

For a candidate at ``t`` seconds and a family X the evidence judges:

- ``change``: the highest probability the change head gives "X entered" (or "X left")
  over the output frames within ``evidence.gate_reach_s`` of ``t``;
- ``before`` / ``after``: the presence of X over the ``evidence.context_s`` before and
  after ``t`` (``evidence.guard_s`` left out), as a high percentile
  (``evidence.quiet_percentile``) on the side where X must be absent and the median on
  the side where it must sound.

An entrance passes when ``change >= evidence.entry_min_prob`` and
``before <= evidence.quiet_max``; an exit when ``change >= evidence.exit_min_prob`` and
``after <= evidence.quiet_max``. A disabled constant skips its check. Like every semantic
gate it only vetoes: it never moves or creates a detection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from timingbench.params.analysis import EvidenceParams
from timingbench.params.base import params_of
from timingbench.verdicts import EXEMPT, FAIL, PASS, GateOutcome

if TYPE_CHECKING:
    from timingbench.config import Config

F64 = npt.NDArray[np.float64]


def side_levels(presence: F64, times: F64, t_s: float, *, context_s: float, guard_s: float,
                pct: float, quiet_side: str) -> tuple[float | None, float | None]:
    """Presence before and after ``t_s``: the ``pct`` percentile on ``quiet_side``, the median on the other."""
    pre = (times >= t_s - guard_s - context_s) & (times < t_s - guard_s)
    post = (times > t_s + guard_s) & (times <= t_s + guard_s + context_s)
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


def gate_statistics(presence: F64, changes: F64, times: F64, t_s: float, *, params: EvidenceParams,
                    kind: str) -> tuple[float | None, float | None, float | None]:
    """What the gate reads at ``t_s``: ``(change, before, after)`` (module docstring; None when absent).

    ``changes`` is the "entered" curve for ``kind='entry'``, the "left" curve for exits.
    """
    ch = change_near(changes, times, t_s, params.gate_reach_s)
    b, a = side_levels(presence, times, t_s, context_s=params.context_s, guard_s=params.guard_s,
                       pct=params.quiet_percentile, quiet_side="before" if kind == "entry" else "after")
    return ch, b, a


def gate_score(presence: F64, changes: F64, times: F64, t_s: float, *, config: Config, kind: str) -> float | None:
    """One number for the gate's decision: ``min(change, 1 - presence on the quiet side)`` (None without context).

    Reads ``config.params.evidence`` (callers outside the scoring core pass the configuration).
    """
    ch, b, a = gate_statistics(presence, changes, times, t_s, params=_evidence_params(config), kind=kind)
    if ch is None or b is None or a is None:
        return None
    return min(ch, 1.0 - (b if kind == "entry" else a))


def _evidence_params(config: Config) -> EvidenceParams:
    return params_of(config, EvidenceParams)


def trained_verdict(ev: Any, family: str, *, t_s: float, params: EvidenceParams,
                    kind: str) -> tuple[GateOutcome, dict[str, Any]]:
    """The trained evidence's verdict on ``family`` entering (``kind='entry'``) or leaving at ``t_s``.

    Returns
    -------
    verdict : str
        ``pass`` | ``fail`` | ``exempt`` (family not judged, or no context).
    detail : dict
        ``backend``, ``change`` (probability), ``before`` and ``after`` (presence),
        ``reason`` (``no_change``, ``not_quiet_before``, ``not_quiet_after``, or the exemption).
    """
    detail: dict[str, Any] = {"backend": ev.backend, "change": None, "before": None, "after": None,
                              "reason": None}
    if family in ev.exempt or family not in ev.curves:
        detail["reason"] = ev.exempt.get(family, "not_in_vocabulary")
        return EXEMPT, detail
    changes = ev.entered if kind == "entry" else ev.left

    def stats() -> tuple[float | None, float | None, float | None]:
        return gate_statistics(ev.curves[family], changes[family], ev.times, t_s, params=params, kind=kind)

    memo = getattr(ev, "memo", None)
    ch, b, a = stats() if memo is None else memo(
        ("gate-statistics", family, kind, t_s, params.gate_reach_s, params.context_s, params.guard_s,
         params.quiet_percentile), stats)
    if ch is None or b is None or a is None:
        detail["reason"] = "insufficient_context"
        return EXEMPT, detail
    detail.update(change=round(ch, 4), before=round(b, 4), after=round(a, 4))
    need = params.entry_min_prob if kind == "entry" else params.exit_min_prob
    if need is not None and ch < need:
        detail["reason"] = "no_change"
        return FAIL, detail
    quiet = b if kind == "entry" else a
    if params.quiet_max is not None and quiet > params.quiet_max:
        detail["reason"] = "not_quiet_before" if kind == "entry" else "not_quiet_after"
        return FAIL, detail
    return PASS, detail


def observed_entrant(ev: Any, *, t_s: float, params: EvidenceParams) -> tuple[str | None, dict[str, float]]:
    """The judged family most likely to have entered at ``t_s`` and every family's entry probability."""
    reach = params.gate_reach_s
    probs = {f: change_near(ev.entered[f], ev.times, t_s, reach) for f in sorted(ev.curves)}
    have = {f: p for f, p in probs.items() if p is not None}
    if not have:
        return None, {}
    return max(have, key=lambda f: have[f]), {f: round(p, 4) for f, p in have.items()}

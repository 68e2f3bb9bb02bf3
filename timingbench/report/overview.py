"""The numbers of a report's overview, per-family and per-kind sections.

Every headline number is read from ``summary.json`` as it is (the report never recomputes
what the scorer wrote) and shown with the key it came from. Beside it stands the
bootstrap interval of the same metric as ``timingbench compare`` computes it
(:func:`timingbench.compare.system_estimates`: macro over prompts, samples of a prompt
pooled first), which is why an interval's centre may differ from the micro-averaged
summary rate it accompanies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from timingbench.compare.core import family_floors
from timingbench.compare.stats import Estimate
from timingbench.report.run import Run, exempt_families, margin_floors

#: (summary key path, label, compare metric key) of the headline numbers. The first card, the
#: primary one, is the on-time rate over identity-verified events (judged families and
#: whole-mix events); the all-events rates follow, labelled as timing only for exempt
#: families. The tempo cards are left out when no clip has a tempo target.
HEADLINE = (
    ("rates_identity_verified.on_time_rate", "on time, identity verified", "on_time_rate_judged"),
    ("rates.on_time_rate", "on time, all events (timing only for exempt families)", "on_time_rate"),
    ("rates_identity_verified.off_time_rate", "off time, identity verified", "off_time_rate_judged"),
    ("rates_identity_verified.none_rate", "none, identity verified", "none_rate_judged"),
    ("rates.off_time_rate", "off time, all events", "off_time_rate"),
    ("rates.none_rate", "none, all events", "none_rate"),
    ("p_chance_discounted_on_time_rate_identity_verified", "on time, identity verified, p_chance-discounted",
     "on_time_rate_discounted_judged"),
    ("p_chance_discounted_on_time_rate", "on time, all events, p_chance-discounted", "on_time_rate_discounted"),
    ("tempo.accuracy_3pct", "tempo within ±3 %", "tempo_within_3pct"),
    ("tempo.octave_equivalent_accuracy", "tempo, octave-equivalent", "tempo_octave_equivalent"),
    ("duration_compliance", "duration compliance", "duration_ok_rate"),
    ("timbre_match_rate", "timbre match", "timbre_match_rate"),
)


def lookup(summary: dict[str, Any], key: str) -> Any:
    """The value at a dotted key path of ``summary.json`` (None where a step is absent)."""
    cur: Any = summary
    for part in key.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def interval(e: Estimate | None) -> dict[str, Any] | None:
    """An estimate as JSON-ready numbers (None when it has no finite value)."""
    if e is None or not math.isfinite(e.value):
        return None
    fin = math.isfinite(e.lo) and math.isfinite(e.hi)
    return {"value": e.value, "lo": e.lo if fin else None, "hi": e.hi if fin else None,
            "n_prompts": e.n_prompts, "n_items": e.n_items}


@dataclass(frozen=True)
class Headline:
    """One headline number: ``summary.json``'s value and the matching bootstrap interval."""

    key: str
    label: str
    value: float | None
    ci: dict[str, Any] | None


@dataclass(frozen=True)
class Group:
    """The outcomes of one event family or kind.

    Attributes
    ----------
    name : str
    scope : str
        ``family`` or ``kind``.
    counts : dict
        ``summary.json``'s entry (``n``, rates and counts per outcome).
    on_time_ci : dict or None
        Bootstrap interval of the on-time rate.
    credited_errors_s : list of float
        Signed errors (detected - instructed) of the on-time events.
    off_errors_s : list of float
        Signed errors of the off-time events.
    tolerance_s : float or None
        The median tolerance of the group's events.
    floor_s : float or None
        The family's measurement floor (median ``floor_s`` of its rows; None for a kind).
    exempt : str or None
        Why the family's identity is not verified (None when it is judged).
    """

    name: str
    scope: str
    counts: dict[str, Any]
    on_time_ci: dict[str, Any] | None
    credited_errors_s: list[float]
    off_errors_s: list[float]
    tolerance_s: float | None
    floor_s: float | None
    exempt: str | None = None


@dataclass(frozen=True)
class Overview:
    """Everything the report's first screen shows."""

    headline: list[Headline]
    ladder: list[Headline]
    families: list[Group]
    kinds: list[Group]
    unresolved: list[str]
    provenance: list[tuple[str, str]]
    disclosures: dict[str, list[str]] = field(default_factory=dict)


def _group(run: Run, scope: str, name: str, counts: dict[str, Any], est: dict[str, Estimate],
           floors: dict[str, float], exempt: dict[str, str]) -> Group:
    rows = [r for r in run.checked.events if r[scope] == name]
    tol = [float(r["tolerance_s"]) for r in rows]
    return Group(
        name=name, scope=scope, counts=counts, on_time_ci=interval(est.get(f"on_time_rate|{scope}={name}")),
        credited_errors_s=[float(r["error_s"]) for r in rows if r["outcome"] == "on_time"],
        off_errors_s=[float(r["error_s"]) for r in rows if r["outcome"] == "off_time"],
        tolerance_s=float(np.median(tol)) if tol else None,
        floor_s=floors.get(name) if scope == "family" else None,
        exempt=exempt.get(name) if scope == "family" and name != "mix" else None,
    )


def unresolved_notes(run: Run, est: dict[str, Estimate], *, min_prompts: int) -> list[str]:
    """What the run's numbers cannot resolve, one sentence each.

    Parameters
    ----------
    run : Run
    est : dict of str to Estimate
        The run's bootstrap estimates.
    min_prompts : int
        ``compare.min_prompts``: fewer prompts than this give no resolved difference.
    """
    s = run.summary
    notes = []
    near = [r for r in run.checked.events if (m := margin_floors(r)) is not None and abs(m) < 1.0]
    if near:
        fams = sorted({r["family"] for r in near})
        notes.append(f"{len(near)} detected events lie within one measurement floor of their tolerance edge "
                     f"(families {', '.join(fams)}): the apparatus's own error could flip their verdict; "
                     "they come first in the clip table's 'closest calls' order.")
    small = [k.split("=", 1)[1] for k, e in est.items() if k.startswith("on_time_rate|family=")
             and e.n_prompts < min_prompts]
    if small:
        notes.append(f"Families with fewer than {min_prompts} prompts ({', '.join(sorted(small))}): a "
                     "difference from another system on them is never resolved (compare.min_prompts).")
    present = {r["family"] for r in run.checked.events}
    ex = {f: why for f, why in exempt_families(s).items() if f in present}
    if ex:
        notes.append(f"Identity not verified for {', '.join(sorted(ex))}: these events are timed, but the family "
                     "evidence cannot say whether the named instrument made the change.")
    c = s.get("counts") or {}
    if c.get("errors"):
        ex = s.get("rates_excluding_errors") or {}
        rate = ex.get("on_time_rate")
        notes.append(f"{c['errors']} clips could not be scored: their {c.get('error_events', '?')} events count as "
                     "none in every rate above (failing never raises a rate); without them the on-time rate over "
                     f"{ex.get('n', '?')} events is " + ("-" if rate is None else f"{100 * rate:.1f} %") + ".")
    if s.get("p_chance_discounted_on_time_rate") is None:
        notes.append("Chance credit was not computed (scored with --no-chance): p_chance is null and the "
                     "p_chance-discounted rate is not available, so on-time credits that busy music would "
                     "earn by luck are not taken off.")
    return notes


def _names(v: Any) -> list[str]:
    if not isinstance(v, list):
        return []
    out = []
    for item in v:
        if isinstance(item, dict):
            out.append(f"{item.get('clip', item.get('prompt_id', '?'))}: {item.get('error', '')}".rstrip(": "))
        else:
            out.append(str(item))
    return out


def provenance(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, text) pairs: configuration, package, backends, chance credit, counts."""
    cfg = summary.get("config") or {}
    sep = summary.get("separation") or {}
    fe = summary.get("family_evidence") or {}
    ch = summary.get("chance_credit") or {}
    c = summary.get("counts") or {}
    used = ", ".join(f"{k} ({v} clips)" for k, v in (sep.get("used") or {}).items()) or "-"
    fe_used = ", ".join(f"{k} ({v} clips)" for k, v in (fe.get("used") or {}).items()) or "-"
    rows = [
        ("configuration", f"{cfg.get('version', '-')} (hash {cfg.get('hash', '-')})"),
        ("timingbench", str(summary.get("timingbench_version", "-"))),
        ("prompts", f"{(summary.get('prompts') or {}).get('path', '-')} "
                    f"(hash {(summary.get('prompts') or {}).get('hash', '-')})"),
        ("separation", f"requested {sep.get('requested', '-')}, used {used}"),
        ("family evidence", f"requested {fe.get('requested', '-')}, used {fe_used}"),
        ("chance credit", ("on" if ch.get("enabled") else "off") + f", {ch.get('draws', '-')} draws"),
        ("disabled gates", ", ".join(summary.get("disabled_gates") or []) or "none"),
        ("counts", f"{c.get('clips', '-')} clips ({c.get('scored_clips', '-')} scored, {c.get('errors', '-')} "
                   f"errors), {c.get('events', '-')} events, {c.get('unmatched', '-')} unmatched files, "
                   f"{c.get('missing', '-')} prompts without audio"),
    ]
    rows += [("separation note", str(n)) for n in sep.get("notes") or []]
    return rows


def build_overview(run: Run, est: dict[str, Estimate], *, min_prompts: int) -> Overview:
    """The overview of one run.

    Parameters
    ----------
    run : Run
    est : dict of str to Estimate
        The run's bootstrap estimates (:func:`timingbench.compare.system_estimates`).
    min_prompts : int
        ``compare.min_prompts``.

    Returns
    -------
    overview : Overview
    """
    s = run.summary
    tempo = bool(lookup(s, "tempo.n"))  # no clip with a tempo target: no tempo card at all
    head = [Headline(k, label, lookup(s, k), interval(est.get(m))) for k, label, m in HEADLINE
            if tempo or not k.startswith("tempo.")]
    ladder = [Headline(f"tempo.ladder.{k}", f"tempo within ±{k} %", lookup(s, f"tempo.ladder.{k}"),
                       interval(est.get(f"tempo_within_{k}pct")))
              for k in (lookup(s, "tempo.ladder") or {})] if tempo else []
    floors = family_floors([run.checked])
    exempt = exempt_families(s)
    fams = [_group(run, "family", f, v, est, floors, exempt) for f, v in (s.get("by_family") or {}).items()]
    kinds = [_group(run, "kind", k, v, est, floors, exempt) for k, v in (s.get("by_kind") or {}).items()]
    disclosures = {
        "missing (prompts with no audio)": _names(s.get("missing")),
        "unmatched files": _names(s.get("unmatched")),
        "clips that could not be scored": _names(s.get("errors")),
        "rejected prompt rows": _names((s.get("prompts") or {}).get("rejected")),
        "exempt families": [f"{k}: {v}" for k, v in exempt.items()],
    }
    return Overview(head, ladder, fams, kinds, unresolved_notes(run, est, min_prompts=min_prompts),
                    provenance(s), disclosures)

"""``summary.json`` and the stdout table of a scoring run (formats §3)."""

from __future__ import annotations

import math
import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from timingbench.audio import file_hash
from timingbench.config import Config
from timingbench.controls.report import format_controls, summarise_controls
from timingbench.identity.singing import summary_of as vocals_presence_summary
from timingbench.judged import identity_judged
from timingbench.version import __version__

#: Version of the results format (formats §3). 2: ``events.jsonl`` rows carry ``evidence``
#: (gate name -> the statistics that gate thresholded); additive, version 1 readers ignore it.
#: 3: that object is named ``gate_stats``; ``clips.jsonl`` rows carry ``controls``
#: (time-varying control adherence, null without controls) and ``summary.json`` a
#: ``controls`` object (docs/controls.md); the row of a clip that could not be scored has
#: every key of a scored clip's row. 4: a clip that could not be scored has one ``events.jsonl``
#: row per instructed event (outcome ``none``, ``error`` the reason), every event row
#: carries ``error`` (null, or why its clip could not be scored) and ``identity_verified``;
#: ``summary.json`` gives the identity-verified rates first (``rates_identity_verified``),
#: the rates excluding errors, and absolute paths (``clips_dir``, ``prompts.path``) plus
#: ``clips_dir_relative`` (the clips folder relative to the results folder). 5: every event row
#: carries ``evidence`` (what decided it: a list of ``source`` / ``model`` / ``licence``; the
#: stem's level, the singing presence, a family-evidence backend, or ``signal``), its
#: ``semantic_family`` gate is a pass/fail decision for the families the registry's
#: ``judged_by`` judges, and ``summary.json``'s ``family_evidence`` names the evidence each
#: judged family was decided on and the licence of every model whose output a verdict used
#: (``judged_by``, ``licences``).
RESULTS_FORMAT = 5

OUTCOMES = ("on_time", "off_time", "none")

#: The family of whole-mix events: they concern the mix, not an instrument, so there is no
#: identity to verify and they always count among the identity-verified events.
MIX_FAMILY = "mix"

#: What each headline rate is computed over, as the summary and the table name it.
DENOMINATORS = {
    "identity_verified": "events of judged families and whole-mix events (identity verified)",
    "all_events": "events of every family (timing only for exempt families)",
    "excluding_errors": "events of the clips that could be scored (clips with an error left out)",
}


def _rate(n: int, d: int) -> float | None:
    return None if d == 0 else round(n / d, 4)


def outcome_rates(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """On-time / off-time / none rates and counts of a set of event rows."""
    c = Counter(r["outcome"] for r in rows)
    n = sum(c.values())
    return {"n": n, **{f"{o}_rate": _rate(c[o], n) for o in OUTCOMES}, **{o: c[o] for o in OUTCOMES}}


def discounted_on_time(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The p_chance-discounted on-time rate over exactly the rows of the raw rate beside it.

    Every on-time row is credited ``1 - p_chance`` (a row without a chance estimate keeps
    its full credit), every other row 0, and the sum is divided by the number of rows, so
    the rate is never above the raw on-time rate of the same rows and has the same ``n``.

    Parameters
    ----------
    rows : sequence of dict
        ``events.jsonl`` rows (``outcome`` and ``p_chance`` read).

    Returns
    -------
    rate : dict
        ``n`` (rows) and ``on_time_rate`` (None without rows).
    """
    credit = [(1.0 if r.get("p_chance") is None else 1.0 - float(r["p_chance"])) if r["outcome"] == "on_time"
              else 0.0 for r in rows]
    return {"n": len(rows), "on_time_rate": round(sum(credit) / len(rows), 4) if rows else None}


def chance_standard_error(rows: Sequence[Mapping[str, Any]], *, draws: int | None,
                          weights: Sequence[float] | None = None) -> float | None:
    """Standard error of a p_chance-discounted on-time rate that comes from the chance draws alone.

    An on-time row's credit ``1 - p_chance`` is estimated from ``draws`` re-scorings; as a
    binomial proportion its variance is ``p (1 - p) / draws`` (an upper bound for the
    stratified draws of :func:`timingbench.scoring.chance_times`; 0 when every draw agreed).
    Other rows add nothing: their credit is exact.

    Parameters
    ----------
    rows : sequence of dict
        ``events.jsonl`` rows (``outcome`` and ``p_chance`` read).
    draws : int or None
        Chance draws per event (``chance.draws`` of the run); None when not known.
    weights : sequence of float, optional
        Each row's weight in the rate (default ``1 / len(rows)``, the plain rate).

    Returns
    -------
    se : float or None
        In rate units (a fraction), rounded to 6 decimals; None without rows or draws.
    """
    if not rows or not draws:
        return None
    w = [1.0 / len(rows)] * len(rows) if weights is None else list(weights)
    var = sum(wi * wi * float(r["p_chance"]) * (1.0 - float(r["p_chance"])) / draws
              for r, wi in zip(rows, w, strict=True) if r["outcome"] == "on_time" and r.get("p_chance") is not None)
    return round(math.sqrt(var), 6)


def carries_timbre(kind: str, family: str, backend: str | None) -> bool:
    """Whether the scorer gives an event a timbre verdict under the family-evidence ``backend``.

    Tonal-layer entrances do (stem-family entrances too with a backend of change curves);
    without family evidence (``none``) no event is judged.
    """
    from timingbench.choices import CHANGE_BACKENDS
    from timingbench.families import STEM_FAMILIES, TONAL_FAMILIES

    if backend in (None, "none") or kind != "instrument_entry":
        return False
    return family in TONAL_FAMILIES or (family in STEM_FAMILIES and backend in CHANGE_BACKENDS)


def undelivered_timbre(events: Iterable[Mapping[str, Any]], clips: Iterable[Mapping[str, Any]], *,
                       backend: str | None) -> list[Mapping[str, Any]]:
    """The event rows whose timbre match is failed because their clip delivered nothing.

    A clip that could not be scored, or is silent, has no ``timbre_match``; each of its
    events that would carry a verdict (:func:`carries_timbre`) counts as no match, so
    failing never raises the timbre-match rate.

    Parameters
    ----------
    events : iterable of dict
        ``events.jsonl`` rows.
    clips : iterable of dict
        ``clips.jsonl`` rows (``error``, ``silent`` and ``timbre_match`` read).
    backend : str or None
        The family-evidence backend the run asked for.

    Returns
    -------
    rows : list of dict
        The event rows, in order.
    """
    failed = {c.get("clip") for c in clips
              if (c.get("error") is not None or c.get("silent")) and not c.get("timbre_match")}
    return [r for r in events if r.get("clip") in failed and carries_timbre(r["kind"], r["family"], backend)]


def identity_exempt_families(config: Config, backend: str | None) -> dict[str, str]:
    """Families whose identity the family evidence does not verify -> why.

    The one place that decides which families are *judged* (their events count among the
    identity-verified ones) and which are *exempt* (scored on timing alone). Whole-mix
    events are never exempt (:data:`MIX_FAMILY`).

    Parameters
    ----------
    config : Config
        Reads the family registry's exempt families (``families.table``).
    backend : str or None
        The family-evidence backend requested (``none``: no family is judged).

    Returns
    -------
    exempt : dict of str to str
        Family -> reason.
    """
    from timingbench.prompts import EVENT_FAMILIES

    if backend == "none":
        return {f: "family_evidence_off" for f in EVENT_FAMILIES if f != MIX_FAMILY}
    from timingbench.families import registry

    return {str(k): str(v) for k, v in dict(registry(config).exempt).items()}


def is_identity_verified(family: str, exempt: Mapping[str, str]) -> bool:
    """True when an event of ``family`` counts among the identity-verified events."""
    return family == MIX_FAMILY or family not in exempt


def row_identity_verified(row: Mapping[str, Any], summary: Mapping[str, Any] | None) -> bool:
    """Whether an ``events.jsonl`` row counts among the identity-verified events.

    The row's own ``identity_verified`` when the scorer wrote it, else read from the
    summary's ``family_evidence.exempt_families`` (folders of older scorers).
    """
    if isinstance(row.get("identity_verified"), bool):
        return bool(row["identity_verified"])
    fe = (summary or {}).get("family_evidence")
    exempt = fe.get("exempt_families") if isinstance(fe, dict) else None
    return is_identity_verified(str(row.get("family")), exempt if isinstance(exempt, dict) else {})


def build_summary(
    events: list[dict[str, Any]], clips: list[dict[str, Any]], *, config: Config, opts: Any,
    unmatched: list[str], missing: list[str], prompt_errors: list[str],
    parts: list[dict[str, Any]], prompts_path: str, clips_dir: str | None = None,
    out_dir: str | Path | None = None, subfolders: Sequence[str] = (),
) -> dict[str, Any]:
    """Headline rates, counts and provenance of a scoring run.

    The headline is the identity-verified rate (:data:`DENOMINATORS`): events of judged
    families plus whole-mix events; the all-events rate stands beside it. Every submitted
    clip counts: the events of a clip that could not be scored are rows with outcome
    ``none`` and an ``error`` reason, and the rates excluding those clips are given
    apart. ``p_chance_discounted_on_time_rate`` weights every on-time credit by
    ``1 - p_chance`` over the same rows as the raw rate beside it; its ``_chance_se``
    companion is the spread the chance draws alone give it (:func:`chance_standard_error`).
    ``ignored_subfolders`` names the subfolders of the clips folder that hold audio (not
    scored).

    ``clips_dir`` and ``prompts_path`` are stored absolute, and ``clips_dir_relative`` is
    the clips folder relative to ``out_dir`` (the results folder), so ``timingbench explain``
    and ``report`` find a clip's audio from any working directory and after the two folders
    move together.
    """
    exempt = identity_exempt_families(config, getattr(opts, "family_evidence", None))
    for p in parts:
        exempt.update((p.get("family_evidence") or {}).get("exempt") or {})
    exempt.pop(MIX_FAMILY, None)
    by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_family: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in events:
        by_kind[r["kind"]].append(r)
        by_family[r["family"]].append(r)
    ctx = {"family_evidence": {"exempt_families": exempt}}
    verified = [r for r in events if row_identity_verified(r, ctx)]
    scored = [c for c in clips if c.get("error") is None]
    no_errors = [r for r in events if r.get("error") is None]
    chance = bool(getattr(opts, "chance", False))
    tempo_rows = [c["tempo"] for c in clips if c.get("tempo")]
    steady_rows = [t for t in tempo_rows if (t.get("beat_stability") or {}).get("steady")]
    ladder: dict[str, float | None] = {}
    for pct in config.params.tempo.ladder_pct:
        k = f"{float(pct):g}"
        ladder[k] = _rate(sum(bool((t.get("within_pct") or {}).get(k)) for t in tempo_rows), len(tempo_rows))
    timbre = [t for c in clips for t in (c.get("timbre_match") or []) if t.get("match") is not None]
    backend = getattr(opts, "family_evidence", None)
    timbre += [{"match": False} for _ in undelivered_timbre(events, clips, backend=backend)]
    draws = config.params.chance.draws
    seps = Counter(c.get("separation") for c in scored if c.get("separation"))
    notes = sorted({n for p in parts for n in p.get("notes", [])})
    ev_backends = Counter(c.get("family_evidence") for c in scored if c.get("family_evidence"))
    unverified: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in events:
        if not row_identity_verified(r, ctx):
            unverified[r["family"]].append(r)
    abs_clips = None if clips_dir is None else str(Path(clips_dir).resolve())
    rel_clips = rel_prompts = None
    if out_dir is not None:
        here = Path(out_dir).resolve()
        rel_clips = None if abs_clips is None else os.path.relpath(abs_clips, here)
        rel_prompts = os.path.relpath(_absolute(prompts_path), here) if prompts_path else None

    def headline(rows: list[dict[str, Any]], which: str) -> dict[str, Any]:
        return {**outcome_rates(rows), "denominator": DENOMINATORS[which]}

    judged_by = _judged_by(parts)
    return {
        "timingbench_version": __version__,
        "results_format": RESULTS_FORMAT,
        "config": {"version": config.version, "hash": config.content_hash, "source": config.source},
        "prompts": {"path": _absolute(prompts_path), "path_relative": rel_prompts, "hash": _file_hash(prompts_path),
                    "rejected": prompt_errors},
        "clips_dir": abs_clips,
        "clips_dir_relative": rel_clips,
        "counts": {"clips": len(clips), "scored_clips": len(scored), "events": len(events),
                   "events_identity_verified": len(verified),
                   "error_events": len(events) - len(no_errors),
                   "unmatched": len(unmatched), "missing": len(missing), "errors": len(clips) - len(scored)},
        # the headline: events whose instrument the family evidence checks, plus whole-mix events
        "rates_identity_verified": headline(verified, "identity_verified"),
        "rates": headline(events, "all_events"),
        "rates_excluding_errors": headline(no_errors, "excluding_errors"),
        "by_kind": {k: outcome_rates(v) for k, v in sorted(by_kind.items())},
        "by_family": {k: outcome_rates(v) for k, v in sorted(by_family.items())},
        # families the family evidence could not judge: scored on timing alone
        "identity_not_verified": {k: outcome_rates(v) for k, v in sorted(unverified.items())},
        # without chance re-scoring there is nothing to discount by: null, not the plain rate
        "p_chance_discounted_on_time_rate": discounted_on_time(events)["on_time_rate"] if chance else None,
        "p_chance_discounted_on_time_rate_identity_verified": (
            discounted_on_time(verified)["on_time_rate"] if chance else None),
        # the discounted rates' own spread from the chance draws (binomial standard error, a fraction)
        "p_chance_discounted_on_time_rate_chance_se": chance_standard_error(events, draws=draws) if chance else None,
        "p_chance_discounted_on_time_rate_identity_verified_chance_se": (
            chance_standard_error(verified, draws=draws) if chance else None),
        "tempo": {
            "n": len(tempo_rows),
            "accuracy_3pct": _rate(sum(bool(t.get("credited")) for t in tempo_rows), len(tempo_rows)),
            # beside the headline: the same criterion over clips whose beat stream is steady
            "n_steady": len(steady_rows),
            "accuracy_3pct_steady": _rate(sum(bool(t.get("credited")) for t in steady_rows),
                                          len(steady_rows)),
            "ladder": ladder,
            "octave_equivalent_accuracy": _rate(
                sum(t.get("octave_equivalent") is not None for t in tempo_rows), len(tempo_rows)),
            "no_estimate": sum(t.get("estimate_bpm") is None for t in tempo_rows),
        },
        # every submitted clip: a clip that could not be scored did not deliver its duration
        "duration_compliance": _rate(sum(bool(c["duration_ok"]) for c in clips), len(clips)),
        "duration_compliance_excluding_errors": _rate(sum(bool(c["duration_ok"]) for c in scored), len(scored)),
        "timbre_match_rate": _rate(sum(bool(t["match"]) for t in timbre), len(timbre)),
        "unmatched": unmatched,
        # subfolders of the clips folder that hold audio: not searched, nothing in them scored
        "ignored_subfolders": list(subfolders),
        "missing": missing,
        "errors": [{"clip": c["clip"], "error": c["error"]} for c in clips if c.get("error")],
        "separation": {"requested": opts.separation, "used": dict(seps), "notes": notes,
                       # which demucs weights ran (clips per source) and the licence of each
                       "sources": _separation_sources(parts)},
        "family_evidence": {"requested": opts.family_evidence, "used": dict(ev_backends),
                            "exempt_families": dict(sorted(exempt.items())),
                            "judged_families": sorted({r["family"] for r in verified}),
                            **judged_by},
        # the singing detector's vocals presence: computed for clips with a vocals event (judges where judged_by says)
        "vocals_presence": vocals_presence_summary(parts),
        # who the identity-verified headline judged, in words, and what their published figures warn of
        "identity_judged": identity_judged(config, exempt, by_evidence=sorted(judged_by["judged_by"])),
        "chance_credit": {"enabled": chance, "draws": draws, "seeded_by": "audio content and event id"},
        "disabled_gates": list(opts.disabled_gates),
        "controls": summarise_controls(clips, config=config),
    }


def _judged_by(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """``judged_by`` (family -> the evidences that decided it -> clips) and ``licences`` (the licence of
    every model whose output decided a verdict -> clips) of the scored clips."""
    judged: dict[str, Counter[str]] = defaultdict(Counter)
    licences: Counter[str] = Counter()
    for p in parts:
        for fam, evs in ((p.get("family_evidence") or {}).get("judged_by") or {}).items():
            judged[fam][" + ".join(f"{e['source']} ({e['model']})" for e in evs)] += 1
            licences.update({e["licence"] for e in evs if e.get("licence")})
    return {"judged_by": {f: dict(sorted(c.items())) for f, c in sorted(judged.items())},
            "licences": dict(sorted(licences.items()))}


def _separation_sources(parts: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``{source: {"clips": n, "licence": ...}}`` of the demucs weights the scored clips ran with."""
    from timingbench.features.separation import source_licence

    counts = Counter(str(p["separation_source"]) for p in parts if p.get("separation_source"))
    return {s: {"clips": n, "licence": source_licence(s)} for s, n in sorted(counts.items())}


def _absolute(path: str) -> str:
    return str(Path(path).resolve()) if path else path


def _file_hash(path: str) -> str | None:
    return file_hash(path) if Path(path).is_file() else None


def _backends_used(used: dict[str, int]) -> str:
    """``dsp (12 clips)``, ``demucs (10 clips), dsp (2 clips)``: a summary's backends used, most clips first."""
    if not used:
        return "not used"
    return ", ".join(f"{name} ({n} clip{'' if n == 1 else 's'})"
                     for name, n in sorted(used.items(), key=lambda kv: (-kv[1], kv[0])))


def _pct(x: float | None) -> str:
    return "   -  " if x is None else f"{100 * x:5.1f}%"


def format_table(summary: dict[str, Any]) -> str:
    """A readable plain-text table of a summary."""
    lines = []
    c = summary["counts"]
    lines.append(
        f"timingbench {summary['timingbench_version']}  config {summary['config']['version']} "
        f"({summary['config']['hash']})"
    )
    lines.append(
        f"clips {c['clips']} (scored {c['scored_clips']}, errors {c['errors']}), events {c['events']}, "
        f"unmatched files {c['unmatched']}, prompts without audio {c['missing']}"
    )
    lines.append("")
    ver = summary.get("rates_identity_verified")
    judged = summary.get("identity_judged") or {}
    heads = [(f"identity-verified events ({judged.get('label') or 'judged families + whole mix'})", ver)] if ver else []
    heads.append(("all events (timing only for exempt families)", summary["rates"]))
    if c.get("errors") and summary.get("rates_excluding_errors"):
        heads.append((f"excluding the {c['errors']} clips with an error", summary["rates_excluding_errors"]))
    labels = [h for h, _ in heads] + [f"  kind {k}" for k in summary["by_kind"]]
    labels += [f"  family {k}" for k in summary["by_family"]]
    labels += [f"  {k}: identity not verified" for k in summary.get("identity_not_verified", {})]
    w = max(28, *(len(x) + 1 for x in labels))
    lines.append(f"{'':<{w}}{'n':>5}  {'on time':>7} {'off time':>8} {'none':>7}")

    def row(name: str, r: dict[str, Any]) -> str:
        return (f"{name:<{w}}{r['n']:>5}  {_pct(r['on_time_rate']):>7} "
                f"{_pct(r['off_time_rate']):>8} {_pct(r['none_rate']):>7}")

    for name, r in heads:
        lines.append(row(name, r))
    for k, r in summary["by_kind"].items():
        lines.append(row(f"  kind {k}", r))
    for k, r in summary["by_family"].items():
        lines.append(row(f"  family {k}", r))
    for k, r in summary.get("identity_not_verified", {}).items():
        lines.append(row(f"  {k}: identity not verified", r))
    lines += [f"  warning: {w}" for w in judged.get("warnings") or []]
    if c.get("error_events"):
        lines.append(f"  the {c['error_events']} events of clips with an error count as none in every rate but the "
                     "last headline row")
    lines.append("")
    disc = [(f"p_chance-discounted on-time rate, all events (n={summary['rates']['n']})",
             summary["p_chance_discounted_on_time_rate"], summary.get("p_chance_discounted_on_time_rate_chance_se"))]
    if ver:
        disc.insert(0, (f"p_chance-discounted on-time rate, identity verified (n={ver['n']})",
                        summary.get("p_chance_discounted_on_time_rate_identity_verified"),
                        summary.get("p_chance_discounted_on_time_rate_identity_verified_chance_se")))
    dw = max(len(label) for label, _, _ in disc) + 2
    draws = (summary.get("chance_credit") or {}).get("draws")
    lines += [f"{label:<{dw}}{_pct(value)}" + ("" if se is None else f"  ±{100 * se:.1f} (chance s.e., {draws} draws)")
              for label, value, se in disc]
    t = summary["tempo"]
    if t["n"]:
        lad = "  ".join(f"±{k}% {_pct(v)}" for k, v in t["ladder"].items())
        lines.append(f"tempo (n={t['n']}): ±3% {_pct(t['accuracy_3pct'])}   ladder {lad}   "
                     f"octave-equivalent {_pct(t['octave_equivalent_accuracy'])}   no estimate {t['no_estimate']}")
        lines.append(f"  within ±3%, steady clips only (n={t['n_steady']}) {_pct(t['accuracy_3pct_steady'])}")
    lines.append(f"duration compliance (n={c['clips']} clips) {_pct(summary['duration_compliance'])}   "
                 f"timbre match {_pct(summary['timbre_match_rate'])}")
    lines.extend(format_controls(summary))
    sep = summary["separation"]
    lines.append(f"separation: {_backends_used(sep['used'])}; requested {sep['requested']}")
    for n in sep["notes"]:
        lines.append(f"  note: {n}")
    fe = summary["family_evidence"]
    lines.append(f"family evidence: {_backends_used(fe['used'])}; requested {fe['requested']}")
    if fe["exempt_families"]:
        lines.append("  exempt families: " + ", ".join(f"{k} ({v})" for k, v in fe["exempt_families"].items()))
    for e in summary["errors"]:
        lines.append(f"error: {e['clip']}: {e['error']}")
    for name in summary.get("ignored_subfolders") or []:
        lines.append(f"warning: subfolder {name}/ of the clips folder holds audio: not searched, not scored")
    return "\n".join(lines)

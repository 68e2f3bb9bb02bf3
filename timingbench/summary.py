"""``summary.json`` and the stdout table of a scoring run (SPEC section 3)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from timingbench.audio import file_hash
from timingbench.config import Config
from timingbench.controls.report import format_controls, summarise_controls
from timingbench.version import __version__

#: Version of the results format (SPEC section 3). 2: ``events.jsonl`` rows carry ``evidence``
#: (gate name -> the statistics that gate thresholded); additive, version 1 readers ignore it.
#: 3: that object is named ``gate_stats``; ``clips.jsonl`` rows carry ``controls``
#: (time-varying control adherence, null without controls) and ``summary.json`` a
#: ``controls`` object (docs/controls.md); the row of a clip that could not be scored has
#: every key of a scored clip's row.
RESULTS_FORMAT = 3

OUTCOMES = ("on_time", "off_time", "none")


def _rate(n: int, d: int) -> float | None:
    return None if d == 0 else round(n / d, 4)


def outcome_rates(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """On-time / off-time / none rates and counts of a set of event rows."""
    c = Counter(r["outcome"] for r in rows)
    n = sum(c.values())
    return {"n": n, **{f"{o}_rate": _rate(c[o], n) for o in OUTCOMES}, **{o: c[o] for o in OUTCOMES}}


def build_summary(
    events: list[dict[str, Any]], clips: list[dict[str, Any]], *, config: Config, opts: Any,
    unmatched: list[str], missing: list[str], prompt_errors: list[str],
    parts: list[dict[str, Any]], prompts_path: str, clips_dir: str | None = None,
) -> dict[str, Any]:
    """Headline rates, counts and provenance of a scoring run.

    Rates are over event rows (one per clip and instructed event); ``p_chance_discounted
    _on_time_rate`` weights every on-time credit by ``1 - p_chance``.
    ``clips_dir`` (the scored folder) lets ``timingbench explain`` find a clip's audio again.
    """
    by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_family: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in events:
        by_kind[r["kind"]].append(r)
        by_family[r["family"]].append(r)
    # an on-time event without a chance estimate (not computed) keeps its full credit
    disc = [(1.0 if r["p_chance"] is None else 1.0 - r["p_chance"]) if r["outcome"] == "on_time" else 0.0
            for r in events]
    tempo_rows = [c["tempo"] for c in clips if c.get("tempo")]
    steady_rows = [t for t in tempo_rows if (t.get("beat_stability") or {}).get("steady")]
    ladder: dict[str, float | None] = {}
    for pct in config.params.tempo.ladder_pct:
        k = f"{float(pct):g}"
        ladder[k] = _rate(sum(bool((t.get("within_pct") or {}).get(k)) for t in tempo_rows), len(tempo_rows))
    timbre = [t for c in clips for t in (c.get("timbre_match") or []) if t.get("match") is not None]
    scored = [c for c in clips if c.get("error") is None]
    seps = Counter(c.get("separation") for c in scored if c.get("separation"))
    notes = sorted({n for p in parts for n in p.get("notes", [])})
    ev_backends = Counter(c.get("family_evidence") for c in scored if c.get("family_evidence"))
    exempt: dict[str, str] = {}
    for p in parts:
        exempt.update((p.get("family_evidence") or {}).get("exempt") or {})
    unverified: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in events:
        if r["family"] in exempt and r["family"] != "mix":
            unverified[r["family"]].append(r)
    return {
        "timingbench_version": __version__,
        "results_format": RESULTS_FORMAT,
        "config": {"version": config.version, "hash": config.content_hash, "source": config.source},
        "prompts": {"path": prompts_path, "hash": _file_hash(prompts_path), "rejected": prompt_errors},
        "clips_dir": clips_dir,
        "counts": {"clips": len(clips), "scored_clips": len(scored), "events": len(events),
                   "unmatched": len(unmatched), "missing": len(missing), "errors": len(clips) - len(scored)},
        "rates": outcome_rates(events),
        "by_kind": {k: outcome_rates(v) for k, v in sorted(by_kind.items())},
        "by_family": {k: outcome_rates(v) for k, v in sorted(by_family.items())},
        # families the family evidence could not judge: scored on timing alone
        "identity_not_verified": {k: outcome_rates(v) for k, v in sorted(unverified.items())},
        # without chance re-scoring there is nothing to discount by: null, not the plain rate
        "p_chance_discounted_on_time_rate": (round(sum(disc) / len(events), 4)
                                             if events and opts.chance else None),
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
        "duration_compliance": _rate(sum(bool(c["duration_ok"]) for c in scored), len(scored)),
        "timbre_match_rate": _rate(sum(bool(t["match"]) for t in timbre), len(timbre)),
        "unmatched": unmatched,
        "missing": missing,
        "errors": [{"clip": c["clip"], "error": c["error"]} for c in clips if c.get("error")],
        "separation": {"requested": opts.separation, "used": dict(seps), "notes": notes},
        "family_evidence": {"requested": opts.family_evidence, "used": dict(ev_backends),
                            "exempt_families": dict(sorted(exempt.items()))},
        "chance_credit": {"enabled": bool(opts.chance), "draws": config.params.chance.draws},
        "disabled_gates": list(opts.disabled_gates),
        "controls": summarise_controls(clips, config=config),
    }


def _file_hash(path: str) -> str | None:
    return file_hash(path) if Path(path).is_file() else None


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
    labels = ["all events", *(f"  kind {k}" for k in summary["by_kind"]),
              *(f"  family {k}" for k in summary["by_family"]),
              *(f"  {k}: identity not verified" for k in summary.get("identity_not_verified", {}))]
    w = max(28, *(len(x) + 1 for x in labels))
    lines.append(f"{'':<{w}}{'n':>5}  {'on time':>7} {'off time':>8} {'none':>7}")

    def row(name: str, r: dict[str, Any]) -> str:
        return (f"{name:<{w}}{r['n']:>5}  {_pct(r['on_time_rate']):>7} "
                f"{_pct(r['off_time_rate']):>8} {_pct(r['none_rate']):>7}")

    lines.append(row("all events", summary["rates"]))
    for k, r in summary["by_kind"].items():
        lines.append(row(f"  kind {k}", r))
    for k, r in summary["by_family"].items():
        lines.append(row(f"  family {k}", r))
    for k, r in summary.get("identity_not_verified", {}).items():
        lines.append(row(f"  {k}: identity not verified", r))
    lines.append("")
    lines.append(f"p_chance-discounted on-time rate  {_pct(summary['p_chance_discounted_on_time_rate'])}")
    t = summary["tempo"]
    if t["n"]:
        lad = "  ".join(f"±{k}% {_pct(v)}" for k, v in t["ladder"].items())
        lines.append(f"tempo (n={t['n']}): ±3% {_pct(t['accuracy_3pct'])}   ladder {lad}   "
                     f"octave-equivalent {_pct(t['octave_equivalent_accuracy'])}   no estimate {t['no_estimate']}")
        lines.append(f"  within ±3%, steady clips only (n={t['n_steady']}) {_pct(t['accuracy_3pct_steady'])}")
    lines.append(f"duration compliance {_pct(summary['duration_compliance'])}   "
                 f"timbre match {_pct(summary['timbre_match_rate'])}")
    lines.extend(format_controls(summary))
    sep = summary["separation"]
    lines.append(f"separation: requested {sep['requested']}, used {sep['used'] or '-'}")
    for n in sep["notes"]:
        lines.append(f"  note: {n}")
    fe = summary["family_evidence"]
    lines.append(f"family evidence: requested {fe['requested']}, used {fe['used'] or '-'}")
    if fe["exempt_families"]:
        lines.append("  exempt families: " + ", ".join(f"{k} ({v})" for k, v in fe["exempt_families"].items()))
    for e in summary["errors"]:
        lines.append(f"error: {e['clip']}: {e['error']}")
    return "\n".join(lines)

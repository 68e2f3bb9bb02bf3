"""Tables of a comparison: plain text for stdout, JSON and CSV files.

Every table starts with a ``MIXED COMPARISON`` line when the folders were scored with
different configurations or prompt sets (``--allow-mixed``); every CSV row then carries
the same note in its ``mixed`` column and the JSON carries ``mixed``.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from timingbench.compare.core import HEADLINE_METRIC, OUTCOME_RATES, Comparison, metric_info
from timingbench.compare.stats import Estimate
from timingbench.jsonio import atomic_write_text, write_json
from timingbench.prompts import EVENT_FAMILIES, EVENT_KINDS


def _estimate_text(e: Estimate | None, *, ci: bool, scale: float, value: str, lo: str, hi: str) -> str:
    """``e`` times ``scale`` as ``value`` (a format spec), then `` [lo,hi]`` with ``ci``; ``-`` when undefined."""
    if e is None or not math.isfinite(e.value):
        return "-"
    s = format(scale * e.value, value)
    if ci and math.isfinite(e.lo):
        s += f" [{format(scale * e.lo, lo)},{format(scale * e.hi, hi)}]"
    return s


def _pct(e: Estimate | None, *, ci: bool = True) -> str:
    """A rate as percent (``12.5 [ 8.0, 17.1]``)."""
    return _estimate_text(e, ci=ci, scale=100.0, value="5.1f", lo="4.1f", hi="5.1f")


def _sec(e: Estimate | None, *, ci: bool = True) -> str:
    """A time as signed seconds (``+0.12 [+0.05,+0.20]``)."""
    return _estimate_text(e, ci=ci, scale=1.0, value="+.2f", lo="+.2f", hi="+.2f")


def format_estimate(key: str, e: Estimate | None, *, ci: bool = True) -> str:
    """An estimate as text: percent for a rate, signed seconds for a time; ``[lo, hi]`` with ``ci``."""
    return _sec(e, ci=ci) if metric_info(key).unit == "s" else _pct(e, ci=ci)


def mixed_note(comp: Comparison) -> str:
    """The one-line warning of a mixed comparison ('' when not mixed)."""
    return ("MIXED COMPARISON (--allow-mixed): " + "; ".join(comp.mixed)) if comp.mixed else ""


def _table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]], comp: Comparison) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = []
    if comp.mixed:
        lines.append(mixed_note(comp))
    lines.append(title)
    lines.append("  ".join(str(h).ljust(w) for h, w in zip(header, widths, strict=True)))
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)


def system_rows(comp: Comparison) -> list[dict[str, Any]]:
    """One row per system with the headline metrics, disclosures and the rank on the identity-verified on-time rate."""
    tempo = f"tempo_within_{comp.settings.tempo_tolerance_pct:g}pct"
    rows = []
    rank = comp.ranks.get(HEADLINE_METRIC, {})
    for s in comp.systems:
        est = comp.estimates[s.name]
        n_clips = len(s.clips)
        prompts = {c["prompt_id"] for c in s.clips}
        row: dict[str, Any] = {
            "system": s.name, "results": str(s.path), "on_time_rank": rank.get(s.name),
            "prompts_scored": len(prompts), "clips_scored": n_clips,
            "samples_per_prompt": round(n_clips / len(prompts), 3) if prompts else 0.0,
            "missing_prompts": len(s.missing), "scoring_errors": len(s.errors),
            "unmatched_files": len(s.unmatched), "events": est["on_time_rate"].n_items,
            "events_identity_verified": est["on_time_rate_judged"].n_items,
        }
        keys = [*(f"{k}_judged" for k in OUTCOME_RATES), "on_time_rate_discounted_judged",
                *OUTCOME_RATES, "on_time_rate_discounted", "on_time_rate_low_p_chance",
                "error_median_s", "error_q25_s", "error_q75_s", "late_fraction"]
        keys += [f"tempo_within_{p:g}pct" for p in sorted(set(comp.settings.tempo_ladder_pct))]
        if tempo not in keys:
            keys.append(tempo)
        keys += ["tempo_octave_equivalent", "duration_ok_rate", "timbre_match_rate"]
        for k in keys:
            e = est.get(k)
            row[k] = None if e is None or not math.isfinite(e.value) else e.value
            row[k + "_lo"] = None if e is None or not math.isfinite(e.lo) else e.lo
            row[k + "_hi"] = None if e is None or not math.isfinite(e.hi) else e.hi
            row[k + "_n_prompts"] = None if e is None else e.n_prompts
        row["off_time_count"] = est["error_median_s"].n_items
        for k, se in comp.chance_se.get(s.name, {}).items():
            row[k + "_chance_se"] = se
        rows.append(row)
    return rows


def scoped_rows(comp: Comparison, scope: str) -> list[dict[str, Any]]:
    """Outcome rates per system and per event kind (``scope='kind'``) or family (``'family'``)."""
    values = EVENT_KINDS if scope == "kind" else EVENT_FAMILIES
    rows = []
    for s in comp.systems:
        est = comp.estimates[s.name]
        for v in values:
            if f"on_time_rate|{scope}={v}" not in est:
                continue
            row: dict[str, Any] = {"system": s.name, scope: v,
                                   "events": est[f"on_time_rate|{scope}={v}"].n_items,
                                   "prompts": est[f"on_time_rate|{scope}={v}"].n_prompts}
            for k in OUTCOME_RATES:
                e = est[f"{k}|{scope}={v}"]
                row[k], row[k + "_lo"], row[k + "_hi"] = e.value, e.lo, e.hi
            if scope == "family":
                e = est[f"error_median_s|family={v}"]
                row["error_median_s"] = e.value if math.isfinite(e.value) else None
                row["floor_s"] = comp.floors_s.get(v)
            rows.append(row)
    return rows


def pair_rows(comp: Comparison) -> list[dict[str, Any]]:
    """One row per (pair of systems, metric)."""
    return [{"metric": p.metric, "label": metric_info(p.metric).label, "a": p.a, "b": p.b,
             "diff": p.diff.value, "lo": p.diff.lo, "hi": p.diff.hi, "prompts": p.diff.n_prompts,
             "floor_s": p.floor_s, "resolved": p.resolved, "verdict": p.verdict}
            for p in comp.pairwise]


def _se(comp: Comparison, system: str, key: str) -> str:
    """The chance standard error of a discounted rate, in percentage points (``-`` when unknown)."""
    se = comp.chance_se.get(system, {}).get(key)
    return "-" if se is None else f"±{100 * se:.1f}"


def format_text(comp: Comparison) -> str:
    """The comparison as plain-text tables for stdout."""
    level = f"{100 * comp.settings.ci_level:g} %"
    tempo = f"tempo_within_{comp.settings.tempo_tolerance_pct:g}pct"
    ladder = [f"tempo_within_{p:g}pct" for p in sorted(set(comp.settings.tempo_ladder_pct))]
    out = []
    head = ["system", "rank", "events", "on-time", "off-time", "none", "on-time (p_chance-disc.)", "chance s.e."]
    rows = []
    for s in comp.systems:
        e = comp.estimates[s.name]
        rows.append([s.name, str(comp.ranks.get(HEADLINE_METRIC, {}).get(s.name, "-")),
                     str(e["on_time_rate_judged"].n_items), _pct(e["on_time_rate_judged"]),
                     _pct(e["off_time_rate_judged"]), _pct(e["none_rate_judged"]),
                     _pct(e.get("on_time_rate_discounted_judged")),
                     _se(comp, s.name, "on_time_rate_discounted_judged")])
    out.append(_table(f"Timing, % of identity-verified events (judged families and whole-mix events; macro over "
                      f"prompts, {level} bootstrap intervals; rank 1 + systems resolved better on the on-time rate)",
                      head, rows, comp))
    head = ["system", "events", "on-time", "off-time", "none", "on-time (p_chance-disc.)", "chance s.e.",
            f"on-time with p_chance<={comp.settings.low_p_chance_max:g}"]
    rows = []
    for s in comp.systems:
        e = comp.estimates[s.name]
        rows.append([s.name, str(e["on_time_rate"].n_items), _pct(e["on_time_rate"]), _pct(e["off_time_rate"]),
                     _pct(e["none_rate"]), _pct(e.get("on_time_rate_discounted")),
                     _se(comp, s.name, "on_time_rate_discounted"), _pct(e.get("on_time_rate_low_p_chance"))])
    out.append(_table(f"Timing, % of all instructed events (timing only for exempt families; {level} intervals; "
                      "every column counts every event, failed clips' included; chance s.e.: the discounted "
                      "rate's spread from the chance draws alone, in points)", head, rows, comp))
    head = ["system", "off-time n", "signed error median s", "IQR s", "late share", "rushing/dragging"]
    rows = []
    for s in comp.systems:
        e = comp.estimates[s.name]
        med, q25, q75 = e["error_median_s"], e["error_q25_s"], e["error_q75_s"]
        if math.isfinite(med.value):
            tend = "dragging (late)" if med.value > 0 else "rushing (early)" if med.value < 0 else "centred"
            iqr = f"{q25.value:+.2f}..{q75.value:+.2f}"
        else:
            tend, iqr = "-", "-"
        rows.append([s.name, str(med.n_items), _sec(med), iqr, _pct(e["late_fraction"], ci=False), tend])
    out.append(_table("Off-time deliveries: signed error (detected - instructed)", head, rows, comp))
    head = ["system", *[f"tempo ±{k[13:-3]} %" for k in ladder], "octave-eq.", "duration ok", "timbre match",
            "missing prompts", "scoring errors"]
    rows = []
    for s in comp.systems:
        e = comp.estimates[s.name]
        rows.append([s.name, *[_pct(e.get(k), ci=(k == tempo)) for k in ladder],
                     _pct(e["tempo_octave_equivalent"]), _pct(e["duration_ok_rate"]),
                     _pct(e["timbre_match_rate"]), str(len(s.missing)), str(len(s.errors))])
    out.append(_table("Tempo, duration and timbre (reported apart from timing); disclosures", head, rows, comp))
    ctl = sorted({k for s in comp.systems for k in comp.estimates[s.name] if k.startswith("control_")})
    if ctl:
        head = ["system", *[metric_info(k).label.removeprefix("control adherence: ") for k in ctl]]
        rows = [[s.name, *[_pct(comp.estimates[s.name].get(k)) for k in ctl]] for s in comp.systems]
        out.append(_table("Control adherence, mean metric x 100 (docs/controls.md)", head, rows, comp))
    for scope in ("kind", "family"):
        head = ["system", scope, "events", "on-time", "off-time", "none"]
        if scope == "family":
            head += ["err median s", "floor ms"]
        rows = []
        for r in scoped_rows(comp, scope):
            e = comp.estimates[r["system"]]
            row = [r["system"], r[scope], str(r["events"])]
            row += [_pct(e[f"{k}|{scope}={r[scope]}"]) for k in OUTCOME_RATES]
            if scope == "family":
                row += ["-" if r["error_median_s"] is None else f"{r['error_median_s']:+.2f}",
                        "-" if r["floor_s"] is None else f"{1000 * r['floor_s']:.0f}"]
            rows.append(row)
        out.append(_table(f"Outcome rates per event {scope}, %", head, rows, comp))
    head = ["metric", "A - B", "difference", "verdict"]
    rows = []
    shown = {"on_time_rate_judged", "none_rate_judged", "on_time_rate_discounted_judged",
             "on_time_rate", "none_rate", "on_time_rate_discounted", "on_time_rate_low_p_chance",
             "error_median_s", tempo, "duration_ok_rate", "timbre_match_rate"}
    for p in comp.pairwise:
        if p.metric in shown or p.metric.startswith("control_"):
            rows.append([metric_info(p.metric).label, f"{p.a} - {p.b}",
                         format_estimate(p.metric, p.diff), p.verdict])
    out.append(_table("Pairwise differences (headline metrics; per-kind and per-family rows in pairwise.csv)",
                      head, rows, comp))
    return "\n\n".join(out) + "\n"


def _csv(rows: list[dict[str, Any]], note: str) -> str:
    buf = io.StringIO()
    if not rows:
        return ""
    keys = list(rows[0])
    for r in rows[1:]:
        keys += [k for k in r if k not in keys]
    w = csv.DictWriter(buf, fieldnames=[*keys, "mixed"], lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({**{k: ("" if v is None or (isinstance(v, float) and not math.isfinite(v)) else v)
                       for k, v in r.items()}, "mixed": note})
    return buf.getvalue()


def to_json(comp: Comparison) -> dict[str, Any]:
    """Everything in the comparison as one JSON-ready object."""
    def est(e: Estimate) -> dict[str, Any]:
        return {"value": e.value, "lo": e.lo, "hi": e.hi, "n_prompts": e.n_prompts, "n_items": e.n_items}

    return {
        "mixed": comp.mixed,
        "settings": {"bootstrap_n": comp.settings.n_boot, "bootstrap_seed": comp.settings.seed,
                     "ci_level": comp.settings.ci_level, "low_p_chance_max": comp.settings.low_p_chance_max,
                     "averaging": "macro over prompts (samples of a prompt pooled first)"},
        "systems": [{"name": s.name, "results": str(s.path), "config_version": s.config_version,
                     "config_hash": s.config_hash, "missing": s.missing,
                     "errors": [{"clip": e.get("clip"), "error": e.get("error")} for e in s.errors],
                     "unmatched": s.unmatched,
                     "metrics": {k: est(v) for k, v in sorted(comp.estimates[s.name].items())},
                     "chance_se": comp.chance_se.get(s.name, {})}
                    for s in comp.systems],
        "table_systems": system_rows(comp),
        "table_by_kind": scoped_rows(comp, "kind"),
        "table_by_family": scoped_rows(comp, "family"),
        "pairwise": pair_rows(comp),
        "ranks": comp.ranks,
        "floors_s": comp.floors_s,
        "n_prompts": len(comp.prompt_ids),
    }


def write_report(comp: Comparison, out: str | Path) -> list[Path]:
    """Write ``comparison.json``, the CSV tables and ``comparison.txt`` into ``out``.

    Parameters
    ----------
    comp : Comparison
    out : str or Path
        Output folder (created).

    Returns
    -------
    paths : list of Path
        The files written.
    """
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    note = mixed_note(comp)
    written = [d / "comparison.json"]
    write_json(written[0], to_json(comp))
    for name, rows in (("systems.csv", system_rows(comp)), ("by_kind.csv", scoped_rows(comp, "kind")),
                       ("by_family.csv", scoped_rows(comp, "family")), ("pairwise.csv", pair_rows(comp))):
        atomic_write_text(d / name, _csv(rows, note))
        written.append(d / name)
    atomic_write_text(d / "comparison.txt", format_text(comp))
    written.append(d / "comparison.txt")
    return written

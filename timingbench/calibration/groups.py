"""Scorer accuracy per family group (percussion, stem families, tonal families).

From the rows of :func:`timingbench.calibration.evaluate.score_corpus`, for the events of
each group, with the families the family evidence could not judge (``exempt``) counted
on their own line:

- **on-time credited**: annotated on time, verdict ``on_time``;
- **negatives credited**: annotated as not occurred, verdict ``on_time`` (busy decoys,
  pre-existing targets, never-delivered instruments);
- **pre-existing rejected**: scenario ``pre_existing``, verdict ``none``;
- **off-time located**: annotated off time, verdict ``off_time`` within
  ``calibration.offset_match_s`` of the annotated onset;
- **median error**: median ``|detected - annotated|`` of the on-time credits.

The scenario of a rendered clip is read from the corpus ``manifest.jsonl`` (``scenario``);
annotation sets without one count their negatives but report no pre-existing rate.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from timingbench.families import STEM_FAMILIES, TONAL_FAMILIES

GROUPS = {"percussion": ("percussion",), "stem families": tuple(f for f in STEM_FAMILIES if f != "percussion"),
          "tonal families": TONAL_FAMILIES}


def scenarios_from_manifest(clips_dir: str | Path) -> dict[str, str]:
    """Clip -> scenario from a rendered corpus' ``manifest.jsonl`` beside the clips folder (empty if absent)."""
    path = Path(clips_dir).parent / "manifest.jsonl"
    out: dict[str, str] = {}
    if not path.is_file():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict) and "clip" in row and "scenario" in row:
            out[str(row["clip"])] = str(row["scenario"])
    return out


def _rate(k: int, n: int) -> float | None:
    return round(k / n, 4) if n else None


def event_counts(rows: Iterable[dict[str, Any]], scenarios: Mapping[str, str], offset_match_s: float) -> dict[str, Any]:
    """Counts of scored rows: on-time truths and their credits, negatives and their credits, pre-existing targets
    and their rejections, off-time truths and those located within ``offset_match_s``; the median error (ms)."""
    rows = list(rows)
    on = [r for r in rows if r["truth_occurred"] and r["truth_onset_s"] is not None
          and abs(r["truth_onset_s"] - r["instructed_s"]) <= r["tolerance_s"] + 1e-9]
    off = [r for r in rows if r["truth_occurred"] and r["truth_onset_s"] is not None and r not in on]
    neg = [r for r in rows if not r["truth_occurred"]]
    pre = [r for r in neg if scenarios.get(r["clip"]) == "pre_existing"]
    credited = [r for r in on if r["outcome"] == "on_time"]
    located = [r for r in off if r["outcome"] == "off_time" and r["abs_error_to_truth_s"] is not None
               and r["abs_error_to_truth_s"] <= offset_match_s]
    errs = [r["abs_error_to_truth_s"] for r in credited if r["abs_error_to_truth_s"] is not None]
    return {"n": len(rows), "n_on_time": len(on), "on_time_credited": len(credited), "n_negative": len(neg),
            "negative_credited": sum(r["outcome"] == "on_time" for r in neg), "n_pre_existing": len(pre),
            "pre_existing_rejected": sum(r["outcome"] == "none" for r in pre), "n_off_time": len(off),
            "off_time_located": len(located),
            "median_error_ms": round(1000 * float(np.median(errs)), 1) if errs else None}


def _stats(rows: list[dict[str, Any]], scenarios: Mapping[str, str], offset_match_s: float) -> dict[str, Any]:
    c = event_counts(rows, scenarios, offset_match_s)
    return {
        "n": c["n"], "n_on_time": c["n_on_time"], "on_time_credited": _rate(c["on_time_credited"], c["n_on_time"]),
        "n_negative": c["n_negative"], "negative_credited": _rate(c["negative_credited"], c["n_negative"]),
        "n_pre_existing": c["n_pre_existing"],
        "pre_existing_rejected": _rate(c["pre_existing_rejected"], c["n_pre_existing"]),
        "n_off_time": c["n_off_time"], "off_time_located": _rate(c["off_time_located"], c["n_off_time"]),
        "median_error_ms": c["median_error_ms"],
    }


def group_report(rows: Iterable[dict[str, Any]], *, exempt: Iterable[str], scenarios: Mapping[str, str],
                 offset_match_s: float) -> dict[str, Any]:
    """Per group: the statistics of its judged families, and of its exempt families apart."""
    rows = list(rows)
    ex = set(exempt)
    out: dict[str, Any] = {}
    for name, fams in GROUPS.items():
        judged = [r for r in rows if r["family"] in fams and r["family"] not in ex]
        unjudged = [r for r in rows if r["family"] in fams and r["family"] in ex]
        out[name] = {"families": [f for f in fams if f not in ex], "stats": _stats(judged, scenarios, offset_match_s),
                     "exempt_families": [f for f in fams if f in ex],
                     "exempt_stats": _stats(unjudged, scenarios, offset_match_s) if unjudged else None}
    return out


def _p(x: float | None) -> str:
    return "    -" if x is None else f"{100 * x:5.1f}"


def format_groups(report: Mapping[str, Any]) -> str:
    """Text table of :func:`group_report` (rates in %, counts in brackets)."""
    labels = [lab for name, g in report.items()
              for lab in (name, f"  exempt ({', '.join(g['exempt_families'])})")]
    w = max(30, *(len(x) + 1 for x in labels))
    lines = _head("group", w)
    for name, g in report.items():
        for label, s in ((name, g["stats"]), (f"  exempt ({', '.join(g['exempt_families'])})", g["exempt_stats"])):
            if s is None or not s["n"]:
                continue
            lines.append(_stats_line(label, s, w))
    return "\n".join(lines)


def _head(first: str, w: int) -> list[str]:
    head = (f"{first:<{w}}{'on-time cr.':>14}{'neg. cr.':>13}{'pre rej.':>13}{'off located':>14}"
            f"{'median ms':>11}")
    return [head, "-" * len(head)]


def _stats_line(label: str, s: Mapping[str, Any], w: int) -> str:
    """One table row of :func:`_stats` rates (in %, counts in brackets)."""
    return (f"{label:<{w}}{_p(s['on_time_credited'])} ({s['n_on_time']:>3}){_p(s['negative_credited'])}"
            f" ({s['n_negative']:>3}){_p(s['pre_existing_rejected'])} ({s['n_pre_existing']:>3})"
            f"{_p(s['off_time_located'])} ({s['n_off_time']:>3})  "
            f"{s['median_error_ms'] if s['median_error_ms'] is not None else '-':>8}")


def family_report(rows: Iterable[dict[str, Any]], *, exempt: Iterable[str], scenarios: Mapping[str, str],
                  offset_match_s: float) -> dict[str, Any]:
    """Per instrument family (``mix`` left out): the :func:`group_report` statistics and whether it is judged."""
    rows = [r for r in rows if r["family"] != "mix" and r["kind"] in ("instrument_entry", "instrument_exit")]
    ex = set(exempt)
    return {f: {"judged": f not in ex,
                "stats": _stats([r for r in rows if r["family"] == f], scenarios, offset_match_s)}
            for f in sorted({r["family"] for r in rows}, key=lambda f: (f in ex, f))}


def format_families(report: Mapping[str, Any]) -> str:
    """Text table of :func:`family_report`; exempt families are marked "identity not verified"."""
    w = 42
    lines = _head("family", w)
    for fam, g in report.items():
        label = fam if g["judged"] else f"{fam} (identity not verified)"
        lines.append(_stats_line(label, g["stats"], w))
    return "\n".join(lines)

"""Sensitivity sweep (paper Sec. IV-C): perturb every fitted constant, disable every gate.

Every ``calibrated`` and ``few_shot`` numeric constant used by the detectors is moved to
0.8, 0.9, 1.1 and 1.2 times its value and disabled; every gate is disabled one at a time.
Each variant re-scores the annotated corpus on the feature banks already in memory (no
feature is recomputed) and is compared with the baseline: new false credits, new false
positives, new misses and lost credits, with the direction of the change (``loosening``
when it moves the constant the way its ``loosening`` field says admits more detections).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from timingbench.calibration.evaluate import (
    Corpus,
    corpus_candidates,
    rows_from_candidates,
    score_corpus,
)
from timingbench.config import Config
from timingbench.errors import ConfigError
from timingbench.params.bounds import section_readers
from timingbench.params.sets import field_value
from timingbench.scoring import DetectorParams

FACTORS = (0.8, 0.9, 1.1, 1.2)
#: Detectors that read each configuration section (declared in timingbench.params.bounds); a
#: variant of a constant re-scores only their events (the others keep their baseline rows).
#: Sections not listed affect all.
SECTION_READERS = section_readers()
#: Sections whose constants are reported, not used in decisions.
NOT_SWEPT = ("families",)
#: Sections the event detectors and scoring read; a variant of any other section's constant
#: (``tempo``, ``mgbench_baseline``) cannot change an event row and is not re-scored.
EVENT_SECTIONS = frozenset(SECTION_READERS) | {"search"}
GATES = ("detection", "absence_before", "absence_after", "persistence", "level_change",
         "semantic_family", "tonal_change", "decay", "stays_down", "density_change")


def _key(r: dict[str, Any]) -> tuple[str, str]:
    return r["clip"], r["event_id"]


def compare_rows(base: list[dict[str, Any]], var: list[dict[str, Any]]) -> dict[str, Any]:
    """Event-level changes of a variant against the baseline."""
    b = {_key(r): r["class"] for r in base}
    out: dict[str, list[str]] = {"new_false_credits": [], "new_false_positives": [], "new_misses": [],
                                 "lost_credits": []}
    for r in var:
        was, now = b.get(_key(r)), r["class"]
        if now == was:
            continue
        ident = f"{r['clip']}:{r['event_id']}"
        if now == "false_credit":
            out["new_false_credits"].append(ident)
        elif now == "false_positive":
            out["new_false_positives"].append(ident)
        if now == "missed":
            out["new_misses"].append(ident)
        if was == "correct_credit":
            out["lost_credits"].append(ident)
    counts = {k: len(v) for k, v in out.items()}
    return {**counts, "events": out}


def _numeric_table(v: Any) -> bool:
    """A per-family table (nested dicts) whose entries are all numbers or null, at least one a number."""
    leaves: list[Any] = []

    def walk(x: Any) -> bool:
        if isinstance(x, dict):
            return all(walk(y) for y in x.values())
        if x is None or (isinstance(x, int | float) and not isinstance(x, bool)):
            leaves.append(x)
            return True
        return False

    return isinstance(v, dict) and walk(v) and any(x is not None for x in leaves)


def scaled(value: Any, factor: float) -> Any:
    """``value`` times ``factor``: a number, or every number of a per-family table (null entries stay null)."""
    if isinstance(value, dict):
        return {k: scaled(v, factor) for k, v in value.items()}
    return None if value is None else value * factor


def sweepable(config: Config) -> list[str]:
    """Calibrated and few-shot constants of the detectors: numbers, and per-family tables of numbers.

    A table (``presence.entry_min_step_by_family``) is perturbed as a whole: every entry scaled
    by the same factor, or the table switched off.
    """
    keys = []
    for k in config.keys(provenance=("calibrated", "few_shot")):
        v = field_value(config, k)
        if k.split(".", 1)[0] in NOT_SWEPT or isinstance(v, bool):
            continue
        if isinstance(v, int | float) or _numeric_table(v):
            keys.append(k)
    return keys


def direction(config: Config, key: str, factor: float | None) -> str:
    """``loosening`` / ``tightening`` / ``disabled`` / ``unknown`` for a perturbation."""
    if factor is None:
        return "disabled"
    loos = config.constants[key].loosening
    if loos is None:
        return "unknown"
    up = factor > 1.0
    return "loosening" if (up and loos == "increase") or (not up and loos == "decrease") else "tightening"


def run_sweep(
    corpus: Corpus, config: Config, *, progress: Callable[[int, int, str], None] | None = None,
    reuse: bool = True,
) -> dict[str, Any]:
    """Run every constant perturbation and gate ablation.

    The detectors run once for the baseline; a gate ablation re-decides the stored
    candidates, a constant of a section no event detector reads keeps the baseline rows,
    and the other variants re-run only the detectors that read the constant's section
    (whose threshold-independent measurements are memoised in the banks). With
    ``reuse=False`` every variant re-scores from scratch (the reference for speed checks;
    the rows are identical).

    Returns
    -------
    report : dict
        ``baseline`` class counts, ``constants`` rows (key, factor or ``off``, value,
        direction, change counts and event ids), ``gates`` rows, and ``findings``: the
        variants within ±10 % that add false credits.
    """
    from collections import Counter

    base_items = corpus_candidates(corpus, config) if reuse else []  # every detector runs once here
    base = rows_from_candidates(base_items) if reuse else score_corpus(corpus, config)
    keys = sweepable(config)
    jobs: list[tuple[str, float | None]] = [(k, f) for k in keys for f in (*FACTORS, None)]
    total = len(jobs) + len(GATES)
    const_rows = []
    for i, (key, f) in enumerate(jobs):
        v0 = field_value(config, key)
        cfg = config.with_disabled(key) if f is None else config.with_value(key, scaled(v0, f))
        row: dict[str, Any] = {"key": key, "provenance": config.constants[key].provenance,
                               "factor": "off" if f is None else f,
                               "value": None if f is None else cfg.constants[key].value,
                               "direction": direction(config, key, f)}
        section = key.split(".", 1)[0]
        readers = SECTION_READERS.get(section)
        try:
            if reuse:
                DetectorParams.of(config).adopt(cfg, section)  # only the changed section is built
            if reuse and section not in EVENT_SECTIONS:
                var = base
            elif reuse:
                # an event whose baseline run read no field of this constant cannot change
                if any(readers is None or r["detector"] in readers for r in base):
                    DetectorParams.of(cfg)  # a section that cannot be built fails as a re-run would
                touched = {(it.clip, it.event.id) for it in base_items if key in it.reads}
                var = score_corpus(corpus, cfg, events=touched) if touched else []
            else:
                var = score_corpus(corpus, cfg, detectors=readers)
            res = compare_rows(base, var)
        except ConfigError as exc:
            # a constant its detector cannot run without: reported, not swept
            res = {"new_false_credits": 0, "new_false_positives": 0, "new_misses": 0,
                   "lost_credits": 0, "events": {}, "not_applicable": str(exc)}
        const_rows.append({**row, **res})
        if progress:
            progress(i + 1, total, key)
    gate_rows = []
    for j, g in enumerate(GATES):
        # an ablation only changes which failures count: re-decide the stored candidates
        res = compare_rows(base, rows_from_candidates(base_items, disabled_gates={g}) if reuse
                           else score_corpus(corpus, config, disabled_gates={g}))
        gate_rows.append({"gate": g, **res, "load_bearing": res["new_false_credits"] + res["new_false_positives"] > 0})
        if progress:
            progress(len(jobs) + j + 1, total, f"gate {g}")
    findings = [r for r in const_rows if r["factor"] in (0.9, 1.1) and r["new_false_credits"] > 0]
    fc20 = [r for r in const_rows if r["factor"] in (0.8, 1.2) and r["new_false_credits"] > 0]
    return {
        "n_events": len(base),
        "baseline": dict(Counter(r["class"] for r in base)),
        "constants": const_rows,
        "gates": gate_rows,
        "findings_within_10pct": [f"{r['key']} x{r['factor']}" for r in findings],
        "false_credits_at_20pct_directions": sorted({r["direction"] for r in fc20}),
    }


def format_sweep(report: dict[str, Any]) -> str:
    """Summary table of a sweep (only variants that change something, plus the gates)."""
    lines = [f"baseline over {report['n_events']} annotated events: {report['baseline']}", ""]
    lines.append(f"{'constant':<44}{'change':>7}{'direction':>12}{'+FC':>5}{'+FP':>5}{'+miss':>6}{'-credit':>8}")
    changed = 0
    for r in report["constants"]:
        if not (r["new_false_credits"] or r["new_false_positives"] or r["new_misses"] or r["lost_credits"]):
            continue
        changed += 1
        f = "off" if r["factor"] == "off" else f"x{r['factor']}"
        lines.append(f"{r['key']:<44}{f:>7}{r['direction']:>12}{r['new_false_credits']:>5}"
                     f"{r['new_false_positives']:>5}{r['new_misses']:>6}{r['lost_credits']:>8}")
    lines.append(f"({changed} of {len(report['constants'])} variants change any verdict class)")
    na = sorted({r["key"] for r in report["constants"] if r.get("not_applicable")})
    if na:
        lines.append("cannot be disabled (their detector needs them): " + ", ".join(na))
    lines.append("")
    lines.append(f"{'gate disabled':<44}{'+FC':>12}{'+FP':>5}{'+miss':>6}{'-credit':>8}  load-bearing")
    for r in report["gates"]:
        lines.append(f"{r['gate']:<44}{r['new_false_credits']:>12}{r['new_false_positives']:>5}"
                     f"{r['new_misses']:>6}{r['lost_credits']:>8}  {'yes' if r['load_bearing'] else 'no'}")
    lines.append("")
    f10 = report["findings_within_10pct"]
    lines.append("new false credits within ±10 %: " + (", ".join(f10) if f10 else "none"))
    lines.append("directions of false credits at ±20 %: "
                 + (", ".join(report["false_credits_at_20pct_directions"]) or "none"))
    return "\n".join(lines)

"""Composition of generated MGBench folders: the paper's Table 1 and per-split counts."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from timingbench.errors import ParameterError
from timingbench.jsonio import iter_jsonl, read_json

_TASK_ORDER = (("3N", "grounding"), ("2B", "grounding"), ("2B", "understanding"))


def find_splits(root: str | Path) -> list[Path]:
    """Folders under ``root`` (itself included) that hold a generated split (``manifest.json``).

    Raises
    ------
    ParameterError
        If there is none.
    """
    base = Path(root)
    found = sorted(p.parent for p in base.rglob("manifest.json") if (p.parent / "mgbench.jsonl").is_file())
    if not found:
        raise ParameterError(f"{base}: no generated MGBench split (manifest.json + mgbench.jsonl) found; "
                             "run `timingbench mgbench generate` first")
    return found


def composition(root: str | Path) -> dict[str, Any]:
    """Count clips, notes and questions of every split under ``root``.

    Returns
    -------
    stats : dict
        ``splits``: one entry per split folder (subset, split, clips, notes, audio seconds,
        questions by task, empty grounding answers, clip mix: note counts for 3N, meters
        for 2B); ``table1``: per (subset, task) the categories, QA count and two example
        questions, summed over splits.
    """
    splits: list[dict[str, Any]] = []
    qa: dict[tuple[str, str], Counter[str]] = {k: Counter() for k in _TASK_ORDER}
    examples: dict[tuple[str, str], list[str]] = {k: [] for k in _TASK_ORDER}
    seen: dict[tuple[str, str], set[str]] = {k: set() for k in _TASK_ORDER}
    for d in find_splits(root):
        man = read_json(d / "manifest.json")
        rows = [r for _, r in iter_jsonl(d / "mgbench.jsonl") if isinstance(r, dict)]
        notes = [r for _, r in iter_jsonl(d / "notes.jsonl") if isinstance(r, dict)]
        tasks = Counter(r["task"] for r in rows)
        mix: Counter[str] = Counter()
        for n in notes:
            mix[f"{len(n['notes'])} notes" if n["subset"] == "3N" else str(n["labels"].get("meter"))] += 1
        for r in rows:
            key = (r["subset"], r["task"])
            if key in qa:
                qa[key][r["category"]] += 1
                if len(examples[key]) < 2 and r["category"] not in seen[key]:
                    seen[key].add(r["category"])
                    examples[key].append(r["question"])
        grounding = [r for r in rows if r["task"] == "grounding"]
        splits.append({
            "folder": str(d), "subset": man["subset"], "split": man["split"], "clips": len(notes),
            "notes": sum(len(n["notes"]) for n in notes), "audio_s": round(sum(n["duration_s"] for n in notes), 2),
            "grounding": tasks.get("grounding", 0), "understanding": tasks.get("understanding", 0),
            "empty_grounding": sum(1 for r in grounding if not r.get("intervals")),
            "mix": dict(sorted(mix.items())),
        })
    table = [{"subset": s, "task": t, "categories": dict(sorted(qa[(s, t)].items())),
              "n_qa": sum(qa[(s, t)].values()), "examples": examples[(s, t)]}
             for s, t in _TASK_ORDER if qa[(s, t)]]
    return {"splits": splits, "table1": table}


def format_composition(stats: dict[str, Any]) -> str:
    """Readable composition tables (Table 1 layout, then one line per split)."""
    lines = ["MGBench composition (Table 1)", f"  {'subset':<24}{'#QA pairs':>10}  categories (count)"]
    for r in stats["table1"]:
        cats = ", ".join(f"{c} {n}" for c, n in r["categories"].items())
        lines.append(f"  {'MGBench-' + r['subset'] + ' ' + r['task'].capitalize():<24}{r['n_qa']:>10}  {cats}")
        for q in r["examples"]:
            lines.append(f"  {'':<24}{'':>10}  e.g. {q}")
    lines.append("Splits")
    lines.append(f"  {'subset':<7}{'split':<7}{'clips':>7}{'notes':>8}{'audio h':>9}{'ground.':>9}{'empty':>7}"
                 f"{'underst.':>10}  clip mix")
    for s in stats["splits"]:
        share = s["empty_grounding"] / s["grounding"] if s["grounding"] else 0.0
        mix = ", ".join(f"{k}: {v}" for k, v in s["mix"].items())
        lines.append(f"  {s['subset']:<7}{s['split']:<7}{s['clips']:>7}{s['notes']:>8}{s['audio_s'] / 3600:>9.2f}"
                     f"{s['grounding']:>9}{share:>7.1%}{s['understanding']:>10}  {mix}")
    return "\n".join(lines)

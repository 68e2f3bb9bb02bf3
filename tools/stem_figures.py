"""Judging figures of a scored corpus: per family and evidence, on-time recall by level band and negatives credited.

Reads a results folder written by ``timingbench score`` (its ``events.jsonl``: the real scoring
path, each row naming the evidence that decided it) against the corpus's ``truth.jsonl`` and
``manifest.jsonl`` (the target part's level re the backing), and prints
:func:`timingbench.calibration.judging.figures` with the bar's verdict
(:func:`timingbench.calibration.judging.verdict`) for dev splits. Measures only: nothing is fitted.

Usage::

    timingbench render --corpus parts --sources /work/shared/realdata --split dev --out DEV
    timingbench score DEV/clips --prompts DEV/prompts.jsonl --out DEV/score --separation demucs
    .venv/bin/python tools/stem_figures.py DEV DEV/score [--json OUT]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from timingbench.calibration.judging import figures, format_figures, verdict
from timingbench.config import load_config


def _jsonl(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path, help="corpus folder (truth.jsonl, manifest.jsonl)")
    ap.add_argument("results", type=Path, help="results folder of timingbench score on its clips")
    ap.add_argument("--config", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None, help="also write the figures as JSON")
    args = ap.parse_args()
    cal = (load_config(args.config) if args.config else load_config()).params.calibration
    truth = {r["event_id"]: r for r in _jsonl(args.corpus / "truth.jsonl")}
    manifest = {r["clip"]: r for r in _jsonl(args.corpus / "manifest.jsonl")}
    splits = sorted({str(r.get("split")) for r in manifest.values()})
    bands = [tuple(b) for b in cal.judge_level_bands_db]
    figs = figures(_jsonl(args.results / "events.jsonl"), truth, manifest, bands=bands,
                   min_level_db=cal.judge_min_level_db, offset_match_s=cal.offset_match_s)
    print(f"corpus {args.corpus} (split {', '.join(splits)}), results {args.results}")
    print(format_figures(figs, bands))
    verdicts = {fam: {ev: verdict(f, min_on_time=cal.judge_min_on_time, min_events=cal.judge_min_events,
                                  max_negative_rate=cal.judge_max_negative_rate,
                                  min_negatives=cal.judge_min_negatives) for ev, f in evs.items()}
                for fam, evs in figs.items()}
    if splits == ["dev"]:
        for fam, evs in verdicts.items():
            for ev, (ok, why) in evs.items():
                print(f"{fam} by {ev}: {'reaches the bar' if ok else 'exempt: ' + str(why)}")
    if args.json:
        args.json.write_text(json.dumps({"splits": splits, "figures": figs,
                                         "verdicts": {f: {e: list(v) for e, v in evs.items()}
                                                      for f, evs in verdicts.items()}}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

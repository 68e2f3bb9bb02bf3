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

from timingbench.calibration.judging import corpus_figures, format_figures
from timingbench.config import load_config


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path, help="corpus folder (truth.jsonl, manifest.jsonl)")
    ap.add_argument("results", type=Path, help="results folder of timingbench score on its clips")
    ap.add_argument("--config", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None, help="also write the figures as JSON")
    args = ap.parse_args()
    out = corpus_figures(args.corpus, args.results, load_config(args.config) if args.config else load_config())
    print(f"corpus {args.corpus} (split {', '.join(out['splits'])}), results {args.results}")
    print(format_figures(out["figures"], out["bands"]))
    if out["splits"] == ["dev"]:
        for fam, evs in out["verdicts"].items():
            for ev, (ok, why) in evs.items():
                print(f"{fam} by {ev}: {'reaches the bar' if ok else 'exempt: ' + str(why)}")
    if args.json:
        args.json.write_text(json.dumps({k: out[k] for k in ("splits", "figures", "verdicts")}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Entrance AUCs of the tagger evidence's designs, pooled over several rendered corpora.

Usage::

    .venv/bin/python tools/design_auc.py --split dev --cache DIR \\
        WORK/real WORK/dev-identity WORK/dev-identity-timgm WORK/dev [--designs network,tagger,fusion]

``timingbench evidence eval --annotations A --clips C --designs`` on several corpora at once
(:func:`timingbench.calibration.evidence_auc.evaluate_corpus_designs`): the probes of every
corpus are pooled before the AUC per family. Only the rows of ``--split`` are read (``dev``
to choose designs; ``validation`` only measures).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from timingbench.calibration.evidence_auc import evaluate_corpus_designs
from timingbench.config import load_config
from timingbench.families import FAMILY_NAMES
from timingbench.identity.tagger import DESIGNS


def main() -> int:
    """Print one row of per-family entrance AUCs per design, then the probe counts."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpora", nargs="+", type=Path,
                    help="rendered corpus folders (clips/, prompts.jsonl, truth.jsonl)")
    ap.add_argument("--split", choices=["dev", "validation"], required=True)
    ap.add_argument("--designs", default=",".join(DESIGNS))
    ap.add_argument("--cache", default=None, help="feature cache folder")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", type=Path, default=None, help="write the tables as JSON here")
    args = ap.parse_args()
    rep = evaluate_corpus_designs([(root / "truth.jsonl", root / "clips") for root in args.corpora], load_config(),
                                  designs=tuple(args.designs.split(",")), split=args.split, cache_dir=args.cache,
                                  jobs=args.jobs)
    tables = rep["tables"]
    print("design".ljust(12) + " ".join(f[:7].rjust(7) for f in FAMILY_NAMES)
          + "   (entrance AUC, true vs decoy + pre-existing)")
    for design, tab in tables.items():
        cells = [tab["entry"]["families"][f]["auc_all"] for f in FAMILY_NAMES]
        print(design.ljust(12) + " ".join("      -" if v is None else f"{v:7.3f}" for v in cells))
    n = next(iter(tables.values()))["entry"]["families"]
    print("n (true/decoy/pre): " + ", ".join(f"{f} {n[f]['n_true']}/{n[f]['n_decoy']}/{n[f]['n_pre']}"
                                             for f in FAMILY_NAMES))
    if args.out is not None:
        args.out.write_text(json.dumps(tables, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

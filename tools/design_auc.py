"""Entrance and exit AUCs of the tagger evidence's designs, pooled over several annotated corpora.

Usage::

    .venv/bin/python tools/design_auc.py --split dev --cache DIR \\
        WORK/real WORK/dev-identity WORK/dev-identity-timgm WORK/dev [--designs network,tagger,fusion]

Like ``timingbench evidence eval --annotations ... --designs`` (one corpus at a time), but the
probes of every corpus are pooled before the AUC per family: true entrances (exits) against
decoys and pre-existing targets, each scored with the gate's score
(:func:`timingbench.identity.gate_score`) under each design applied to every family. Only
the rows of ``--split`` are read (``dev`` to choose designs; ``validation`` only measures).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from timingbench.calibration.evaluate import load_corpus
from timingbench.calibration.evidence_auc import _annotations, corpus_probes
from timingbench.calibration.groups import scenarios_from_manifest
from timingbench.config import load_config
from timingbench.evidence.metrics import Probe, auc_table
from timingbench.executors import LocalExecutor
from timingbench.features.semantic import tagger_tables
from timingbench.features.tagger_evidence import DESIGNS, tagger_evidence
from timingbench.identity import gate_score
from timingbench.runner import ScoreOptions


def main() -> int:
    """Print one row of per-family entrance AUCs (and exit AUCs) per design."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpora", nargs="+", type=Path,
                    help="rendered corpus folders (clips/, prompts.jsonl, truth.jsonl)")
    ap.add_argument("--split", choices=["dev", "validation"], required=True)
    ap.add_argument("--designs", default=",".join(DESIGNS))
    ap.add_argument("--cache", default=None, help="feature cache folder")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", type=Path, default=None, help="write the tables as JSON here")
    args = ap.parse_args()
    cfg = load_config()
    classes, nonmusic, _ = tagger_tables(cfg.params.families)
    opts = ScoreOptions(separation="dsp", family_evidence="trained", cache_dir=args.cache)
    corpora = []
    for root in args.corpora:
        ann = _annotations(root / "truth.jsonl", args.split)
        if not ann.layer1:
            continue
        c = load_corpus(root / "clips", root / "prompts.jsonl", ann, cfg, opts, executor=LocalExecutor(args.jobs))
        probes, clip_of = corpus_probes(c, ann, cfg, scenarios_from_manifest(root / "clips"))
        corpora.append((c, probes, clip_of))
    tables = {}
    for design in args.designs.split(","):
        sec = dataclasses.replace(cfg.params.evidence, design_by_family={f: design for f in classes})
        pooled: list[Probe] = []
        scores: dict[int, float | None] = {}
        for k, (c, probes, clip_of) in enumerate(corpora):
            evs = {clip: tagger_evidence(bank, evidence_params=sec, tagger_params=cfg.params.tagger, classes=classes,
                                         nonmusic_classes=nonmusic, exempt={}) for clip, bank in c.banks.items()}
            for pr in probes:
                ev = evs.get(clip_of.get(pr.clip, ""))
                s = None
                if ev is not None and pr.family in ev.curves:
                    ch = (ev.entered if pr.kind == "entry" else ev.left)[pr.family]
                    s = gate_score(ev.curves[pr.family], ch, ev.times, pr.time_s, params=cfg.params.evidence,
                                   kind=pr.kind)
                q = Probe(k * 100000 + pr.clip, pr.family, pr.time_s, pr.kind, pr.role)
                pooled.append(q)
                scores[id(q)] = s
        tables[design] = auc_table(pooled, lambda q, scores=scores: scores[id(q)])
    fams = list(classes)
    print("design".ljust(12) + " ".join(f[:7].rjust(7) for f in fams)
          + "   (entrance AUC, true vs decoy + pre-existing)")
    for design, tab in tables.items():
        cells = [tab["entry"]["families"][f]["auc_all"] for f in fams]
        print(design.ljust(12) + " ".join("      -" if v is None else f"{v:7.3f}" for v in cells))
    n = {f: tables[next(iter(tables))]["entry"]["families"][f] for f in fams}
    print("n (true/decoy/pre): " + ", ".join(f"{f} {r['n_true']}/{r['n_decoy']}/{r['n_pre']}" for f, r in n.items()))
    if args.out is not None:
        args.out.write_text(json.dumps(tables, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

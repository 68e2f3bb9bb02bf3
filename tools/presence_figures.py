"""Figures of the presence detection on a corpus split, at the configured thresholds (measures only).

For every annotated instrument entrance and exit of the split, with every family's evidence read
(whatever the registry judges), the presence detection's candidate and step size are computed once;
the counts per family then apply the thresholds the configuration holds
(``presence.entry_min_step_by_family``, ``exit_min_step_by_family``). Nothing is fitted here: run it
on validation or held-out corpora to measure what ``timingbench calibrate evidence`` chose on dev.

Usage::

    .venv/bin/python tools/presence_figures.py --split validation /work/corpora/real [--cache DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from timingbench.annotation_io import AnnotationSet, load_annotations
from timingbench.calibration.dev_corpora import DevCorpus
from timingbench.calibration.evaluate import load_corpus
from timingbench.calibration.groups import scenarios_from_manifest
from timingbench.calibration.presence_fit import configured_report, event_stats, format_report
from timingbench.config import load_config
from timingbench.executors import LocalExecutor
from timingbench.families import FAMILY_NAMES, judging_every_family
from timingbench.runner import ScoreOptions


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpora", nargs="+", type=Path, help="corpus folders (clips/, prompts.jsonl, truth.jsonl)")
    ap.add_argument("--split", choices=["dev", "validation", "all"], default="validation")
    ap.add_argument("--config", type=Path, default=None)
    ap.add_argument("--cache", default=None, help="feature cache folder")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--json", type=Path, default=None, help="also write the report and every event's statistics")
    args = ap.parse_args()
    config = load_config(args.config) if args.config else load_config()
    read_all = judging_every_family(config)
    opts = ScoreOptions(separation="dsp", family_evidence="tagger", cache_dir=args.cache)
    corpora = []
    for root in args.corpora:
        ann = load_annotations(root / "truth.jsonl")
        rows = [r for r in ann.layer1 if args.split == "all" or r.split == args.split]
        corpus = load_corpus(root / "clips", root / "prompts.jsonl", AnnotationSet(layer1=rows, errors=ann.errors,
                                                                                   source=ann.source),
                             read_all, opts, executor=LocalExecutor(args.jobs))
        corpora.append(DevCorpus(root, corpus, scenarios_from_manifest(root / "clips")))
    stats = event_stats(corpora, read_all)
    report = configured_report(stats, config, FAMILY_NAMES, offset_match_s=config.params.calibration.offset_match_s)
    print(f"split {args.split}: {', '.join(str(c.root) for c in corpora)}")
    print(format_report(report))
    if args.json is not None:
        report["events"] = [dict(vars(s)) for s in stats]
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

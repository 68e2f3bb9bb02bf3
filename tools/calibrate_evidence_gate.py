"""Pick the trained evidence gate's thresholds on the rendered dev corpus (never on validation).

Usage: .venv/bin/python tools/calibrate_evidence_gate.py DEV_CORPUS_DIR

Only the events of families the evidence judges count (exempt families and whole-mix
events do not read these constants). The corpus is scored once per grid point on its cached banks and evidence (only the
detectors and gates re-run). For every point the instrument events' on-time credit rate
and negative credit rate are printed; the chosen point maximises
``on-time credited - 3 x negatives credited`` (a false credit costs three missed
credits), ties broken toward the stricter point.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

from timingbench.annotation_io import load_annotations
from timingbench.calibration.evaluate import load_corpus, score_corpus
from timingbench.calibration.groups import group_report, scenarios_from_manifest
from timingbench.config import load_config
from timingbench.runner import ScoreOptions


def main(corpus_dir: str) -> None:
    root = Path(corpus_dir)
    cfg = load_config()
    ann = load_annotations(root / "truth.jsonl")
    corpus = load_corpus(root / "clips", root / "prompts.jsonl", ann, cfg,
                         ScoreOptions(separation="dsp", semantic_backend="trained"))
    scen = scenarios_from_manifest(root / "clips")
    # only the events the evidence judges: exempt families and whole-mix events ignore these constants
    exempt = {"mix", *dict(cfg.params.evidence.exempt_families or {})}
    best = None
    print(f"{'entry':>6}{'exit':>6}{'quiet':>6}{'present':>8}{'on-time cr':>12}{'neg cr':>8}{'pre rej':>8}"
          f"{'score':>8}")
    for entry, exit_, quiet, present in itertools.product((0.3, 0.5, 0.7), (0.3, 0.5, 0.7), (0.3, 0.5, 0.7),
                                                          (0.25, 0.35, 0.5)):
        c = cfg.with_value("evidence.entry_min_prob", entry).with_value("evidence.exit_min_prob", exit_) \
            .with_value("evidence.quiet_max", quiet).with_value("evidence.present_prob", present)
        rows = [r for r in score_corpus(corpus, c, offset_match_s=0.25) if r["family"] not in exempt]
        rep = group_report(rows, exempt=[], scenarios=scen, offset_match_s=0.25)
        on = sum((g["stats"]["on_time_credited"] or 0) * g["stats"]["n_on_time"] for g in rep.values())
        n_on = sum(g["stats"]["n_on_time"] for g in rep.values())
        neg = sum((g["stats"]["negative_credited"] or 0) * g["stats"]["n_negative"] for g in rep.values())
        n_neg = sum(g["stats"]["n_negative"] for g in rep.values())
        pre = sum((g["stats"]["pre_existing_rejected"] or 0) * g["stats"]["n_pre_existing"] for g in rep.values())
        n_pre = sum(g["stats"]["n_pre_existing"] for g in rep.values())
        score = on / max(n_on, 1) - 3 * neg / max(n_neg, 1)
        print(f"{entry:>6}{exit_:>6}{quiet:>6}{present:>8}{on / max(n_on, 1):>12.3f}{neg / max(n_neg, 1):>8.3f}"
              f"{pre / max(n_pre, 1):>8.3f}{score:>8.3f}")
        key = (round(score, 6), entry, exit_, -quiet, present)
        if best is None or key > best[0]:
            best = (key, entry, exit_, quiet, present)
    assert best is not None
    print(f"chosen: entry_min_prob {best[1]}, exit_min_prob {best[2]}, quiet_max {best[3]}, present_prob {best[4]} "
          f"(on dev: {n_on} on-time, {n_neg} negative instrument events)")


if __name__ == "__main__":
    main(sys.argv[1])

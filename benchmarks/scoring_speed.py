"""Speed of `timingbench score` and the cost of chance credit.

Scores N clips of a rendered corpus with ``--separation dsp`` in one process:

1. end to end per clip (decode + feature bank computed afresh + family evidence + all
   detectors, gates and tempo), with chance credit;
2. the detectors-and-gates stage alone on the in-memory banks, with and without the
   16-draw chance credit -- the baseline is the same stage without chance credit, so the
   ratio is the price of p_chance.

Usage::

    .venv/bin/python benchmarks/scoring_speed.py --corpus /tmp/corp/val --n 20
    (render one with: timingbench render --corpus validation --out /tmp/corp/val)
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from timingbench.audio import load_clip
from timingbench.config import load_config
from timingbench.features import compute_bank
from timingbench.prompts import load_prompts, match_clips
from timingbench.runner import ScoreOptions, family_evidence_for, score_bank


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True, help="rendered corpus folder (clips/, prompts.jsonl)")
    ap.add_argument("--n", type=int, default=20, help="number of clips")
    ap.add_argument("--repeats", type=int, default=3, help="repeats of the detector-stage timing")
    args = ap.parse_args()
    cfg = load_config()
    corpus = Path(args.corpus)
    ps = load_prompts(corpus / "prompts.jsonl")
    refs = [r for r in match_clips(corpus / "clips", ps.prompts).clips if ps.prompts[r.prompt_id].events][: args.n]
    opts = ScoreOptions(separation="dsp")
    banks, evid = [], []
    t0 = time.perf_counter()
    for ref in refs:
        clip = load_clip(ref.path, cfg)
        bank = compute_bank(clip, cfg, separation="dsp")
        ev, info = family_evidence_for(bank, ps.prompts[ref.prompt_id], cfg, opts)
        score_bank(bank, ps.prompts[ref.prompt_id], ref, cfg, opts, family_evidence=ev, evidence_info=info)
        banks.append(bank)
        evid.append((ev, info))
    end_to_end = (time.perf_counter() - t0) / len(refs)

    def stage(chance: bool) -> float:
        o = ScoreOptions(separation="dsp", chance=chance)
        best = float("inf")
        for _ in range(args.repeats):
            t = time.perf_counter()
            for ref, bank, (ev, info) in zip(refs, banks, evid, strict=True):
                score_bank(bank, ps.prompts[ref.prompt_id], ref, cfg, o, family_evidence=ev, evidence_info=info)
            best = min(best, time.perf_counter() - t)
        return best / len(refs)

    without = stage(False)
    with_chance = stage(True)
    n_events = sum(len(ps.prompts[r.prompt_id].events) for r in refs)
    print(f"machine: {os.cpu_count()} cores; {len(refs)} clips, {n_events} events, separation dsp")
    print(f"end to end (decode + bank + evidence + scoring with chance): {end_to_end:.2f} s per clip")
    print(f"detectors + gates, no chance credit (baseline): {1000 * without:.1f} ms per clip")
    print(f"detectors + gates, with 16-draw chance credit: {1000 * with_chance:.1f} ms per clip")
    print(f"chance-credit cost, stage ratio: {with_chance / without:.2f}x")
    print(f"chance-credit cost, end-to-end ratio: {end_to_end / (end_to_end - with_chance + without):.3f}x")


if __name__ == "__main__":
    main()

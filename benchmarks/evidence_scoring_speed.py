"""Cold scoring with the trained family evidence against today's musicnn evidence, same clips, same process.

    .venv/bin/python benchmarks/evidence_scoring_speed.py --corpus /tmp/corp/val --n 20
    (render one with: timingbench render --corpus validation --out /tmp/corp/val)

For each of the first N clips whose prompt has an instrument event, and for each
family-evidence backend (``trained``, then the baseline ``musicnn``): decode, compute the
feature bank afresh (``--separation dsp``, no cache), compute the family evidence, and
score every event (no chance credit). Process CPU seconds per clip on one torch thread
are reported, and the ratio musicnn / trained.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import torch

from timingbench.audio import load_clip
from timingbench.config import load_config
from timingbench.features import compute_bank
from timingbench.prompts import load_prompts, match_clips
from timingbench.runner import ScoreOptions, family_evidence_for, score_bank
from timingbench.scoring import needs_family_evidence


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True, help="rendered corpus folder (clips/, prompts.jsonl)")
    ap.add_argument("--n", type=int, default=20, help="number of clips")
    args = ap.parse_args()
    torch.set_num_threads(1)
    cfg = load_config()
    corpus = Path(args.corpus)
    ps = load_prompts(corpus / "prompts.jsonl")
    refs = [r for r in match_clips(corpus / "clips", ps.prompts).clips
            if needs_family_evidence(ps.prompts[r.prompt_id], "musicnn")][: args.n]
    cpu: dict[str, float] = {}
    for backend in ("trained", "musicnn"):
        opts = ScoreOptions(separation="dsp", family_evidence=backend, chance=False)
        # warm the model outside the timing
        clip = load_clip(refs[0].path, cfg)
        family_evidence_for(compute_bank(clip, cfg, separation="dsp"), ps.prompts[refs[0].prompt_id], cfg, opts)
        c0 = time.process_time()
        for ref in refs:
            prompt = ps.prompts[ref.prompt_id]
            clip = load_clip(ref.path, cfg)
            bank = compute_bank(clip, cfg, separation="dsp")
            ev, info = family_evidence_for(bank, prompt, cfg, opts)
            score_bank(bank, prompt, ref, cfg, opts, family_evidence=ev, evidence_info=info)
        cpu[backend] = (time.process_time() - c0) / len(refs)
    print(f"{len(refs)} clips with instrument events, --separation dsp, cold banks, one torch thread, "
          f"load average {os.getloadavg()[0]:.2f}")
    for b, s in cpu.items():
        print(f"  {b:<8} {s:.3f} s CPU per clip" + ("  (baseline)" if b == "musicnn" else ""))
    print(f"ratio musicnn / trained: {cpu['musicnn'] / cpu['trained']:.2f}x")


if __name__ == "__main__":
    main()

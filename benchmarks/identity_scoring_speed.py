"""Cold scoring CPU seconds per clip: this tree's identity rules against a baseline tree's, in one run.

    git worktree add /tmp/tb-base 6a2b59e        # the baseline: the scorer before timingbench.identity
    .venv/bin/python benchmarks/identity_scoring_speed.py --corpus /tmp/corp/val --n 30 --baseline-tree /tmp/tb-base
    (render the corpus with: timingbench render --corpus validation --out /tmp/corp/val)

For the first N clips whose prompt has an instrument event: decode, compute the feature
bank afresh (``--separation dsp``, no cache), compute the trained family evidence and
score every event (no chance credit), on one torch thread. Each tree is measured in its
own interpreter (the two trees are two versions of one package), alternately twice
(baseline, this tree, baseline, this tree), and the lower of each tree's two figures is
kept. Reported: process CPU seconds per clip and the ratio this tree / baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

MEASURE = r"""
import json, sys, time
import torch
from pathlib import Path
from timingbench.audio import load_clip
from timingbench.config import load_config
from timingbench.features import compute_bank
from timingbench.prompts import load_prompts, match_clips
from timingbench.runner import ScoreOptions, family_evidence_for, score_bank
from timingbench.scoring import needs_family_evidence
torch.set_num_threads(1)
corpus, n = Path(sys.argv[1]), int(sys.argv[2])
cfg = load_config()
ps = load_prompts(corpus / "prompts.jsonl")
refs = [r for r in match_clips(corpus / "clips", ps.prompts).clips
        if needs_family_evidence(ps.prompts[r.prompt_id], "trained")][:n]
opts = ScoreOptions(separation="dsp", family_evidence="trained", chance=False)
clip = load_clip(refs[0].path, cfg)
family_evidence_for(compute_bank(clip, cfg, separation="dsp"), ps.prompts[refs[0].prompt_id], cfg, opts)
c0 = time.process_time()
for ref in refs:
    prompt = ps.prompts[ref.prompt_id]
    bank = compute_bank(load_clip(ref.path, cfg), cfg, separation="dsp")
    ev, info = family_evidence_for(bank, prompt, cfg, opts)
    score_bank(bank, prompt, ref, cfg, opts, family_evidence=ev, evidence_info=info)
print(json.dumps({"clips": len(refs), "cpu_s_per_clip": (time.process_time() - c0) / len(refs)}))
"""


def _measure(tree: Path, corpus: Path, n: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", MEASURE, str(corpus), str(n)], cwd=tree, env=env, check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True, type=Path, help="rendered corpus folder (clips/, prompts.jsonl)")
    ap.add_argument("--n", type=int, default=30, help="number of clips")
    ap.add_argument("--baseline-tree", required=True, type=Path, help="a checkout of the baseline commit")
    args = ap.parse_args()
    here = Path(__file__).resolve().parents[1]
    runs: dict[str, list[float]] = {"baseline": [], "this tree": []}
    clips = 0
    for _ in range(2):
        for name, tree in (("baseline", args.baseline_tree.resolve()), ("this tree", here)):
            r = _measure(tree, args.corpus.resolve(), args.n)
            runs[name].append(r["cpu_s_per_clip"])
            clips = int(r["clips"])
    best = {k: min(v) for k, v in runs.items()}
    print(f"{clips} clips with instrument events, --separation dsp, cold banks, trained evidence, one torch thread, "
          f"load average {os.getloadavg()[0]:.2f}")
    for k, v in best.items():
        print(f"  {k:<10} {v:.3f} s CPU per clip (runs: {', '.join(f'{x:.3f}' for x in runs[k])})")
    print(f"ratio this tree / baseline: {best['this tree'] / best['baseline']:.2f}x")


if __name__ == "__main__":
    main()

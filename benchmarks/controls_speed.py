"""Added CPU seconds per clip of control-adherence scoring, in one process.

    .venv/bin/python benchmarks/controls_speed.py --corpus /tmp/controls/validation --n 12
    (render the corpus with: timingbench render --corpus validation --controls --out /tmp/controls/validation)

For the first N clips whose prompt carries controls, each clip is decoded and scored with
``score_decoded`` (feature bank computed afresh, ``--separation dsp``, chance on) twice,
alternately: once with the prompt's controls removed, once with every control the
renderer wrote. Reported: process CPU seconds per clip of each, the added seconds, and
the ratio (with / without). A warm-up clip loads the models first, so one-off model
loading is not counted.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

from timingbench.audio import load_clip
from timingbench.config import load_config
from timingbench.prompts import load_prompts, match_clips
from timingbench.runner import ScoreOptions, score_decoded


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--n", type=int, default=12)
    args = ap.parse_args()
    cfg = load_config()
    ps = load_prompts(args.corpus / "prompts.jsonl")
    refs = [r for r in match_clips(args.corpus / "clips", ps.prompts).clips
            if ps.prompts[r.prompt_id].controls is not None][: args.n + 1]
    opts = ScoreOptions(separation="dsp", family_evidence="trained", chance=True, use_cache=False)
    clips = [load_clip(r.path, cfg) for r in refs]
    cpu = {"without": 0.0, "with": 0.0}
    for i, (ref, clip) in enumerate(zip(refs, clips, strict=True)):
        prompt = ps.prompts[ref.prompt_id]
        bare = dataclasses.replace(prompt, controls=None)
        for label, p in (("without", bare), ("with", prompt)):
            t0 = time.process_time()
            score_decoded(clip, ref, p, cfg, opts)
            if i > 0:  # clip 0 warms the models up
                cpu[label] += time.process_time() - t0
    n = len(refs) - 1
    a, b = cpu["without"] / n, cpu["with"] / n
    print(f"{n} clips: scoring without controls {a:.2f} CPU-s/clip, with all controls {b:.2f} CPU-s/clip, "
          f"added {b - a:.2f} CPU-s/clip, ratio {b / a:.2f}x")


if __name__ == "__main__":
    main()

"""Family evidence cost per 35-s clip: the trained network against musicnn, same clip, same process.

    .venv/bin/python benchmarks/evidence_speed.py [--repeats 3]

One 35-s clip is rendered with the reference renderer (``rock_pop`` recipe
``entry_on_time``) and decoded; its feature bank is built once. Then, on one torch
thread, process CPU time (``time.process_time``, the fair figure on a shared machine) and
wall time of:

- **trained**: the shipped family evidence network on the bank's log-mel
  (:func:`timingbench.models.family_net_infer.run_network`) — everything the ``trained`` backend
  computes per clip;
- **musicnn** (the named baseline): the musicnn taggram of the same clip at the
  configured hop (:func:`timingbench.models.musicnn.taggram`, what the ``musicnn``
  backend computes per clip, its level normalisation included).

The median over ``--repeats`` warm runs is reported (the models are loaded before timing)
with the ratio musicnn / trained.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import torch

from timingbench.audio import level_normalised, load_clip
from timingbench.config import load_config
from timingbench.features import get_bank
from timingbench.models.family_net_infer import run_network
from timingbench.models.musicnn import taggram


def _timed(fn, repeats: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    cpu, wall = [], []
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return statistics.median(cpu), statistics.median(wall)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(1)
    cfg = load_config()
    from timingbench.cli import main as cli

    with tempfile.TemporaryDirectory() as tmp:
        cli(["render", "--recipe", "entry_on_time", "--n", "1", "--seed", "1", "--duration", "35",
             "--out", tmp, "--jobs", "1", "--no-progress"])
        wav = next((Path(tmp) / "clips").glob("*.wav"))
        clip = load_clip(wav, cfg)
    bank = get_bank(clip, cfg, separation="none", cache_dir=None)
    sec = cfg.params.semantic
    y = level_normalised(clip.samples, sr=clip.sr, loud_dbfs=sec.audio.input_loud_level_dbfs,
                         frame_s=cfg.params.audio.level_frame_s, percentile=cfg.params.audio.level_percentile)
    run_network(bank.logmel, sr=bank.sr, hop=bank.hop)
    taggram(y, sr=clip.sr, hop_s=sec.hop_s)
    t_cpu, t_wall = _timed(lambda: run_network(bank.logmel, sr=bank.sr, hop=bank.hop), args.repeats)
    m_cpu, m_wall = _timed(lambda: taggram(y, sr=clip.sr, hop_s=sec.hop_s), args.repeats)
    print(f"clip {clip.duration_s:.1f} s, torch threads 1, load average {os.getloadavg()[0]:.2f}")
    print(f"trained network : {t_cpu:.3f} s CPU, {t_wall:.3f} s wall per clip")
    print(f"musicnn taggram : {m_cpu:.3f} s CPU, {m_wall:.3f} s wall per clip (baseline)")
    print(f"ratio musicnn / trained: {m_cpu / t_cpu:.1f}x CPU, {m_wall / t_wall:.1f}x wall")


if __name__ == "__main__":
    main()

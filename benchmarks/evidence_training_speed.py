"""Training cost of the family evidence network: cached arrays and two cores against the previous pipeline.

    .venv/bin/python benchmarks/evidence_training_speed.py --data DATA_FOLDER --dev DEV_FOLDER \
        [--arrays ARRAYS --dev-arrays DEV_ARRAYS] [--clips 512] [--epochs 1] [--render 8]

DATA_FOLDER and DEV_FOLDER are folders written by ``timingbench evidence make-data``; their
arrays are read from them, or from ARRAYS / DEV_ARRAYS where ``timingbench evidence
cache-arrays --out`` wrote them elsewhere. In one
process, on the same first ``--clips`` training clips and the dev folder, with the shipped
network shape, each pipeline trains ``--epochs`` epochs from the same seed; process CPU
time (``time.process_time``, all threads; the fair figure on a shared machine) and wall
time are reported per epoch and per 1,000 clips:

- **previous**: what ``evidence train`` did before the arrays: every shard
  (``part-*.npz``) decoded into memory (timed separately, once per run), batches cut on
  the training thread, one torch thread;
- **arrays, N threads, prefetch on/off**: the memory-mapped arrays, torch on 1 or 2
  threads, the next batch assembled on a background thread or not.

The dev pass of every epoch (losses and the dev AUC) is included. With ``--render N``
the one-off cost of making data (FluidSynth rendering, effects, labels, the bank's
log-mel and the arrays) is measured on N clips of the first training soundfont and
given per 1,000 clips (CPU of this process and of its FluidSynth / ffmpeg children).
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

from timingbench.config import load_config
from timingbench.identity.training.arrays import ArraySet, TargetParams, open_arrays
from timingbench.identity.training.dataset import TRAIN_SOUNDFONTS, load_dataset, make_dataset
from timingbench.identity.training.targets import presence_targets
from timingbench.identity.training.train import TrainParams, train_model


def _in_memory(folder: Path, tp: TargetParams, limit: int | None) -> tuple[ArraySet, float, float]:
    """The previous way in: decode every shard into memory; returns the set and its CPU / wall seconds."""
    c0, w0 = time.process_time(), time.perf_counter()
    mel, lab, _ = load_dataset(folder)
    if limit:
        mel, lab = mel[:limit], lab[:limit]
    pres = presence_targets(lab, tp.stride)
    chg = tp.change(pres)
    return ArraySet([(mel, lab, pres, chg)]), time.process_time() - c0, time.perf_counter() - w0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--dev", type=Path, required=True)
    ap.add_argument("--arrays", type=Path, default=None)
    ap.add_argument("--dev-arrays", type=Path, default=None)
    ap.add_argument("--clips", type=int, default=512)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--render", type=int, default=0)
    args = ap.parse_args()
    cfg = load_config()
    tp = TargetParams.from_config(cfg)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; {args.clips} training clips, "
          f"{args.epochs} epoch(s) per pipeline")
    prev, lc, lw = _in_memory(args.data, tp, args.clips)
    prev_dev, dc, dw = _in_memory(args.dev, tp, None)
    print(f"previous: decoding the shards into memory took {lc + dc:.1f} s CPU, {lw + dw:.1f} s wall (once per run)")
    mapped = ArraySet([open_arrays(args.arrays or args.data, cfg=cfg)], limit=args.clips)
    mapped_dev = ArraySet([open_arrays(args.dev_arrays or args.dev, cfg=cfg)])
    runs = [("previous (in-memory shards, 1 thread)", prev, prev_dev, 1, False),
            ("arrays, 1 thread, prefetch", mapped, mapped_dev, 1, True),
            ("arrays, 2 threads, no prefetch", mapped, mapped_dev, 2, False),
            ("arrays, 2 threads, prefetch", mapped, mapped_dev, 2, True)]
    base = None
    print("| pipeline | CPU s / epoch | wall s / epoch | CPU s / 1,000 clips | wall s / 1,000 clips |")
    print("|---|---|---|---|---|")
    for name, tr, dv, threads, prefetch in runs:
        params = TrainParams(epochs=args.epochs, seed=0, threads=threads, prefetch=prefetch)
        c0, w0 = time.process_time(), time.perf_counter()
        train_model(tr, dv, cfg=cfg, params=params, log=lambda s: None)
        cpu, wall = (time.process_time() - c0) / args.epochs, (time.perf_counter() - w0) / args.epochs
        base = base or (cpu, wall)
        k = 1000.0 / len(tr)
        print(f"| {name} | {cpu:.1f} | {wall:.1f} | {cpu * k:.1f} | {wall * k:.1f} |  (wall x{base[1] / wall:.2f})")
    if args.render:
        with tempfile.TemporaryDirectory(prefix="tb-evid-bench-") as tmp:
            ch0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            c0, w0 = time.process_time(), time.perf_counter()
            make_dataset(Path(tmp) / "d", cfg=cfg, n_clips=args.render, seed=99, soundfonts=[TRAIN_SOUNDFONTS[0]],
                         chunk=args.render, progress=lambda *_: None)
            ch1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = time.process_time() - c0 + (ch1.ru_utime + ch1.ru_stime) - (ch0.ru_utime + ch0.ru_stime)
            wall = time.perf_counter() - w0
        k = 1000.0 / args.render
        print(f"make-data (render, effects, labels, log-mel, arrays), {args.render} clips: {cpu * k:.0f} s CPU, "
              f"{wall * k:.0f} s wall per 1,000 clips (once per data set)")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

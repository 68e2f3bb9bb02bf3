"""Tempo beat-tracker speed: seconds per 30 s clip, and the speed-up from num_threads.

Run: ``.venv/bin/python benchmarks/tempo_speed.py [--clips 6] [--threads 1,2]``.

Baseline: ``tempo.num_threads = 1`` (the eight RNNs of madmom's ensemble run one after
another in this process), timed in the same process as each alternative. ``num_threads``
> 1 makes madmom run the networks in a process pool; ``intra_op_num_threads`` is
onnxruntime's thread count inside each network. The first call of each configuration
(model loading, pool start) is excluded and reported separately.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from timingbench.config import load_config
from timingbench.detectors.tempo import estimate_tempo
from timingbench.render.reference_signals import drum_pattern

SR = 44100


def _time(config, clips):  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    estimate_tempo(clips[0], sr=SR, tempo=config.params.tempo,
                   audio=config.params.audio)  # warm-up: load models / start pool
    warm = time.perf_counter() - t0
    per = []
    for x in clips:
        t0 = time.perf_counter()
        estimate_tempo(x, sr=SR, tempo=config.params.tempo, audio=config.params.audio)
        per.append(time.perf_counter() - t0)
    return warm, float(np.median(per)), float(np.mean(per))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--clips", type=int, default=6, help="30 s clips per configuration")
    ap.add_argument("--threads", default="1,2", help="num_threads values (first = baseline)")
    ap.add_argument("--intra", default="1,2", help="intra_op_num_threads values")
    args = ap.parse_args()
    base = load_config()
    clips = [drum_pattern(bpm=float(b), duration_s=30.0, seed=i)
             for i, b in enumerate(np.linspace(90.0, 170.0, args.clips))]
    print(f"cores: {os.cpu_count()}; {args.clips} clips of 30 s (numpy drum patterns)")
    rows = []
    for nt in (int(v) for v in args.threads.split(",")):
        for intra in (int(v) for v in args.intra.split(",")):
            cfg = base.with_value("tempo.num_threads", nt).with_value("tempo.intra_op_num_threads", intra)
            warm, med, mean = _time(cfg, clips)
            rows.append((nt, intra, warm, med, mean))
    b_med = rows[0][3]
    print(f"{'num_threads':>11} {'intra_op':>8} {'first call s':>12} {'median s/clip':>13} "
          f"{'mean s/clip':>11} {'speed-up':>8}")
    for nt, intra, warm, med, mean in rows:
        print(f"{nt:>11} {intra:>8} {warm:>12.2f} {med:>13.3f} {mean:>11.3f} {b_med / med:>7.2f}x")


if __name__ == "__main__":
    main()

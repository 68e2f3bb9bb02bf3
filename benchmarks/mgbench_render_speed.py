"""Render time of the MGBench-3N test split: batched FluidSynth runs against one run per clip.

Samples the 3N test split (seed 0; the first ``--clips`` clips), renders it with the
generator's batching (``mgbench_gen.render_batch_clips`` clips per FluidSynth run) and,
as the baseline, with one FluidSynth run per clip, in the same process, one process
each (jobs=1). Prints wall seconds, CPU seconds (FluidSynth included) and clips/s of
both, their ratio, and the load average.

    .venv/bin/python benchmarks/mgbench_render_speed.py --clips 900 [--soundfont SF]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import tempfile
import time
from pathlib import Path

from timingbench.config import load_config
from timingbench.mgbench_gen.dataset import make_excerpts, make_request, render_audio


def _cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> int:
    """Run both renderings and print one line each plus the ratio."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--clips", type=int, default=900)
    ap.add_argument("--soundfont", default=None)
    args = ap.parse_args()
    cfg = load_config()
    gen, render = cfg.params.mgbench_gen, cfg.params.render
    req = make_request("3n", "test", seed=0, n_clips=args.clips, soundfont=args.soundfont, params=gen, render=render)
    excerpts, _ = make_excerpts(req, gen)
    audio_s = sum(e.duration_s for e in excerpts)
    print(f"MGBench-3N test, first {len(excerpts)} clips, {audio_s:.0f} s of audio, soundfont {req.soundfont.name}, "
          f"{os.cpu_count()} cores")
    results = {}
    for name, batch in (("batched", gen.render_batch_clips), ("one run per clip", 1)):
        c = dataclasses.replace(gen, render_batch_clips=batch)
        with tempfile.TemporaryDirectory(prefix="tb-mg-bench-") as tmp:
            load0 = os.getloadavg()[0]
            c0, t0 = _cpu_s(), time.perf_counter()
            render_audio(excerpts, out_dir=Path(tmp), soundfont=req.soundfont, gen=c, render=render, jobs=1)
            wall, cpu = time.perf_counter() - t0, _cpu_s() - c0
            load = (load0 + os.getloadavg()[0]) / 2
        results[name] = (wall, cpu)
        print(f"{name} ({batch} clips/run): wall {wall:.1f} s, CPU {cpu:.1f} s ({cpu / len(excerpts):.3f} s/clip), "
              f"{len(excerpts) / wall:.2f} clips/s, load average ~{load:.1f}")
    (bw, bc), (sw, sc) = results["batched"], results["one run per clip"]
    print(f"ratio: {sw / bw:.1f}x less wall time, {sc / bc:.1f}x less CPU time than one run per clip")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

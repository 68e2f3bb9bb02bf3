"""Bounded decoding: only the analysis window is held, lengths stay exact, lying headers are caught."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from timingbench.audio import load_clip
from timingbench.config import Config

SR = 44100


def _tone(seconds: float, channels: int = 2, sr: int = SR) -> np.ndarray:
    t = np.arange(int(seconds * sr)) / sr
    x = 0.3 * np.sin(2 * np.pi * 440 * t) + 0.05 * np.sin(2 * np.pi * 3 * t)
    return np.stack([x * (1 + 0.1 * c) for c in range(channels)], axis=1).astype(np.float32)


def _whole_file(path: Path, config: Config) -> tuple[np.ndarray, float]:
    """The reference: decode everything, then cut (what bounded decoding must reproduce)."""
    data, sr = sf.read(str(path), dtype="float32", always_2d=True)
    window = float(config.params.audio.analysis_window_s)
    keep = min(len(data), int(np.ceil((window + 0.1) * sr)))
    mono = data[:keep].mean(axis=1, dtype=np.float64)
    n = min(len(mono), int(round(window * sr)))
    return mono[:n].astype(np.float32), len(data) / sr


@pytest.mark.parametrize("fmt,subtype", [("WAV", "PCM_16"), ("FLAC", "PCM_16"), ("WAV", "FLOAT")])
def test_long_file_decodes_like_the_whole_file_read(tmp_path: Path, config: Config, fmt: str, subtype: str) -> None:
    path = tmp_path / f"long.{fmt.lower()}"
    sf.write(path, _tone(50.0), SR, format=fmt, subtype=subtype)
    clip = load_clip(path, config)
    ref, dur = _whole_file(path, config)
    assert clip.duration_s == dur == 50.0
    np.testing.assert_array_equal(clip.samples, ref)
    assert clip.window_s == float(config.params.audio.analysis_window_s)


def test_wav_header_claiming_more_frames_than_present(tmp_path: Path, config: Config) -> None:
    path = tmp_path / "truncated.wav"
    sf.write(path, _tone(40.0), SR, subtype="PCM_16")
    data = path.read_bytes()
    kept = 44 + 4 * SR * 10  # the header still says 40 s; 10 s of frames remain
    path.write_bytes(data[:kept])
    clip = load_clip(path, config)
    assert clip.duration_s == pytest.approx(10.0, abs=1e-3)
    assert clip.window_s == pytest.approx(10.0, abs=1e-3)


def test_flac_header_claiming_a_longer_stream(tmp_path: Path, config: Config) -> None:
    path = tmp_path / "lying.flac"
    sf.write(path, _tone(40.0), SR, format="FLAC", subtype="PCM_16")
    raw = bytearray(path.read_bytes())
    # STREAMINFO: 'fLaC', 4-byte block header, then total samples in the low 36 bits of bytes 13..17
    assert raw[:4] == b"fLaC"
    info = raw[8:8 + 34]
    packed = int.from_bytes(info[10:18], "big")
    claimed = 40 * SR * 3  # 120 s
    packed = (packed & ~((1 << 36) - 1)) | claimed
    raw[8 + 10:8 + 18] = packed.to_bytes(8, "big")
    path.write_bytes(bytes(raw))
    assert sf.info(str(path)).frames == claimed  # libsndfile believes the header
    clip = load_clip(path, config)
    assert clip.duration_s == pytest.approx(40.0, abs=0.05)


def test_wav_header_with_unknown_length(tmp_path: Path, config: Config) -> None:
    """A streamed WAV (data size 0xFFFFFFFF, as some recorders write) still gets its true length."""
    path = tmp_path / "stream.wav"
    sf.write(path, _tone(36.0), SR, subtype="PCM_16")
    raw = bytearray(path.read_bytes())
    at = raw.index(b"data")
    raw[at + 4:at + 8] = struct.pack("<I", 0xFFFFFFFF)
    raw[4:8] = struct.pack("<I", 0xFFFFFFFF)
    path.write_bytes(bytes(raw))
    clip = load_clip(path, config)
    assert clip.duration_s == pytest.approx(36.0, abs=1e-3)


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg is not installed")
@pytest.mark.parametrize("ext", ["mp3", "m4a"])
def test_compressed_file_keeps_the_exact_length_and_head(tmp_path: Path, config: Config, ext: str) -> None:
    """mp3 (libsndfile) and m4a (streamed through ffmpeg) match a whole-file decode."""
    wav = tmp_path / "src.wav"
    sf.write(wav, _tone(40.0), SR, subtype="PCM_16")
    path = tmp_path / f"clip.{ext}"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", str(wav), "-b:a", "128k", str(path)], check=True)
    try:
        ref, _ = sf.read(str(path), dtype="float32", always_2d=True)
    except sf.LibsndfileError:
        full = subprocess.run(["ffmpeg", "-v", "error", "-i", str(path), "-map", "0:a:0", "-f", "f32le",
                               "-acodec", "pcm_f32le", "-"], capture_output=True, check=True).stdout
        ref = np.frombuffer(full, dtype="<f4").reshape(-1, 2)
    clip = load_clip(path, config)
    assert clip.duration_s == len(ref) / SR
    window = float(config.params.audio.analysis_window_s)
    want = ref[:int(round(window * SR))].mean(axis=1, dtype=np.float64).astype(np.float32)
    np.testing.assert_array_equal(clip.samples, want)

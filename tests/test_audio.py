"""Tests of audio decoding: every format, any rate and channel count, and bad input."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from timingbench.audio import load_clip
from timingbench.errors import ClipError

needs_ffmpeg = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg not installed")


def _tone(sr: int, seconds: float, channels: int = 1) -> np.ndarray:
    t = np.arange(int(sr * seconds)) / sr
    x = 0.3 * np.sin(2 * np.pi * 440.0 * t)
    return np.stack([x] * channels, axis=1).astype(np.float32)


@pytest.mark.parametrize(("sr", "channels"), [(44100, 1), (48000, 2), (22050, 1), (8000, 6)])
def test_wav_any_rate_and_channels(tmp_path, config, sr, channels):
    p = tmp_path / "a.wav"
    sf.write(p, _tone(sr, 2.0, channels), sr)
    clip = load_clip(p, config)
    assert clip.sr == 44100 and clip.samples.dtype == np.float32
    assert clip.duration_s == pytest.approx(2.0)
    assert len(clip.samples) == pytest.approx(2.0 * 44100, abs=2)
    assert clip.source_sr == sr and clip.source_channels == channels
    # the tone survives resampling at its level
    assert np.sqrt(np.mean(clip.samples[1000:-1000] ** 2)) == pytest.approx(0.3 / np.sqrt(2), rel=0.02)


@needs_ffmpeg
@pytest.mark.parametrize("ext", ["flac", "ogg", "mp3", "m4a"])
def test_compressed_formats(tmp_path, config, ext):
    src = tmp_path / "src.wav"
    sf.write(src, _tone(48000, 3.0, 2), 48000)
    out = tmp_path / f"a.{ext}"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", str(src), str(out)], check=True)
    clip = load_clip(out, config)
    assert clip.duration_s == pytest.approx(3.0, abs=0.1)  # codecs pad a few ms
    spec = np.abs(np.fft.rfft(clip.samples[:44100]))
    assert np.fft.rfftfreq(44100, 1 / 44100)[np.argmax(spec)] == pytest.approx(440.0, abs=2.0)


def test_analysis_window_cuts_tail(tmp_path, config):
    p = tmp_path / "long.wav"
    sf.write(p, _tone(44100, 40.0), 44100)
    clip = load_clip(p, config)
    assert clip.duration_s == pytest.approx(40.0)
    assert clip.window_s == pytest.approx(35.0)


def test_real_mp3_and_wav(realdata, config):
    kick = load_clip(realdata / "beatnet" / "808kick120bpm.mp3", config)
    assert 9.5 < kick.duration_s < 10.5 and kick.source_channels == 2
    voc = load_clip(realdata / "vocadito" / "Audio" / "vocadito_1.wav", config)
    assert voc.duration_s == pytest.approx(33.2, abs=0.1)


def test_bad_inputs(tmp_path: Path, config):
    with pytest.raises(ClipError, match="not found"):
        load_clip(tmp_path / "nope.wav", config)
    empty = tmp_path / "empty.wav"
    empty.write_bytes(b"")
    with pytest.raises(ClipError, match=r"empty\.wav: empty file"):
        load_clip(empty, config)
    corrupt = tmp_path / "corrupt.mp3"
    corrupt.write_bytes(b"ID3" + bytes(range(256)) * 8)
    with pytest.raises(ClipError, match=r"corrupt\.mp3"):
        load_clip(corrupt, config)
    zero = tmp_path / "zero.wav"
    sf.write(zero, np.zeros((0, 1), dtype=np.float32), 44100)
    with pytest.raises(ClipError, match="zero-length|empty"):
        load_clip(zero, config)
    silent = tmp_path / "silent.wav"
    sf.write(silent, np.zeros((44100, 1), dtype=np.float32), 44100)
    with pytest.raises(ClipError, match=r"silent\.wav: silent"):
        load_clip(silent, config)
    nan = tmp_path / "nan.wav"
    x = _tone(44100, 1.0)
    x[100] = np.nan
    sf.write(nan, x, 44100, subtype="FLOAT")
    with pytest.raises(ClipError, match=r"nan\.wav: 1 non-finite"):
        load_clip(nan, config)
    short = tmp_path / "short.wav"
    sf.write(short, _tone(44100, 0.01), 44100)
    with pytest.raises(ClipError, match="too short"):
        load_clip(short, config)

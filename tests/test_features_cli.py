"""``timingbench features CLIP --plot``: summary on stdout and a PNG of the bank's curves."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from timingbench.cli import main


def test_features_command_writes_plot(tmp_path: Path, rng: np.random.Generator,
                                      capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))  # no demucs weights: dsp fallback
    sr = 44100
    t = np.arange(3 * sr) / sr
    y = 0.2 * np.sin(2 * np.pi * 110 * t) * (t > 1.0) + 1e-4 * rng.standard_normal(t.size)
    wav = tmp_path / "clip.wav"
    sf.write(wav, y, sr)
    png = tmp_path / "out" / "bank.png"
    rc = main(["features", str(wav), "--plot", str(png), "--cache", str(tmp_path / "cache")])
    out = capsys.readouterr().out
    assert rc == 0
    assert "3.00 s analysed" in out and "separation: dsp (demucs weights for htdemucs not found" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000


def test_features_command_reports_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["features", str(tmp_path / "nope.wav")]) == 1
    assert "file not found" in capsys.readouterr().err

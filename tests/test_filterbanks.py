"""The bank's mel and chroma filterbanks equal librosa's to the last bit, without importing librosa."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from timingbench.features import spectral as sp

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("sr", [16000, 22050, 44100, 48000])
@pytest.mark.parametrize("n_fft", [512, 2048, 4096])
def test_filterbanks_equal_librosas(sr: int, n_fft: int) -> None:
    librosa = pytest.importorskip("librosa")
    for n_mels in (40, 128):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # librosa warns about empty bands at small n_fft
            want = librosa.filters.mel(sr=sr, n_fft=n_fft, n_mels=n_mels).astype(np.float32)
        np.testing.assert_array_equal(sp.mel_basis(sr=sr, n_fft=n_fft, n_mels=n_mels).toarray(), want)
    for tuning in (0.0, 0.13, -0.4):
        want = np.ascontiguousarray(librosa.filters.chroma(sr=sr, n_fft=n_fft, tuning=tuning), dtype=np.float32)
        got = sp.chroma_basis(sr=sr, n_fft=n_fft, tuning=tuning)
        np.testing.assert_array_equal(got, want)
        assert got.flags.c_contiguous


def test_a_feature_bank_imports_no_librosa() -> None:
    code = ("import sys, numpy as np\n"
            "from timingbench.audio import clip_from_array\n"
            "from timingbench.config import load_config\n"
            "from timingbench.features import compute_bank\n"
            "cfg = load_config()\n"
            "y = (0.1 * np.sin(np.arange(44100 * 4) * 0.05)).astype(np.float32)\n"
            "compute_bank(clip_from_array(y, 44100, config=cfg), cfg, separation='dsp')\n"
            "print('librosa' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "False"

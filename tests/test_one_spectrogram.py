"""One spectrogram per clip: the bank computes the STFT magnitude and the HPSS once, every consumer reads them."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from timingbench.audio import clip_from_array
from timingbench.config import Config
from timingbench.controls.frames import bank_frames
from timingbench.detectors.percussion import route_curves
from timingbench.detectors.tonal import harmonic_logmel
from timingbench.features import bank as bank_mod
from timingbench.features import spectral
from timingbench.features.kernels import hpss_power
from timingbench.memo import clear_process_caches, lru_table

PKG = Path(__file__).resolve().parents[1] / "timingbench"


def _clip(config: Config, seed: int = 3) -> object:
    rng = np.random.default_rng(seed)
    sr = 44100
    t = np.arange(8 * sr) / sr
    y = 0.2 * np.sin(2 * np.pi * 220.0 * t) * (t > 2.0) + 0.05 * rng.standard_normal(t.size)
    y[::11025] += 0.8  # clicks
    return clip_from_array(y.astype(np.float32), sr, config=config, name=f"one-spec-{seed}.wav")


def test_no_spectrogram_is_computed_outside_features() -> None:
    calls = re.compile(r"\b(stft_magnitude|hpss_power)\s*\(")
    outside = [str(p.relative_to(PKG)) for p in PKG.rglob("*.py")
               if "features" not in p.relative_to(PKG).parts and calls.search(p.read_text(encoding="utf-8"))]
    assert outside == []


#: A configured rate or hop written again as a number: divided or multiplied by, or passed as ``sr=``/``hop=``.
RATE_LITERAL = re.compile(r"[/*]\s*44100|\b44100\.0|\bsr\s*=\s*44100|\bhop\s*=\s*512|\bSR,\s*HOP\s*=")


def test_configured_rates_and_hops_are_read_not_written_again() -> None:
    found = [f"{p.relative_to(PKG)}:{i}" for p in PKG.rglob("*.py")
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1)
             if RATE_LITERAL.search(line)]
    assert found == []
    # the pattern sees each form it is meant to catch
    for planted in ("out_s = stride * hop / 44100.0", "run(x, sr=44100, hop=512)", "SR, HOP = 44100, 512"):
        assert RATE_LITERAL.search(planted)


def test_every_consumer_reads_the_one_spectrogram(config: Config, monkeypatch: pytest.MonkeyPatch) -> None:
    counts = {"stft": 0, "hpss": 0}
    stft, hpss = spectral.stft_magnitude, bank_mod.hpss_power

    def counted_stft(*a: object, **k: object) -> np.ndarray:
        counts["stft"] += 1
        return stft(*a, **k)  # type: ignore[arg-type]

    def counted_hpss(*a: object, **k: object) -> tuple[np.ndarray, np.ndarray]:
        counts["hpss"] += 1
        return hpss(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(spectral, "stft_magnitude", counted_stft)
    monkeypatch.setattr(bank_mod, "hpss_power", counted_hpss)
    bank = bank_mod.compute_bank(_clip(config), config, separation="dsp")
    route_curves(bank, config.params.percussion, "high", features=config.params.features)
    harmonic_logmel(bank)
    bank_frames(bank, features=config.params.features, highpass_hz=config.params.controls.melody_highpass_hz,
                salience=config.params.controls)
    assert counts == {"stft": 1, "hpss": 1}


def test_a_bank_read_from_the_cache_computes_the_same_spectrogram_once(config: Config, tmp_path: Path) -> None:
    clip = _clip(config, seed=4)
    fresh = bank_mod.compute_bank(clip, config, separation="none")
    bank_mod.get_bank(clip, config, separation="none", cache_dir=tmp_path)
    fresh_spectra = (fresh.magnitude(), *fresh.hpss(), fresh.harmonic_logmel())
    clear_process_caches()  # the banks and their spectrograms leave memory; the disk cache stays
    cached = bank_mod.get_bank(clip, config, separation="none", cache_dir=tmp_path)
    assert cached is not fresh and cached.magnitude() is not fresh_spectra[0]
    p = config.params.features
    for a, b in zip((cached.magnitude(), *cached.hpss(), cached.harmonic_logmel()), fresh_spectra, strict=True):
        np.testing.assert_array_equal(a, b)
    assert cached.magnitude() is cached.magnitude()
    # the bank's split is the HPSS of its own magnitude with the features section's kernels
    hp, pp = hpss_power(fresh.magnitude(), kernel_frames=p.hpss_kernel_frames, kernel_bins=p.hpss_kernel_bins,
                        power=p.hpss_mask_power)
    np.testing.assert_array_equal(fresh.hpss()[0], hp)
    np.testing.assert_array_equal(fresh.hpss()[1], pp)


def test_compute_bank_and_get_bank_build_the_same_bank(config: Config, tmp_path: Path) -> None:
    clip = _clip(config, seed=5)
    a = bank_mod.compute_bank(clip, config, separation="dsp")
    b = bank_mod.get_bank(clip, config, separation="dsp", cache_dir=tmp_path)
    for name in ("rms_db", "onset_full", "onset_harmonic", "onset_percussive", "novelty", "logmel"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    np.testing.assert_array_equal(a.stem("drums").onset, b.stem("drums").onset)


def test_the_process_keeps_the_spectrograms_of_a_few_banks_only(config: Config) -> None:
    clear_process_caches()
    banks = [bank_mod.compute_bank(_clip(config, seed=10 + k), config, separation="none") for k in range(4)]
    table = lru_table("bank-spectra", 0)
    kept = {key for key, _kind in table._items}
    assert kept == {b._key for b in banks[-bank_mod.SPECTRA_BANKS:]}
    np.testing.assert_array_equal(banks[0].magnitude(), bank_mod.grid_magnitude(banks[0].samples, p=banks[0].params))

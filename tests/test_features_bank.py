"""The feature bank on synthetic signals with known answers; cache, immutability, gain invariance."""

from __future__ import annotations

import hashlib
import pickle
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from timingbench.audio import Clip
from timingbench.config import Config
from timingbench.errors import ConfigError, ModelUnavailableError, ParameterError
from timingbench.features import (
    FeatureBank,
    bank_build_count,
    clear_memory_cache,
    compute_bank,
    get_bank,
)
from timingbench.features import cache as fcache

SR = 44100


def make_clip(samples: npt.NDArray[np.floating], name: str = "synthetic.wav") -> Clip:
    y = np.ascontiguousarray(samples, dtype=np.float32)
    digest = hashlib.sha256(y.tobytes()).hexdigest()[:16]
    return Clip(path=Path(name), samples=y, sr=SR, duration_s=y.size / SR, source_sr=SR,
                source_channels=1, content_hash=digest)


def tone(freq: float, t: npt.NDArray[np.float64], amp: float) -> npt.NDArray[np.float64]:
    return amp * np.sin(2 * np.pi * freq * t)


def scene(rng: np.random.Generator, dur: float = 12.0) -> tuple[npt.NDArray[np.float64], dict[str, float]]:
    """Silence, then a bass tone from 2 s, clicks from 5 s, a chord change at 8 s."""
    t = np.arange(int(dur * SR)) / SR
    y = 1e-5 * rng.standard_normal(t.size)
    y += tone(80.0, t, 0.2) * (t >= 2.0)
    chord_a = tone(440.0, t, 0.05) + tone(554.37, t, 0.05) + tone(659.25, t, 0.05)
    chord_b = tone(392.0, t, 0.05) + tone(493.88, t, 0.05) + tone(587.33, t, 0.05)
    y += np.where(t < 8.0, chord_a, chord_b) * (t >= 2.0)
    for hit in np.arange(5.0, dur - 0.1, 0.5):
        i = int(round(hit * SR))
        burst = rng.standard_normal(600) * np.exp(-np.arange(600) / 80.0)
        y[i:i + 600] += 0.4 * burst
    return y, {"music": 2.0, "clicks": 5.0, "chord": 8.0}


@pytest.fixture(scope="module")
def scene_bank(config: Config) -> FeatureBank:
    y, _ = scene(np.random.default_rng(7))
    return compute_bank(make_clip(y), config, separation="dsp")


def test_grid_and_shapes(scene_bank: FeatureBank) -> None:
    b = scene_bank
    n = b.n_frames
    assert b.hop == 512 and b.sr == SR
    assert n == 1 + b.samples.size // b.hop
    assert b.times.shape == (n,) and b.times[1] == pytest.approx(512 / SR)
    for arr in (b.rms, b.rms_db, b.onset_full, b.onset_harmonic, b.onset_percussive,
                b.harmonic_rms_db, b.percussive_rms_db, b.novelty):
        assert arr.shape == (n,) and np.all(np.isfinite(arr))
    assert set(b.bands_db) == {"sub", "low", "mid", "high"}
    assert b.logmel.shape == (128, n) and b.logmel.dtype == np.float32
    assert float(b.logmel.max()) == pytest.approx(0.0) and float(b.logmel.min()) >= -80.0
    assert b.duration_s == pytest.approx(12.0)


def test_arrays_are_read_only(scene_bank: FeatureBank) -> None:
    with pytest.raises(ValueError, match="read-only"):
        scene_bank.rms[0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        scene_bank.bands_db["low"][0] = 1.0
    with pytest.raises(TypeError):
        scene_bank.bands_db["new"] = np.zeros(3)  # type: ignore[index]
    with pytest.raises(AttributeError):
        scene_bank.rms = np.zeros(3)  # type: ignore[misc]


def test_rms_level_of_known_sine(config: Config) -> None:
    t = np.arange(3 * SR) / SR
    b = compute_bank(make_clip(tone(1000.0, t, 0.5)), config, separation="none")
    # a 0.5-amplitude sine has RMS 0.5/sqrt(2): -9.03 dBFS
    mid = slice(10, b.n_frames - 10)
    np.testing.assert_allclose(b.rms_db[mid], 20 * np.log10(0.5 / np.sqrt(2)), atol=0.01)
    # the Parseval-compensated band and harmonic levels agree with the time-domain level
    np.testing.assert_allclose(b.bands_db["mid"][mid], b.rms_db[mid], atol=0.1)
    assert np.all(b.bands_db["sub"][mid] < b.rms_db[mid] - 40)
    np.testing.assert_allclose(b.harmonic_rms_db[mid], b.rms_db[mid], atol=0.1)
    assert b.loudness.loud_level_db == pytest.approx(-9.03, abs=0.05)


def test_known_events_are_where_they_were_placed(scene_bank: FeatureBank) -> None:
    b = scene_bank
    # music starts at 2 s: the level jumps from the noise floor
    assert b.rms_db[b.grid.frame(1.5)] < b.loudness.loud_level_db - 60
    assert b.rms_db[b.grid.frame(2.5)] > b.loudness.loud_level_db - 10
    assert b.loudness.floor_db < b.loudness.loud_level_db - 60
    # clicks from 5 s: the percussive onset peaks at the hit (within a frame), not the harmonic one
    k = b.grid.frame(6.0)
    win = slice(k - 10, k + 10)
    assert abs(int(np.argmax(b.onset_percussive[win])) + k - 10 - k) <= 1
    assert b.onset_percussive[k - 1:k + 2].max() > 5 * b.onset_harmonic[k - 1:k + 2].max()
    # before the clicks the percussive level is far below the harmonic level
    j = b.grid.frame(4.0)
    assert b.percussive_rms_db[j] < b.harmonic_rms_db[j] - 20
    # the 80 Hz bass sits in the "low" band, not in "high"
    assert b.bands_db["low"][j] > b.bands_db["high"][j] + 30
    # the chord change at 8 s is the strongest harmony novelty after the start transient
    c = b.grid.frame(8.0)
    after = slice(b.grid.frame(6.5), b.grid.frame(10.5))
    assert abs(int(np.argmax(b.novelty_harmony[after])) + after.start - c) <= 3
    assert float(np.max(b.novelty)) == pytest.approx(1.0)


def test_equals_librosa_composition(config: Config, rng: np.random.Generator) -> None:
    import librosa
    y, _ = scene(rng, dur=4.0)
    y32 = y.astype(np.float32)
    b = compute_bank(make_clip(y32), config, separation="none")
    np.testing.assert_allclose(b.rms, librosa.feature.rms(y=y32, frame_length=2048, hop_length=512)[0],
                               rtol=1e-4, atol=1e-7)
    S = np.abs(librosa.stft(y32, n_fft=2048, hop_length=512))
    mel_db = librosa.power_to_db(librosa.feature.melspectrogram(S=S**2, sr=SR), top_db=80.0)
    ref_onset = librosa.onset.onset_strength(S=mel_db, sr=SR, center=False)
    np.testing.assert_allclose(b.onset_full, ref_onset, atol=2e-3)
    H, P = librosa.decompose.hpss(S)
    ref_p = librosa.onset.onset_strength(
        S=librosa.power_to_db(librosa.feature.melspectrogram(S=P**2, sr=SR), top_db=80.0), center=False)
    np.testing.assert_allclose(b.onset_percussive, ref_p, atol=5e-3)
    np.testing.assert_allclose(b.logmel, mel_db - mel_db.max(), atol=2e-3)


def test_pickle_round_trip_keeps_read_only(scene_bank: FeatureBank) -> None:
    b2 = pickle.loads(pickle.dumps(scene_bank))
    np.testing.assert_array_equal(b2.novelty, scene_bank.novelty)
    assert not b2.rms.flags.writeable and not b2.bands_db["sub"].flags.writeable
    assert b2.loudness == scene_bank.loudness


def test_cache_hit_does_not_recompute(config: Config, rng: np.random.Generator, tmp_path: Path) -> None:
    y, _ = scene(rng, dur=3.0)
    clip = make_clip(y)
    before = bank_build_count()
    b1 = get_bank(clip, config, separation="none", cache_dir=tmp_path)
    assert bank_build_count() == before + 1
    clear_memory_cache()
    t0 = time.perf_counter()
    b2 = get_bank(clip, config, separation="none", cache_dir=tmp_path)
    elapsed = time.perf_counter() - t0
    assert bank_build_count() == before + 1
    np.testing.assert_array_equal(b1.onset_full, b2.onset_full)
    assert elapsed < 1.0  # the timed figure (< 20 ms) is in benchmarks/feature_bank.py
    # a changed configuration is a different key
    b3 = get_bank(clip, config.with_value("features.n_mels", 64), separation="none", cache_dir=tmp_path)
    assert b3.logmel.shape[0] == 64 and bank_build_count() == before + 2


def test_stale_or_corrupt_cache_entry_is_recomputed(config: Config, rng: np.random.Generator, tmp_path: Path) -> None:
    clip = make_clip(scene(rng, dur=2.0)[0])
    get_bank(clip, config, separation="none", cache_dir=tmp_path)
    (entry,) = list((tmp_path / "banks").glob("*.pkl"))
    entry.write_bytes(b"not a pickle")
    clear_memory_cache()
    before = bank_build_count()
    b = get_bank(clip, config, separation="none", cache_dir=tmp_path)
    assert bank_build_count() == before + 1 and b.n_frames > 0
    assert fcache.read_entry(entry, key="other-key") is None


def test_derived_is_memoised_and_persisted(config: Config, rng: np.random.Generator, tmp_path: Path) -> None:
    clip = make_clip(scene(rng, dur=2.0)[0])
    calls = []

    def peak(bank: FeatureBank) -> float:
        calls.append(1)
        return float(np.max(bank.onset_full))

    b = get_bank(clip, config, separation="none", cache_dir=tmp_path)
    v1 = b.derived("peak onset", peak)
    assert b.derived("peak onset", peak) == v1 and len(calls) == 1
    clear_memory_cache()
    b2 = get_bank(clip, config, separation="none", cache_dir=tmp_path)
    assert b2.derived("peak onset", peak) == v1 and len(calls) == 1  # read from disk
    with pytest.raises(ParameterError, match="non-empty"):
        b.derived("", peak)


def test_derived_unpicklable_value_is_reported(config: Config, rng: np.random.Generator, tmp_path: Path) -> None:
    b = get_bank(make_clip(scene(rng, dur=1.0)[0]), config, separation="none", cache_dir=tmp_path)
    with pytest.raises(ParameterError, match="cannot store"):
        b.derived("lambda", lambda bank: (lambda: 0))


def test_gain_invariance_of_decision_features(config: Config, rng: np.random.Generator) -> None:
    y, _ = scene(rng, dur=10.0)
    a = compute_bank(make_clip(y), config, separation="dsp")
    q = compute_bank(make_clip(y * 10 ** (-20 / 20)), config, separation="dsp")
    for name in ("onset_full", "onset_harmonic", "onset_percussive"):
        np.testing.assert_allclose(getattr(q, name), getattr(a, name), atol=1e-3, err_msg=name)
    np.testing.assert_allclose(q.novelty, a.novelty, atol=1e-4)
    for la, lq in ((a.loudness.loud_level_db, q.loudness.loud_level_db),
                   (a.loudness.floor_db, q.loudness.floor_db), (a.loudness.median_db, q.loudness.median_db)):
        assert lq == pytest.approx(la - 20.0, abs=1e-3)
    ref_a, ref_q = a.loudness.loud_level_db, q.loudness.loud_level_db

    def same_relative_level(lq: npt.NDArray[np.float64], la: npt.NDArray[np.float64], what: str) -> None:
        # float32 STFT round-off of the loud parts shows ~1e-3 dB deep below them; decisions
        # use levels within a few tens of dB of the loud level
        ra, rq = la - ref_a, lq - ref_q
        near = ra > -60.0
        np.testing.assert_allclose(rq[near], ra[near], atol=1e-3, err_msg=what)
        np.testing.assert_allclose(rq, ra, atol=0.02, err_msg=what)

    same_relative_level(q.rms_db, a.rms_db, "rms_db")
    for curve in ("harmonic_rms_db", "percussive_rms_db"):
        same_relative_level(getattr(q, curve), getattr(a, curve), curve)
    for band in a.bands_db:
        same_relative_level(q.bands_db[band], a.bands_db[band], band)
    np.testing.assert_allclose(q.logmel, a.logmel, atol=1e-3)
    for stem in ("drums", "bass", "other"):
        sa, sq = a.stem(stem), q.stem(stem)
        np.testing.assert_allclose(sq.envelope_db - sq.loud_level_db, sa.envelope_db - sa.loud_level_db, atol=1e-3)
        np.testing.assert_allclose(sq.onset, sa.onset, atol=1e-3)


def test_separation_none_has_no_stems(scene_bank: FeatureBank, config: Config) -> None:
    b = compute_bank(make_clip(np.ones(SR) * 0.1), config, separation="none")
    assert b.separation_backend == "none" and b.stems_available() == ()
    with pytest.raises(ModelUnavailableError, match="'none'"):
        b.stem("drums")
    with pytest.raises(ParameterError, match="unknown stem"):
        scene_bank.stem("kazoo")


def test_rejects_bad_input(config: Config) -> None:
    bad = make_clip(np.array([0.0, np.nan, 0.1] * 1000))
    with pytest.raises(ParameterError, match="NaN"):
        compute_bank(bad, config, separation="none")
    with pytest.raises(ParameterError, match="separation"):
        compute_bank(make_clip(np.ones(SR)), config, separation="spleeter")
    with pytest.raises(ConfigError, match="features.hop"):
        compute_bank(make_clip(np.ones(SR)), config.with_disabled("features.hop"), separation="none")


def test_short_clip_gives_defined_bank(config: Config) -> None:
    b = compute_bank(make_clip(0.1 * np.ones(int(0.06 * SR))), config, separation="none")
    assert b.n_frames == 1 + int(0.06 * SR) // 512
    assert np.all(np.isfinite(b.novelty)) and np.all(np.isfinite(b.onset_percussive))

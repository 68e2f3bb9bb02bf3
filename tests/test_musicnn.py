"""The musicnn port: TensorFlow oracle, preprocessing oracle, patch layout."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from timingbench.errors import ModelUnavailableError, ParameterError
from timingbench.models import musicnn

REFERENCE = Path(__file__).resolve().parent / "data" / "musicnn_reference.npz"


@pytest.fixture(scope="module")
def reference() -> dict[str, np.ndarray]:
    with np.load(REFERENCE) as z:
        return {k: z[k] for k in z.files}


@pytest.fixture(scope="module")
def tagger() -> musicnn.MusicnnTagger:
    return musicnn.load_musicnn()


def _groups(reference: dict[str, np.ndarray]) -> list[str]:
    return sorted({k.split("/")[0] for k in reference if "/" in k})


def test_reference_has_the_expected_groups(reference: dict[str, np.ndarray]) -> None:
    assert {"random", "structured", "audio"} <= set(_groups(reference))
    assert tuple(reference["tags"]) == musicnn.load_musicnn().tags


@pytest.mark.parametrize("group", ["random", "structured", "audio"])
def test_port_matches_tensorflow_within_1e4(
    reference: dict[str, np.ndarray], tagger: musicnn.MusicnnTagger, group: str
) -> None:
    probs = tagger.predict(reference[f"{group}/input"])
    np.testing.assert_allclose(probs, reference[f"{group}/probs"], atol=1e-4, rtol=0)
    np.testing.assert_allclose(tagger.logits(reference[f"{group}/input"]),
                               reference[f"{group}/logits"], atol=1e-3, rtol=1e-4)


def test_reference_outputs_are_not_degenerate(reference: dict[str, np.ndarray]) -> None:
    # the oracle would be weak if every patch gave the same probabilities
    probs = reference["audio/probs"]
    assert probs.shape[1] == 50
    assert np.ptp(probs, axis=0).max() > 0.3


def test_batching_does_not_change_results(reference: dict[str, np.ndarray], tagger: musicnn.MusicnnTagger) -> None:
    x = reference["structured/input"][:3]
    together = tagger.predict(x)
    alone = np.concatenate([tagger.predict(x[i : i + 1]) for i in range(x.shape[0])])
    np.testing.assert_allclose(together, alone, atol=1e-6)


def test_log_mel_matches_librosa_oracle(rng: np.random.Generator) -> None:
    import librosa

    t = np.arange(16000 * 2) / 16000
    y = (0.3 * np.sin(2 * np.pi * 440 * t) + 0.05 * rng.standard_normal(t.size)).astype(np.float32)
    mel = librosa.feature.melspectrogram(y=y, sr=16000, n_fft=512, hop_length=256, n_mels=96,
                                         center=True, pad_mode="reflect").T
    expected = np.log10(10000 * mel.astype(np.float16).astype(np.float64) + 1)
    got = musicnn.log_mel(y)
    assert got.shape == expected.shape == (1 + y.size // 256, 96)
    np.testing.assert_allclose(got, expected, atol=2e-3)


def test_log_mel_of_silence_is_zero() -> None:
    np.testing.assert_array_equal(musicnn.log_mel(np.zeros(4000, dtype=np.float32)), 0.0)


@pytest.mark.parametrize("bad", [np.zeros((2, 1000)), np.zeros(100), np.array([0.0, np.nan] * 400)])
def test_log_mel_rejects_malformed_audio(bad: np.ndarray) -> None:
    with pytest.raises(ParameterError):
        musicnn.log_mel(bad)


def test_predict_rejects_wrong_patch_shape(tagger: musicnn.MusicnnTagger) -> None:
    with pytest.raises(ParameterError, match="187"):
        tagger.predict(np.zeros((1, 100, 96)))
    assert tagger.predict(np.zeros((0, 187, 96))).shape == (0, 50)


def test_patch_starts_cover_the_clip_without_running_over() -> None:
    starts = musicnn.patch_starts(187 + 100, hop_frames=31.25)
    np.testing.assert_array_equal(starts, [0, 31, 62, 94])
    assert musicnn.patch_starts(187, hop_frames=10).tolist() == [0]  # exactly one patch: edge included
    assert musicnn.patch_starts(186, hop_frames=10).size == 0
    with pytest.raises(ParameterError):
        musicnn.patch_starts(500, hop_frames=0)


def test_taggram_times_are_patch_centres(rng: np.random.Generator, tagger: musicnn.MusicnnTagger) -> None:
    y = 0.1 * rng.standard_normal(16000 * 4).astype(np.float32)
    tg = musicnn.taggram(y, sr=16000, hop_s=0.5, tagger=tagger)
    # 251 frames -> starts 0, 31, 62; centre frame = start + 93, 16 ms per frame
    np.testing.assert_allclose(tg.times, (np.array([0, 31, 62]) + 93) * 256 / 16000)
    assert tg.probs.shape == (3, 50)
    assert musicnn.taggram(y[:16000], sr=16000, hop_s=0.5, tagger=tagger).probs.shape == (0, 50)


def test_taggram_resamples_from_441k(tagger: musicnn.MusicnnTagger) -> None:
    import soxr

    t = np.arange(16000 * 4) / 16000
    y16 = sum(0.1 * np.sin(2 * np.pi * f * t) for f in (220.0, 330.0, 1250.0, 3100.0)).astype(np.float32)
    up = soxr.resample(y16, 16000, 44100, quality="VHQ").astype(np.float32)
    a = musicnn.taggram(y16, sr=16000, hop_s=1.0, tagger=tagger)
    b = musicnn.taggram(up, sr=44100, hop_s=1.0, tagger=tagger)
    assert a.probs.shape == b.probs.shape == (2, 50)
    np.testing.assert_allclose(a.probs, b.probs, atol=0.01)


def test_shared_timbral_path_equals_per_patch_path(rng: np.random.Generator, tagger: musicnn.MusicnnTagger) -> None:
    spec = rng.uniform(0.0, 3.0, size=(187 + 70, 96)).astype(np.float32)
    starts = np.array([0, 1, 31, 70])  # overlapping, adjacent and last possible patch
    fast = tagger.logits_at(spec, starts, chunk=3)
    slow = tagger.logits(np.stack([spec[s : s + 187] for s in starts]))
    np.testing.assert_allclose(fast, slow, atol=1e-4)
    with pytest.raises(ParameterError, match="patch starts"):
        tagger.logits_at(spec, [71])


def test_missing_weights_raise_model_unavailable(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailableError, match="convert_musicnn"):
        musicnn.load_musicnn(tmp_path / "nope.npz")

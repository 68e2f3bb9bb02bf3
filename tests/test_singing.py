"""The singing detector (FireRedVAD AED) and the vocals presence read from it.

Parity with the golden vectors made by the upstream front end and this model
(``shared/models/fireredvad-aed/golden.npz``): the fbank exactly, the CMVN features within
1e-5 and the probabilities within 1e-5 (float32 arithmetic; measured 0, 4.8e-7 and 5.4e-7).
Gain invariance: a clip 20 dB quieter gives the same vocals presence within
:data:`GAIN_ATOL` log-odds (measured 1.5e-4 on vocadito).
"""

from __future__ import annotations

import dataclasses
import struct
from pathlib import Path

import numpy as np
import pytest

from timingbench.audio import Clip
from timingbench.errors import ModelUnavailableError, ParameterError
from timingbench.features import compute_bank
from timingbench.identity import singing as vs
from timingbench.models import singing as sd

#: The golden vectors, in the read-only shared folder beside the repository (as tests/conftest.py finds it).
GOLDEN = Path(__file__).resolve().parent.parent.parent / "shared" / "models" / "fireredvad-aed" / "golden.npz"
#: Parity tolerances against the golden vectors (float32 arithmetic, different BLAS).
FEAT_ATOL = 1e-5
PROBS_ATOL = 1e-5
#: Most a vocals presence may move, in log-odds, when the clip is 20 dB quieter.
GAIN_ATOL = 1e-2


@pytest.fixture(scope="module")
def golden():
    if not GOLDEN.is_file():
        pytest.skip("shared/models/fireredvad-aed/golden.npz is not present beside the repository")
    return dict(np.load(GOLDEN))


@pytest.fixture(scope="module")
def detector(config):
    return sd.detector_for(config.params.singing)


def sung_clip(sr: int = 44100, seconds: float = 6.0, *, onset_s: float = 2.0, gain: float = 1.0) -> Clip:
    """A vibrato tone with harmonics from ``onset_s`` over quiet noise (a deterministic stand-in for a voice)."""
    rng = np.random.default_rng(7)
    t = np.arange(int(sr * seconds)) / sr
    f0 = 220.0 * (1 + 0.02 * np.sin(2 * np.pi * 5.5 * t))
    phase = 2 * np.pi * np.cumsum(f0) / sr
    tone = sum(np.sin(k * phase) / k for k in range(1, 8)) * (t >= onset_s)
    x = 0.3 * tone + 0.01 * rng.standard_normal(t.size)
    samples = (gain * x / np.max(np.abs(x)) * 0.5).astype(np.float32)
    return Clip(path=Path("sung.wav"), samples=samples, sr=sr, duration_s=seconds, source_sr=sr, source_channels=1,
                content_hash=f"sung{gain:g}".replace(".", "p"))


# ----------------------------------------------------------------------------- parity


def test_fbank_matches_the_golden_front_end_exactly(golden):
    np.testing.assert_array_equal(sd.fbank(golden["pcm16"]), golden["fbank"])


def test_cmvn_features_match_the_golden_ones(golden, detector):
    np.testing.assert_allclose(sd.normalised(golden["fbank"], detector), golden["feat"], rtol=0, atol=FEAT_ATOL)


def test_probabilities_match_the_golden_ones(golden, detector):
    feat = sd.normalised(sd.fbank(golden["pcm16"]), detector)
    probs = sd.run_network(feat, detector)
    np.testing.assert_allclose(probs, golden["probs"], rtol=0, atol=PROBS_ATOL)
    # the README's means: speech 0.088, singing 0.702, music 0.001
    np.testing.assert_allclose(probs.mean(axis=0), [0.088, 0.702, 0.001], atol=5e-4)


def test_singing_frames_of_float_input_at_16k_are_the_golden_reading(golden, config):
    x = golden["pcm16"].astype(np.float32) / np.float32(sd.INT16_SCALE)
    frames = sd.singing_frames(x, sd.MODEL_SR, config.params.singing)
    np.testing.assert_allclose(frames.probs, golden["probs"], rtol=0, atol=PROBS_ATOL)
    np.testing.assert_allclose(frames.times[:2], [0.0125, 0.0225])
    assert frames.probs[:, sd.CLASSES.index("singing")].shape == (golden["probs"].shape[0],)


def test_the_reading_is_deterministic(config):
    clip = sung_clip()
    a = sd.singing_frames(clip.samples, clip.sr, config.params.singing)
    b = sd.singing_frames(clip.samples, clip.sr, config.params.singing)
    np.testing.assert_array_equal(a.probs, b.probs)


# ----------------------------------------------------------------------------- files


def _kaldi_bytes(m: np.ndarray, token: bytes, key: bytes = b"") -> bytes:
    dt = "<f4" if token == b"FM " else "<f8"
    return (key + b"\0B" + token + b"\x04" + struct.pack("<i", m.shape[0]) + b"\x04" + struct.pack("<i", m.shape[1])
            + m.astype(dt).tobytes())


@pytest.mark.parametrize("token,key", [(b"FM ", b""), (b"DM ", b""), (b"DM ", b"global ")])
def test_kaldi_matrix_reader_round_trips(token, key, rng):
    m = rng.standard_normal((2, 5))
    got = sd.read_kaldi_matrix(_kaldi_bytes(m, token, key))
    np.testing.assert_allclose(got, m, rtol=1e-6 if token == b"FM " else 0)


@pytest.mark.parametrize("data,match", [(b"no header", "no '\\\\0B' header"),
                                        (b"\0BCM \x04\x02\x00\x00\x00", "not a Kaldi float or double matrix"),
                                        (b"\0BDM \x04\x02\x00\x00\x00\x04\x03\x00\x00\x00" + b"\0" * 8,
                                         "needs 48 bytes")])
def test_kaldi_matrix_reader_refuses_other_bytes(data, match):
    with pytest.raises(ModelUnavailableError, match=match):
        sd.read_kaldi_matrix(data)


def test_cmvn_from_stats_has_the_known_mean_and_scale():
    frames = np.array([[1.0, 2.0], [3.0, 6.0]])
    stats = np.array([[*frames.sum(0), 2.0], [*(frames ** 2).sum(0), 0.0]])
    mean, inv_std = sd.cmvn_from_stats(stats)
    np.testing.assert_allclose(mean, [2.0, 4.0])
    np.testing.assert_allclose(inv_std, [1.0, 0.5])
    with pytest.raises(ModelUnavailableError, match="positive count"):
        sd.cmvn_from_stats(np.zeros((2, 3)))


def test_a_substituted_model_is_refused(config, tmp_path):
    other = tmp_path / "model.onnx"
    other.write_bytes(b"not the model")
    with pytest.raises(ModelUnavailableError, match="corrupt or another file"):
        sd.checked_file(other, config.params.singing.model_sha256, what="ONNX model")
    with pytest.raises(ModelUnavailableError, match="missing"):
        sd.checked_file(tmp_path / "absent.onnx", config.params.singing.model_sha256, what="ONNX model")


def test_malformed_input_raises(config):
    with pytest.raises(ParameterError, match="mono"):
        sd.singing_frames(np.zeros((2, 100), np.float32), 16000, config.params.singing)
    with pytest.raises(ParameterError, match="non-finite"):
        sd.singing_frames(np.array([0.0, np.nan], np.float32), 16000, config.params.singing)


def test_a_signal_shorter_than_one_frame_has_no_frame(config):
    frames = sd.singing_frames(np.zeros(300, np.float32), 16000, config.params.singing)
    assert frames.probs.shape == (0, 3) and frames.times.shape == (0,)


# ----------------------------------------------------------------------------- the vocals presence


def test_on_grid_takes_the_mean_of_the_frames_within_half_a_step():
    ft = np.arange(10) * 0.01 + 0.005
    v = np.arange(10, dtype=np.float64)
    grid = np.array([0.0, 0.04, 0.08, 0.5])
    got = vs.on_grid(ft, v, grid)
    np.testing.assert_allclose(got, [np.mean([0, 1]), np.mean([2, 3, 4, 5]), np.mean([6, 7, 8, 9]), 9.0])
    assert vs.on_grid(np.zeros(0), np.zeros(0), grid).tolist() == [0.0] * 4


def test_a_clip_20_db_quieter_gives_the_same_vocals_presence(config):
    loud = compute_bank(sung_clip(), config, separation="none")
    quiet = compute_bank(sung_clip(gain=0.1), config, separation="none")
    a, b = vs.vocals_presence(loud, config), vs.vocals_presence(quiet, config)
    np.testing.assert_array_equal(a.times, b.times)
    np.testing.assert_allclose(b.singing, a.singing, rtol=0, atol=GAIN_ATOL)
    np.testing.assert_allclose(b.speech, a.speech, rtol=0, atol=GAIN_ATOL)


def test_gain_invariance_on_a_real_voice(config, realdata):
    from timingbench.audio import load_clip

    clip = load_clip(realdata / "vocadito" / "Audio" / "vocadito_1.wav", config)
    quiet = dataclasses.replace(clip, samples=(clip.samples * np.float32(0.1)).astype(np.float32),
                                content_hash=clip.content_hash + "-20dB")
    a = vs.vocals_presence(compute_bank(clip, config, separation="none"), config)
    b = vs.vocals_presence(compute_bank(quiet, config, separation="none"), config)
    np.testing.assert_allclose(b.singing, a.singing, rtol=0, atol=GAIN_ATOL)
    # the first phrase (annotated onset 0.66 s): quiet before, singing after
    assert a.singing[a.times < 0.4].max() < -2.0 and np.median(a.singing[(a.times > 0.7) & (a.times < 1.5)]) > 2.0


def test_the_presence_is_on_the_evidence_grid_and_read_on_the_mix(config):
    from timingbench.models.family_net_infer import clip_output_times

    bank = compute_bank(sung_clip(), config, separation="none")
    p = vs.vocals_presence(bank, config)
    grid = clip_output_times(int(bank.logmel.shape[1]), stride=int(config.params.evidence.frame_stride),
                             sr=bank.sr, hop=bank.hop)
    np.testing.assert_array_equal(p.times, grid)
    assert p.singing.shape == p.speech.shape == grid.shape
    assert p.frame_times.size == p.frame_singing.size == p.frame_music.size
    assert p.source == "mix" and p.model.startswith("fireredvad_aed.onnx sha256:4ec27ccd")
    assert p.disclosure()["input_loud_level_dbfs"] == config.params.audio.input_loud_level_dbfs


def test_the_frames_are_cached_with_the_bank_under_the_model_digest(config, tmp_path, monkeypatch):
    from timingbench.features import get_bank

    clip = sung_clip()
    bank = get_bank(clip, config, separation="none", cache_dir=tmp_path)
    vs.vocals_presence(bank, config)
    key = vs.frames_key(bank, config, stem_model=None)
    assert key.split(":")[1:3] == ["4ec27ccd86b16c38", "c87f6f13edf0f0ec"] and key.endswith(":level-14:mix")
    assert len([p for p in (tmp_path / "banks").iterdir() if ".derived-" in p.name]) == 1

    from timingbench.features.bank import clear_memory_cache

    clear_memory_cache()
    calls = []
    monkeypatch.setattr(sd, "singing_frames", lambda *a, **k: calls.append(1))
    again = get_bank(clip, config, separation="none", cache_dir=tmp_path)
    vs.vocals_presence(again, config)  # read from the cache: the detector does not run
    assert calls == []


def test_a_demucs_bank_reads_the_vocals_stem(config, monkeypatch):
    bank = compute_bank(sung_clip(), config, separation="none")
    silence = np.zeros_like(bank.samples)
    monkeypatch.setattr(vs, "source_of", lambda b: "htdemucs")
    monkeypatch.setattr(type(bank), "stem_audio", lambda self, name: silence)
    p = vs.vocals_presence(bank, config)
    assert p.source == "vocals stem (demucs htdemucs)"
    assert p.singing.max() < 0.0  # a silent stem: no singing, though the mix sings


def test_prompts_without_a_vocals_event_run_no_detector(config, monkeypatch):
    bank = compute_bank(sung_clip(), config, separation="none")
    monkeypatch.setattr(vs, "vocals_presence", lambda *a, **k: pytest.fail("the detector ran"))
    assert vs.prompt_presence(bank, ["piano", "percussion"], config) is None


def test_summary_names_the_evidence_computed():
    row = {"detector": "fireredvad-aed", "model": "m", "source": "mix", "input_loud_level_dbfs": -14.0}
    got = vs.summary_of([{"vocals_presence": row}, {"vocals_presence": None}, {}])
    assert got["clips"] == 1 and got["sources"] == {"mix": 1} and got["models"] == ["m"]

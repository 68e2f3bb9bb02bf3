"""The pretrained AudioSet tagger (EfficientAT mn04) in our own code: parity, sharpness, weights, chunking."""

from __future__ import annotations

import dataclasses
import hashlib
import warnings
from pathlib import Path

import numpy as np
import pytest
import soxr
import torch

from timingbench.audio import Clip
from timingbench.cli import build_parser
from timingbench.commands.score_cmd import scoring_config
from timingbench.config import Config, load_config
from timingbench.errors import ConfigError, ModelUnavailableError, ParameterError
from timingbench.features import compute_bank
from timingbench.models.tagger import (
    COLUMN_S,
    SHIPPED_WEIGHTS,
    at_level,
    audioset_labels,
    bank_key,
    bank_tagger,
    load_tagger,
    tagger_blocks,
    tagger_columns,
    tagger_for,
)
from timingbench.models.tagger_frontend import MODEL_SR, log_mel
from timingbench.models.tagger_model import AudioTagger, FoldedTagger, TaggerShape, build_tagger

SHIPPED_SHA256 = "899a8c6217063f6941793102a2780b3dd788ab11fce468d9cf5f0577c453321c"
#: The reference outputs beside the repository (CI has shared/ there) and their copy in tests/data.
SHARED_GOLDEN = Path(__file__).resolve().parents[1].parent / "shared" / "models" / "efficientat-mn04" / "golden.npz"
LOCAL_GOLDEN = Path(__file__).resolve().parent / "data" / "tagger_golden.npz"
GOLDEN = SHARED_GOLDEN if SHARED_GOLDEN.is_file() else LOCAL_GOLDEN
#: The issue's parity bound (max abs error of mel, logits, embedding and feature map).
TOL = 1e-4


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Direct network calls here run on one thread, as tagger calls do (tagger.threads)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def golden() -> dict[str, np.ndarray]:
    with np.load(GOLDEN) as z:
        return {k: z[k] for k in z.files}


@pytest.fixture(scope="module")
def shipped_state() -> dict[str, torch.Tensor]:
    return torch.load(SHIPPED_WEIGHTS, map_location="cpu", weights_only=True)


@pytest.fixture(scope="module")
def params(config: Config):
    return config.params.tagger


def _outputs(net, mel: np.ndarray) -> dict[str, np.ndarray]:
    with torch.inference_mode():
        logits, emb, fmap = net(torch.from_numpy(np.ascontiguousarray(mel))[None, None])
    return {"logits": logits[0].numpy(), "embedding": emb[0].numpy(), "feature_map": fmap[0].numpy()}


def _max_err(a: dict[str, np.ndarray], g: dict[str, np.ndarray], name: str) -> dict[str, float]:
    return {k: float(np.abs(v - g[f"{k}_{name}"]).max()) for k, v in a.items()}


# ------------------------------------------------------------------ parity with the reference


def test_the_local_golden_copy_is_the_shared_one():
    assert LOCAL_GOLDEN.is_file()
    if SHARED_GOLDEN.is_file():
        assert LOCAL_GOLDEN.read_bytes() == SHARED_GOLDEN.read_bytes()


def test_the_shipped_weights_are_the_release():
    assert hashlib.sha256(SHIPPED_WEIGHTS.read_bytes()).hexdigest() == SHIPPED_SHA256
    assert load_config().params.tagger.weights_sha256 == SHIPPED_SHA256
    licence = (SHIPPED_WEIGHTS.parent / "LICENSE").read_text()
    assert licence.startswith("MIT License\n\nCopyright (c) 2022 Florian Schmid")
    labels = audioset_labels()
    assert len(labels) == 527 and labels[0] == "Speech" and labels[137] == "Music"


@pytest.mark.parametrize("name", ["808", "tone"])
def test_front_end_and_network_match_the_reference(golden, name):
    mel = log_mel(golden[f"wave_{name}"])
    assert mel.shape == golden[f"mel_{name}"].shape
    assert np.abs(mel - golden[f"mel_{name}"]).max() <= TOL
    tagger = load_tagger(SHIPPED_WEIGHTS, expected_sha256=SHIPPED_SHA256)
    for net in (tagger.module, tagger.folded):
        for source in (golden[f"mel_{name}"], mel):  # the reference's mel, and ours end to end
            errs = _max_err(_outputs(net, source), golden, name)
            assert max(errs.values()) <= TOL, errs


def test_the_reference_top_tags(golden):
    tagger = load_tagger(SHIPPED_WEIGHTS)
    p = 1 / (1 + np.exp(-_outputs(tagger.folded, log_mel(golden["wave_808"]))["logits"]))
    top = [tagger.labels[i] for i in np.argsort(-p)[:3]]
    assert top == ["Music", "Drum machine", "Electronic music"]
    assert p[137] == pytest.approx(0.886, abs=1e-3)


def test_the_architecture_read_from_the_keys_is_mobilenetv3_large_at_width_0_4(shipped_state):
    shape = TaggerShape.from_state_dict(shipped_state)
    assert shape == TaggerShape.for_width(0.4)
    assert (shape.stem, shape.last, shape.hidden, shape.n_classes) == (8, 384, 512, 527)
    assert [b.kernel for b in shape.blocks] == [3, 3, 3, 5, 5, 5, 3, 3, 3, 3, 3, 3, 5, 5, 5]
    assert [b.squeeze for b in shape.blocks] == [0, 0, 0, 8, 16, 16, 0, 0, 0, 0, 48, 72, 72, 96, 96]
    assert sum(p.numel() for p in build_tagger(shipped_state).parameters()) == 983_599  # the README's 0.98 M


# ------------------------------------------------------------------ the parity test is sharp


def test_a_wrong_batchnorm_eps_misses_the_reference(golden, shipped_state):
    wrong = build_tagger(shipped_state, bn_eps=1e-5)
    errs = _max_err(_outputs(FoldedTagger(wrong), golden["mel_808"]), golden, "808")
    assert min(errs.values()) > TOL, errs


@pytest.mark.parametrize("change", [{"fmax_hz": 16000.0}, {"periodic_window": True}])
def test_a_wrong_mel_edge_or_a_periodic_window_misses_the_reference(golden, change):
    tagger = load_tagger(SHIPPED_WEIGHTS)
    mel = log_mel(golden["wave_808"], **change)
    assert np.abs(mel - golden["mel_808"]).max() > TOL
    errs = _max_err(_outputs(tagger.folded, mel), golden, "808")
    assert errs["logits"] > TOL and errs["feature_map"] > TOL, errs


def test_a_state_dict_that_is_not_mobilenetv3_large_is_refused(shipped_state):
    cut = {k: v for k, v in shipped_state.items() if not k.startswith("features.15.")}
    with pytest.raises(ParameterError, match=r"blocks \[1, 2, .*14\]"):
        TaggerShape.from_state_dict(cut)
    moved = dict(shipped_state)
    moved["features.4.block.1.0.weight"] = torch.zeros(32, 1, 3, 3)
    with pytest.raises(ParameterError, match="block 4 has a 3x3 kernel"):
        TaggerShape.from_state_dict(moved)


# ------------------------------------------------------------------ weights files


def _random_state(width: float, *, seed: int = 0, se_off: bool = False) -> dict[str, torch.Tensor]:
    """A random-weight EfficientAT-layout state dict of ``width`` (BN statistics randomised too)."""
    torch.manual_seed(seed)
    net = AudioTagger(TaggerShape.for_width(width))
    state = net.state_dict()
    for k, v in state.items():
        if k.endswith("running_var"):
            state[k] = 0.5 + torch.rand_like(v)
        elif k.endswith("running_mean") or (k.endswith(".bias") and "conc_se" not in k):
            state[k] = 0.1 * torch.randn_like(v)
    if se_off:  # the gate reads sigmoid(30) = 1: squeeze-excitation passes everything through
        for k in state:
            if "conc_se_layers.0.fc2." in k:
                state[k] = torch.zeros_like(state[k]) + (30.0 if k.endswith("bias") else 0.0)
    return state


def test_another_width_loads_through_the_config_key_and_the_command_line(tmp_path, config):
    path = tmp_path / "mn10_as_random.pt"
    torch.save(_random_state(1.0), path)
    cfg = config.with_value("tagger.weights", str(path)).with_value("tagger.weights_sha256", None)
    cols = tagger_columns(np.random.default_rng(0).standard_normal(44100 * 2).astype(np.float32), 44100,
                          cfg.params.tagger)
    assert cols.logits.shape == (527, 7) and cols.embeddings.shape == (960, 7)  # mn10: 6 x 160 channels
    assert np.isfinite(cols.logits).all()
    assert cols.weights.name == "mn10_as_random.pt" and not cols.weights.shipped
    assert cols.weights.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert cols.weights.disclosure()["sha256"] == cols.weights.sha256[:16]
    # --tagger-weights on a command that takes --family-evidence sets the key and clears the shipped digest
    for argv in (["score", "clips", "--prompts", "p.jsonl", "--out", "o", "--tagger-weights", str(path)],
                 ["confusion", "--annotations", "a.jsonl", "--clips", "c", "--tagger-weights", str(path)]):
        args = build_parser().parse_args(argv)
        p = scoring_config(args).params.tagger
        assert (p.weights, p.weights_sha256) == (str(path), None)
        assert tagger_for(p).shape == TaggerShape.for_width(1.0)
    for argv in (["explain", "r", "c.wav", "e1", "--tagger-weights", str(path)],
                 ["evidence", "eval", "--data", "d", "--tagger-weights", str(path)]):
        assert build_parser().parse_args(argv).tagger_weights == str(path)
    default = scoring_config(build_parser().parse_args(["score", "c", "--prompts", "p", "--out", "o"]))
    assert default.params.tagger == config.params.tagger


def test_a_missing_command_line_weights_file_is_an_error_at_once(tmp_path, capsys):
    from timingbench.cli import main

    missing = tmp_path / "mn10_as_mAP_471.pt"
    prompts = tmp_path / "p.jsonl"
    prompts.write_text('{"id": "p1", "family": "single_event", "text": "x", "duration_s": 10.0, "events": '
                       '[{"id": "p1/e1", "kind": "music_end", "family": "mix", "time_s": 5.0}], "tempo": null}\n',
                       encoding="utf-8")
    assert main(["score", str(tmp_path), "--prompts", str(prompts), "--out", str(tmp_path / "o"),
                 "--tagger-weights", str(missing)]) != 0
    assert f"{missing}: --tagger-weights file not found" in capsys.readouterr().err


def test_a_missing_weights_file_names_the_file_and_the_expected_sha256(tmp_path, params):
    missing = tmp_path / "nowhere" / "mn04_as_mAP_432.pt"
    p = dataclasses.replace(params, weights=str(missing))
    for call in (lambda: tagger_for(p), lambda: tagger_columns(np.zeros(32000, np.float32), 32000, p),
                 lambda: bank_key(p)):
        with pytest.raises(ModelUnavailableError, match=rf"{missing}.*not found.*expected sha256 {SHIPPED_SHA256}"):
            call()


def test_a_corrupt_weights_file_names_the_file_and_the_expected_sha256(tmp_path, params):
    truncated = tmp_path / "mn04_as_mAP_432.pt"
    truncated.write_bytes(SHIPPED_WEIGHTS.read_bytes()[:100_000])
    p = dataclasses.replace(params, weights=str(truncated))
    with pytest.raises(ModelUnavailableError, match=rf"{truncated}: .*corrupt.*expected sha256 {SHIPPED_SHA256}"):
        tagger_for(p)
    # without an expected digest (--tagger-weights) the load itself fails, naming the file
    with pytest.raises(ModelUnavailableError, match=rf"{truncated}: cannot load .*no expected sha256 configured"):
        tagger_for(dataclasses.replace(p, weights_sha256=None))
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a state dict")
    with pytest.raises(ModelUnavailableError, match=rf"{garbage}: cannot load"):
        load_tagger(garbage)
    other = tmp_path / "other.pt"
    torch.save({"weight": torch.zeros(3)}, other)
    with pytest.raises(ModelUnavailableError, match=rf"{other}: the state dict has inverted residual blocks \[\]"):
        load_tagger(other)


def test_tagger_params_are_validated(config):
    with pytest.raises(ConfigError, match="tagger.weights_sha256"):
        config.with_value("tagger.weights_sha256", "ABC").params.tagger  # noqa: B018
    with pytest.raises(ConfigError, match="tagger.chunk_s"):
        config.with_value("tagger.chunk_s", 0.0).params.tagger  # noqa: B018
    with pytest.raises(ConfigError, match="tagger.threads"):
        config.with_value("tagger.threads", 0).params.tagger  # noqa: B018


# ------------------------------------------------------------------ time-resolved reading


def _one_pass(tagger, y32: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with torch.inference_mode():
        logits, emb = tagger.folded.columns(tagger.folded.features(torch.from_numpy(log_mel(y32))[None, None]))
    return logits[0].numpy(), emb[0].numpy()


def test_a_clip_within_one_window_is_read_in_exactly_one_pass(golden, params):
    x = np.concatenate([golden["wave_808"], golden["wave_tone"], golden["wave_808"][::-1],
                        golden["wave_808"][:235_555]])  # 30.4 s
    x44 = soxr.resample(x, MODEL_SR, 44100, quality="VHQ").astype(np.float32)
    cols = tagger_columns(x44, 44100, params)
    logits, emb = _one_pass(tagger_for(params), soxr.resample(x44, 44100, MODEL_SR, quality="VHQ").astype(np.float32))
    assert cols.logits.shape == logits.shape == (527, 95)
    assert np.abs(cols.logits - logits).max() <= 1e-5 and np.abs(cols.embeddings - emb).max() <= 1e-5
    np.testing.assert_allclose(cols.times, COLUMN_S * np.arange(95), atol=1e-12)
    # the columns' mean is the whole-input embedding of the same pass
    whole = _outputs(tagger_for(params).folded, log_mel(golden["wave_808"]))["embedding"]
    one = tagger_columns(golden["wave_808"], MODEL_SR, params)
    assert np.abs(one.embeddings.mean(axis=1) - whole).max() <= 1e-5


def test_chunks_with_context_over_the_receptive_field_equal_one_pass(tmp_path, golden, params):
    # squeeze-excitation pools over a whole window, so only a network without it can be compared
    # column by column across windows: the mn04 weights with the gates held open
    state = torch.load(SHIPPED_WEIGHTS, map_location="cpu", weights_only=True)
    for k in state:
        if "conc_se_layers.0.fc2." in k:
            state[k] = torch.zeros_like(state[k]) + (30.0 if k.endswith("bias") else 0.0)
    path = tmp_path / "mn04_se_open.pt"
    torch.save(state, path)
    x = np.concatenate([golden["wave_tone"], golden["wave_808"], golden["wave_tone"][::-1],
                        golden["wave_808"][:77_777]])
    base = dataclasses.replace(params, weights=str(path), weights_sha256=None, chunk_s=2.0)
    logits, emb = _one_pass(tagger_for(base), x)
    cols = tagger_columns(x, MODEL_SR, dataclasses.replace(base, context_s=3.5))  # 11 columns: > the +-3 s field
    assert cols.logits.shape == logits.shape == (527, 58)
    assert np.abs(cols.logits - logits).max() <= 1e-4 and np.abs(cols.embeddings - emb).max() <= 1e-4
    short = tagger_columns(x, MODEL_SR, dataclasses.replace(base, context_s=0.64))
    assert np.abs(short.logits - logits).max() > 1e-2  # too little context is seen


def test_blocks_streamed_from_a_file_equal_the_whole_array(golden, params):
    x44 = soxr.resample(np.concatenate([golden["wave_808"], golden["wave_tone"]]), MODEL_SR, 44100).astype(np.float32)
    p = dataclasses.replace(params, chunk_s=3.0, context_s=1.0)
    whole = tagger_columns(x44, 44100, p)
    cuts = [0, 1, 4_097, 100_000, 100_001, 333_333, x44.size]
    streamed = tagger_blocks((x44[a:b] for a, b in zip(cuts[:-1], cuts[1:], strict=True)), 44100, p)
    assert np.array_equal(whole.logits, streamed.logits) and np.array_equal(whole.embeddings, streamed.embeddings)
    assert whole.logits.shape[1] == 41


def test_empty_short_and_malformed_input(params):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        cols = tagger_columns(np.zeros(0, np.float32), 44100, params)
    assert cols.logits.shape == (527, 0) and cols.times.shape == (0,) and "empty" in str(w[0].message)
    with pytest.raises(ParameterError, match="at least 514 samples"):
        tagger_columns(np.zeros(500, np.float32), MODEL_SR, params)
    with pytest.raises(ParameterError, match="one dimension"):
        tagger_columns(np.zeros((2, 32000), np.float32), MODEL_SR, params)
    with pytest.raises(ParameterError, match="non-finite"):
        tagger_columns(np.full(32000, np.nan, np.float32), MODEL_SR, params)
    with pytest.raises(ParameterError, match="sr:"):
        tagger_columns(np.zeros(32000, np.float32), 0, params)


def test_threads_are_restored_after_a_call(params):
    before = torch.get_num_threads()
    tagger_columns(np.zeros(16000, np.float32), MODEL_SR, dataclasses.replace(params, threads=before + 1))
    assert torch.get_num_threads() == before


class _Bank:
    """What :func:`bank_tagger` reads of a feature bank: samples, rate, loud level and the ``derived`` memo."""

    def __init__(self, samples: np.ndarray, sr: int) -> None:
        from types import SimpleNamespace

        self.samples, self.sr = samples, sr
        frames = np.lib.stride_tricks.sliding_window_view(samples, 2048)[::512]
        rms_db = 10 * np.log10(np.maximum((frames.astype(np.float64) ** 2).mean(axis=1), 1e-20))
        self.loudness = SimpleNamespace(loud_level_db=float(np.percentile(rms_db, 95)))
        self.memo: dict[str, object] = {}
        self.computed: list[str] = []

    def derived(self, key, fn):
        if key not in self.memo:
            self.computed.append(key)
            self.memo[key] = fn(self)
        return self.memo[key]


def test_bank_tagger_is_memoised_under_the_weights_digest_and_the_params(params):
    y = np.random.default_rng(3).standard_normal(44100 * 3).astype(np.float32) * 0.1
    bank = _Bank(y, 44100)
    key = bank_key(params)
    assert key == f"tagger:{SHIPPED_SHA256[:16]}:chunk32:context40:level{params.audio.input_loud_level_dbfs:g}"
    first = bank_tagger(bank, params)
    again = bank_tagger(bank, params)
    assert bank.computed == [key] and np.array_equal(again.logits, first.logits)
    level = params.audio.input_loud_level_dbfs
    direct = tagger_columns(at_level(y, loud_db=bank.loudness.loud_level_db, target_db=level),
                            44100, params)
    assert np.array_equal(first.logits, direct.logits) and first.weights == direct.weights
    assert first.labels == audioset_labels() and first.logits.shape == (527, 10)
    assert bank_key(dataclasses.replace(params, context_s=5.0)) != key
    import pickle

    assert isinstance(pickle.loads(pickle.dumps(bank.memo[key])), dict)  # what a cached bank stores


def test_bank_tagger_reads_the_same_columns_at_any_gain(params):
    """The tagger's input is brought to one loud level: a clip 20 dB quieter reads the same logits."""
    y = np.random.default_rng(5).standard_normal(44100 * 3).astype(np.float32) * 0.1
    loud, quiet = bank_tagger(_Bank(y, 44100), params), bank_tagger(_Bank(y * 0.1, 44100), params)
    np.testing.assert_allclose(quiet.logits, loud.logits, atol=1e-3)
    raw_quiet = tagger_columns(y * 0.1, 44100, params)
    assert np.abs(raw_quiet.logits - loud.logits).max() > 0.1  # the unscaled network is not gain-invariant


def test_bank_tagger_on_a_feature_bank(config, params):
    y = np.random.default_rng(4).standard_normal(44100).astype(np.float32) * 0.1
    clip = Clip(path=Path("noise.wav"), samples=y, sr=44100, duration_s=1.0, source_sr=44100, source_channels=1,
                content_hash=hashlib.sha256(y.tobytes()).hexdigest()[:16])
    bank = compute_bank(clip, config, separation="dsp")
    cols = bank_tagger(bank, params)
    assert cols.logits.shape == (527, 4) and bank_tagger(bank, params).logits is cols.logits


def test_models_list_and_verify_show_the_shipped_tagger(capsys):
    from timingbench.cli import main
    from timingbench.model_registry import list_models

    row = {r.name: r for r in list_models()}["efficientat-mn04"]
    assert row.present and row.size_bytes == SHIPPED_WEIGHTS.stat().st_size and row.licence.startswith("MIT")
    assert Path(row.where) == SHIPPED_WEIGHTS.parent
    assert main(["models", "verify", "efficientat-mn04"]) == 0
    out = capsys.readouterr().out
    assert "efficientat-mn04: ok, tagged 1 s of audio: 4 columns of 527 classes (384-d embeddings)" in out
    assert SHIPPED_SHA256[:16] in out

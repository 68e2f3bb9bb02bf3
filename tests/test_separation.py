"""Separation backends: resolution and fallback, dsp stems, the real demucs code path.

The demucs path runs with a small randomly initialised HTDemucs written in demucs's own
model-folder layout (``<name>.yaml`` + ``<sig>.th``), so loading, chunking, resampling
and caching are exercised without any download.
"""

from __future__ import annotations

import hashlib
import warnings
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from timingbench.audio import Clip
from timingbench.config import Config
from timingbench.errors import ModelUnavailableError, ParameterError
from timingbench.features import clear_memory_cache, compute_bank, get_bank
from timingbench.features import separation as sep

SR = 44100


def make_clip(samples: npt.NDArray[np.floating]) -> Clip:
    y = np.ascontiguousarray(samples, dtype=np.float32)
    return Clip(path=Path("sep.wav"), samples=y, sr=SR, duration_s=y.size / SR, source_sr=SR,
                source_channels=1, content_hash=hashlib.sha256(y.tobytes()).hexdigest()[:16])


def drums_and_bass(rng: np.random.Generator, dur: float = 6.0) -> npt.NDArray[np.float64]:
    """A 60 Hz bass from 0 s and noise-burst drums from 3 s."""
    t = np.arange(int(dur * SR)) / SR
    y = 0.3 * np.sin(2 * np.pi * 60.0 * t)
    for hit in np.arange(3.0, dur - 0.1, 0.25):
        i = int(hit * SR)
        y[i:i + 800] += 0.5 * rng.standard_normal(800) * np.exp(-np.arange(800) / 100.0)
    return y


@pytest.fixture
def no_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty torch hub cache, so no real weights are ever found."""
    hub = tmp_path / "torch"
    monkeypatch.setenv("TORCH_HOME", str(hub))
    return hub


def tiny_htdemucs(*, samplerate: int, sources: list[str], segment: float) -> object:
    import torch
    from demucs.htdemucs import HTDemucs

    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = HTDemucs(sources=sources, samplerate=samplerate, segment=segment, channels=8,
                         depth=2, nfft=256, t_layers=1, t_heads=1, bottom_channels=0,
                         dconv_depth=1, dconv_comp=4, t_hidden_scale=1.0)
    model.eval()
    return model


def write_model_folder(folder: Path, name: str, model: object, sig: str) -> Path:
    """Store ``model`` as demucs's ``LocalRepo`` expects it: ``<sig>.th`` + ``<name>.yaml``."""
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    args, kwargs = model._init_args_kwargs  # type: ignore[attr-defined]
    pkg = {"klass": type(model), "args": args, "kwargs": kwargs, "state": model.state_dict()}  # type: ignore[attr-defined]
    torch.save(pkg, folder / f"{sig}.th")
    (folder / f"{name}.yaml").write_text(f"models: ['{sig}']\n")
    return folder


@pytest.fixture(scope="module")
def tiny_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("demucs_repo")
    model = tiny_htdemucs(samplerate=8000, sources=["drums", "bass", "other", "vocals"], segment=1.0)
    return write_model_folder(folder, "htdemucs", model, "0badc0de")


def test_auto_falls_back_to_dsp_and_says_why(config: Config, no_hub: Path) -> None:
    r = sep.resolve("auto", cfg=config)
    assert r.backend == "dsp" and r.note is not None
    assert "htdemucs" in r.note and "dsp fallback" in r.note and str(no_hub) in r.note


def test_explicit_demucs_without_weights_raises(config: Config, no_hub: Path, tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailableError, match="htdemucs"):
        sep.resolve("demucs", cfg=config)
    with pytest.raises(ModelUnavailableError, match=str(tmp_path)):
        sep.resolve("demucs", cfg=config, demucs_repo=tmp_path)


def test_unknown_choice_raises(config: Config) -> None:
    with pytest.raises(ParameterError, match="separation must be one of"):
        sep.resolve("spleeter", cfg=config)


def test_dsp_stems_route_drums_and_bass(config: Config, rng: np.random.Generator, no_hub: Path) -> None:
    b = compute_bank(make_clip(drums_and_bass(rng)), config, separation="auto")
    assert b.separation_backend == "dsp" and b.separation_note is not None
    assert b.stems_available() == ("drums", "bass", "other")
    drums, bass = b.stem("drums"), b.stem("bass")
    assert drums.backend == "dsp" and drums.model == "hpss"
    before, after = b.grid.frame(2.0), b.grid.frame(4.0)
    # drums are absent before 3 s and present after, relative to their own loud level
    assert drums.envelope_db[before] < drums.loud_level_db - 20
    assert drums.envelope_db[after] > drums.loud_level_db - 10
    # the bass is present throughout
    assert bass.envelope_db[before] > bass.loud_level_db - 6
    with pytest.raises(ModelUnavailableError, match="dsp separation fallback cannot isolate 'vocals'"):
        b.stem("vocals")
    with pytest.raises(ModelUnavailableError, match="piano"):
        b.stem("piano")


def test_dsp_stems_cached_on_disk(config: Config, rng: np.random.Generator, tmp_path: Path) -> None:
    clip = make_clip(drums_and_bass(rng, dur=3.0))
    n0 = sep.separation_run_count("dsp")
    get_bank(clip, config, separation="dsp", cache_dir=tmp_path).stem("drums")
    assert sep.separation_run_count("dsp") == n0 + 1
    clear_memory_cache()
    s = get_bank(clip, config, separation="dsp", cache_dir=tmp_path).stem("bass")
    assert sep.separation_run_count("dsp") == n0 + 1 and s.name == "bass"
    assert not s.envelope_db.flags.writeable


def test_demucs_chunks_resamples_and_keeps_length(rng: np.random.Generator) -> None:
    model = tiny_htdemucs(samplerate=8000, sources=["drums", "bass", "other", "vocals"], segment=1.0)
    calls: list[int] = []
    model.register_forward_hook(lambda mod, inp, out: calls.append(inp[0].shape[-1]))  # type: ignore[attr-defined]
    y = drums_and_bass(rng, dur=2.6).astype(np.float32)
    stems = sep.separate_demucs(y, sr=SR, model=model, overlap=0.25, shifts=0)
    assert sorted(stems) == ["bass", "drums", "other", "vocals"]
    for v in stems.values():
        assert v.shape == y.shape and v.dtype == np.float32 and np.all(np.isfinite(v))
    # 2.6 s in 1 s segments with 25 % overlap (stride 0.75 s): chunks at 0, 0.75, 1.5, 2.25 s,
    # each fed to the model at its own 8 kHz rate and training length
    assert len(calls) == 4 and set(calls) == {8000}
    # the model runs at 8 kHz: its stems carry nothing far above 4 kHz after resampling back
    spec = np.abs(np.fft.rfft(stems["other"]))
    freqs = np.fft.rfftfreq(y.size, 1 / SR)
    assert spec[freqs > 6000].max() < 1e-3 * spec.max()
    with pytest.raises(ParameterError, match="overlap"):
        sep.separate_demucs(y, sr=SR, model=model, overlap=1.0, shifts=0)


def test_demucs_from_local_repo_through_the_bank(config: Config, rng: np.random.Generator,
                                                 tiny_repo: Path, tmp_path: Path, no_hub: Path) -> None:
    clip = make_clip(drums_and_bass(rng, dur=2.0))
    r = sep.resolve("auto", cfg=config, demucs_repo=tiny_repo)
    assert r.backend == "demucs" and r.note is None
    n0 = sep.separation_run_count("demucs")
    b = get_bank(clip, config, separation="demucs", demucs_repo=tiny_repo, cache_dir=tmp_path)
    assert b.separation_backend == "demucs"
    assert b.stems_available() == sep.STEMS_4  # no htdemucs_6s in the folder
    vocals = b.stem("vocals")
    assert vocals.backend == "demucs" and vocals.model == "htdemucs"
    assert vocals.envelope_db.shape == (b.n_frames,) and vocals.onset.shape == (b.n_frames,)
    b.stem("drums")
    assert sep.separation_run_count("demucs") == n0 + 1  # one separation serves all stems
    with pytest.raises(ModelUnavailableError, match="htdemucs_6s"):
        b.stem("piano")
    clear_memory_cache()
    b2 = get_bank(clip, config, separation="demucs", demucs_repo=tiny_repo, cache_dir=tmp_path)
    np.testing.assert_array_equal(b2.stem("vocals").envelope_db, vocals.envelope_db)
    assert sep.separation_run_count("demucs") == n0 + 1  # stems came from the cache


def test_demucs_6s_serves_piano_and_guitar(config: Config, rng: np.random.Generator,
                                           tiny_repo: Path, tmp_path: Path) -> None:
    six = tiny_htdemucs(samplerate=8000, segment=1.0,
                        sources=["drums", "bass", "other", "vocals", "guitar", "piano"])
    write_model_folder(tiny_repo, "htdemucs_6s", six, "5badc0de")
    try:
        b = compute_bank(make_clip(drums_and_bass(rng, dur=1.5)), config, separation="demucs",
                         demucs_repo=tiny_repo)
        assert b.stems_available() == sep.ALL_STEMS
        piano = b.stem("piano")
        assert piano.model == "htdemucs_6s" and piano.envelope_db.shape == (b.n_frames,)
        assert b.stem("drums").model == "htdemucs"  # 4-stem names stay on the 4-stem model
    finally:
        (tiny_repo / "htdemucs_6s.yaml").unlink()
        (tiny_repo / "5badc0de.th").unlink()


def test_demucs_from_torch_hub_cache(config: Config, no_hub: Path) -> None:
    model = tiny_htdemucs(samplerate=8000, sources=["drums", "bass", "other", "vocals"], segment=1.0)
    ckpt = no_hub / "hub" / "checkpoints"
    url = sep._remote_files()["955717e8"]
    write_model_folder(ckpt, "unused", model, "tmp")
    (ckpt / "tmp.th").rename(ckpt / url.rsplit("/", 1)[-1])
    found = sep.find_demucs_weights("htdemucs", repo=None)
    assert found == ("hub", ckpt)
    assert sep.resolve("auto", cfg=config).backend == "demucs"
    loaded = sep.load_demucs_model("htdemucs", repo=None)
    assert list(loaded.sources) == ["drums", "bass", "other", "vocals"]

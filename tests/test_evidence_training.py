"""Training pipeline of the family evidence model: cached arrays, resumable runs, curve, inference plumbing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from timingbench.config import Config
from timingbench.errors import ParameterError
from timingbench.identity.training import dataset as ds
from timingbench.identity.training.arrays import (
    ArraySet,
    TargetParams,
    has_arrays,
    open_arrays,
    write_arrays,
)
from timingbench.identity.training.programs import FAMILIES
from timingbench.identity.training.targets import presence_targets
from timingbench.identity.training.train import (
    TrainParams,
    load_checkpoint,
    plot_curve,
    shape_from_config,
    train_model,
)
from timingbench.models.family_net import FamilyNet, load_weights, save_weights

N_FRAMES = 320  # bank frames per synthetic clip (3.7 s)
TINY = {"epochs": 3, "batch": 4, "crop_frames": 240, "width": 4, "embed": 8, "threads": 1}


def _fake_folder(folder: Path, cfg: Config, *, n: int, seed: int, chunk: int = 5) -> Path:
    """A data folder as make-data writes it (manifest and shards), with synthetic clips:
    each family sounds over a random span, and its band of the log-mel is loud there."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True)
    man = {"recipe": ds.RECIPE, "seed": seed, "n_clips": n, "soundfonts": ["/x/FluidR3_GM.sf2"], "augment": True,
           "families": list(FAMILIES), "params": dict(ds.DataParams.from_config(cfg).__dict__), "chunk": chunk}
    (folder / "manifest.json").write_text(json.dumps(man))
    for c0 in range(0, n, chunk):
        k = min(chunk, n - c0)
        mel = np.full((k, 128, N_FRAMES), -70.0, dtype=np.float32) + rng.normal(0, 3, (k, 128, N_FRAMES))
        lab = np.zeros((k, len(FAMILIES), N_FRAMES), dtype=np.uint8)
        for i in range(k):
            for f in rng.choice(len(FAMILIES), size=3, replace=False):
                a = int(rng.integers(0, N_FRAMES // 2))
                b = int(rng.integers(a + 40, N_FRAMES + 1))
                lab[i, f, a:b] = 1
                mel[i, 8 + 10 * f : 16 + 10 * f, a:b] = -10.0
        meta = [{"index": c0 + i, "parts": []} for i in range(k)]
        np.savez(folder / f"part-{c0 // chunk:04d}.npz", logmel=np.minimum(mel, 0).astype(np.float16), labels=lab,
                 meta=np.array(json.dumps(meta)))
    return folder


@pytest.fixture
def folders(tmp_path: Path, config: Config) -> tuple[Path, Path]:
    train = _fake_folder(tmp_path / "train", config, n=14, seed=1)
    dev = _fake_folder(tmp_path / "dev", config, n=6, seed=2)
    write_arrays(train, cfg=config)
    write_arrays(dev, cfg=config)
    return train, dev


def _sets(folders: tuple[Path, Path], cfg: Config) -> tuple[ArraySet, ArraySet]:
    return ArraySet([open_arrays(folders[0], cfg=cfg)]), ArraySet([open_arrays(folders[1], cfg=cfg)])


def test_arrays_hold_the_shards_and_their_targets_memory_mapped(folders: tuple[Path, Path], config: Config) -> None:
    arr = open_arrays(folders[0], cfg=config)
    mel, lab, meta = ds.load_dataset(folders[0])
    assert isinstance(arr.logmel, np.memmap) and arr.logmel.dtype == np.float16 and arr.labels.dtype == np.uint8
    assert arr.presence.dtype == np.float16 and arr.change.dtype == np.int8
    np.testing.assert_array_equal(arr.logmel, mel)
    np.testing.assert_array_equal(arr.labels, lab)
    tp = TargetParams.from_config(config)
    pres = presence_targets(lab, tp.stride)
    np.testing.assert_array_equal(arr.presence.astype(np.float32), pres)  # shares k/4 are exact in float16
    np.testing.assert_array_equal(arr.change, tp.change(pres))
    assert arr.meta == meta and len(arr) == 14


def test_array_set_reads_rows_across_folders_in_the_asked_order(folders: tuple[Path, Path], config: Config) -> None:
    a, b = (open_arrays(f, cfg=config) for f in folders)
    both = ArraySet([a, b])
    idx = [15, 2, 19, 0, 14]
    got = both.take(1, idx, slice(10, 30))
    want = np.concatenate([a.labels, b.labels])[idx][:, :, 10:30]
    np.testing.assert_array_equal(got, want)
    assert len(both) == 20 and len(ArraySet([a, b], limit=9)) == 9


def test_arrays_are_refused_when_missing_or_made_with_other_targets(folders: tuple[Path, Path], config: Config,
                                                                   tmp_path: Path) -> None:
    bare = _fake_folder(tmp_path / "bare", config, n=2, seed=3)
    assert not has_arrays(bare)
    with pytest.raises(ParameterError, match="cache-arrays"):
        open_arrays(bare, cfg=config)
    rec_path = folders[0] / "arrays.json"
    rec = json.loads(rec_path.read_text())
    rec["targets"]["context_frames"] += 1
    rec_path.write_text(json.dumps(rec))
    with pytest.raises(ParameterError, match="context_frames"):
        open_arrays(folders[0], cfg=config)


def _state(model: FamilyNet) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in model.state_dict().items()}


def test_resumed_run_equals_the_uninterrupted_one_bit_for_bit(folders: tuple[Path, Path], config: Config,
                                                             tmp_path: Path) -> None:
    train, dev = _sets(folders, config)
    quiet = {"log": lambda s: None}
    full, curve_full, done = train_model(train, dev, cfg=config, params=TrainParams(**TINY),
                                         checkpoint=tmp_path / "full.ckpt", **quiet)
    assert done and len(curve_full["epochs"]) == 3
    ck = tmp_path / "part.ckpt"
    _, curve_1, done_1 = train_model(train, dev, cfg=config, params=TrainParams(**TINY, stop_after=1),
                                     checkpoint=ck, **quiet)
    assert not done_1 and len(curve_1["epochs"]) == 1 and load_checkpoint(ck)["epoch"] == 1
    resumed, curve_r, done_r = train_model(train, dev, cfg=config, params=TrainParams(**TINY), checkpoint=ck,
                                           resume=ck, **quiet)
    assert done_r
    a, b = _state(full), _state(resumed)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)

    def strip(c: dict[str, Any]) -> list[dict[str, Any]]:
        return [{k: v for k, v in r.items() if k != "seconds"} for r in c["epochs"]]

    assert strip(curve_r) == strip(curve_full) and curve_r["best_epoch"] == curve_full["best_epoch"]
    # the optimiser, scheduler and generators came back too: the last checkpoints agree
    fa, fb = load_checkpoint(tmp_path / "full.ckpt"), load_checkpoint(ck)
    assert fa["rng"]["numpy"] == fb["rng"]["numpy"]
    assert fa["scheduler"]["last_epoch"] == fb["scheduler"]["last_epoch"] == 3 * 4


def test_prefetching_batches_does_not_change_the_weights(folders: tuple[Path, Path], config: Config) -> None:
    train, dev = _sets(folders, config)
    on, _, _ = train_model(train, dev, cfg=config, params=TrainParams(**{**TINY, "epochs": 1}), log=lambda s: None)
    off, _, _ = train_model(train, dev, cfg=config, params=TrainParams(**{**TINY, "epochs": 1}, prefetch=False),
                            log=lambda s: None)
    a, b = _state(on), _state(off)
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_resume_refuses_another_run(folders: tuple[Path, Path], config: Config, tmp_path: Path) -> None:
    train, dev = _sets(folders, config)
    ck = tmp_path / "r.ckpt"
    train_model(train, dev, cfg=config, params=TrainParams(**TINY, stop_after=1), checkpoint=ck, log=lambda s: None)
    with pytest.raises(ParameterError, match="other settings.*lr"):
        train_model(train, dev, cfg=config, params=TrainParams(**{**TINY, "lr": 1e-3}), resume=ck, log=lambda s: None)
    with pytest.raises(ParameterError, match="other data"):
        train_model(ArraySet([open_arrays(folders[0], cfg=config)], limit=10), dev, cfg=config,
                    params=TrainParams(**TINY), resume=ck, log=lambda s: None)
    (tmp_path / "junk.ckpt").write_bytes(b"junk")
    with pytest.raises(ParameterError, match="junk.ckpt"):
        load_checkpoint(tmp_path / "junk.ckpt")


def test_cli_trains_in_two_sittings_and_writes_weights_curve_and_png(folders: tuple[Path, Path],
                                                                     tmp_path: Path) -> None:
    from timingbench.cli import main

    out = tmp_path / "w.pt"
    args = ["evidence", "train", "--data", str(folders[0]), "--dev", str(folders[1]), "--out", str(out),
            "--epochs", "2", "--batch", "4", "--width", "4", "--embed", "8", "--threads", "1"]
    assert main([*args, "--stop-after", "1"]) == 0
    assert not out.exists() and out.with_suffix(".ckpt").is_file()
    assert main([*args, "--resume", str(out.with_suffix(".ckpt"))]) == 0
    model, meta = load_weights(out)
    assert [r["epoch"] for r in meta["curve"]["epochs"]] == [1, 2]
    assert model.shape.width == 4 and model.shape.db_range == 80.0
    assert out.with_suffix(".curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads(out.with_suffix(".reference.json").read_text())["n_frames"] > 0


def test_curve_png_is_written(tmp_path: Path) -> None:
    curve = {"epochs": [{"epoch": e, "train_loss": 1.0 / e, "dev_presence_loss": 0.5, "dev_change_loss": 0.6,
                         "dev_auc": 0.7 + 0.01 * e} for e in (1, 2, 3)], "best_epoch": 3}
    plot_curve(curve, tmp_path / "c.png")
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"


def test_input_range_comes_from_the_configuration(config: Config, tmp_path: Path) -> None:
    shape = shape_from_config(config, n_mels=128)
    assert shape.db_range == float(config.params.features.db_range)
    m = FamilyNet(shape)
    save_weights(m, tmp_path / "s.pt", meta={})
    blob = torch.load(tmp_path / "s.pt", weights_only=True)
    blob["shape"].pop("db_range")  # a file written before the range was recorded
    torch.save(blob, tmp_path / "old.pt")
    assert load_weights(tmp_path / "old.pt", db_range=60.0)[0].shape.db_range == 60.0
    assert load_weights(tmp_path / "old.pt")[0].shape.db_range == float(config.params.features.db_range)


def test_bank_log_mel_is_the_one_the_data_set_stores(config: Config, rng: np.random.Generator) -> None:
    from timingbench.audio import Clip
    from timingbench.features.bank import compute_bank, log_mel

    y = (0.1 * rng.standard_normal(44100 * 3) * np.linspace(0.0, 1.0, 44100 * 3)).astype(np.float32)
    clip = Clip(samples=y, sr=44100, path=Path("mem"), content_hash="t", duration_s=3.0, source_sr=44100,
                source_channels=1)
    bank = compute_bank(clip, config, separation="none")
    np.testing.assert_array_equal(log_mel(y, sr=44100, p=config.params.features), bank.logmel)


def test_weights_digest_is_computed_once_per_file_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from timingbench.models import family_net_infer as infer

    f = tmp_path / "w.pt"
    f.write_bytes(b"one")
    reads = []
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: (reads.append(self), real(self))[1])
    d1 = infer.weights_digest(f)
    assert infer.weights_digest(f) == d1 and len(reads) == 1
    f.write_bytes(b"two!")
    os.utime(f, ns=(1, 2))
    assert infer.weights_digest(f) != d1 and len(reads) == 2
    assert infer.WEIGHTS.name == "family_evidence.pt" and infer.WEIGHTS.is_file()


def test_full_mel_resolution_design_keeps_the_output_frames(tmp_path: Path) -> None:
    from timingbench.models.family_net import NetShape

    x = torch.zeros((2, 128, 64)) - 40.0
    outs = {}
    for pool in (1, 2):
        m = FamilyNet(NetShape(width=4, embed=8, context_frames=10, guard_frames=2, db_range=80.0, mel_pool=pool))
        save_weights(m, tmp_path / f"m{pool}.pt", meta={})
        again, _ = load_weights(tmp_path / f"m{pool}.pt")
        assert again.shape.mel_pool == pool
        with torch.inference_mode():
            outs[pool] = [t.shape for t in again(x)]
    assert outs[1] == outs[2] == [torch.Size([2, len(FAMILIES), 16]), torch.Size([2, len(FAMILIES), 3, 16])]
    with pytest.raises(ValueError, match="mel_pool"):
        FamilyNet(NetShape(db_range=80.0, mel_pool=3))


def test_corpus_rows_can_be_restricted_to_one_split(tmp_path: Path) -> None:
    from timingbench.calibration.evidence_auc import _annotations

    rows = [{"clip": f"c{i}.wav", "event_id": f"c{i}/e1", "occurred": True, "onset_s": 1.0, "onset_character": "hard",
             "salience": 1, "annotator": "renderer", "split": split}
            for i, split in enumerate(["dev", "validation", "dev"])]
    path = tmp_path / "truth.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert [r.clip for r in _annotations(path, "dev").layer1] == ["c0.wav", "c2.wav"]
    assert [r.clip for r in _annotations(path, "validation").layer1] == ["c1.wav"]
    assert len(_annotations(path, None).layer1) == 3


def test_ensemble_averages_its_members_logits() -> None:
    from timingbench.models.family_net import Ensemble, NetShape

    torch.manual_seed(0)
    a = FamilyNet(NetShape(width=4, embed=8, context_frames=10, guard_frames=2, db_range=80.0)).eval()
    b = FamilyNet(NetShape(width=6, embed=8, context_frames=10, guard_frames=2, db_range=80.0, mel_pool=1)).eval()
    x = torch.rand((1, 128, 64)) * -80.0
    with torch.inference_mode():
        (pa, ca), (pb, cb), (pe, ce) = a(x), b(x), Ensemble([a, b])(x)
    torch.testing.assert_close(pe, (pa + pb) / 2)
    torch.testing.assert_close(ce, (ca + cb) / 2)
    with pytest.raises(ValueError, match="differ"):
        Ensemble([a, FamilyNet(NetShape(width=4, embed=8, context_frames=12, guard_frames=2, db_range=80.0))])

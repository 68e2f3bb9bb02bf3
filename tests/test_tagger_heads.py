"""Family heads on the tagger's column embeddings: fitting, files, the command's determinism."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from timingbench.config import Config
from timingbench.errors import ModelUnavailableError, ParameterError
from timingbench.evidence.dataset import RECIPE, TRAIN_SOUNDFONTS, DataParams
from timingbench.evidence.heads_train import (
    FitParams,
    average_precision,
    fit_heads,
    head_metrics,
)
from timingbench.evidence.programs import FAMILIES
from timingbench.evidence.tagger_cache import (
    ColumnSet,
    column_shares,
    real_cache_key,
    real_cache_path,
    sidecar_path,
)
from timingbench.evidence_net.tagger_heads import (
    SHIPPED_HEADS,
    FamilyHeads,
    head_presence,
    load_heads,
    save_heads,
)
from timingbench.families import FAMILY_NAMES

C = 12  # embedding channels of the synthetic sets


def _planted(rng: np.random.Generator, n: int, *, channels: int = C) -> ColumnSet:
    """Random embeddings; percussion sounds exactly where channel 3 exceeds 0.3, other families at random."""
    x = rng.normal(size=(n, channels)).astype(np.float32)
    shares = (rng.random((n, len(FAMILIES))) < 0.3).astype(np.float32)
    shares[:, 0] = (x[:, 3] > 0.3).astype(np.float32)
    return ColumnSet(embeddings=x, shares=shares, known=np.ones(shares.shape, dtype=bool),
                     clip=np.arange(n, dtype=np.int64) // 10, source="synthetic")


FIT = FitParams(l2=1e-3, max_iter=200, share=0.5, seed=0)


def test_fit_separates_a_planted_family(rng: np.random.Generator) -> None:
    heads = fit_heads(_planted(rng, 800), FIT)
    held = _planted(rng, 400)
    m = head_metrics(heads, held, share=0.5)
    assert m["families"]["percussion"]["auc"] > 0.98
    assert m["families"]["percussion"]["ap"] > 0.95
    for fam in FAMILIES[1:]:  # nothing to learn: chance
        assert 0.3 < m["families"][fam]["auc"] < 0.7
    p = head_presence(held.embeddings.T, heads)
    assert list(p) == list(FAMILIES)
    assert all(v.shape == (400,) and np.all((v >= 0) & (v <= 1)) for v in p.values())


def test_unknown_labels_weigh_nothing(rng: np.random.Generator) -> None:
    """Flipping the labels of columns marked unknown does not change the fit."""
    data = _planted(rng, 300)
    known = data.known.copy()
    known[:50, 0] = False
    a = fit_heads(ColumnSet(data.embeddings, data.shares, known, data.clip, "a"), FIT)
    flipped = data.shares.copy()
    flipped[:50, 0] = 1.0 - flipped[:50, 0]
    b = fit_heads(ColumnSet(data.embeddings, flipped, known, data.clip, "b"), FIT)
    np.testing.assert_array_equal(a.weights, b.weights)


def test_a_family_without_positives_is_refused(rng: np.random.Generator) -> None:
    data = _planted(rng, 100)
    data.shares[:, 4] = 0.0
    with pytest.raises(ParameterError, match="vocals"):
        fit_heads(data, FIT)


def test_save_load_round_trip_and_same_bytes(rng: np.random.Generator, tmp_path: Path) -> None:
    data = _planted(rng, 300)
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    save_heads(fit_heads(data, FIT, info={"note": "x"}), a)
    save_heads(fit_heads(data, FIT, info={"note": "x"}), b)
    assert a.read_bytes() == b.read_bytes()
    heads = load_heads(a)
    assert heads.families == FAMILIES and heads.info["note"] == "x"
    again = tmp_path / "again.npz"
    save_heads(heads, again)
    assert again.read_bytes() == a.read_bytes()


def test_missing_and_corrupt_files_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.npz"
    with pytest.raises(ModelUnavailableError, match="nope.npz.*not found"):
        load_heads(missing)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"PK\x03\x04 not a zip at all")
    with pytest.raises(ModelUnavailableError, match="bad.npz: cannot read"):
        load_heads(bad)
    other = tmp_path / "other.npz"
    np.savez(other, x=np.zeros(3))
    with pytest.raises(ModelUnavailableError, match="other.npz: not a family heads file"):
        load_heads(other)


def test_inconsistent_arrays_are_refused(tmp_path: Path) -> None:
    heads = FamilyHeads(families=("a", "b"), mean=np.zeros(3, np.float32), scale=np.ones(3, np.float32),
                        weights=np.zeros((2, 3), np.float32), bias=np.zeros(2, np.float32))
    p = tmp_path / "h.npz"
    save_heads(heads, p)
    with np.load(p) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["weights"] = np.zeros((2, 4), np.float32)
    np.savez(p, **arrays)
    with pytest.raises(ModelUnavailableError, match="h.npz: family heads: inconsistent shapes"):
        load_heads(p)
    with pytest.raises(ParameterError, match="3 channels"):
        head_presence(np.zeros((4, 2)), heads)


def test_shipped_heads_give_eleven_curves(rng: np.random.Generator) -> None:
    heads = load_heads()
    assert SHIPPED_HEADS.is_file()
    assert heads.families == FAMILY_NAMES
    assert heads.channels == 384
    emb = rng.normal(size=(384, 7)).astype(np.float32) * heads.scale[:, None] + heads.mean[:, None]
    p = head_presence(emb, heads)
    assert len(p) == 11 and all(v.shape == (7,) and np.all((v >= 0) & (v <= 1)) for v in p.values())
    assert set(heads.info["metrics"]) >= {"real validation"}


@pytest.mark.parametrize(("scores", "labels", "ap"), [
    ([0.9, 0.8, 0.1], [1, 0, 1], (1.0 + 2 / 3) / 2),
    ([0.5, 0.5, 0.5], [1, 0, 0], 1 / 3),
    ([0.2, 0.1], [0, 0], None),
])
def test_average_precision(scores: list[float], labels: list[int], ap: float | None) -> None:
    got = average_precision(scores, labels)
    assert got == ap if ap is None else got == pytest.approx(ap, abs=1e-12)


def test_column_shares_count_frames_by_their_centres() -> None:
    """Frame centres on a column edge belong to the later column (spans are half-open)."""
    hop = 0.08  # four frames per 0.32-s column; centres 0, 0.08, 0.16 (an edge), 0.24, ...
    lab = np.zeros((1, 12))
    lab[0, 2] = 1.0  # 0.16 s: first frame of column 1's span [0.16, 0.48)
    s = column_shares(lab, frame_hop_s=hop, n_columns=4)
    np.testing.assert_allclose(s[0], [0.0, 0.25, 0.0, 0.0], atol=1e-12)
    full = column_shares(np.ones((2, 12)), frame_hop_s=hop, n_columns=5)
    np.testing.assert_allclose(full[:, :4], 1.0, atol=1e-12)  # the edge column has two frames, all on
    assert np.all(full[:, 4] == 0.0)  # no frame reaches column 4


# ----------------------------------------------------------------------------- the command, end to end


def _fake_make_data(folder: Path, rng: np.random.Generator, config: Config, *, seed: int, n: int = 6) -> None:
    """A make-data folder with shards and tagger sidecars of synthetic 384-d embeddings."""
    folder.mkdir(parents=True)
    p = DataParams.from_config(config)
    (folder / "manifest.json").write_text(json.dumps({
        "recipe": RECIPE, "seed": seed, "n_clips": n, "soundfonts": list(TRAIN_SOUNDFONTS), "params": p.__dict__}))
    frames, cols = 120, 5  # 5 columns of 0.32 s hold 1.6 s of 11.6-ms bank frames (~138)
    labels = (rng.random((n, len(FAMILIES), frames)) < 0.5).astype(np.uint8)
    emb = rng.normal(size=(n, 384, cols)).astype(np.float32)
    meta = [{"index": i} for i in range(n)]
    shard = folder / "part-0000.npz"
    np.savez(shard, logmel=np.zeros((n, 4, frames), np.float16), labels=labels, meta=np.array(json.dumps(meta)))
    np.savez(sidecar_path(shard), indices=np.arange(n), embeddings=emb,
             logits=np.zeros((n, 527, cols), np.float16), level_dbfs=np.zeros(n), info=np.array("{}"))


def _fake_real(folder: Path, rng: np.random.Generator, config: Config) -> None:
    """A real corpus whose column caches exist (so no audio is read)."""
    folder.mkdir()
    key = real_cache_key(config)
    for split in ("dev", "validation"):
        n = 40
        shares = (rng.random((n, len(FAMILIES))) < 0.5).astype(np.float32)
        np.savez(real_cache_path(folder, split), key=np.array(key),
                 embeddings=rng.normal(size=(n, 384)).astype(np.float32), shares=shares,
                 known=np.ones(shares.shape, dtype=bool), clip=np.arange(n, dtype=np.int64) // 20)


def test_train_heads_command_is_deterministic(rng: np.random.Generator, tmp_path: Path, config: Config,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from timingbench.cli import main

    _fake_make_data(tmp_path / "train", rng, config, seed=1)
    _fake_make_data(tmp_path / "dev", rng, config, seed=3)
    _fake_real(tmp_path / "real", rng, config)
    outs = [tmp_path / "a.npz", tmp_path / "b.npz"]
    for out in outs:
        assert main(["evidence", "train-heads", "--data", str(tmp_path / "train"), "--real", str(tmp_path / "real"),
                     "--dev", str(tmp_path / "dev"), "--out", str(out), "--seed", "5"]) == 0
    assert outs[0].read_bytes() == outs[1].read_bytes()
    heads = load_heads(outs[0])
    assert heads.info["fit"]["seed"] == 5 and heads.info["data"][0]["seed"] == 1
    assert set(heads.info["metrics"]) == {"make-data seed 3", "real validation"}
    assert "real validation" in capsys.readouterr().out


def test_held_out_soundfont_data_is_refused(rng: np.random.Generator, tmp_path: Path, config: Config) -> None:
    from timingbench.evidence.heads_train import build_heads

    _fake_make_data(tmp_path / "msg", rng, config, seed=4)
    man = json.loads((tmp_path / "msg" / "manifest.json").read_text())
    man["soundfonts"] = ["/usr/share/sounds/sf3/MuseScore_General.sf3"]
    (tmp_path / "msg" / "manifest.json").write_text(json.dumps(man))
    _fake_real(tmp_path / "real", rng, config)
    with pytest.raises(ParameterError, match="held-out soundfont"):
        build_heads([tmp_path / "msg"], tmp_path / "real", config=config, seed=0)


def test_train_heads_without_the_real_corpus_learns_from_renders(rng: np.random.Generator, tmp_path: Path,
                                                                 config: Config) -> None:
    from timingbench.evidence.heads_train import build_heads

    _fake_make_data(tmp_path / "train", rng, config, seed=1)
    heads = build_heads([tmp_path / "train"], None, config=config, seed=0)
    assert heads.info["real"] is None and heads.info["metrics"] == {}
    assert heads.info["fit"]["n_columns"] == 6 * 5


def _sine_stems(layouts, soundfont, p, vocals, *, render, kit_of=None):  # type: ignore[no-untyped-def]
    from timingbench.evidence import dataset as ds

    n = int(round(p.clip_s * ds.SR))
    t = np.arange(n) / ds.SR
    out = []
    for lay in layouts:
        stems = {}
        for k, part in enumerate(lay.parts):
            gate = np.zeros(n)
            for a, b in part.spans:
                gate[int(a * ds.SR): int(b * ds.SR)] = 1.0
            stems[part.family] = 0.3 * np.sin(2 * np.pi * 110.0 * (k + 1) * t) * gate
        out.append(stems)
    return out


def test_make_data_sink_writes_tagger_columns_and_resumes(config: Config, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from timingbench.evidence import dataset as ds
    from timingbench.evidence.tagger_cache import TaggerSink, render_columns

    monkeypatch.setattr(ds, "render_stems", _sine_stems)
    font = tmp_path / "FluidR3_GM.sf2"
    font.write_bytes(b"x")
    folder = tmp_path / "d"

    def make() -> None:
        ds.make_dataset(folder, cfg=config, n_clips=4, seed=5, soundfonts=[str(font)], chunk=2, augment=False,
                        real_kit_p=0.0, progress=lambda *_: None, mix_sink=TaggerSink(config, seed=5))

    make()
    sides = sorted(folder.glob("tagger-*.npz"))
    assert [s.name for s in sides] == ["tagger-0000.npz", "tagger-0001.npz"]
    cols = render_columns(folder, config=config)
    assert cols.embeddings.shape == (4 * 29, 384)  # 9 s: ceil(900 frames / 32) columns per clip
    with np.load(sides[1]) as z:
        before = z["embeddings"].copy()
        levels = z["level_dbfs"]
    assert np.all((levels >= -21.0) & (levels <= -1.0))
    sides[1].unlink()
    make()  # renders shard 1 again, identically
    with np.load(sides[1]) as z:
        np.testing.assert_array_equal(z["embeddings"], before)
    sides[0].unlink()  # training refuses a shard without its columns
    with pytest.raises(ParameterError, match="tagger-0000.npz: no tagger columns"):
        render_columns(folder, config=config)

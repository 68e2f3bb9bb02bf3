"""The trained family evidence: data recipe, targets, metrics, training path, shipped weights, gate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from timingbench.config import Config
from timingbench.errors import ParameterError
from timingbench.identity.evidence import FamilyEvidence
from timingbench.identity.providers import family_evidence
from timingbench.identity.rules import family_rise, trained_verdict
from timingbench.identity.training import dataset as ds
from timingbench.identity.training.layouts import sample_layout
from timingbench.identity.training.metrics import auc, probes_from_labels
from timingbench.identity.training.programs import (
    CHOIR_FAMILIES,
    FAMILIES,
    PROGRAMS,
    instrument_spec,
    programs_for,
)
from timingbench.identity.training.targets import (
    ENTERED,
    IGNORE,
    LEFT,
    NONE,
    change_targets,
    presence_targets,
)
from timingbench.models.family_net import FamilyNet, NetShape, load_weights, save_weights

FLUID = Path("/usr/share/sounds/sf2/FluidR3_GM.sf2")
needs_fluid = pytest.mark.skipif(not FLUID.is_file() or not shutil.which("fluidsynth"),
                                 reason="FluidSynth and FluidR3_GM are installed by `make setup`")


@pytest.mark.parametrize("choir_family", CHOIR_FAMILIES)
def test_every_family_has_many_programs_and_valid_registers(choir_family: str) -> None:
    table = programs_for(choir_family)
    assert tuple(PROGRAMS) == tuple(table) == FAMILIES
    for fam, progs in table.items():
        # vocals are real singing; they have soundfont programs only when the choirs are vocals
        assert len(progs) >= (2 if choir_family == "vocals" else 0) if fam == "vocals" else len(progs) >= 4, fam
        for prog in progs:
            for role in prog.roles:
                spec = instrument_spec(fam, prog, role=role, shift=7)
                assert spec.family == fam
                if not prog.is_drum:
                    assert prog.low <= spec.low < spec.high <= prog.high
                    assert spec.high - spec.low >= 12


def test_layouts_are_seeded_and_change_inside_the_clip() -> None:
    a = sample_layout(5, seed=3, duration_s=9.0, edge_s=1.5, real_vocals_p=0.3)
    b = sample_layout(5, seed=3, duration_s=9.0, edge_s=1.5, real_vocals_p=0.3)
    assert [(p.family, p.program.program, p.spans) for p in a.parts] == \
        [(p.family, p.program.program, p.spans) for p in b.parts]
    sizes, edges = set(), []
    for i in range(200):
        lay = sample_layout(i, seed=3, duration_s=9.0, edge_s=1.5, real_vocals_p=0.3)
        fams = [p.family for p in lay.parts]
        assert len(fams) == len(set(fams))
        sizes.add(len(fams))
        edges += [e for p in lay.parts for s in p.spans for e in s if 0.0 < e < 9.0]
    assert {1, 2, 3, 4, 5, 6} <= sizes
    assert edges and min(edges) >= 1.5 and max(edges) <= 7.5


def test_change_targets_mark_an_entrance_and_an_exit() -> None:
    pres = np.zeros((1, 200), dtype=np.float32)
    pres[0, 80:150] = 1.0
    tgt = change_targets(pres, context=20, guard=2, absent_max=0.1, present_min=0.6, min_context=7)[0]
    assert tgt[80] == ENTERED and tgt[150] == LEFT
    assert tgt[40] == NONE and tgt[115] == NONE  # absent both sides / present both sides
    assert tgt[0] == IGNORE and tgt[199] == IGNORE  # too little context
    assert (tgt == ENTERED).sum() < 30


def test_presence_targets_pool_bank_frames() -> None:
    lab = np.zeros((11, 16), dtype=np.uint8)
    lab[2, 4:8] = 1
    lab[3, 4:6] = 1
    out = presence_targets(lab, 4)
    assert out.shape == (11, 4)
    assert out[2].tolist() == [0.0, 1.0, 0.0, 0.0] and out[3, 1] == 0.5


def test_auc_matches_mann_whitney(rng: np.random.Generator) -> None:
    pos, neg = rng.normal(1.0, 1.0, 40), rng.normal(0.0, 1.0, 70)
    pos[:5] = neg[:5]  # ties count half
    u = mannwhitneyu(pos, neg).statistic
    assert auc(pos, neg) == pytest.approx(u / (40 * 70))
    assert auc([], [1.0]) is None


def test_probes_split_negatives_into_decoys_and_pre_existing() -> None:
    times = np.arange(200) * 0.0464
    pres = np.zeros((1, 11, 200), dtype=np.float32)
    iv, ip = FAMILIES.index("vocals"), FAMILIES.index("piano")
    pres[0, iv, 100:] = 1.0  # vocals enter at frame 100
    pres[0, ip, :] = 1.0  # piano throughout
    meta = [{"parts": [{"family": "vocals", "spans": [[float(times[100]), 9.3]]},
                       {"family": "piano", "spans": [[0.0, 9.3]]}]}]
    probes = probes_from_labels(pres, times, meta, context=60, guard=5, absent_max=0.1, present_min=0.6)
    roles = {(p.family, p.role) for p in probes}
    assert ("vocals", "true") in roles and ("piano", "pre_existing") in roles
    assert ("keys", "decoy") in roles
    assert all(p.kind == "entry" for p in probes)


def _trained_ev(entered: np.ndarray, presence: np.ndarray, *, exempt: dict[str, str] | None = None) -> FamilyEvidence:
    times = np.arange(entered.size) * 0.0464
    return FamilyEvidence(times=times, curves={"strings": presence}, backend="trained", exempt=exempt or {},
                          window_s=0.0464, entered={"strings": entered}, left={"strings": np.zeros_like(entered)})


def test_trained_gate_passes_a_clean_entrance_and_vetoes_the_others(config: Config) -> None:
    n = 400
    t = np.arange(n) * 0.0464
    entered = np.where(np.abs(t - 9.0) < 0.3, 0.9, 0.02)
    quiet_then_on = np.where(t < 9.0, 0.02, 0.95)
    v, d = family_rise(_trained_ev(entered, quiet_then_on), "strings", candidate_s=9.0,
                       semantic=config.params.semantic, evidence_params=config.params.evidence)
    assert v == "pass" and d["change"] == pytest.approx(0.9)
    v, d = family_rise(_trained_ev(np.full(n, 0.02), quiet_then_on), "strings", candidate_s=9.0,
                       semantic=config.params.semantic, evidence_params=config.params.evidence)
    assert (v, d["reason"]) == ("fail", "no_change")
    v, d = family_rise(_trained_ev(entered, quiet_then_on, exempt={"strings": "held_out_auc_below_bar"}),
                       "strings", candidate_s=9.0, semantic=config.params.semantic,
                       evidence_params=config.params.evidence)
    assert (v, d["reason"]) == ("exempt", "held_out_auc_below_bar")


def test_gate_exit_verdict_reads_the_left_curve(config: Config) -> None:
    n = 400
    t = np.arange(n) * 0.0464
    ev = FamilyEvidence(times=t, curves={"strings": np.where(t < 9.0, 0.95, 0.02)}, backend="trained",
                        exempt={}, window_s=0.0464, entered={"strings": np.zeros(n)},
                        left={"strings": np.where(np.abs(t - 9.0) < 0.3, 0.8, 0.0)})
    v, d = trained_verdict(ev, "strings", t_s=9.0, params=config.params.evidence, kind="exit")
    assert v == "pass" and d["change"] == pytest.approx(0.8)


class _Bank:
    def __init__(self, logmel: np.ndarray) -> None:
        self.logmel, self.sr, self.hop = logmel, 44100, 512
        self.samples = np.zeros(10, dtype=np.float32)
        self.cache: dict[str, Any] = {}

    def derived(self, key: str, fn: Any) -> Any:
        if key not in self.cache:
            self.cache[key] = fn(self)
        return self.cache[key]


def _fixed_logmel() -> np.ndarray:
    from timingbench.models.family_net_infer import reference_logmel

    return reference_logmel()


def test_shipped_weights_load_and_reproduce_their_recorded_outputs(config: Config) -> None:
    from timingbench.models.family_net_infer import WEIGHTS, run_network

    ref_path = WEIGHTS.with_suffix(".reference.json")
    assert WEIGHTS.is_file() and ref_path.is_file(), "the package ships the weights and their reference outputs"
    model, meta = load_weights(WEIGHTS)
    assert "licence" in meta and meta["curve"]["epochs"]
    out = run_network(_fixed_logmel(), sr=44100, hop=512)
    ref = json.loads(ref_path.read_text())
    np.testing.assert_allclose(out.presence.mean(axis=1), ref["presence_mean"], atol=1e-4)
    np.testing.assert_allclose(out.entered.max(axis=1), ref["entered_max"], atol=1e-4)
    assert out.times.size == ref["n_frames"]


def test_trained_backend_reads_the_bank_and_caches_by_weights_digest(config: Config) -> None:
    bank = _Bank(_fixed_logmel())
    ev = family_evidence(bank, sr=44100, semantic=config.params.semantic, evidence_params=config.params.evidence,
                         audio=config.params.audio, backend="trained")
    assert ev.backend == "trained"
    judged = set(ev.curves)
    assert judged | set(ev.exempt) == set(FAMILIES)
    assert all(ev.curves[f].shape == ev.times.shape == ev.entered[f].shape for f in judged)
    assert np.all(np.diff(ev.times) > 0) and ev.times[-1] <= (1034 - 1) * 512 / 44100 + 1e-9
    (key,) = bank.cache
    assert key.startswith("evidence:trained:") and len(key.rsplit(":", 1)[1]) == 16


def test_missing_weights_exempt_every_family_with_a_note(config: Config, tmp_path: Path, monkeypatch: Any) -> None:
    import timingbench.models.family_net_infer as infer

    monkeypatch.setattr(infer, "WEIGHTS", tmp_path / "absent.pt")
    ev = family_evidence(_Bank(_fixed_logmel()), sr=44100, semantic=config.params.semantic,
                         evidence_params=config.params.evidence, audio=config.params.audio, backend="trained")
    assert ev.curves == {} and set(ev.exempt.values()) == {"model_unavailable"}
    assert "absent.pt" in (ev.note or "")


def test_held_out_soundfont_is_refused_for_training(config: Config, tmp_path: Path) -> None:
    assert ds.is_held_out("/usr/share/sounds/sf3/MuseScore_General_Lite.sf3")
    assert not ds.is_held_out(FLUID)
    fake = tmp_path / "MuseScore_General.sf3"
    fake.write_bytes(b"x")
    with pytest.raises(ParameterError, match="held-out"):
        ds.make_dataset(tmp_path / "d", cfg=config, n_clips=1, seed=0, soundfonts=[str(fake)])


@needs_fluid
def test_training_path_end_to_end_on_a_few_rendered_clips(config: Config, tmp_path: Path) -> None:
    from timingbench.identity.training.arrays import ArraySet, open_arrays, write_arrays
    from timingbench.identity.training.train import TrainParams, train_model

    man = ds.make_dataset(tmp_path / "d", cfg=config, n_clips=4, seed=11, soundfonts=[str(FLUID)], chunk=4,
                          real_kit_p=0.5 if ds.real_kits() else 0.0, progress=lambda *_: None)
    mel, lab, meta = ds.load_dataset(tmp_path / "d")
    assert man["n_clips"] == 4 and mel.shape[0] == lab.shape[0] == len(meta) == 4
    assert mel.shape[1] == 128 and lab.shape[1] == 11 and mel.shape[2] == lab.shape[2]
    for m, row in zip(lab, meta, strict=True):  # a family that is not in the layout never sounds
        fams = {p["family"] for p in row["parts"]}
        assert fams and all(not m[FAMILIES.index(f)].any() for f in FAMILIES if f not in fams)
    write_arrays(tmp_path / "d", cfg=config)  # as `timingbench evidence make-data` does
    arrays = open_arrays(tmp_path / "d", cfg=config)
    np.testing.assert_array_equal(arrays.logmel, mel)
    np.testing.assert_array_equal(arrays.labels, lab)
    parts = (arrays.logmel, arrays.labels, arrays.presence, arrays.change)
    model, curve, complete = train_model(ArraySet([tuple(a[:3] for a in parts)]),
                                         ArraySet([tuple(a[3:] for a in parts)]),
                                         cfg=config, params=TrainParams(epochs=2, batch=3, crop_frames=400, width=4,
                                                                        embed=16))
    assert complete and len(curve["epochs"]) == 2 and np.isfinite(curve["epochs"][-1]["dev_presence_loss"])
    save_weights(model, tmp_path / "w.pt", meta={"licence": "test"})
    again, meta2 = load_weights(tmp_path / "w.pt")
    assert meta2["licence"] == "test"
    import torch

    x = torch.from_numpy(mel[:1].astype(np.float32))
    with torch.inference_mode():
        np.testing.assert_allclose(model(x)[0].numpy(), again(x)[0].numpy(), atol=1e-6)


def test_net_shape_is_stored_with_the_weights(tmp_path: Path) -> None:
    m = FamilyNet(NetShape(width=4, embed=8, context_frames=10, guard_frames=2, db_range=80.0))
    save_weights(m, tmp_path / "s.pt", meta={})
    m2, _ = load_weights(tmp_path / "s.pt")
    assert m2.shape == m.shape
    (tmp_path / "bad.pt").write_bytes(b"not a torch file")
    with pytest.raises(Exception):  # noqa: B017 - torch raises its own unpickling error
        load_weights(tmp_path / "bad.pt")



"""The ``tagger`` family evidence on a real feature bank: designs, exemptions, memo, failures."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from timingbench.audio import load_clip
from timingbench.config import Config
from timingbench.errors import ConfigError, ModelUnavailableError
from timingbench.families import FAMILY_NAMES
from timingbench.features.bank import compute_bank
from timingbench.features.semantic import family_evidence, tagger_tables
from timingbench.features.tagger_evidence import check_designs


@pytest.fixture(scope="module")
def bank(tmp_path_factory: pytest.TempPathFactory, config: Config):  # type: ignore[no-untyped-def]
    """12 s: a quiet noise bed, then a harmonic tone stack from 6 s."""
    sr = 44100
    t = np.arange(12 * sr) / sr
    rng = np.random.default_rng(3)
    y = 0.01 * rng.standard_normal(t.size)
    on = t >= 6.0
    for k, f in enumerate((220.0, 440.0, 660.0, 880.0)):
        y[on] += 0.2 / (k + 1) * np.sin(2 * np.pi * f * t[on])
    path = Path(tmp_path_factory.mktemp("tagger_ev")) / "clip.wav"
    sf.write(path, y.astype(np.float32), sr)
    return compute_bank(load_clip(path, config), config, separation="dsp")


def _evidence(bank, config: Config, **designs: str):  # type: ignore[no-untyped-def]
    sec = config.params.evidence
    if designs:
        table = dict(sec.design_by_family)
        table.update(designs)
        sec = dataclasses.replace(sec, design_by_family=table)
    return family_evidence(bank, sr=bank.sr, semantic=config.params.semantic, evidence_params=sec,
                           audio=config.params.audio, backend="tagger", tagger=config.params.tagger)


def test_designs_pick_their_curves(bank, config: Config) -> None:  # type: ignore[no-untyped-def]
    judged = [f for f in FAMILY_NAMES if f not in tagger_tables(config.params.families)[2]]
    assert judged, "the registry judges at least one family"
    fam = judged[0]
    net = family_evidence(bank, sr=bank.sr, semantic=config.params.semantic, evidence_params=config.params.evidence,
                          audio=config.params.audio, backend="trained")
    as_net = _evidence(bank, config, **{fam: "network"})
    as_tag = _evidence(bank, config, **{fam: "tagger"})
    fused = _evidence(bank, config, **{fam: "fusion"})
    assert as_net.backend == as_tag.backend == fused.backend == "tagger"
    np.testing.assert_array_equal(as_net.times, net.times)
    np.testing.assert_array_equal(as_net.curves[fam], net.curves[fam])
    np.testing.assert_array_equal(as_net.entered[fam], net.entered[fam])
    np.testing.assert_array_equal(as_tag.curves[fam], as_tag.tagger[fam])
    np.testing.assert_array_equal(fused.curves[fam], fused.tagger[fam])
    np.testing.assert_array_equal(fused.entered[fam], np.maximum(as_tag.entered[fam], net.entered[fam]))
    np.testing.assert_array_equal(fused.left[fam], np.maximum(as_tag.left[fam], net.left[fam]))
    assert {as_net.sources[fam], as_tag.sources[fam], fused.sources[fam]} == {"network", "tagger", "fusion"}
    for curve in (*fused.entered.values(), *fused.curves.values()):
        assert curve.shape == fused.times.shape and np.all((curve >= 0) & (curve <= 1))


def test_exempt_families_have_no_decision_curves_but_keep_the_tagger_curve(bank, config: Config) -> None:  # type: ignore[no-untyped-def]
    ev = _evidence(bank, config)
    _, _, exempt = tagger_tables(config.params.families)
    assert set(ev.curves) | set(exempt) == set(FAMILY_NAMES)
    assert ev.exempt == exempt and not set(ev.curves) & set(exempt)
    assert set(ev.tagger) == set(FAMILY_NAMES) and set(ev.classes) == set(FAMILY_NAMES)
    assert ev.classes["piano"] == tuple(config.params.families.rows[FAMILY_NAMES.index("piano")].audioset_classes)
    info = ev.disclosure()
    assert info["backend"] == "tagger" and info["tagger_weights"].startswith("mn04_as_mAP_432.pt sha256:")
    assert set(info["designs"]) == set(ev.curves)


def test_the_tagger_runs_once_per_bank(bank, config: Config) -> None:  # type: ignore[no-untyped-def]
    a = _evidence(bank, config)
    b = _evidence(bank, config, piano="network")
    np.testing.assert_array_equal(a.tagger["piano"], b.tagger["piano"])
    # one memoised reading of the tagger, whatever the designs
    assert sum("tagger" in repr(k) for k in bank._memo) == 1


def test_missing_tagger_weights_fail_loudly(bank, config: Config, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    missing = tmp_path / "mn10_as_mAP_471.pt"
    params = dataclasses.replace(config.params.tagger, weights=str(missing))
    with pytest.raises(ModelUnavailableError, match="mn10_as_mAP_471.pt"):
        family_evidence(bank, sr=bank.sr, semantic=config.params.semantic, evidence_params=config.params.evidence,
                        audio=config.params.audio, backend="tagger", tagger=params)


def test_design_table_is_checked() -> None:
    fams = ("a", "b")
    assert check_designs({"a": "tagger", "b": "fusion"}, fams) == {"a": "tagger", "b": "fusion"}
    with pytest.raises(ConfigError, match="unknown design"):
        check_designs({"a": "magic", "b": "fusion"}, fams)
    with pytest.raises(ConfigError, match=r"\['b'\] have no design"):
        check_designs({"a": "tagger"}, fams)


def test_head_designs_read_the_family_heads(bank, config: Config) -> None:  # type: ignore[no-untyped-def]
    from timingbench.evidence_net.tagger import bank_tagger
    from timingbench.evidence_net.tagger_heads import head_presence, load_heads
    from timingbench.features.tagger_curves import frame_presence

    fam = next(f for f in FAMILY_NAMES if f not in tagger_tables(config.params.families)[2])
    net = family_evidence(bank, sr=bank.sr, semantic=config.params.semantic, evidence_params=config.params.evidence,
                          audio=config.params.audio, backend="trained")
    head = _evidence(bank, config, **{fam: "head"})
    both = _evidence(bank, config, **{fam: "head_fusion"})
    cols = bank_tagger(bank, config.params.tagger)
    want = frame_presence({fam: head_presence(cols.embeddings, load_heads())[fam]}, cols.times, head.times)[fam]
    np.testing.assert_allclose(head.curves[fam], want)
    np.testing.assert_array_equal(both.curves[fam], head.curves[fam])
    np.testing.assert_array_equal(both.entered[fam], np.maximum(head.entered[fam], net.entered[fam]))
    assert head.sources[fam] == "head" and both.sources[fam] == "head_fusion"

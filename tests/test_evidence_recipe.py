"""The family evidence data recipe: what ``vocals`` means, its hard negatives, and the recipe record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf

from timingbench.config import Config
from timingbench.errors import ParameterError
from timingbench.identity.training import dataset as ds
from timingbench.identity.training.layouts import HARD_NEGATIVE_P, ClipLayout, sample_layout
from timingbench.identity.training.programs import (
    CHOIR_FAMILIES,
    CHOIR_PROGRAMS,
    DEFAULT_CHOIR_FAMILY,
    FAMILIES,
    REAL_SINGING,
    hard_negative_programs,
    programs_for,
)

#: GM synth voice, voice lead, choir pad: synthesizer patches that only sound like a voice.
SYNTH_VOICES = (54, 85, 91)
FAKE_FONT_NAME = "FluidR3_GM.sf2"


def _layouts(n: int, **kw: Any) -> list[ClipLayout]:
    kw.setdefault("real_vocals_p", 0.8)
    return [sample_layout(i, seed=3, duration_s=9.0, edge_s=1.5, **kw) for i in range(n)]


@pytest.mark.parametrize("choir_family", CHOIR_FAMILIES)
def test_no_synth_voice_program_is_labelled_vocals(choir_family: str) -> None:
    table = programs_for(choir_family)
    vocals = {p.program for p in table["vocals"]}
    assert not vocals & set(SYNTH_VOICES)
    assert set(SYNTH_VOICES) <= {p.program for p in table["synth"]}
    owners = {f for f, progs in table.items() for p in progs if p.program in CHOIR_PROGRAMS}
    assert owners == {choir_family}
    for lay in _layouts(300, choir_family=choir_family):
        for part in lay.parts:
            if part.family == "vocals" and not part.real_vocals:
                assert part.program.program in CHOIR_PROGRAMS and choir_family == "vocals"
            assert not (part.program.program in SYNTH_VOICES and part.family == "vocals")


def test_choirs_are_not_vocals_by_default_and_vocals_are_real_singing() -> None:
    assert DEFAULT_CHOIR_FAMILY != "vocals"
    assert programs_for()["vocals"] == []
    parts = [q for lay in _layouts(300) for q in lay.parts if q.family == "vocals"]
    assert len(parts) > 50
    assert all(q.real_vocals and q.program is REAL_SINGING and not q.notes for q in parts)
    # without real singing there is no voice to sing a vocals part
    assert not any(q.family == "vocals" for lay in _layouts(300, real_vocals_p=0.0) for q in lay.parts)


def test_real_singing_is_the_main_vocals_source_even_with_choirs_as_vocals(config: Config) -> None:
    p = float(config.params.evidence.real_vocals_p)
    parts = [q for lay in _layouts(600, real_vocals_p=p, choir_family="vocals") for q in lay.parts
             if q.family == "vocals"]
    share = np.mean([q.real_vocals for q in parts])
    assert p > 0.5 and share > 0.5


def test_choir_family_is_checked() -> None:
    with pytest.raises(ParameterError, match="choir family 'brass'"):
        programs_for("brass")
    with pytest.raises(ParameterError, match="choir family"):
        sample_layout(0, seed=1, duration_s=9.0, edge_s=1.5, real_vocals_p=0.8, choir_family="woodwinds")


def _is_hard_negative(part: Any, negatives: set[tuple[str, int, str]]) -> bool:
    return (part.family, part.program.program, part.role) in negatives


@pytest.mark.parametrize("choir_family", ["synth", "strings"])
def test_clips_without_vocals_often_hold_a_pad_string_or_organ_part(choir_family: str) -> None:
    negatives = {(f, p.program, r) for f, p, r in hard_negative_programs(choir_family)}
    assert {f for f, _, _ in negatives} == {"strings", "keys", "synth"}
    assert {(choir_family, c, "pad") for c in CHOIR_PROGRAMS} <= negatives
    layouts = _layouts(600, choir_family=choir_family)
    quiet = [lay for lay in layouts if not any(q.family == "vocals" for q in lay.parts)]
    share = np.mean([any(_is_hard_negative(q, negatives) for q in lay.parts) for lay in quiet])
    off = [lay for lay in _layouts(600, choir_family=choir_family, hard_negative_p=0.0)
           if not any(q.family == "vocals" for q in lay.parts)]
    share_off = np.mean([any(_is_hard_negative(q, negatives) for q in lay.parts) for lay in off])
    assert share >= HARD_NEGATIVE_P - 0.05 and share >= share_off + 0.3
    for lay in layouts:  # the rule only marks clips with no voice, and keeps families distinct
        fams = [q.family for q in lay.parts]
        assert len(fams) == len(set(fams)) <= 6
        if "vocals" in fams:
            assert not any(q.hard_negative for q in lay.parts)
        for q in lay.parts:
            assert not q.hard_negative or _is_hard_negative(q, negatives)


def _fake_stems(layouts: Any, soundfont: str, p: ds.DataParams, vocals: Any, *,
                render: Any, kit_of: Any = None) -> list[dict[str, np.ndarray]]:
    n = int(round(p.clip_s * ds.SR))
    t = np.arange(n) / ds.SR
    out = []
    for lay in layouts:
        stems = {}
        for k, part in enumerate(lay.parts):
            gate = np.zeros(n)
            for a, b in part.spans:
                gate[int(a * ds.SR) : int(b * ds.SR)] = 1.0
            stems[part.family] = 0.3 * np.sin(2 * np.pi * 110.0 * (k + 1) * t) * gate
        out.append(stems)
    return out


@pytest.fixture
def fake_render(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    monkeypatch.setattr(ds, "render_stems", _fake_stems)
    monkeypatch.setattr(ds, "real_kits", lambda: ["/x/Fake_Kit.sf2", "/x/hydrogen/FakeKit"])
    font = tmp_path / FAKE_FONT_NAME
    font.write_bytes(b"x")
    return str(font)


def test_data_folder_records_the_recipe(config: Config, tmp_path: Path, fake_render: str) -> None:
    man = ds.make_dataset(tmp_path / "d", cfg=config, n_clips=6, seed=5, soundfonts=[fake_render], chunk=3,
                          augment=False, progress=lambda *_: None)
    on_disk = json.loads((tmp_path / "d" / "manifest.json").read_text())
    assert on_disk["recipe"] == man["recipe"] == ds.RECIPE != "evidence-data-1"
    assert on_disk["params"]["choir_family"] == DEFAULT_CHOIR_FAMILY
    assert on_disk["params"]["hard_negative_p"] == HARD_NEGATIVE_P
    assert on_disk["params"]["real_vocals_p"] == float(config.params.evidence.real_vocals_p)
    _, lab, meta = ds.load_dataset(tmp_path / "d")
    assert len(meta) == 6 and lab.shape[1] == len(FAMILIES)
    assert all("hard_negative" in q for row in meta for q in row["parts"])
    assert ds.read_manifest(tmp_path / "d", for_training=True)["recipe"] == ds.RECIPE
    # a folder of the other choir setting is recorded as such, and cannot be trained on with it
    ds.make_dataset(tmp_path / "v", cfg=config, n_clips=3, seed=6, soundfonts=[fake_render], chunk=3,
                    augment=False, choir_family="vocals", progress=lambda *_: None)
    assert ds.read_manifest(tmp_path / "v", for_training=False)["params"]["choir_family"] == "vocals"
    with pytest.raises(ParameterError, match="different recipe constants.*choir_family"):
        ds.training_sources([tmp_path / "d", tmp_path / "v"])
    assert [s["recipe"] for s in ds.training_sources([tmp_path / "d"])] == [ds.RECIPE]


def test_a_folder_of_another_recipe_is_refused(config: Config, tmp_path: Path, fake_render: str) -> None:
    ds.make_dataset(tmp_path / "d", cfg=config, n_clips=3, seed=5, soundfonts=[fake_render], chunk=3,
                    augment=False, progress=lambda *_: None)
    path = tmp_path / "d" / "manifest.json"
    old = json.loads(path.read_text())
    del old["recipe"]  # what make-data wrote before recipes were named
    path.write_text(json.dumps(old))
    assert ds.read_manifest(tmp_path / "d", for_training=False)["recipe"] == "evidence-data-1"
    with pytest.raises(ParameterError, match="data recipe evidence-data-1"):
        ds.training_sources([tmp_path / "d"])
    with pytest.raises(ParameterError, match="another data set.*recipe"):  # no resuming into it
        ds.make_dataset(tmp_path / "d", cfg=config, n_clips=6, seed=5, soundfonts=[fake_render], chunk=3,
                        augment=False, progress=lambda *_: None)
    with pytest.raises(ParameterError, match="no readable manifest"):
        ds.read_manifest(tmp_path / "absent", for_training=True)


def test_resuming_with_another_choir_family_is_refused(config: Config, tmp_path: Path, fake_render: str) -> None:
    ds.make_dataset(tmp_path / "d", cfg=config, n_clips=3, seed=5, soundfonts=[fake_render], chunk=3,
                    augment=False, progress=lambda *_: None)
    with pytest.raises(ParameterError, match="params differ"):
        ds.make_dataset(tmp_path / "d", cfg=config, n_clips=6, seed=5, soundfonts=[fake_render], chunk=3,
                        augment=False, choir_family="vocals", progress=lambda *_: None)


def test_test_sets_sing_only_the_part_of_vocadito_kept_for_testing(config: Config, tmp_path: Path) -> None:
    p = ds.DataParams.from_config(config)
    y = np.arange(int(20 * ds.SR), dtype=np.float64) / (20 * ds.SR)  # a ramp: the position is its value
    path = tmp_path / "voc.wav"
    sf.write(str(path), y, ds.SR, subtype="FLOAT")
    cut = int(p.vocadito_train_from_s * ds.SR)
    train = ds.load_vocadito(p, path=path)
    test = ds.load_vocadito(p, test=True, path=path)
    assert train is not None and test is not None
    assert train.size + test.size == y.size and test.size == cut
    np.testing.assert_allclose(test[-1], y[cut - 1], atol=1e-6)
    np.testing.assert_allclose(train[0], y[cut], atol=1e-6)
    assert ds.load_vocadito(p, path=tmp_path / "absent.wav") is None


def test_data_folder_records_the_real_kits_and_test_sets_have_none(config: Config, tmp_path: Path,
                                                                  fake_render: str) -> None:
    man = ds.make_dataset(tmp_path / "d", cfg=config, n_clips=12, seed=5, soundfonts=[fake_render], chunk=12,
                          augment=False, real_kit_p=1.0, progress=lambda *_: None)
    assert man["kits"] == {"real_kit_p": 1.0, "kits": ["/x/Fake_Kit.sf2", "/x/hydrogen/FakeKit"]}
    _, _, meta = ds.load_dataset(tmp_path / "d")
    with_kit = [m for m in meta if any(q["family"] == "percussion" and q["role"] == "drums" for q in m["parts"])]
    assert with_kit and all(m["kit"] in ("Fake_Kit.sf2", "FakeKit") for m in with_kit)
    assert all(m["kit"] is None for m in meta if m not in with_kit)
    test = ds.make_dataset(tmp_path / "t", cfg=config, n_clips=3, seed=5, soundfonts=[fake_render], chunk=3,
                           augment=False, allow_held_out=True, real_kit_p=1.0, progress=lambda *_: None)
    assert test["kits"] == {"real_kit_p": 0.0, "kits": []}
    with pytest.raises(ParameterError, match="kits differ"):  # no resuming with another kit share
        ds.make_dataset(tmp_path / "d", cfg=config, n_clips=24, seed=5, soundfonts=[fake_render], chunk=12,
                        augment=False, real_kit_p=0.5, progress=lambda *_: None)

"""The kit corpora: the drum-kit part played by real multi-sampled kits, exact truth, deterministic audio."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from timingbench.config import load_config
from timingbench.errors import ParameterError, TimingbenchError
from timingbench.render import kits
from timingbench.render.arrangement import Note
from timingbench.render.corpus import CORPORA, KIT_SPLITS, ClipSpec, render_specs
from timingbench.render.kit_mix import kit_layers, render_kit_recipe, unplayed_instants
from timingbench.render.synth import read_midi_notes

HYDROGEN_DEV_KIT = "Millo_MultiLayered2"
SF2_DEV_KIT = "Black_Pearl_4_LV2.sf2"


def _installed(name: str) -> bool:
    return any(kits.kit_name(k) == name for k in kits.real_kits())


needs_hydrogen = pytest.mark.skipif(not _installed(HYDROGEN_DEV_KIT), reason="hydrogen-drumkits not installed")
needs_sf2 = pytest.mark.skipif(not _installed(SF2_DEV_KIT), reason="avldrums.lv2-soundfont not installed")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_kit_splits_are_disjoint_and_the_corpora_use_their_own() -> None:
    dev, val = set(KIT_SPLITS["dev"]), set(KIT_SPLITS["validation"])
    assert dev and val and not dev & val
    assert {s.kit for s in CORPORA["dev-kits"].specs} == dev
    assert {s.kit for s in CORPORA["validation-kits"].specs} == val
    assert CORPORA["dev-kits"].split == "dev" and CORPORA["validation-kits"].split == "validation"
    for name in val:
        assert name in CORPORA["dev-kits"].description


@pytest.mark.parametrize("corpus", ["dev-kits", "validation-kits"])
def test_kit_corpus_design_is_percussion_with_enough_deliveries_and_negatives(corpus: str) -> None:
    specs = CORPORA[corpus].specs
    assert all(s.params["family"] == "percussion" for s in specs)
    assert all(s.params["target"] in ("drums", "jazz_drums", "cinematic_drums", "drum_machine") for s in specs)
    n = Counter(s.recipe for s in specs)
    assert n["entry_on_time"] + n["exit_on_time"] >= 12
    assert n["busy_decoy"] + n["pre_existing"] + n["never_delivered"] >= 8
    assert len({(s.recipe, s.seed) for s in specs}) == len(specs)


def test_unplayed_instants_finds_an_instant_whose_notes_the_kit_lacks() -> None:
    notes = [Note(1.0, 1.1, 49, 100), Note(2.0, 2.1, 36, 100), Note(2.0, 2.1, 49, 100)]
    assert unplayed_instants([1.0, 2.0, 3.0], notes, frozenset({36, 38, 42})) == [1.0]
    assert unplayed_instants([1.0], notes, frozenset({49})) == []


def test_a_kit_corpus_refuses_stems(tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="without --stems"):
        render_specs([ClipSpec("entry_on_time", 1, params={"family": "percussion"}, kit=HYDROGEN_DEV_KIT)],
                     out_dir=tmp_path, stems=True)


def test_an_unknown_kit_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(TimingbenchError, match="not installed"):
        render_kit_recipe("entry_on_time", kit="No_Such_Kit", seed=1, out_dir=tmp_path, family="percussion")


def _render(kit: str, out: Path, recipe: str = "entry_on_time") -> tuple[dict, Path]:
    spec = ClipSpec(recipe, 11, params={"family": "percussion", "target": "drums", "time_s": 4.0},
                    duration_s=8.0, kit=kit)
    clips = render_specs([spec], out_dir=out)
    row = json.loads((out / "manifest.jsonl").read_text().splitlines()[0])
    return row, clips[0].audio_path


@needs_hydrogen
def test_hydrogen_kit_clip_truth_is_its_first_hit_sample_and_rerenders_byte_identical(tmp_path: Path) -> None:
    row, wav = _render(HYDROGEN_DEV_KIT, tmp_path / "a")
    _, wav2 = _render(HYDROGEN_DEV_KIT, tmp_path / "b")
    assert _sha(wav) == _sha(wav2)
    assert row["kit"] == HYDROGEN_DEV_KIT and row["scenario"] == "entry_on_time"
    truth = json.loads((tmp_path / "a" / "truth.jsonl").read_text())
    assert truth["occurred"] and truth["onset_s"] == 4.0
    # the real kit's layer is digital silence before the truth sample and sounds on it
    from timingbench.render.pipeline import RenderedClip

    rc = RenderedClip(clip_id=row["prompt_id"], audio_path=wav, midi_path=tmp_path / "a" / row["midi"], prompt={},
                      truth=[truth], stem_paths={}, scenario=row["scenario"], meta=row["meta"])
    notes = read_midi_notes(rc.midi_path)[row["meta"]["kit_part"]]
    rp = load_config().params.render
    _, kit_audio, gain = kit_layers(rc, kits.find_kit(HYDROGEN_DEV_KIT), notes, soundfont=None, render=rp)
    s = int(round(4.0 * rp.sample_rate_hz))
    assert np.all(kit_audio[:s] == 0.0) and kit_audio[s] != 0.0
    np.testing.assert_allclose(20 * np.log10(gain), row["meta"]["kit_gain_db"], atol=1e-3)


@needs_sf2
def test_sf2_kit_exit_clip_rerenders_byte_identical_and_names_its_kit(tmp_path: Path) -> None:
    row, wav = _render(SF2_DEV_KIT, tmp_path / "a", recipe="exit_on_time")
    _, wav2 = _render(SF2_DEV_KIT, tmp_path / "b", recipe="exit_on_time")
    assert _sha(wav) == _sha(wav2)
    assert row["kit"] == SF2_DEV_KIT and row["scenario"] == "exit_on_time"
    notes = read_midi_notes(tmp_path / "a" / row["midi"])[row["meta"]["kit_part"]]
    truth = json.loads((tmp_path / "a" / "truth.jsonl").read_text())
    assert truth["onset_s"] == pytest.approx(max(n.start for n in notes), abs=1e-6) == pytest.approx(4.0, abs=1e-3)

"""The parts corpus: bass, percussion and vocals parts from real recordings and real samples over
real backings. The tables and the draw are checked without audio; six clips (an on-time entrance
and exit per family) are rendered once with stems (about 5 s) for truth and level checks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf

from timingbench.config import load_config
from timingbench.errors import ParameterError
from timingbench.render.corpus import KIT_SPLITS
from timingbench.render.parts_corpus import mix_part_clip, render_parts_corpus
from timingbench.render.parts_corpus_table import (
    DATA_DIR,
    PART_FAMILIES,
    PARTS_CORPUS,
    PARTS_TABLES,
    SPLITS,
    level_band,
    load_parts_tables,
    parts_corpus_specs,
)
from timingbench.render.real_corpus import active_rms
from timingbench.render.real_corpus_table import RealClipSpec

NEGATIVES = ("absent", "busy_decoy", "pre_existing", "never_stops")


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _first(split: str, family: str, kind: str) -> RealClipSpec:
    return next(s for s in PARTS_CORPUS[split]
                if (s.family, s.kind, s.scenario) == (family, kind, "on_time"))


# ----------------------------------------------------------------------------- the definition

@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("family", PART_FAMILIES)
def test_each_family_has_enough_audible_deliveries_and_negatives(split: str, family: str) -> None:
    specs = [s for s in PARTS_CORPUS[split] if s.family == family]
    loud = [s for s in specs if s.scenario == "on_time" and s.layers[0].level_db >= -12.0]
    assert sum(s.kind == "instrument_entry" for s in loud) >= 4
    assert len(loud) >= 8
    assert sum(s.scenario in NEGATIVES for s in specs) >= 10
    assert {s.scenario for s in specs} == {"on_time", "off_time", *NEGATIVES}
    assert all(20.0 <= s.duration_s <= 24.0 for s in specs)


def test_splits_share_no_recording_sample_set_or_kit() -> None:
    used = {split: {k for s in PARTS_CORPUS[split] for k in s.source_keys} for split in SPLITS}
    assert not used["dev"] & used["validation"]
    for split in SPLITS:
        parts = [PARTS_TABLES.parts[k] for k in used[split] if k in PARTS_TABLES.parts]
        kits = {p.instrument for p in parts if p.player == "kit"}
        assert kits <= set(KIT_SPLITS[split])
    played = {split: {(p.sound_set, p.instrument) for p in PARTS_TABLES.parts.values()
                      if p.split == split and p.rendered} for split in SPLITS}
    assert not played["dev"] & played["validation"]
    soundfonts = {split: {p.sound_set for p in PARTS_TABLES.parts.values()
                          if p.split == split and p.player == "fluidsynth"} for split in SPLITS}
    assert not soundfonts["dev"] & soundfonts["validation"]
    assert all("MuseScore" not in p.sound_set for p in PARTS_TABLES.parts.values())


def test_draw_is_deterministic_and_ids_and_seeds_unique() -> None:
    for split in SPLITS:
        assert parts_corpus_specs(split) == PARTS_CORPUS[split]
    every = [s for split in SPLITS for s in PARTS_CORPUS[split]]
    assert len({s.clip_id for s in every}) == len(every)
    assert len({s.seed for s in every}) == len(every)


@pytest.mark.parametrize(("level", "band"), [(-18.0, "-18..-12"), (-12.0, "-12..-6"), (-6.0, "-6..0"),
                                             (0.0, "-6..0"), (None, None)])
def test_level_band_edges(level: float | None, band: str | None) -> None:
    assert level_band(level) == band


@pytest.mark.parametrize(("table", "old", "new", "match"), [
    ("backings.csv", "bass,dev,string_orchestra folk_song", "bass,dev,string_orchestra celesta",
     "holds the family 'bass'"),
    ("backings.csv", "vocals,validation,ragtime waltz jazz_combo", "vocals,validation,ragtime waltz celesta",
     "belongs to the other split"),
    ("parts.csv", "bendir,dev,percussion", "bendir,validation,percussion", "must be the real corpus's"),
    ("parts.csv", "bass-fp-pick,validation,bass,timidity,34", "bass-fp-pick,validation,bass,timidity,134",
     "program 0-127"),
    ("design.csv", "absent,instrument_entry,2,", "absent,instrument_entry,2,-6", "empty exactly"),
    ("design.csv", "never_stops,instrument_exit", "never_stops,instrument_entry", "does not go with"),
])
def test_loader_rejects_broken_tables(tmp_path: Path, table: str, old: str, new: str, match: str) -> None:
    for f in DATA_DIR.glob("*.csv"):
        shutil.copy(f, tmp_path / f.name)
    text = (tmp_path / table).read_text(encoding="utf-8")
    assert old in text
    (tmp_path / table).write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(ParameterError, match=match):
        load_parts_tables(tmp_path)


# ----------------------------------------------------------------------------- rendered clips

@pytest.fixture(scope="module")
def built(realdata: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An on-time entrance and exit of each family (dev), rendered with stems."""
    if shutil.which("timidity") is None or not Path("/usr/share/sounds/sf2/Black_Pearl_4_LV2.sf2").is_file():
        pytest.skip("timidity or the avldrums kits are not installed (make setup)")
    out = tmp_path_factory.mktemp("parts")
    specs = [_first("dev", fam, kind) for fam in PART_FAMILIES for kind in ("instrument_entry", "instrument_exit")]
    render_parts_corpus(out_dir=out, sources_dir=realdata, specs=specs, stems=True)
    return out


def _stem(out: Path, row: dict[str, Any], part: str) -> np.ndarray:
    y, _ = sf.read(out / row["stems"][part], dtype="float64")
    return np.asarray(y)


def test_truth_is_the_parts_first_or_last_sample(built: Path) -> None:
    manifest = _rows(built / "manifest.jsonl")
    truth = {r["clip"]: r for r in _rows(built / "truth.jsonl")}
    assert {m["family"] for m in manifest} == set(PART_FAMILIES)
    for m in manifest:
        layer = m["layers"][0]
        y = _stem(built, m, layer["part"])
        nz = np.flatnonzero(y)
        s = m["true_onset_sample"]
        if m["kind"] == "instrument_entry":
            assert s == round(m["instructed_s"] * m["sample_rate_hz"])  # on time to the sample
            assert s <= nz[0] <= s + 2  # 24-bit PCM rounds the fade's first tiny samples to 0
        else:
            assert s - 2 <= nz[-1] + 1 <= s
            assert abs(s / m["sample_rate_hz"] - m["instructed_s"]) <= 0.05
        assert truth[m["clip"]]["onset_s"] == round(s / m["sample_rate_hz"], 6)
        assert truth[m["clip"]]["split"] == "dev"
        for info in m["parts"].values():  # a rendered part: its first note sounds at once
            assert info["note_on_lag_samples"] <= 0.05 * m["sample_rate_hz"]
        mix, _ = sf.read(built / "clips" / m["clip"], dtype="float64")
        stems = sum(_stem(built, m, p) for p in m["stems"])
        np.testing.assert_allclose(mix, stems, atol=2e-6)  # 24-bit PCM


def test_levels_are_the_asked_ones(built: Path) -> None:
    for m in _rows(built / "manifest.jsonl"):
        layer = m["layers"][0]
        part = _stem(built, m, layer["part"])[layer["clip_start_sample"]:layer["clip_end_sample"]]
        back = _stem(built, m, "backing")
        measured = 20.0 * np.log10(active_rms(part) / active_rms(back))
        assert abs(measured - m["level_db"]) <= 0.5, (m["clip"], measured, m["level_db"])
        assert m["levels_db"] == [m["level_db"]] and m["level_band"] == level_band(m["level_db"])


@pytest.mark.parametrize("family", PART_FAMILIES)
def test_truth_sample_is_exact_in_the_float_mix(realdata: Path, family: str) -> None:
    """Before 24-bit writing, an entrance's part starts at the truth sample and an exit's ends one before it."""
    if shutil.which("timidity") is None or not Path("/usr/share/sounds/sf2/Black_Pearl_4_LV2.sf2").is_file():
        pytest.skip("timidity or the avldrums kits are not installed (make setup)")
    for kind in ("instrument_entry", "instrument_exit"):
        mixed, _, _ = mix_part_clip(_first("dev", family, kind), sources_dir=realdata, config=load_config())
        nz = np.flatnonzero(mixed.parts[1].signal)
        if kind == "instrument_entry":
            assert nz[0] == mixed.truth_sample == round(mixed.spec.time_s * mixed.sr)
        else:
            assert nz[-1] + 1 == mixed.truth_sample

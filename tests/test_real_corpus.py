"""The real corpus: real recordings laid over real recordings, with sample-exact truth.

The whole corpus (333 clips) is built once per module (about 25 s); determinism, the CLI and
the bad-input cases rebuild a few clips only.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from timingbench.annotation_io import load_annotations
from timingbench.cli import main
from timingbench.config import Config
from timingbench.errors import ClipError, ParameterError, TimingbenchError
from timingbench.prompts import load_prompts
from timingbench.render import real_corpus as rc
from timingbench.render.real_corpus import decode_sources, mix_clip, render_real_corpus
from timingbench.render.real_corpus_table import (
    LEVEL_RANGE_DB,
    REAL_CORPUS,
    REAL_SOURCES,
    SCENARIOS,
    RealClipSpec,
    check_spec,
)

FAMILIES = ("percussion", "vocals", "brass", "strings", "piano", "woodwinds", "keys", "plucked")
KINDS = ("instrument_entry", "instrument_exit")


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _spec(prefix: str) -> RealClipSpec:
    return next(s for s in REAL_CORPUS if s.clip_id.startswith(prefix))


def _pick(scenario: str, kind: str, split: str) -> RealClipSpec:
    return next(s for s in REAL_CORPUS if (s.scenario, s.kind, s.split) == (scenario, kind, split))


@pytest.fixture(scope="module")
def built(realdata: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whole corpus, rendered once."""
    out = tmp_path_factory.mktemp("real")
    render_real_corpus(out_dir=out, sources_dir=realdata, jobs=2)
    return out


@pytest.fixture(scope="module")
def decoded(realdata: Path) -> dict[str, rc.DecodedSource]:
    """Every recording, decoded once."""
    from timingbench.config import load_config

    return decode_sources(realdata, REAL_SOURCES, config=load_config(), jobs=2)


# ----------------------------------------------------------------------------- the definition

def test_inventory_covers_every_family_kind_and_scenario() -> None:
    assert len(REAL_CORPUS) >= 80
    present = {(s.family, s.kind, s.scenario) for s in REAL_CORPUS}
    for fam in FAMILIES:
        for kind in KINDS:
            assert (fam, kind, "on_time") in present, (fam, kind)
            assert (fam, kind, "off_time") in present, (fam, kind)
    assert {s.scenario for s in REAL_CORPUS} == set(SCENARIOS)
    speech = [s for s in REAL_CORPUS if s.scenario == "speech_decoy"]
    assert speech and all(REAL_SOURCES[ly.source].kind == "speech" for s in speech for ly in s.layers)
    assert sum(1 for s in speech if s.family == "vocals") >= 10
    animals = {ly.source for s in REAL_CORPUS if s.scenario == "animal_decoy" for ly in s.layers}
    assert animals == {"robin", "whale", "dog"}
    assert len({s.clip_id for s in REAL_CORPUS}) == len(REAL_CORPUS)


def test_splits_are_disjoint_by_recording() -> None:
    used: dict[str, set[str]] = {}
    for s in REAL_CORPUS:
        for key in s.source_keys:
            used.setdefault(key, set()).add(s.split)
    assert set(used) == set(REAL_SOURCES), "every recording is used"
    assert all(len(splits) == 1 for splits in used.values()), used
    by_split = {sp: {k for k, v in used.items() if sp in v} for sp in ("dev", "validation")}
    assert not by_split["dev"] & by_split["validation"]
    for fam in ("percussion", "vocals"):  # true entrances in both splits
        for split in ("dev", "validation"):
            assert any(s.family == fam and s.split == split and s.occurred and s.kind == "instrument_entry"
                       for s in REAL_CORPUS), (fam, split)


def test_noise_decoys_lay_rain_or_the_ocean_over_music_and_no_family() -> None:
    noise = [s for s in REAL_CORPUS if s.scenario == "noise_decoy"]
    assert {ly.source for s in noise for ly in s.layers} == {"rain", "ocean"}
    assert all(REAL_SOURCES[k].kind == "noise" and REAL_SOURCES[k].family is None for k in ("rain", "ocean"))
    assert {(s.split, ly.source) for s in noise for ly in s.layers} == {("dev", "rain"), ("validation", "ocean")}
    assert all(not s.occurred and len(s.layers) == 1 and s.layers[0].role == "other" for s in noise)
    assert {"vocals", "percussion", "strings", "woodwinds"} <= {s.family for s in noise if s.split == "validation"}
    assert {s.family for s in noise if s.split == "dev"} == set(FAMILIES)


_SMS_SPLIT = {  # every sms-tools recording the corpus uses, with its split
    "cello_double": "dev", "cello_phrase": "dev", "sax_phrase": "dev", "flute": "dev", "singing_female": "dev",
    "vignesh": "dev", "bendir": "dev", "trumpet_a4": "dev", "organ": "dev", "piano_notes": "dev",
    "vibraphone": "dev", "carnatic": "dev", "speech_female": "dev", "rain": "dev",
    "cello_double_2": "validation", "violin": "validation", "oboe": "validation", "soprano": "validation",
    "mridangam": "validation", "orchestra": "validation", "speech_male": "validation", "ocean": "validation",
}


def test_sms_recordings_are_split_disjointly_and_loop_their_audible_stretch() -> None:
    sms = {k: s for k, s in REAL_SOURCES.items() if s.path.startswith("sms-tools/")}
    assert {k: s.split for k, s in sms.items()} == _SMS_SPLIT
    files = [s.path for s in sms.values()]
    assert len(set(files)) == len(files) and "sms-tools/sax-phrase-short.wav" not in files  # a cut of sax-phrase
    for s in sms.values():
        assert s.loop and 0.0 <= s.segment_s[0] < s.segment_s[1] <= 9.4
    for spec in REAL_CORPUS:
        assert {_SMS_SPLIT[k] for k in spec.source_keys if k in sms} <= {spec.split}, spec.clip_id


def test_sms_deliveries_cover_every_family_in_dev_over_backings_without_it() -> None:
    sms_dev = [s for s in REAL_CORPUS[116:] if s.split == "dev" and s.occurred]
    for fam in FAMILIES:
        n = sum(1 for s in sms_dev if s.family == fam)
        assert n >= (8 if fam in ("strings", "woodwinds", "vocals", "percussion") else 6), (fam, n)
        for kind in KINDS:
            assert {"on_time", "off_time"} <= {s.scenario for s in sms_dev if (s.family, s.kind) == (fam, kind)}
        negatives = {s.scenario for s in REAL_CORPUS[116:] if s.family == fam and s.split == "dev"
                     and not s.occurred}
        assert {"busy_decoy", "pre_existing", "absent", "speech_decoy", "noise_decoy"} <= negatives, fam
    for fam in ("strings", "woodwinds", "vocals", "percussion"):
        assert sum(1 for s in REAL_CORPUS[116:] if s.split == "validation" and s.occurred and s.family == fam) >= 8
    assert all(s.family not in REAL_SOURCES[s.backing].contains for s in REAL_CORPUS if s.occurred)


def test_existing_clips_keep_their_ids_ahead_of_the_sms_clips() -> None:
    assert [int(s.clip_id.split("-")[1]) for s in REAL_CORPUS] == list(range(1, len(REAL_CORPUS) + 1))
    assert REAL_CORPUS[115].clip_id == "real-116-entry-brass-animal-decoy"
    assert all("sms-tools/" not in REAL_SOURCES[k].path for s in REAL_CORPUS[:116] for k in s.source_keys)
    assert all(any("sms-tools/" in REAL_SOURCES[k].path for k in s.source_keys)
               for s in REAL_CORPUS[116:] if s.scenario != "absent")


def test_a_loop_tiles_its_segment_only(decoded: dict[str, rc.DecodedSource]) -> None:
    sax = decoded["sax_phrase"]
    lo, hi = rc._loop_span(sax)
    assert (lo, hi) == (int(round(2.15 * sax.sr)), int(round(5.1 * sax.sr)))
    got = rc._read(sax, lo + 10, 3 * (hi - lo))
    np.testing.assert_array_equal(got[: hi - lo - 10], sax.samples[lo + 10:hi])
    np.testing.assert_array_equal(got[hi - lo - 10: 2 * (hi - lo) - 10], sax.samples[lo:hi])
    trumpet = decoded["trumpet"]  # the librosa loops tile the whole file, as before
    assert rc._loop_span(trumpet) == (0, trumpet.samples.size)
    assert rc._loop_span(decoded["kick808"]) == (0, decoded["kick808"].samples.size)


def test_levels_lie_in_range_and_spread_across_it() -> None:
    levels = [ly.level_db for s in REAL_CORPUS for ly in s.layers]
    assert levels and min(levels) >= LEVEL_RANGE_DB[0] and max(levels) <= LEVEL_RANGE_DB[1]
    assert max(levels) - min(levels) > 12.0  # drawn across the range, not one value


def test_instructed_times_keep_off_the_edges_but_a_few_entrances_sit_near_them() -> None:
    for s in REAL_CORPUS:
        assert 3.5 <= s.time_s <= s.duration_s - 3.5, s.clip_id
    assert sum(1 for s in REAL_CORPUS if s.kind == "instrument_entry" and s.time_s <= 5.0) >= 3
    assert sum(1 for s in REAL_CORPUS if s.kind == "instrument_entry" and s.time_s >= s.duration_s - 5.0) >= 2


@pytest.mark.parametrize("bad, match", [
    ({"backing": "ragtime"}, "span the splits"),  # a dev layer over a validation backing
    ({"family": "strings", "scenario": "absent", "layers": ()}, "must never sound"),
    ({"layers": ()}, "exactly one target layer"),
    ({"duration_s": 40.0}, r"duration_s must lie in \[20, 30\]"),
])
def test_check_spec_rejects_broken_definitions(bad: dict[str, Any], match: str) -> None:
    spec = _spec("real-001")  # drum-bass entering over the celesta piece (dev)
    broken = dataclasses.replace(spec, **bad)
    if "family" in bad:
        broken = dataclasses.replace(broken, backing="string_orchestra", backing_from_s=0.0)
    with pytest.raises(ParameterError, match=match):
        check_spec(broken)


# ----------------------------------------------------------------------------- exact truth

@pytest.mark.parametrize("scenario, kind, split", [
    ("on_time", "instrument_entry", "dev"), ("off_time", "instrument_entry", "validation"),
    ("on_time", "instrument_exit", "validation"), ("off_time", "instrument_exit", "dev"),
])
def test_truth_is_the_sample_where_the_layer_starts_or_stops(decoded: dict[str, rc.DecodedSource],
                                                             scenario: str, kind: str, split: str) -> None:
    spec = _pick(scenario, kind, split)
    mixed = mix_clip(spec, decoded)
    back, layers = mixed.parts[0], mixed.parts[1:]
    np.testing.assert_allclose(mixed.samples, np.sum([p.signal for p in mixed.parts], axis=0), atol=1e-12)
    # the mix with the backing zeroed is the layers alone
    alone = mixed.samples - back.signal
    np.testing.assert_allclose(alone, np.sum([p.signal for p in layers], axis=0), atol=1e-12)
    target = next(p for p in layers if p.spec is not None and p.spec.role == "target")
    nz = np.flatnonzero(target.signal)
    truth = mixed.truth_sample
    assert truth is not None
    if kind == "instrument_entry":
        assert nz[0] == truth == int(round(target.spec.start_s * mixed.sr))  # type: ignore[union-attr]
        assert np.flatnonzero(alone)[0] == truth
    else:
        assert nz[-1] + 1 == truth
        assert np.all(target.signal[truth:] == 0.0)
    # the placed samples are the recording's own, from the recorded source sample on
    gain = 10.0 ** ((target.gain_db + mixed.scale_db) / 20.0)
    fade = int(round(rc.FADE_S * mixed.sr))
    start, s0 = target.clip_start + fade, target.source_start + fade
    got = target.signal[start:start + 4410] / gain
    src = target.source.samples
    want = src[(s0 + np.arange(4410)) % src.size]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    # the first placed sample is audible: at most 30 dB under the recording's peak
    assert abs(src[target.source_start % src.size]) >= target.source.threshold
    # on time: the truth is the instructed sample (exits within the last-audible move)
    d = truth / mixed.sr - spec.time_s
    if scenario == "on_time":
        assert abs(d) <= rc.ON_TIME_MAX_S
    else:
        assert rc.OFF_TIME_RANGE_S[0] - 0.05 <= abs(d) <= rc.OFF_TIME_RANGE_S[1]


def test_levels_are_relative_to_the_backing(decoded: dict[str, rc.DecodedSource]) -> None:
    spec = _pick("pre_existing", "instrument_entry", "validation")
    mixed = mix_clip(spec, decoded)
    ref = rc.active_rms(mixed.parts[0].signal)
    for part in mixed.parts[1:]:
        assert part.spec is not None
        own = rc.active_rms(part.signal[part.clip_start:part.clip_end])
        assert 20.0 * np.log10(own / ref) == pytest.approx(part.spec.level_db, abs=1e-9)
    assert float(np.max(np.abs(mixed.samples))) == pytest.approx(10.0 ** (-1.0 / 20.0))


def test_negatives_have_no_target_and_their_decoy_enters_on_the_instruction(
        decoded: dict[str, rc.DecodedSource]) -> None:
    for scenario in ("busy_decoy", "speech_decoy", "animal_decoy", "noise_decoy", "pre_existing"):
        spec = _pick(scenario, "instrument_entry", "dev")
        mixed = mix_clip(spec, decoded)
        assert mixed.truth_sample is None
        other = next(p for p in mixed.parts[1:] if p.spec is not None and p.spec.role == "other")
        assert np.flatnonzero(other.signal)[0] == int(round(spec.time_s * mixed.sr))


# ----------------------------------------------------------------------------- the written corpus

def test_written_corpus_has_the_corpus_layout(built: Path) -> None:
    n = len(REAL_CORPUS)
    assert len(list((built / "clips").glob("*.wav"))) == n
    prompts = load_prompts(built / "prompts.jsonl")
    assert not prompts.errors and len(prompts.prompts) == n
    ann = load_annotations(built / "truth.jsonl")
    assert not ann.errors and len(ann.layer1) == n
    obs = load_annotations(built / "observed.jsonl")
    assert not obs.errors and obs.layer2
    manifest = _rows(built / "manifest.jsonl")
    truth = {r["clip"]: r for r in _rows(built / "truth.jsonl")}
    for row in manifest:
        t = truth[row["clip"]]
        assert t["split"] == row["split"]
        if row["true_onset_sample"] is None:
            assert t["occurred"] is False and t["onset_s"] is None
        else:
            assert t["onset_s"] == pytest.approx(row["true_onset_sample"] / row["sample_rate_hz"], abs=1e-6)
        for part in [row["backing"], *row["layers"]]:
            assert part["trim_samples"] >= 0 and part["source"] in row["sources"]
        for layer in row["layers"]:
            assert LEVEL_RANGE_DB[0] <= layer["level_db"] <= LEVEL_RANGE_DB[1]
            if layer["source_key"] == "vocadito":  # only the part the evidence model never saw
                end = layer["source_start_sample"] + layer["clip_end_sample"] - layer["clip_start_sample"]
                assert end <= 12.0 * row["sample_rate_hz"]
    splits: dict[str, set[str]] = {}
    for row in manifest:
        for name in row["sources"]:
            splits.setdefault(name, set()).add(row["split"])
    assert all(len(v) == 1 for v in splits.values())
    assert sum(1 for r in manifest if r["split"] == "dev") and sum(1 for r in manifest if r["split"] == "validation")


def test_written_clips_are_mono_441_khz_of_the_planned_length(built: Path, config: Config) -> None:
    import soundfile as sf

    for row in _rows(built / "manifest.jsonl")[:5]:
        info = sf.info(str(built / "clips" / row["clip"]))
        assert (info.samplerate, info.channels, info.frames) == (44100, 1, row["n_samples"])
        assert 20.0 <= info.frames / info.samplerate <= 30.0


def test_rendering_is_deterministic(built: Path, realdata: Path, tmp_path: Path) -> None:
    few = [_spec("real-001"), _pick("off_time", "instrument_exit", "validation"),
           _pick("animal_decoy", "instrument_entry", "validation")]
    render_real_corpus(out_dir=tmp_path, sources_dir=realdata, specs=few)
    for spec in few:
        name = f"{spec.clip_id}.wav"
        assert (tmp_path / "clips" / name).read_bytes() == (built / "clips" / name).read_bytes()
    full = {r["clip"]: r for r in _rows(built / "truth.jsonl")}
    assert _rows(tmp_path / "truth.jsonl") == [full[f"{s.clip_id}.wav"] for s in few]
    man = {r["clip"]: r for r in _rows(built / "manifest.jsonl")}
    assert _rows(tmp_path / "manifest.jsonl") == [man[f"{s.clip_id}.wav"] for s in few]


def test_stems_sum_to_the_mix(realdata: Path, tmp_path: Path) -> None:
    import soundfile as sf

    spec = _pick("pre_existing", "instrument_entry", "validation")
    clip = render_real_corpus(out_dir=tmp_path, sources_dir=realdata, specs=[spec], stems=True)[0]
    mix = sf.read(str(clip.audio_path), dtype="float64")[0]
    parts = [sf.read(str(p), dtype="float64")[0] for p in clip.stem_paths.values()]
    assert len(parts) == 1 + len(spec.layers)
    np.testing.assert_allclose(np.sum(parts, axis=0), mix, atol=4 * 2.0 ** -23)


# ----------------------------------------------------------------------------- bad input

def _partial_sources(realdata: Path, dest: Path, *, drop: str) -> Path:
    for src in REAL_SOURCES.values():
        if src.key == drop:
            continue
        target = dest / src.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(realdata / src.path)
    return dest


def test_missing_source_names_the_file(realdata: Path, tmp_path: Path) -> None:
    sources = _partial_sources(realdata, tmp_path / "src", drop="trumpet")
    spec = _pick("on_time", "instrument_entry", "validation")
    with pytest.raises(ClipError, match=r"sorohanro_-_solo-trumpet-06\.hq\.ogg.*not found"):
        render_real_corpus(out_dir=tmp_path / "out", sources_dir=sources,
                           specs=[spec, next(s for s in REAL_CORPUS if "trumpet" in s.source_keys)])


def test_unreadable_source_names_the_file(realdata: Path, tmp_path: Path) -> None:
    sources = _partial_sources(realdata, tmp_path / "src", drop="waltz")
    bad = sources / REAL_SOURCES["waltz"].path
    bad.write_bytes(b"OggS but not really an ogg file" * 10)
    spec = next(s for s in REAL_CORPUS if s.backing == "waltz")
    with pytest.raises(TimingbenchError, match="sweet-waltz"):
        render_real_corpus(out_dir=tmp_path / "out", sources_dir=sources, specs=[spec])


# ----------------------------------------------------------------------------- the CLI

def test_cli_renders_the_real_corpus(realdata: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    import timingbench.commands.render_cmd as render_cmd

    few = (_spec("real-001"), _pick("on_time", "instrument_exit", "validation"))
    monkeypatch.setattr(render_cmd, "REAL_CORPUS", few)
    out = tmp_path / "real"
    rc_ = main(["render", "--corpus", "real", "--sources", str(realdata), "--out", str(out),
                "--jobs", "1", "--no-progress"])
    assert rc_ == 0
    assert "2 clips, 2 truth rows in " in capsys.readouterr().out
    for name in ("prompts.jsonl", "truth.jsonl", "observed.jsonl", "manifest.jsonl"):
        assert (out / name).is_file()
    assert sorted(p.name for p in (out / "clips").iterdir()) == sorted(f"{s.clip_id}.wav" for s in few)


def test_cli_needs_sources_with_the_real_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", "--corpus", "real", "--out", str(tmp_path / "x"), "--no-progress"]) == 1
    assert "--corpus real needs --sources DIR" in capsys.readouterr().err
    assert main(["render", "--corpus", "demo", "--sources", str(tmp_path), "--out", str(tmp_path / "y")]) == 1
    assert "--sources is read only with --corpus real" in capsys.readouterr().err


def test_cli_missing_source_is_a_one_line_error(realdata: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    import timingbench.commands.render_cmd as render_cmd

    sources = _partial_sources(realdata, tmp_path / "src", drop="celesta")
    monkeypatch.setattr(render_cmd, "REAL_CORPUS", (_spec("real-001"),))
    assert main(["render", "--corpus", "real", "--sources", str(sources), "--out", str(tmp_path / "o"),
                 "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "Dance_of_the_Sugar_Plum_Fairy.hq.ogg" in err and "not found" in err
    shutil.rmtree(sources)

"""The smallest inputs of the crashes and lost rows the loader fuzzing found, fixed once and kept.

Each test is one input the fuzz suites (``tests/test_fuzz_*.py``) reduced a failure to, so
that the default suite checks it whatever the seeded profile happens to draw.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from timingbench.annotation_io import (
    import_audacity_labels,
    import_sonic_visualiser_csv,
    load_annotations,
)
from timingbench.config import load_config
from timingbench.errors import ConfigError
from timingbench.prompts import load_prompts
from timingbench.suites import audiorag, mgbench

PROMPT = {"id": "p1", "family": "single_event", "text": "t", "duration_s": 30.0, "tempo": None,
          "events": [{"id": "p1/e1", "kind": "instrument_entry", "target": "drums", "family": "percussion",
                      "time_s": 6.0}]}


def test_prompt_file_with_a_bom_keeps_its_first_row(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(PROMPT).encode() + b"\r\n")
    ps = load_prompts(path)
    assert list(ps.prompts) == ["p1"] and not ps.errors


def test_jsonl_line_numbers_ignore_a_lone_carriage_return(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(b'{"id": 1,\r "x": \x00}\n' + b"not json\n" + json.dumps(PROMPT).encode() + b"\n")
    ps = load_prompts(path)
    assert list(ps.prompts) == ["p1"]
    assert [str(e).split(": ")[0] for e in ps.errors] == [f"{path}:1", f"{path}:2"]


def test_annotation_onset_beyond_the_float_range_is_a_field_error(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    good = {"clip": "c.wav", "source": "kick", "family": "percussion", "onset_s": 1.0, "annotator": "a"}
    path.write_text('{"clip": "c.wav", "source": "kick", "family": "percussion", "annotator": "a", '
                    '"onset_s": 1' + "0" * 400 + "}\n" + json.dumps(good) + "\n", encoding="utf-8")
    aset = load_annotations(path)
    assert len(aset.layer2) == 1
    assert len(aset.errors) == 1 and f"{path}:1:" in str(aset.errors[0]) and "'onset_s'" in str(aset.errors[0])


@pytest.mark.parametrize("salience", ["\u00b2", "0" * 5000 + "2"])
def test_audacity_salience_that_is_no_plain_digit_is_a_field_error(tmp_path: Path, salience: str) -> None:
    path = tmp_path / "labels.txt"
    path.write_text(f"1.0\t1.0\tpiano|x|{salience}\n2.0\t2.0\tpiano|y|2\n", encoding="utf-8")
    aset = import_audacity_labels(path, clip="c.wav", annotator="a", split="dev")
    assert [r.source for r in aset.layer2] == ["y"]
    assert "'salience'" in str(aset.errors[0]) and f"{path}:1:" in str(aset.errors[0])


def test_audacity_lines_are_numbered_as_an_editor_shows_them(tmp_path: Path) -> None:
    path = tmp_path / "labels.txt"
    # \x0b, \x1c and U+2028 are line breaks to str.splitlines, not to an editor
    path.write_text("1.0\t1.0\tpiano|a\x0bb\x1cc\u2028d\nx\t1.0\tpiano|e\n", encoding="utf-8")
    aset = import_audacity_labels(path, clip="c.wav", annotator="a", split="dev")
    assert [r.source for r in aset.layer2] == ["a\x0bb\x1cc\u2028d"]
    assert len(aset.errors) == 1 and f"{path}:2:" in str(aset.errors[0])


@pytest.mark.parametrize("importer", [import_audacity_labels, import_sonic_visualiser_csv])
def test_a_bad_byte_rejects_its_line_not_the_file(tmp_path: Path, importer) -> None:  # type: ignore[no-untyped-def]
    sep = "\t" if importer is import_audacity_labels else ","
    path = tmp_path / "labels.txt"
    path.write_bytes(f"1.0{sep}1.0{sep}piano|a\n".encode() + b"2.0" + sep.encode() + b"piano|\xff\n"
                     + f"3.0{sep}3.0{sep}piano|c\n".encode())
    aset = importer(path, clip="c.wav", annotator="a", split="dev")
    assert [r.source for r in aset.layer2] == ["a", "c"]
    assert len(aset.errors) == 1 and f"{path}:2:" in str(aset.errors[0]) and "UTF-8" in str(aset.errors[0])


def test_sonic_visualiser_unbalanced_quote_damages_only_its_line(tmp_path: Path) -> None:
    path = tmp_path / "layer.csv"
    path.write_text('TIME,LABEL\n1.0,"piano|a\n2.0,piano|b\n3.0,"piano|c, d"\n', encoding="utf-8")
    aset = import_sonic_visualiser_csv(path, clip="c.wav", annotator="a", split="dev")
    assert sorted(r.source for r in aset.layer2) == ["a", "b", "c, d"]


def test_mgbench_interval_beyond_the_float_range_is_a_row_error(tmp_path: Path) -> None:
    path = tmp_path / "gt.jsonl"
    path.write_text('{"id": "m1", "subset": "3N", "task": "grounding", "question": "q", "intervals": [[1, 1'
                    + "0" * 400 + ']]}\n{"id": "m2", "subset": "3N", "task": "grounding", "question": "q", '
                    '"intervals": [[1, 2]]}\n', encoding="utf-8")
    gt = mgbench.load_ground_truth(path)
    assert list(gt.rows) == ["m2"]
    assert len(gt.errors) == 1 and f"{path}:1:" in gt.errors[0] and "'intervals'" in gt.errors[0]


def test_audiorag_answer_index_padded_with_unicode_space_is_read(tmp_path: Path) -> None:
    meta_path = tmp_path / "metadata.jsonl"
    meta_path.write_text(json.dumps({"audio_path": "a.wav", "question": "q", "answer": "x"}) + "\n", encoding="utf-8")
    ans_path = tmp_path / "answers.jsonl"
    ans_path.write_text(json.dumps({"id": "\x1c0\u2028", "answer": "x"}) + "\n", encoding="utf-8")
    answers, errors = audiorag.load_answers(ans_path, audiorag.load_metadata(meta_path))
    assert [a.index for a in answers] == [0] and not errors


@pytest.mark.parametrize("rid", ["\u00b2", "9" * 5000])
def test_audiorag_answer_id_that_is_no_plain_index_is_a_row_error(tmp_path: Path, rid: str) -> None:
    meta_path = tmp_path / "metadata.jsonl"
    meta_path.write_text(json.dumps({"audio_path": "a.wav", "question": "q", "answer": "x"}) + "\n", encoding="utf-8")
    ans_path = tmp_path / "answers.jsonl"
    ans_path.write_text(json.dumps({"id": rid, "answer": "x"}) + "\n" + json.dumps({"id": 0, "answer": "x"}) + "\n",
                        encoding="utf-8")
    answers, errors = audiorag.load_answers(ans_path, audiorag.load_metadata(meta_path))
    assert [a.index for a in answers] == [0]
    assert len(errors) == 1 and f"{ans_path}:1:" in errors[0] and "'id'" in errors[0]


_CONST = "constants:\n  s:\n    c: {value: %s, provenance: convention, why: w}\n"


@pytest.mark.parametrize(
    "text,needle",
    [
        (b"version: v\n" + b"\xff\xfe" + (_CONST % "1").encode(), "not UTF-8"),
        (("version: v\n" + _CONST % ("[" * 300 + "]" * 300)).encode(), "nested"),
        (("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
          + "".join(f"a{k}: &a{k} [" + ", ".join([f"*a{k - 1}"] * 10) + "]\n" for k in range(1, 9))
          + "version: v\n" + _CONST % "*a8").encode(), "aliases expanded"),
        (("version: v\n" + _CONST % "{1: a, b: c}").encode(), "not a string"),
    ],
    ids=["bad-utf8", "deep-nesting", "alias-bomb", "mixed-keys"],
)
def test_config_damage_is_one_config_error(tmp_path: Path, text: bytes, needle: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(path) in str(err.value) and needle in str(err.value)


@pytest.mark.parametrize("value,needle", [(10**400, "beyond the float range"), (2.5, "must be an integer"),
                                          (True, "must be a number")],
                         ids=["huge-int", "fraction-for-int", "bool-for-float"])
def test_config_number_out_of_its_type_is_a_config_error(tmp_path: Path, value: object, needle: str) -> None:
    # long profile, seed 1_253_816_410_071_674_112: an integer beyond the float range in a
    # float constant raised OverflowError from the typed parameter builder
    from timingbench.config import DEFAULT_CONFIG_PATH, load_config
    from timingbench.errors import ConfigError

    key = "search.window_s" if needle != "must be an integer" else "chance.draws"
    sec, name = key.split(".")
    doc = yaml.safe_load(DEFAULT_CONFIG_PATH.read_text(encoding="utf-8"))
    doc["constants"][sec][name]["value"] = value
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(ConfigError, match=needle) as err:
        load_config(p)
    assert str(p) in str(err.value) and key in str(err.value)


def test_config_value_of_the_wrong_shape_inside_a_mapping_is_a_config_error(tmp_path: Path) -> None:
    # long profile, seed 587106: a text count inside prompts.family_counts raised ValueError
    # from the range check of the typed parameters
    from timingbench.config import DEFAULT_CONFIG_PATH, load_config
    from timingbench.errors import ConfigError

    doc = yaml.safe_load(DEFAULT_CONFIG_PATH.read_text(encoding="utf-8"))
    doc["constants"]["prompts"]["family_counts"]["value"]["tempo"] = "17;00"
    doc["constants"]["prompts"]["bpm_choices"]["value"] = [60, "fast"]
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"prompts.bpm_choices\[1\]"):
        load_config(p)
    doc["constants"]["prompts"]["bpm_choices"]["value"] = [60, 70]
    p.write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(ConfigError, match="prompts.family_counts") as err:
        load_config(p)
    assert str(p) in str(err.value)


def test_config_error_of_a_nested_gate_set_names_its_section(tmp_path: Path) -> None:
    # long profile, seed 217531: a gate constant of the percussion section was named
    # without its section ('absence_guard_s')
    from timingbench.config import DEFAULT_CONFIG_PATH, load_config
    from timingbench.errors import ConfigError

    doc = yaml.safe_load(DEFAULT_CONFIG_PATH.read_text(encoding="utf-8"))
    doc["constants"]["percussion"]["absence_guard_s"]["value"] = -1e-9
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(ConfigError, match="'percussion.absence_guard_s'"):
        load_config(p)


def test_config_relation_error_names_both_constants(tmp_path: Path) -> None:
    # long profile, seed 107_854_693_639_016: pyin_fmin_hz raised above pyin_fmax_hz was
    # reported under pyin_fmax_hz alone
    from timingbench.config import DEFAULT_CONFIG_PATH, load_config
    from timingbench.errors import ConfigError

    doc = yaml.safe_load(DEFAULT_CONFIG_PATH.read_text(encoding="utf-8"))
    doc["constants"]["mgbench_baseline"]["pyin_fmin_hz"]["value"] = 1e6
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(p)
    assert "mgbench_baseline.pyin_fmin_hz" in str(err.value) and "mgbench_baseline.pyin_fmax_hz" in str(err.value)


@pytest.mark.parametrize("sec,name,value", [("features", "hpss_kernel_bins", 30), ("label", "zoom_px_per_s", [50.0])])
def test_config_error_names_the_constant_that_broke_the_rule(tmp_path: Path, sec: str, name: str,
                                                             value: object) -> None:
    # long profile, seed 75_714_394_125: an even HPSS kernel was reported as 'features.n_fft'
    from timingbench.config import DEFAULT_CONFIG_PATH, load_config
    from timingbench.errors import ConfigError

    doc = yaml.safe_load(DEFAULT_CONFIG_PATH.read_text(encoding="utf-8"))
    doc["constants"][sec][name]["value"] = value
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(ConfigError, match=f"{sec}.{name}"):
        load_config(p)

"""Tests of the formats §5 annotation format, importers, exporter and quarantine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from timingbench.annotation_io import (
    Layer1Row,
    Layer2Row,
    audacity_labels_text,
    export_audacity_labels,
    format_label,
    import_audacity_labels,
    import_sonic_visualiser_csv,
    load_annotations,
    parse_annotation,
    require_dev_only,
)
from timingbench.errors import AnnotationError
from timingbench.jsonio import write_jsonl

DATA = Path(__file__).resolve().parent / "data"
MIXED = DATA / "annotations_mixed.jsonl"


def test_mixed_file_loads_valid_rows_and_names_each_bad_row() -> None:
    ann = load_annotations(MIXED)
    assert [r.event_id for r in ann.layer1] == [
        "tb1-0042/e1", "tb1-0043/e1", "render-0001/e1"
    ]
    assert [(r.source, r.family) for r in ann.layer2] == [("kick drum", "percussion")]
    msgs = [str(e) for e in ann.errors]
    expected = [
        (4, "occurred"), (5, "onset_character"), (6, "family"), (7, "not valid JSON"),
        (8, "salience"), (9, "split"),
    ]
    assert len(msgs) == len(expected)
    for msg, (line, fld) in zip(msgs, expected, strict=True):
        assert f"{MIXED}:{line}:" in msg
        assert fld in msg


def test_unknown_keys_survive_a_round_trip(tmp_path: Path) -> None:
    ann = load_annotations(MIXED)
    out = tmp_path / "a.jsonl"
    write_jsonl(out, [r.to_dict() for r in ann.rows()])
    again = load_annotations(out)
    assert again.errors == []
    assert again.rows() == ann.rows()
    first = json.loads(out.read_text().splitlines()[0])
    assert first["note"] == "clear kick"
    renderer = [json.loads(x) for x in out.read_text().splitlines() if "renderer" in x][0]
    assert renderer["recipe"] == "on_time" and renderer["kind"] == "instrument_entry"
    assert renderer["family"] == "percussion"


def test_renderer_truth_row_loads_as_is() -> None:
    row = {"clip": "r.wav", "prompt_id": "r", "event_id": "r/e1", "kind": "music_end",
           "occurred": True, "onset_s": 20.0, "onset_character": "gradual",
           "annotator": "renderer", "split": "validation"}
    parsed = parse_annotation(row)
    assert isinstance(parsed, Layer1Row)
    assert parsed.salience is None and parsed.onset_s == 20.0
    assert parsed.to_dict()["kind"] == "music_end"


def test_missing_split_reads_as_validation() -> None:
    row = {"clip": "r.wav", "event_id": "r/e1", "occurred": False, "onset_s": None,
           "annotator": "renderer"}
    assert parse_annotation(row).split == "validation"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"clip": "../x.wav"}, "clip"),
        ({"clip": ""}, "clip"),
        ({"annotator": None}, "annotator"),
        ({"onset_s": -0.1}, "onset_s"),
        ({"onset_s": None}, "onset_s"),
        ({"onset_s": "6.0"}, "onset_s"),
        ({"occurred": False}, "onset_s"),  # not occurred but an onset given
        ({"salience": 0}, "salience"),
        ({"salience": True}, "salience"),
        ({"onset_character": None}, "onset_character"),
        ({"layer": 3}, "layer"),
    ],
)
def test_layer1_field_rules(change: dict[str, object], field: str) -> None:
    row = {"clip": "a.wav", "event_id": "a/e1", "occurred": True, "onset_s": 1.0,
           "onset_character": "soft", "salience": 2, "annotator": "x", "split": "dev"}
    row.update(change)
    with pytest.raises(AnnotationError, match=f"f.jsonl:3: field '{field}'"):
        parse_annotation(row, where="f.jsonl:3: ")


def test_onset_exactly_zero_is_valid() -> None:
    row = {"clip": "a.wav", "source": "pad", "family": "synth", "onset_s": 0.0,
           "salience": 1, "annotator": "x", "split": "dev"}
    parsed = parse_annotation(row)
    assert isinstance(parsed, Layer2Row) and parsed.onset_s == 0.0


def test_row_without_layer_keys_is_rejected() -> None:
    with pytest.raises(AnnotationError, match="Layer-1 row needs 'event_id'"):
        parse_annotation({"clip": "a.wav", "annotator": "x", "onset_s": 1.0})


def test_duplicate_layer1_row_is_an_error_per_annotator(tmp_path: Path) -> None:
    base = {"clip": "a.wav", "event_id": "a/e1", "occurred": False, "onset_s": None,
            "annotator": "x", "split": "dev"}
    other = dict(base, annotator="y")
    p = tmp_path / "d.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in (base, other, base)) + "\n")
    ann = load_annotations(p)
    assert len(ann.layer1) == 2
    assert len(ann.errors) == 1 and f"{p}:3:" in str(ann.errors[0])


def test_missing_file_raises() -> None:
    with pytest.raises(AnnotationError, match="not found"):
        load_annotations(DATA / "no_such_annotations.jsonl")


def test_require_dev_only_refuses_validation_rows() -> None:
    ann = load_annotations(MIXED)
    with pytest.raises(AnnotationError, match=r"fit-thresholds: refuses 1 'validation'.*:3"):
        require_dev_only(ann, command="fit-thresholds")
    require_dev_only(ann.only(split="dev"), command="fit-thresholds")
    require_dev_only([], command="fit-thresholds")
    with pytest.raises(AnnotationError, match="split must be one of"):
        ann.only(split="test")


def test_audacity_import_names_bad_lines() -> None:
    p = DATA / "annotations_audacity.txt"
    ann = import_audacity_labels(p, clip="tb1-0042.wav", annotator="ana", split="dev")
    assert [(r.event_id, r.onset_s, r.onset_character, r.salience) for r in ann.layer1] == [
        ("tb1-0042/e1", 6.02, "hard", 3)
    ]
    assert [(r.family, r.source, r.onset_s, r.salience) for r in ann.layer2] == [
        ("percussion", "kick drum", 6.02, 3), ("strings", "strings", 12.5, None)
    ]
    assert all(r.clip == "tb1-0042.wav" and r.annotator == "ana" for r in ann.rows())
    assert len(ann.errors) == 2
    assert f"{p}:5: field 'start'" in str(ann.errors[0])
    assert f"{p}:6: field 'salience'" in str(ann.errors[1])


def test_sonic_visualiser_import() -> None:
    p = DATA / "annotations_sv.csv"
    ann = import_sonic_visualiser_csv(p, clip="tb1-0042.wav", annotator="bo", split="validation")
    assert [r.event_id for r in ann.layer1] == ["tb1-0042/e1"]
    assert [(r.family, r.source, r.onset_s, r.salience) for r in ann.layer2] == [
        ("strings", "cello, divisi", 12.5, 2), ("piano", "grand", 13.0, 1)
    ]
    assert {r.split for r in ann.rows()} == {"validation"}
    assert len(ann.errors) == 1 and f"{p}:4: field 'time'" in str(ann.errors[0])


@pytest.mark.parametrize("bad", [{"clip": "a/b.wav"}, {"split": "train"}, {"annotator": " "}])
def test_importer_rejects_bad_arguments(bad: dict[str, str]) -> None:
    kw = {"clip": "a.wav", "annotator": "x", "split": "dev"} | bad
    with pytest.raises(AnnotationError):
        import_audacity_labels(DATA / "annotations_audacity.txt", **kw)


def test_audacity_export_round_trip(tmp_path: Path) -> None:
    rows = [
        Layer1Row("c.wav", "c/e1", True, 6.0116, "gradual", 2, "ana", "dev"),
        Layer1Row("c.wav", "c/e2", False, None, None, None, "ana", "dev"),
        Layer2Row("c.wav", "hi-hat", "percussion", 0.0, 1, "ana", "dev"),
        Layer2Row("c.wav", "lead | synth", "synth", 3.25, None, "ana", "dev"),
    ]
    out = tmp_path / "c.txt"
    n = export_audacity_labels(out, rows)
    assert n == 3  # the event that did not occur has no time
    back = import_audacity_labels(out, clip="c.wav", annotator="ana", split="dev")
    assert back.errors == []
    assert back.layer1 == [rows[0]]
    # a '|' inside a source would split the label: it is written as '/'
    assert back.layer2 == [rows[2], Layer2Row("c.wav", "lead / synth", "synth", 3.25, None, "ana", "dev")]
    assert format_label(rows[0]) == "@c/e1|gradual|2"
    assert audacity_labels_text(rows).splitlines()[0] == "0.000000\t0.000000\tpercussion|hi-hat|1"


def test_label_with_too_many_fields_is_reported(tmp_path: Path) -> None:
    p = tmp_path / "l.txt"
    p.write_text("1.0\t1.0\tbass|a|b|2\n")
    ann = import_audacity_labels(p, clip="a.wav", annotator="n", split="dev")
    assert ann.rows() == [] and "more than three" in str(ann.errors[0])


def test_audacity_export_refuses_two_clips(tmp_path: Path) -> None:
    rows = [Layer2Row("a.wav", "x", "bass", 1.0, 1, "n", "dev"),
            Layer2Row("b.wav", "x", "bass", 1.0, 1, "n", "dev")]
    with pytest.raises(AnnotationError, match="one clip"):
        export_audacity_labels(tmp_path / "x.txt", rows)


def test_rendered_truth_rows_load_as_they_are(tmp_path: Path) -> None:
    from timingbench.errors import ConfigError
    from timingbench.render import pipeline as recipes

    try:
        r = recipes.render_recipe("never_delivered", seed=1, out_dir=tmp_path, duration_s=6.0,
                                  split="validation")
    except ConfigError as exc:  # no FluidSynth / soundfont on this machine
        pytest.skip(str(exc))
    p = tmp_path / "truth.jsonl"
    p.write_text("".join(json.dumps(row) + "\n" for row in r.truth))
    ann = load_annotations(p)
    assert ann.errors == []
    assert len(ann.layer1) == len(r.truth) >= 1
    assert {row.annotator for row in ann.layer1} == {"renderer"}
    assert {row.split for row in ann.layer1} == {"validation"}
    with pytest.raises(AnnotationError, match="validation"):
        require_dev_only(ann, command="fit")

"""Fuzzing of the annotation loaders (formats §5): the JSONL file and the Audacity and
Sonic Visualiser imports.

Properties, for files that mix valid rows with mutated ones: only
:class:`~timingbench.errors.TimingbenchError` escapes, every valid row loads, each rejected
row's message names the file, its line and a field, and no input takes longer than the
per-input bound.
"""

from __future__ import annotations

import csv
import io
import random
import tempfile
from pathlib import Path
from typing import Any

from fuzz_support import (
    SEEDS,
    Line,
    bounded,
    check_errors,
    dumps,
    field_mutation,
    line_damage,
    wild_text,
    write_lines,
)
from hypothesis import given

from timingbench.annotation_io import (
    ONSET_CHARACTERS,
    import_audacity_labels,
    import_sonic_visualiser_csv,
    load_annotations,
)
from timingbench.prompts import EVENT_FAMILIES

L1_FIELDS = ("clip", "event_id", "occurred", "onset_s", "onset_character", "salience", "annotator", "split",
             "layer")
L2_FIELDS = ("clip", "source", "family", "onset_s", "salience", "annotator", "split", "id", "layer")
FIELD_NAMES = tuple(sorted(set(L1_FIELDS + L2_FIELDS + ("label", "start", "end", "time"))))


def _name(rng: random.Random, stem: str) -> str:
    """A non-empty name with odd characters but no path separator."""
    return stem + wild_text(rng, 0, 6).replace("/", "-").replace("\\", "-")


def valid_row(rng: random.Random, i: int) -> dict[str, Any]:
    """A valid Layer-1 or Layer-2 row, unique by its index ``i``."""
    common: dict[str, Any] = {"clip": _name(rng, f"c{rng.randint(0, 2)}") + ".wav",
                              "annotator": _name(rng, "a"),
                              "salience": rng.choice([None, 1, 2, 3, 2.0])}
    if rng.random() < 0.8:
        common["split"] = rng.choice(["dev", "validation"])
    if rng.random() < 0.5:
        occurred = rng.random() < 0.7
        row = {**common, "event_id": f"e{i}" + wild_text(rng, 0, 6), "occurred": occurred,
               "onset_s": rng.choice([0.0, rng.uniform(0, 1e4), 7]) if occurred else None,
               "onset_character": rng.choice(ONSET_CHARACTERS) if occurred else rng.choice((None, "soft"))}
        if rng.random() < 0.2:
            row["layer"] = 1
    else:
        row = {**common, "source": "s" + wild_text(rng, 0, 8), "family": rng.choice(EVENT_FAMILIES),
               "onset_s": rng.choice([0.0, rng.uniform(0, 1e4)])}
        if rng.random() < 0.5:
            row["id"] = f"r{i}"
        if rng.random() < 0.2:
            row["layer"] = 2
    if rng.random() < 0.2:
        row["x_note"] = wild_text(rng, 0, 10)  # unknown keys are kept
    return row


def _key(row: dict[str, Any]) -> tuple[Any, ...]:
    return (row["clip"], row.get("event_id"), row.get("source"), row["onset_s"])


def _loaded_keys(aset: Any) -> list[tuple[Any, ...]]:
    return [(r.clip, getattr(r, "event_id", None), getattr(r, "source", None), r.onset_s) for r in aset.rows()]


def jsonl_file(seed: int) -> tuple[list[Line], bool, bool]:
    rng = random.Random(seed)
    lines: list[Line] = []
    valid: list[dict[str, Any]] = []
    for i in range(rng.randint(1, 8)):
        row = valid_row(rng, i)
        kind = rng.choice(["valid", "valid", "field", "field", "damage", "duplicate", "reversed"])
        if kind == "valid":
            lines.append(Line(dumps(row), True, key=_key(row)))
            valid.append(row)
        elif kind == "field":
            fields = L1_FIELDS if "event_id" in row else L2_FIELDS
            mutated, name = field_mutation(rng, row, fields)
            lines.append(Line(dumps(mutated), False, name))
        elif kind == "duplicate" and any("event_id" in v for v in valid):
            first = next(v for v in valid if "event_id" in v)
            lines.append(Line(dumps(dict(first, onset_s=None, occurred=False)), False, "event_id"))
        elif kind == "reversed":  # a negative onset (an interval read backwards)
            lines.append(Line(dumps(dict(row, onset_s=-rng.uniform(1e-9, 10), occurred=True,
                                         onset_character="hard")), False, "onset_s"))
        else:
            lines.append(Line(line_damage(rng, dumps(row)), False))
    return lines, rng.random() < 0.3, rng.random() < 0.3


@given(SEEDS)
def test_annotation_jsonl_keeps_valid_rows_and_names_bad_ones(seed: int) -> None:
    lines, bom, crlf = jsonl_file(seed)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "ann.jsonl"
        write_lines(path, [ln.text for ln in lines], bom=bom, crlf=crlf)
        with bounded():
            aset = load_annotations(path)
    want = [ln.key for ln in lines if ln.valid]
    got = _loaded_keys(aset)
    assert set(want) <= set(got), (want, got, [str(e) for e in aset.errors])
    check_errors([str(e) for e in aset.errors], lines, path, field_names=FIELD_NAMES)


# --------------------------------------------------------------------------- label imports


def valid_label(rng: random.Random, i: int) -> tuple[str, float, tuple[Any, ...]]:
    """A valid label text, its onset and the key of the row it makes."""
    onset = rng.choice([0.0, rng.uniform(0, 1e4), float(rng.randint(0, 600))])
    sal = rng.choice(["", "1", "2", "3"])
    if rng.random() < 0.5:
        eid = f"e{i}" + wild_text(rng, 0, 6).replace("|", "!").replace("\t", " ")
        label = f"@{eid}|{rng.choice(ONSET_CHARACTERS)}|{sal}"
        return label, onset, (eid.strip(), None)
    fam = rng.choice(EVENT_FAMILIES)
    src = ("s" + wild_text(rng, 0, 8)).replace("|", "!").replace("\t", " ")
    label = f"{fam}|{src}|{sal}" if rng.random() < 0.8 else fam
    return label, onset, (None, src.strip() if label != fam else fam)


_BAD_LABELS = ("", " ", "|", "@", "@|hard", "piano|x|4", "piano|x|0", "piano|x|x", "piano|x|\u00b2",
               "piano|x|\u0661", "piano|x|-1", "a|b|c|d", "nofamily|x", "@e|wobbly|2", "mix|x|2.5",
               "\x00", "\ufeff@e|hard")
_BAD_TIMES = ("", "x", "nan", "inf", "-inf", "-1", "1e999", "--1", "1,2,3", "\u0661", "0x10", "\x00")


def audacity_file(seed: int) -> tuple[list[Line], bool, bool]:
    rng = random.Random(seed)
    lines: list[Line] = []
    for i in range(rng.randint(1, 8)):
        label, onset, key = valid_label(rng, i)
        start = f"{onset:.{rng.choice([0, 3, 6])}f}"
        if rng.random() < 0.1:
            start = start.replace(".", ",")  # decimal comma (some locales)
        kind = rng.choice(["valid", "valid", "valid", "label", "time", "cells", "spectral", "damage"])
        if kind == "valid":
            lines.append(Line(f"{start}\t{start}\t{label}", True, key=(float(start.replace(',', '.')), *key)))
        elif kind == "label":
            lines.append(Line(f"{start}\t{start}\t{rng.choice(_BAD_LABELS)}", False, "label"))
        elif kind == "time":
            bad = rng.choice(_BAD_TIMES)
            lines.append(Line(rng.choice([f"{bad}\t{start}\t{label}", f"{start}\t{bad}\t{label}"]), False, "start"))
        elif kind == "cells":
            lines.append(Line(rng.choice([start, f"{start} {start} {label}"]), False, "start"))
        elif kind == "spectral":
            lines.append(Line(f"\\\t{rng.uniform(0, 2e4):.6f}\t{rng.uniform(0, 2e4):.6f}", False))
        else:
            lines.append(Line(line_damage(rng, f"{start}\t{start}\t{label}"), False))
    return lines, rng.random() < 0.3, rng.random() < 0.3


def _import_keys(aset: Any) -> list[tuple[Any, ...]]:
    return [(r.onset_s, getattr(r, "event_id", None), getattr(r, "source", None)) for r in aset.rows()]


@given(SEEDS)
def test_audacity_import_keeps_valid_labels_and_names_bad_ones(seed: int) -> None:
    lines, bom, crlf = audacity_file(seed)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "labels.txt"
        write_lines(path, [ln.text for ln in lines], bom=bom, crlf=crlf)
        with bounded():
            aset = import_audacity_labels(path, clip="c.wav", annotator="fuzz", split="dev")
    want = [ln.key for ln in lines if ln.valid]
    assert set(want) <= set(_import_keys(aset)), (want, _import_keys(aset), [str(e) for e in aset.errors])
    check_errors([str(e) for e in aset.errors], lines, path, field_names=FIELD_NAMES)


def _csv_line(cells: list[str]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow(cells)
    return buf.getvalue()


def sv_file(seed: int) -> tuple[list[Line], bool, bool, int]:
    rng = random.Random(seed)
    lines: list[Line] = []
    header = rng.random() < 0.5
    for i in range(rng.randint(1, 8)):
        label, onset, key = valid_label(rng, i)
        t = f"{onset:.{rng.choice([0, 3, 9])}f}"
        middle = rng.choice([[], [f"{rng.uniform(-5, 5):.3f}"], [f"{rng.uniform(-5, 5):.3f}", "0.5"]])
        kind = rng.choice(["valid", "valid", "valid", "label", "time", "damage"])
        if kind == "valid":
            lines.append(Line(_csv_line([t, *middle, label]), True, key=(float(t), *key)))
        elif kind == "label":
            lines.append(Line(_csv_line([t, *middle, rng.choice(_BAD_LABELS)]), False, "label"))
        elif kind == "time":
            bad = rng.choice(_BAD_TIMES[1:])  # a bad first cell of line 1 would read as a header
            lines.append(Line(_csv_line([bad, *middle, label]), False, "time"))
        else:
            lines.append(Line(line_damage(rng, _csv_line([t, *middle, label])), False))
    if header:
        lines.insert(0, Line(rng.choice(["TIME,LABEL", "TIME,VALUE,LABEL", "time,value,duration,label"]), False))
    elif lines and not lines[0].valid:
        lines.insert(0, Line(_csv_line(["0", "piano|first"]), True, key=(0.0, None, "first")))
    return lines, rng.random() < 0.3, rng.random() < 0.3, 1


@given(SEEDS)
def test_sonic_visualiser_import_keeps_valid_labels_and_names_bad_ones(seed: int) -> None:
    lines, bom, crlf, first = sv_file(seed)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "layer.csv"
        write_lines(path, [ln.text for ln in lines], bom=bom, crlf=crlf)
        with bounded():
            aset = import_sonic_visualiser_csv(path, clip="c.wav", annotator="fuzz", split="dev")
    want = [ln.key for ln in lines if ln.valid]
    assert set(want) <= set(_import_keys(aset)), (want, _import_keys(aset), [str(e) for e in aset.errors])
    check_errors([str(e) for e in aset.errors], lines, path, field_names=FIELD_NAMES, first_line=first)

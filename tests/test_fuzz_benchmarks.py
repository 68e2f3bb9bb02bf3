"""Fuzzing of the TAG-Bench, MGBench and AudioRAG file loaders (formats §7).

Ground-truth and answer files mix valid rows with mutated ones (see ``fuzz_support``).
Properties: only :class:`~timingbench.errors.TimingbenchError` escapes, every valid row
loads (a valid answer row is kept even when its text yields no interval), each rejected
row's message names the file, its line and a field, and no input takes longer than the
per-input bound.
"""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from fuzz_support import (
    SEEDS,
    Line,
    bounded,
    check_errors,
    dumps,
    field_mutation,
    junk,
    line_damage,
    wild_text,
    write_lines,
)
from hypothesis import given

from timingbench.suites import audiorag, mgbench, tag

FIELD_NAMES = ("id", "subset", "intervals", "duration_s", "response", "task", "question", "answer",
               "category", "audio_path", "run", "data_source")

#: Answer texts the TAG cascade and the MGBench extractor read, plus odd ones.
ANSWERS = ("The sound occurs from 1.5 s to 3.25 s.", "[[0.5, 2.0], [4, 6.5]]", '{"start": 1, "end": 2}',
           "between 00:01 and 00:04", "There is no such event.", "", "none", "1.2-2.0, 3-4 s",
           "[]", "starts at 3 s and lasts 2 seconds", "at 3.5 s", "[[2, 1]]", "1e999-2e999 s",
           '{"intervals": [[1, 1e400]]}', "[" * 50 + "1, 2" + "]" * 50, "0:00:01.5 ~ 0:00:09",
           "\u0661 - \u0662 s")


def _interval_list(rng: random.Random, *, allow_empty: bool = False) -> list[list[float]]:
    out = []
    for _ in range(rng.randint(0 if allow_empty else 1, 4)):
        a = rng.choice([0.0, rng.uniform(0, 1e4), float(rng.randint(0, 300))])
        out.append([a, a + rng.choice([1e-3, rng.uniform(0.01, 60), 1.0])])
    return out


def _bad_intervals(rng: random.Random) -> Any:
    a = rng.uniform(0, 100)
    return rng.choice([[[a + 1, a]], [[a, "x"]], [[a]], [[a, a, a]], [[-(10**400), 10**400]],
                       [[a, 10**400]], [[float("nan"), a]], [[a, float("inf")]], "[[1, 2]]", [1, 2],
                       [[True, False]], [[None, 1]], {"start": 1}])


def _file(rng: random.Random, make_valid: Any, fields: tuple[str, ...], bad_intervals: bool,
          key: str = "id") -> list[Line]:
    lines: list[Line] = []
    valid: list[dict[str, Any]] = []
    for i in range(rng.randint(1, 8)):
        row = make_valid(rng, i)
        kind = rng.choice(["valid", "valid", "field", "field", "damage", "duplicate", "intervals"])
        if kind == "valid":
            lines.append(Line(dumps(row), True, key=row.get(key, i)))
            valid.append(row)
        elif kind == "field":
            mutated, name = field_mutation(rng, row, fields)
            lines.append(Line(dumps(mutated), False, name))
        elif kind == "duplicate" and valid and key == "id":
            lines.append(Line(dumps(dict(row, id=valid[0]["id"])), False, "id"))
        elif kind == "intervals" and bad_intervals:
            lines.append(Line(dumps(dict(row, intervals=_bad_intervals(rng))), False, "intervals"))
        else:
            lines.append(Line(line_damage(rng, dumps(row)), False))
    return lines


def _write(d: str, name: str, lines: list[Line], rng: random.Random) -> Path:
    path = Path(d) / name
    write_lines(path, [ln.text for ln in lines], bom=rng.random() < 0.3, crlf=rng.random() < 0.3)
    return path


# --------------------------------------------------------------------------- TAG-Bench


def tag_gt_row(rng: random.Random, i: int) -> dict[str, Any]:
    row: dict[str, Any] = {"id": rng.choice([f"q{i}", f"q{i}" + wild_text(rng, 0, 6)]),
                           "subset": "s" + wild_text(rng, 0, 4), "intervals": _interval_list(rng)}
    if rng.random() < 0.5:
        row["duration_s"] = rng.uniform(1, 1e4)
    if rng.random() < 0.2:
        row["x_note"] = junk(rng)
    return row


def tag_response_row(rng: random.Random, i: int) -> dict[str, Any]:
    row: dict[str, Any] = {"id": f"q{i}"}
    if rng.random() < 0.3:
        row["intervals"] = _interval_list(rng, allow_empty=True)
    else:
        row["response"] = rng.choice([rng.choice(ANSWERS), wild_text(rng, 0, 40)])
    return row




@given(SEEDS)
def test_tag_ground_truth_loader(seed: int) -> None:
    rng = random.Random(seed)
    lines = _file(rng, tag_gt_row, ("id", "subset", "intervals", "duration_s"), True)
    with tempfile.TemporaryDirectory() as d:
        path = _write(d, "gt.jsonl", lines, rng)
        with bounded():
            queries, errors = tag.load_ground_truth(path)
    got = {q.id for q in queries}
    assert {ln.key for ln in lines if ln.valid} <= got
    check_errors(errors, lines, path, field_names=FIELD_NAMES)


def _check_tag_predictions(seed: int, *, json_track: bool) -> None:
    rng = random.Random(seed)

    def make(r: random.Random, i: int) -> dict[str, Any]:
        row = tag_response_row(r, i)
        if json_track and "intervals" not in row:
            row = {"id": row["id"], "intervals": [[r.choice([0, 1, 1.5, 1e308]), 2]]}
        if not json_track:
            row.pop("intervals", None)
            row.setdefault("response", r.choice(ANSWERS))
        return row

    lines = _file(rng, make, ("id", "response") if not json_track else ("id", "intervals"), json_track)
    with tempfile.TemporaryDirectory() as d:
        path = _write(d, "responses.jsonl", lines, rng)
        with bounded():
            preds, errors = tag.load_predictions(path)
    assert {ln.key for ln in lines if ln.valid} <= set(preds)
    for p in preds.values():
        assert all(0 <= s < e for s, e in p.parsed.intervals)
    check_errors(errors, lines, path, field_names=FIELD_NAMES)


@given(SEEDS)
def test_tag_free_text_responses(seed: int) -> None:
    _check_tag_predictions(seed, json_track=False)


def test_tag_free_text_deep_nesting(tmp_path: Path) -> None:
    path = tmp_path / "responses.jsonl"
    path.write_text(dumps({"id": "q1", "response": "[" * 3000}) + "\n", encoding="utf-8")
    preds, _ = tag.load_predictions(path)
    assert preds["q1"].parsed.intervals == ()


def test_tag_json_track_huge_integer(tmp_path: Path) -> None:
    path = tmp_path / "responses.jsonl"
    path.write_text('{"id": "q1", "intervals": [[1, ' + "9" * 400 + "]]}\n", encoding="utf-8")
    preds, errors = tag.load_predictions(path)
    assert preds["q1"].parsed.intervals == () and errors


def test_tag_ground_truth_huge_integer(tmp_path: Path) -> None:
    path = tmp_path / "gt.jsonl"
    path.write_text('{"id": "q1", "subset": "s", "intervals": [[1, ' + "9" * 400 + "]]}\n"
                    '{"id": "q2", "subset": "s", "intervals": [[1, 2]]}\n', encoding="utf-8")
    queries, errors = tag.load_ground_truth(path)
    assert [q.id for q in queries] == ["q2"] and errors


@given(SEEDS)
def test_tag_json_track_responses(seed: int) -> None:
    _check_tag_predictions(seed, json_track=True)


# --------------------------------------------------------------------------- MGBench


def mg_gt_row(rng: random.Random, i: int) -> dict[str, Any]:
    task = rng.choice(mgbench.TASKS)
    row: dict[str, Any] = {"id": rng.choice([f"m{i}", i + 1000]),
                           "subset": rng.choice(["3N", "2B", "mgbench-3n", " 2b "]), "task": task,
                           "category": rng.choice(["ABS", "REL", "", "x" + wild_text(rng, 0, 4)]),
                           "question": "q" + wild_text(rng, 0, 20)}
    if task == "grounding":
        row["intervals"] = _interval_list(rng, allow_empty=True)
    else:
        row["answer"] = "a" + wild_text(rng, 0, 10)
    return row


def _mg_key(row_id: Any) -> str:
    return str(row_id).strip()


@given(SEEDS)
def test_mgbench_loaders(seed: int) -> None:
    rng = random.Random(seed)
    gt_lines = _file(rng, mg_gt_row, ("id", "subset", "task", "question", "intervals", "answer"), True)
    n = len(gt_lines)

    def resp(r: random.Random, i: int) -> dict[str, Any]:
        row: dict[str, Any] = {"id": r.choice([f"m{i % n}", (i % n) + 1000])}
        if r.random() < 0.7:
            row["response"] = r.choice([r.choice(ANSWERS), wild_text(r, 0, 30)])
        if r.random() < 0.4 or "response" not in row:
            row["intervals"] = _interval_list(r, allow_empty=True)
        return row

    resp_lines = _file(rng, resp, ("id", "response", "intervals"), True)
    with tempfile.TemporaryDirectory() as d:
        gt_path = _write(d, "gt.jsonl", gt_lines, rng)
        resp_path = _write(d, "responses.jsonl", resp_lines, rng)
        with bounded():
            gt = mgbench.load_ground_truth(gt_path)
            responses = mgbench.load_responses(resp_path, gt.rows)
            parsed = [mgbench.extract_spans(r.response, empty_patterns=[r"\bno such\b"])
                      for r in responses.rows.values()]
    assert {_mg_key(ln.key) for ln in gt_lines if ln.valid} <= set(gt.rows)
    check_errors(gt.errors, gt_lines, gt_path, field_names=FIELD_NAMES)
    # a valid response row loads when its id is a loaded question (else it is an error)
    want = {_mg_key(ln.key) for ln in resp_lines if ln.valid} & set(gt.rows)
    assert want <= set(responses.rows)
    for msg in responses.errors:
        assert f"{resp_path}:" in msg
    for p in parsed:  # spans only with status "spans", each finite with 0 <= start < end
        assert (p.status == "spans") == (len(p.spans) > 0)
        assert np.isfinite(p.spans).all() and bool(np.all((p.spans[:, 0] >= 0) & (p.spans[:, 0] < p.spans[:, 1])))


# --------------------------------------------------------------------------- AudioRAG


def rag_item(rng: random.Random, i: int) -> dict[str, Any]:
    row: dict[str, Any] = {"audio_path": f"FMA/{i:03d}" + wild_text(rng, 0, 4) + ".wav",
                           "question": "q" + wild_text(rng, 0, 20), "answer": "a" + wild_text(rng, 0, 8)}
    if rng.random() < 0.7:
        row["data_source"] = rng.choice(["FMA", "MusicNet", "", 3])
    if rng.random() < 0.5:
        row["attributes"] = junk(rng)
    return row


@given(SEEDS)
def test_audiorag_loaders(seed: int) -> None:
    rng = random.Random(seed)
    meta_lines = _file(rng, rag_item, ("audio_path", "question", "answer"), False, key="audio_path")
    n = len(meta_lines)

    def answer(r: random.Random, i: int) -> dict[str, Any]:
        k = r.randrange(n)
        row: dict[str, Any] = {"id": r.choice([k, str(k), f" {k} "]),
                               "answer": r.choice([None, "a", wild_text(r, 0, 10)]),
                               "run": r.choice([None, 1, "2", 3.0, "r" + wild_text(r, 0, 3)])}
        row["run"] = f"{row['run']}-{i}"  # (run, id) pairs never repeat among valid rows
        return row

    ans_lines = _file(rng, answer, ("id", "answer", "run"), False, key="run")
    with tempfile.TemporaryDirectory() as d:
        meta_path = _write(d, "metadata.jsonl", meta_lines, rng)
        ans_path = _write(d, "answers.jsonl", ans_lines, rng)
        with bounded():
            meta = audiorag.load_metadata(meta_path)
            answers, errors = audiorag.load_answers(ans_path, meta)
    want_items = {ln.key.strip() for ln in meta_lines if ln.valid}
    assert want_items <= {it.audio_path for it in meta.items}
    check_errors(meta.errors, meta_lines, meta_path, field_names=FIELD_NAMES)
    # every valid answer row whose id names a loaded question loads; one naming a question
    # that was itself rejected is an error (so it no longer counts as valid)
    by_index = meta.by_index()
    got_runs = {a.run for a in answers}
    checked = []
    for ln in ans_lines:
        if ln.valid and int(json.loads(ln.text)["id"]) not in by_index:
            ln = Line(ln.text, False)
        elif ln.valid:
            assert ln.key.strip() in got_runs, (ln.text, errors)
        checked.append(ln)
    check_errors(errors, checked, ans_path, field_names=FIELD_NAMES)


def test_tag_ground_truth_huge_integer_duration(tmp_path: Path) -> None:
    # found by the long profile (seed 40): an integer duration beyond the float range
    path = tmp_path / "gt.jsonl"
    path.write_text('{"id": "q1", "subset": "s", "intervals": [[1, 2]], "duration_s": ' + "9" * 400 + "}\n"
                    '{"id": "q2", "subset": "s", "intervals": [[1, 2]]}\n', encoding="utf-8")
    queries, errors = tag.load_ground_truth(path)
    assert [q.id for q in queries] == ["q2"] and "duration_s" in errors[0]

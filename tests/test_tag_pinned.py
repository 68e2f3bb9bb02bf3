"""The TAG-Bench scorer against its pinned expected outputs (``tests/data/tag_make_pinned.py``).

The pinned file holds 600 synthetic queries of the scoring benchmark with the evidence row
and group metrics the scorer gave when they were pinned (equal, when pinned, to those of
the parser and loaders before the speed-ups, which the benchmark used to carry as a
frozen copy). Any change of a parse, a metric or a row field fails here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from timingbench.config import Config
from timingbench.suites.tag import evaluate
from timingbench.suites.tag.answers import parse_response

PINNED = Path(__file__).resolve().parent / "data" / "tag_pinned_outputs.jsonl"
LINES = [json.loads(x) for x in PINNED.read_text(encoding="utf-8").splitlines() if x]
HEAD, ROWS = LINES[0], LINES[1:]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_pinned_file_covers_the_answer_styles() -> None:
    assert len(ROWS) == HEAD["queries"] == 600
    stages = {r["row"]["parse_stage"] for r in ROWS}
    assert stages == {"json", "text", "none"}
    assert sum(r["row"]["n_gt"] > 1 for r in ROWS) > 100
    assert sum(r["row"]["n_pred"] > 1 for r in ROWS) > 50


def test_every_evidence_row_and_group_metric_is_unchanged(tmp_path: Path, config: Config) -> None:
    gt = _write(tmp_path / "gt.jsonl", [r["gt"] for r in ROWS])
    pred = _write(tmp_path / "pred.jsonl", [r["pred"] for r in ROWS])
    rep = evaluate(gt, pred, params=config.params.tag)
    for want, got in zip(ROWS, rep.rows, strict=True):
        assert got == want["row"], want["pred"]["response"]
    assert rep.summary["groups"] == HEAD["groups"]


@pytest.mark.parametrize("k", range(0, 600, 7))
def test_parse_of_a_pinned_answer(k: int) -> None:
    r = ROWS[k]
    got = parse_response(r["pred"]["response"])
    assert got.stage == r["row"]["parse_stage"]
    assert [list(iv) for iv in got.intervals] == ([] if r["row"]["failed"] else r["row"]["pred_intervals"])

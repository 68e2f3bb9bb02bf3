"""The three benchmark scorers share one command helper (commands/scorer_command.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from timingbench.cli import build_parser, main

SCORERS = ("tag", "mgbench", "audiorag")


@pytest.mark.parametrize("name", SCORERS)
def test_score_takes_the_shared_options(name: str, tmp_path: Path) -> None:
    args = build_parser().parse_args([name, "score", "--gt", "g.jsonl", "--pred", "p.jsonl",
                                      "--out", str(tmp_path), "--config", "c.yaml"])
    assert (args.gt, args.pred, args.out, args.config) == (
        Path("g.jsonl"), Path("p.jsonl"), tmp_path, Path("c.yaml"))
    with pytest.raises(SystemExit):
        build_parser().parse_args([name, "score", "--gt", "g.jsonl", "--pred", "p.jsonl"])


@pytest.mark.parametrize("name", SCORERS)
def test_command_without_action_prints_help_and_exits_2(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([name]) == 2
    assert "score" in capsys.readouterr().out


def test_scorer_writes_rows_summary_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gt = tmp_path / "gt.jsonl"
    gt.write_text('{"id": "q1", "subset": "s", "intervals": [[1.0, 2.0]]}\nnot json\n', encoding="utf-8")
    pred = tmp_path / "pred.jsonl"
    pred.write_text('{"id": "q1", "intervals": [[1.0, 2.0]]}\n', encoding="utf-8")
    out = tmp_path / "out"
    rc = main(["tag", "score", "--gt", str(gt), "--pred", str(pred), "--out", str(out)])
    assert rc == 1  # the bad ground-truth line is a row error
    assert "gt.jsonl:2: not valid JSON" in capsys.readouterr().err
    assert (out / "queries.jsonl").is_file()
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert len(summary["errors"]) == 1

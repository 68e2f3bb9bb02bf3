"""Tests of TAG-Bench scoring: metric definitions, the paper's consistency check, bad rows."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from timingbench.cli import main
from timingbench.config import Config
from timingbench.errors import ConfigError, ParameterError
from timingbench.suites.tag import evaluate, format_table, score_queries, summarize


def _write(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_hand_worked_scores(config: Config) -> None:
    gt = [np.array([[0.0, 10.0]]), np.array([[0.0, 2.0], [10.0, 12.0]]), np.array([[5.0, 6.0]])]
    pred = [[(0.0, 5.0)], [(0.0, 2.0)], []]
    s = score_queries(gt, pred)
    np.testing.assert_allclose(s.iou, [0.5, 0.5, 0.0], atol=1e-12)
    np.testing.assert_allclose(s.giou, [0.5, 0.5 - 8 / 12, -1.0], atol=1e-12)
    np.testing.assert_allclose(s.mae_s[:2], [2.5, (0.0 + 10.0) / 2], atol=1e-12)
    assert np.isnan(s.mae_s[2])
    g = summarize(s, ["a", "b", "a"], params=config.params.tag)
    o = g["overall"]
    assert o["n"] == 3
    np.testing.assert_allclose(o["mIoU"], 100 / 3, atol=1e-3)
    assert o["R@0.3"] == pytest.approx(200 / 3, abs=1e-3)
    assert o["R@0.7"] == 0.0
    np.testing.assert_allclose(o["gIoU"], 100 * (0.5 + 0.5 - 8 / 12 - 1) / 3, atol=1e-3)
    assert o["Fail"] == pytest.approx(100 / 3, abs=1e-3)
    assert o["Cvg"] == pytest.approx(200 / 3, abs=1e-3)
    np.testing.assert_allclose(o["MAE_s"], (2.5 + 5.0) / 2, atol=1e-9)
    assert o["count_acc"] == pytest.approx(100 / 3, abs=1e-3)  # only the first is exact
    assert o["under"] == pytest.approx(200 / 3, abs=1e-3)
    assert o["mean_pred"] == pytest.approx(2 / 3, abs=1e-4)
    assert g["one_to_many"]["n"] == 1 and g["one_to_one"]["n"] == 2
    assert g["subsets"]["b"]["mIoU"] == 50.0


def test_recall_threshold_edge_is_a_hit(config: Config) -> None:
    # IoU exactly 0.5 and 0.7 on paper
    s = score_queries([np.array([[0.0, 1.0]]), np.array([[0.0, 1.0]])], [[(0.0, 0.5)], [(0.3, 1.0)]])
    g = summarize(s, ["x", "x"], params=config.params.tag)["overall"]
    assert g["R@0.5"] == 100.0
    assert g["R@0.7"] == 50.0


def test_paper_consistency_giou(tmp_path: Path, config: Config) -> None:
    """Parseable answers averaging 17.1 gIoU with 15.1 % failures give -0.6 overall."""
    n, n_fail = 1000, 151
    gt = [{"id": f"q{k}", "subset": "s", "intervals": [[0.0, 10.0]]} for k in range(n)]
    # inside the reference, [0, x] has gIoU = IoU = x / 10
    pred = [{"id": f"q{k}", "response": "I cannot find that sound in the audio."}
            for k in range(n_fail)]
    pred += [{"id": f"q{k}", "response": "It is heard from 0 to 1.71 seconds."}
             for k in range(n_fail, n)]
    rep = evaluate(_write(tmp_path / "gt.jsonl", gt), _write(tmp_path / "p.jsonl", pred),
                   params=config.params.tag)
    o = rep.summary["groups"]["overall"]
    assert round(o["gIoU_parsed"], 1) == 17.1
    assert round(o["Fail"], 1) == 15.1
    assert round(o["Cvg"], 1) == 84.9
    assert round(o["gIoU"], 1) == -0.6


def test_bad_rows_reported_and_run_continues(tmp_path: Path, config: Config) -> None:
    gt = _write(tmp_path / "gt.jsonl", [
        {"id": "a", "subset": "event", "intervals": [[1, 2]]},
        {"id": "a", "subset": "event", "intervals": [[3, 4]]},
        {"id": "b", "subset": "event", "intervals": [[1, "two"]]},
        {"subset": "event", "intervals": [[1, 2]]},
        {"id": "c", "subset": "word", "intervals": [[5, 4]]},
        "{not json",
        {"id": "d", "subset": "word", "intervals": [[0, 1]]},
        {"id": "e", "subset": "word", "intervals": [[0, 1]]},
        {"id": "f", "subset": "word", "intervals": [[0, 1]]},
    ])
    pred = _write(tmp_path / "p.jsonl", [
        {"id": "a", "response": "from 1 to 2 s"},
        {"id": "a", "response": "from 3 to 4 s"},
        {"id": "d", "intervals": [[0, "later"]]},
        {"id": "e", "response": None},
        {"id": "zzz", "response": "1-2 s"},
    ])
    rep = evaluate(gt, pred, params=config.params.tag)
    errs = "\n".join(rep.summary["errors"])
    assert "gt.jsonl:2 (id 'a'): duplicate id (first on line 1)" in errs
    assert "gt.jsonl:3 (id 'b'): field 'intervals' item 0" in errs
    assert "gt.jsonl:4: field 'id' missing" in errs
    assert "gt.jsonl:5 (id 'c'): field 'intervals': interval 0" in errs
    assert "gt.jsonl:6: not valid JSON" in errs
    assert "p.jsonl:2 (id 'a'): duplicate id" in errs
    assert "p.jsonl:3 (id 'd'): field 'intervals' item 0" in errs and "non-numeric" in errs
    assert "p.jsonl:4 (id 'e'): field 'response' missing" in errs
    assert "id 'zzz' is not in the ground truth" in errs
    assert "no response for id 'f'" in errs
    ids = [r["id"] for r in rep.rows]
    assert ids == ["a", "d", "e", "f"]
    assert [r["failed"] for r in rep.rows] == [False, True, True, True]
    assert rep.rows[0]["iou"] == 1.0
    assert rep.summary["tracks"] == {"free": 2, "json": 1, "missing": 1}
    table = format_table(rep.summary)
    assert "one-to-many" in table and "word" in table


def test_cli_writes_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gt = _write(tmp_path / "gt.jsonl", [
        {"id": "q1", "audio_path": "a.wav", "duration_s": 30.0, "subset": "event",
         "query": "dog barking", "intervals": [[3.0, 5.0], [20.0, 22.0]]},
        {"id": "q2", "audio_path": "b.wav", "duration_s": 900.0, "subset": "long_semantic",
         "query": "interest rates", "intervals": [[300.0, 360.0]]},
    ])
    pred = _write(tmp_path / "p.jsonl", [
        {"id": "q1", "response": "The dog barks at 0:03-0:05 and again 0:20-0:22."},
        {"id": "q2", "intervals": [[290.0, 360.0]]},
    ])
    out = tmp_path / "out"
    rc = main(["tag", "score", "--gt", str(gt), "--pred", str(pred), "--out", str(out)])
    assert rc == 0
    summary = json.loads((out / "summary.json").read_text())
    rows = [json.loads(x) for x in (out / "queries.jsonl").read_text().splitlines()]
    assert summary["n_queries"] == 2 and summary["errors"] == []
    assert summary["groups"]["one_to_many"]["count_acc"] == 100.0
    np.testing.assert_allclose(rows[1]["iou"], 60 / 70, atol=1e-6)
    assert "mIoU" in capsys.readouterr().out


def test_cli_exit_status_on_row_errors(tmp_path: Path) -> None:
    gt = _write(tmp_path / "gt.jsonl", [{"id": "q1", "subset": "s", "intervals": [[1, 2]]}])
    pred = _write(tmp_path / "p.jsonl", [{"id": "q2", "response": "1-2 s"}])
    rc = main(["tag", "score", "--gt", str(gt), "--pred", str(pred), "--out", str(tmp_path / "o")])
    assert rc == 1
    assert (tmp_path / "o" / "summary.json").is_file()


def test_jobs_do_not_change_the_report(tmp_path: Path, config: Config, monkeypatch: pytest.MonkeyPatch) -> None:
    from timingbench.suites import tag
    from timingbench.suites.tag import answers

    monkeypatch.setattr(answers, "_MIN_TEXTS_PER_JOB", 2)
    styles = ["from {a} to {b} s", "[{a}, {b}]", "Sorry, no.", '{{"start": {a}, "end": {b}}}',
              "Start: 0:0{a}, End: 0:0{b}"]
    gt = [{"id": f"q{k}", "subset": "s", "intervals": [[1.0, 3.0]]} for k in range(25)]
    pred = [{"id": f"q{k}", "response": styles[k % 5].format(a=k % 5, b=k % 5 + 2)}
            for k in range(25)]
    g, p = _write(tmp_path / "gt.jsonl", gt), _write(tmp_path / "p.jsonl", pred)
    one = evaluate(g, p, params=config.params.tag)
    three = evaluate(g, p, params=config.params.tag, jobs=3)
    assert three.rows == one.rows and three.summary == one.summary
    assert tag.parse_responses(["1-2 s"] * 6, jobs=3) == tag.parse_responses(["1-2 s"] * 6)
    with pytest.raises(ParameterError, match="jobs must be >= 1"):
        tag.parse_responses(["1-2 s"], jobs=0)


def test_cli_jobs_option(tmp_path: Path) -> None:
    gt = _write(tmp_path / "gt.jsonl", [{"id": "q1", "subset": "s", "intervals": [[1, 2]]}])
    pred = _write(tmp_path / "p.jsonl", [{"id": "q1", "response": "1-2 s"}])
    args = ["tag", "score", "--gt", str(gt), "--pred", str(pred), "--out", str(tmp_path / "o")]
    assert main([*args, "--jobs", "2"]) == 0
    with pytest.raises(SystemExit) as exc:  # argparse rejects it, as every command's --jobs
        main([*args, "--jobs", "0"])
    assert exc.value.code == 2


@pytest.mark.parametrize(
    ("key", "value"),
    [("tag.recall_iou_thresholds", [0.3, 1.5]), ("tag.recall_iou_thresholds", []), ("tag.recall_iou_thresholds", [0.0]),
     ("tag.one_to_many_min_intervals", 1)],
)
def test_invalid_tag_constant_is_a_config_error_naming_it(config: Config, key: str, value: object) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        config.with_value(key, value).params.tag  # noqa: B018

"""Final-answer scope, table rewriting and negation scope of the time-span parser."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from timingbench.cli import main
from timingbench.config import Config
from timingbench.suites.answer_scope import (
    after_final_marker,
    final_answer,
    strip_reasoning_blocks,
)
from timingbench.suites.answer_tables import rewrite_tables
from timingbench.suites.mgbench import RegexSpanExtractor, extract_spans
from timingbench.suites.span_parse import parse_time
from timingbench.suites.tag import evaluate
from timingbench.suites.tag.answers import parse_response


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("<think>1-2 s?</think> 4-5 s", " 4-5 s"),
        ("<THINKING>x</THINKING>y", "y"),
        ("a<reasoning>b</reasoning>c<think>d</think>e", "ace"),
        ("<think>never closed 1-2 s", ""),
        ("answer first <think>then thinking", "answer first "),
        ("reasoning 1-2 s</think>\n\n4-5 s", "\n\n4-5 s"),
        ("<think>outer <think>inner</think> 3-4 s", " 3-4 s"),
        ("no tags at all 1-2 s", "no tags at all 1-2 s"),
        ("< think >x</ think >y", "y"),
    ],
)
def test_reasoning_blocks_are_removed(text: str, kept: str) -> None:
    assert strip_reasoning_blocks(text) == kept


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("I saw 1-2 s. Answer: 4-5 s", " 4-5 s"),
        ("Answer: 1-2 s\nFinal answer: 4-5 s", " 4-5 s"),
        ("**Answer**: 4-5 s", " 4-5 s"),
        ("**Answer:** 4-5 s", "** 4-5 s"),
        ("**Final Answer**\n4-5 s", "\n4-5 s"),
        ("## Answer\n4-5 s", "\n4-5 s"),
        ("x <answer>4-5 s</answer> trailing 9-10 s", "4-5 s"),
        ('{"answer": [1, 2]}', '{"answer": [1, 2]}'),
        ("The answer is 4-5 s", "The answer is 4-5 s"),
        ("Answer 1: 1-2 s; Answer 2: 4-5 s", "Answer 1: 1-2 s; Answer 2: 4-5 s"),
    ],
)
def test_text_after_the_last_marker(text: str, kept: str) -> None:
    assert after_final_marker(text) == kept


def test_reasoning_is_stripped_before_markers_are_looked_for() -> None:
    assert final_answer("<think>Answer: 1-2 s</think>The event: 4-5 s") == "The event: 4-5 s"


def test_strip_reasoning_can_be_switched_off() -> None:
    text = "<think>At first I thought 1.6-2.2 s</think> Answer: 4.7s - 8.8s"
    assert parse_response(text).intervals == ((4.7, 8.8),)
    assert parse_response(text, strip_reasoning=False).intervals == ((1.6, 2.2), (4.7, 8.8))
    assert extract_spans(text, empty_patterns=[], strip_reasoning=False).spans.tolist() == [
        [1.6, 2.2], [4.7, 8.8]]
    assert parse_response("<think>maybe 1-2 s").failed
    p = extract_spans("<think>maybe 1-2 s", empty_patterns=[])
    assert p.status == "invalid" and p.note == "no answer after the reasoning"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("| # | Start | End |\n|---|---|---|\n| 1 | 00:03.0 | 00:13.4 |", [[3.0, 13.4]]),
        ("| Occurrence | Start (s) | End (s) |\n| --- | --- | --- |\n| 1 | 3 | 13.4 |\n| 2 | 20 | 21 |",
         [[3.0, 13.4], [20.0, 21.0]]),
        ("| onset_ms | offset_ms |\n|--|--|\n| 3200 | 4800 |", [[3.2, 4.8]]),
        ("| Start time [min] | End time [min] |\n|---|---|\n| 1.5 | 2 |", [[90.0, 120.0]]),
        ("| End | Start |\n|---|---|\n| 5 | 3 |", [[3.0, 5.0]]),
        ("| startTime | endTime |\n|---|---|\n| 1 | 2 |\n| n/a | n/a |\n| 3 | 4 |",
         [[1.0, 2.0], [3.0, 4.0]]),
        ("From\tTo\n0:05\t0:09", [[5.0, 9.0]]),
        ("start,end,label\n1.5,2.5,dog\n\nThe dog barks twice.", [[1.5, 2.5]]),
        ("Start  End\n1    2\nsome prose line after the table 7 s", [[1.0, 2.0]]),
        ("1.25, 2.5\n3, 4.75", [[1.25, 2.5], [3.0, 4.75]]),
        ("| Start | End |\n|---|---|\n| 5 | 3 |", []),
        ("Start, end, and the middle of the clip.", []),
        ("00:00:03,200", []),
    ],
)
def test_tables(text: str, expected: list) -> None:
    got = [list(iv) for iv in parse_response(text).intervals]
    assert len(got) == len(expected)
    if expected:
        np.testing.assert_allclose(got, expected, atol=1e-9)


def test_table_rewrite_keeps_other_lines() -> None:
    text = "Found:\n| Start | End |\n|---|---|\n| 1 | 2 |\nDone."
    assert rewrite_tables(text, parse_time) == "Found:\n\n\n1.000000 s to 2.000000 s\nDone."
    assert rewrite_tables("plain 1-2 s", parse_time) == "plain 1-2 s"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("No laughter can be heard between 0 and 48 seconds.", []),
        ("Laughter cannot be heard between 0 and 48 seconds.", []),
        ("No laughter occurs from 0 to 48 s.", []),
        ("Laughter is absent from 0 to 48 s.", []),
        ("There is no X between 0 and 48 s.", []),
        ("X does not occur between 0 and 48 s.", []),
        ("X can't be heard from 0 to 48 s.", []),
        ("X doesn't start until 0:48, from 0:00 to 0:48 it is silent.", []),
        ("The clip runs without laughter from 0 to 48 s.", []),
        ("X is missing from 0 to 48 s.", []),
        ("X is not present from 0 to 48 s.", []),
        ("From 0 to 48 s there is no laughter.", []),
        ("No X from 0 to 5 s. X from 5 to 9 s.", [[5.0, 9.0]]),
        ("No X from 0 to 5 s, but X from 5 to 9 s.", [[5.0, 9.0]]),
        ("X from 5 to 9 s; nothing else.", [[5.0, 9.0]]),
        ("X from 5 to 9 s, not elsewhere.", [[5.0, 9.0]]),
        ("X from 5 to 9 s and not again.", [[5.0, 9.0]]),
        ("I'm not sure, maybe 5 to 9 s.", [[5.0, 9.0]]),
        ("I cannot be certain: 5 to 9 s.", [[5.0, 9.0]]),
        ("No, it is from 5 to 9 s.", [[5.0, 9.0]]),
        ("X plays from 5 to 9 s without a break.", [[5.0, 9.0]]),
        ("X is heard from 5 to 9 s, not from 10 to 12 s.", [[5.0, 9.0]]),
    ],
)
def test_negation_scope(text: str, expected: list) -> None:
    assert [list(iv) for iv in parse_response(text).intervals] == expected


def test_mgbench_reads_the_three_forms(config: Config) -> None:
    pats = config.params.mgbench.empty_answer_patterns
    think = "<think>At first I thought 1.6-2.2 s, but that is a different note.</think> Answer: 4.7s - 8.8s"
    assert extract_spans(think, empty_patterns=pats).spans.tolist() == [[4.7, 8.8]]
    table = "| Note | Onset (s) | Offset (s) |\n|---|---|---|\n| C4 | 0.50 | 0.98 |\n| E4 | 1.02 | 1.49 |"
    p = extract_spans(table, empty_patterns=pats)
    assert p.status == "spans" and p.spans.tolist() == [[0.5, 0.98], [1.02, 1.49]]
    neg = extract_spans("No note is played between 0 and 2 s.", empty_patterns=pats)
    assert neg.status == "empty" and neg.spans.shape == (0, 2)
    mixed = extract_spans("No note sounds from 0 to 1 s, but the fifth is at 1.2-1.8 s.", empty_patterns=pats)
    assert mixed.spans.tolist() == [[1.2, 1.8]]
    assert RegexSpanExtractor(empty_patterns=pats, strip_reasoning=False).extract(think).spans.tolist() == [
        [1.6, 2.2], [4.7, 8.8]]


def test_mgbench_drops_zero_length_and_repeated_spans() -> None:
    p = extract_spans("[[1, 2], [1, 2], [3, 3]]", empty_patterns=[])
    assert p.spans.tolist() == [[1.0, 2.0]] and "end before start" in p.note
    assert extract_spans("1-2 s and again 1-2 s", empty_patterns=[]).spans.tolist() == [[1.0, 2.0]]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_tag_summary_records_the_reasoning_rule(tmp_path: Path, config: Config) -> None:
    gt = _write(tmp_path / "gt.jsonl", [{"id": "q", "subset": "s", "intervals": [[4.7, 8.8]]}])
    pred = _write(tmp_path / "p.jsonl", [
        {"id": "q", "response": "<think>1.6-2.2 s?</think> Answer: 4.7s - 8.8s"}])
    on = evaluate(gt, pred, params=config.params.tag)
    assert on.summary["parser"] == {"strip_reasoning": True}
    assert on.rows[0]["iou"] == 1.0 and on.rows[0]["n_pred"] == 1
    off = evaluate(gt, pred, params=replace(config.params.tag, strip_reasoning=False))
    assert off.summary["parser"] == {"strip_reasoning": False}
    assert off.rows[0]["n_pred"] == 2 and off.rows[0]["count"] == "over"


def test_mgbench_summary_records_the_reasoning_rule(tmp_path: Path) -> None:
    gt = _write(tmp_path / "gt.jsonl", [{"id": "g", "subset": "3N", "task": "grounding",
                                         "category": "ABS", "question": "q", "intervals": [[4.7, 8.8]]}])
    pred = _write(tmp_path / "p.jsonl", [{"id": "g", "response": "<think>1-2 s</think>4.7-8.8 s"}])
    out = tmp_path / "out"
    main(["mgbench", "score", "--gt", str(gt), "--pred", str(pred), "--out", str(out)])
    s = json.loads((out / "summary.json").read_text())
    assert s["extractor"] == "regex" and s["extractor_strip_reasoning"] is True
    assert s["grounding"]["3N"]["merged_iou"] == 1.0

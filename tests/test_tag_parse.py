"""Tests of the TAG-Bench answer parser against a corpus of realistic answers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from timingbench.errors import ParameterError
from timingbench.suites.span_parse import ParseResult, parse_time
from timingbench.suites.tag.answers import parse_interval_list, parse_response

CORPUS = Path(__file__).resolve().parent / "data" / "tag_parser_corpus.jsonl"
ROWS = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line]


def test_corpus_is_large_and_mixed() -> None:
    assert len(ROWS) >= 150
    n_fail = sum(1 for r in ROWS if not r["expected"])
    n_multi = sum(1 for r in ROWS if len(r["expected"]) > 1)
    assert n_fail >= 20 and n_multi >= 8


@pytest.mark.parametrize("row", ROWS, ids=[f"{k:03d}" for k in range(len(ROWS))])
def test_corpus_answer(row: dict) -> None:
    got = parse_response(row["response"])
    expected = row["expected"]
    assert got.failed == (not expected)
    assert len(got.intervals) == len(expected)
    if expected:
        np.testing.assert_allclose(np.array(got.intervals), np.array(expected), atol=1e-6)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1:02.5", 62.5), ("62.5 s", 62.5), ("1 min 2.5 s", 62.5), ("62.5", 62.5),
     ("01:00:02", 3602.0), ("1500 ms", 1.5), ("two minutes", 120.0), ("dog", None),
     ("1 min and 2 s", 62.0), ("1 s and 2 s", None), ("1 s to 2 s", None)],
)
def test_parse_time(text: str, seconds: float | None) -> None:
    assert parse_time(text) == seconds


def test_stage_reported() -> None:
    assert parse_response('{"start": 1, "end": 2}').stage == "json"
    assert parse_response("1-2 s").stage == "text"
    assert parse_response("no idea").stage == "none"


def test_parse_is_deterministic_and_order_preserving() -> None:
    text = "Second occurrence 20-22 s, first occurrence 3-4 s."
    a = parse_response(text)
    assert a == parse_response(text)
    assert a.intervals == ((20.0, 22.0), (3.0, 4.0))


def test_constrained_track_reads_numbers_and_time_strings() -> None:
    got = parse_interval_list([[1, 2.5], ["0:10", "0:12.5"]], where="r:1")
    assert got.intervals == ((1.0, 2.5), (10.0, 12.5))
    assert parse_interval_list([], where="r:1").failed
    assert parse_interval_list([[5, 5]], where="r:1").failed


@pytest.mark.parametrize(
    ("value", "match"),
    [("1-2", "must be a list"), ([[1, 2, 3]], "item 0 must be a .start, end. pair"),
     ([[1, 2], [3, "soon"]], "item 1 .* non-numeric time"), ([[None, 2]], "non-numeric")],
)
def test_constrained_track_rejects(value: object, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        parse_interval_list(value, where="responses.jsonl:3 (id 'q1')")


def test_non_string_response_rejected() -> None:
    with pytest.raises(ParameterError, match="must be a string"):
        parse_response(None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("It lasts a hundred seconds, from 1 to 2 s.", ((1.0, 2.0),)),
     ("hundred", ()), ("one hundred and five to one hundred and ten s", ((105.0, 110.0),))],
)
def test_lone_hundred_terminates(text: str, expected: tuple) -> None:
    assert parse_response(text).intervals == expected


def test_fast_paths_agree_with_the_cascade() -> None:
    # pairs and objects the fast paths read, and near misses they leave to the cascade
    assert parse_response("[27.68, 29.17]") == ParseResult(((27.68, 29.17),), "json")
    assert parse_response(' {"start": 3, "end": 4.5}\n') == ParseResult(((3.0, 4.5),), "json")
    assert parse_response("[5, 3]").failed
    assert parse_response("[07, 9]") == ParseResult(((7.0, 9.0),), "text")
    assert parse_response('{"end": 4, "start": 3}') == ParseResult(((3.0, 4.0),), "json")

"""The time-span parsers on hostile input: only project errors, and linear time.

Each long input below made an earlier pattern backtrack quadratically (a run of spaces
or dashes before an arrow, a run of whitespace between two times, many unclosed JSON
brackets, many negated intervals, many reasoning tags or table headers). At 100k
characters a quadratic scan takes minutes; a linear one well under a second, so the
generous ceiling only separates the two.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from timingbench.config import Config
from timingbench.errors import ParameterError
from timingbench.suites.answer_scope import final_answer
from timingbench.suites.answer_tables import rewrite_tables
from timingbench.suites.mgbench import extract_spans
from timingbench.suites.span_parse import document_spans, parse_time
from timingbench.suites.tag.answers import parse_interval_list, parse_response

N = 100_000
CEILING_S = 20.0

LONG_INPUTS = {
    "spaces before an arrow": " " * N + ">",
    "dashes before an arrow": "1" + "-" * N + "x> 2",
    "spaces after a bracket": "[" + " " * N + "1, 2",
    "spaces between two times": "from 1" + " " * N + "2 s",
    "spaces before a unit": "1" + " " * N + "x",
    "open braces": "{" * N + "1",
    "open brackets": "[" * N,
    "nested unclosed arrays": "[1," * (N // 3),
    "unclosed objects": '{"start":1,' * (N // 11),
    "unterminated string": '["' + "a" * N,
    "huge integer in JSON": "[" + "9" * 5000 + ", 1]",
    "huge number in text": "from " + "9" * 5000 + " to " + "9" * 5001 + " s",
    "negated intervals": "no laughter 1-2 s, " * (N // 19),
    "newlines": "\n" * N + "x",
    "empty then spaces": "empty" + " " * N + "x",
    "reasoning tags": "<think>" * (N // 7),
    "closing tags": "1-2 s</think>" * (N // 13),
    "answer markers": "Answer: 1-2 s " * (N // 14),
    "table headers": "| start | end |\n" * (N // 16),
    "csv headers": "start,end\n" * (N // 10),
    "csv pairs": "1,2\n" * (N // 4),
    "separator runs": "| start | end |\n" + "-" * N + "x",
    "spelled numbers": "one hundred and " * (N // 16),
    "halves": "1 and a half " * (N // 13),
    "ms fields": "start ms" + " " * N + ": 5",
    "clocks": "1:00:00:" * (N // 8),
    "t equals": "t=" * (N // 2) + "1",
    "tildes": "~" * N + "1",
}


@pytest.mark.parametrize("text", list(LONG_INPUTS.values()), ids=list(LONG_INPUTS))
def test_long_inputs_finish_and_return_results(text: str, config: Config) -> None:
    patterns = config.params.mgbench.empty_answer_patterns
    t0 = time.perf_counter()
    got = parse_response(text)
    spans = extract_spans(text, empty_patterns=patterns)
    parse_time(text)
    final_answer(text)
    rewrite_tables(text, parse_time)
    assert time.perf_counter() - t0 < CEILING_S
    assert got.failed == (got.stage == "none") == (not got.intervals)
    assert all(math.isfinite(s) and math.isfinite(e) and 0 <= s < e for s, e in got.intervals)
    assert (spans.status == "spans") == (len(spans.spans) > 0)
    assert spans.spans.shape[1] == 2


TOKENS = ["1", "2.5", "12", "00:03", "1:02:03,5", " ", "\n", "-", "\u2013", "~", "to", "and",
          "from", "between", "s", "ms", "min", "h", "sec", "[", "]", "{", "}", ",", ":", ";",
          ".", '"', "start", "end", "onset", "offset", "|", "---", "\t", "  ", "<think>",
          "</think>", "Answer:", "**Answer**", "no", "not", "never", "without", "n't", "one",
          "hundred", "half", "a", "point", "t=", "\u2248", "\u79d2", "\uff5e", "-->", "->",
          "lasting", "for", "duration", "%", "$", "1e400", "9" * 400, "NaN", "Infinity",
          "\u00a0", "\u2019", "null", "true", "\\", "'", "(", ")", "<answer>", "</answer>"]


def test_random_token_soup_never_raises(rng: np.random.Generator, config: Config) -> None:
    patterns = config.params.mgbench.empty_answer_patterns
    for _ in range(400):
        k = int(rng.integers(1, 40))
        text = "".join(TOKENS[int(i)] for i in rng.integers(0, len(TOKENS), k))
        got = parse_response(text)
        assert all(0 <= s < e for s, e in got.intervals), text
        assert all(e <= s for s, e in got.dropped), text
        whole = parse_response(text, strip_reasoning=False)
        assert (whole.stage == "none") == whole.failed, text
        sp = extract_spans(text, empty_patterns=patterns)
        assert (sp.status == "spans") == (len(sp.spans) > 0), text
        if document_spans(final_answer(text)) is None:
            # MGBench reads prose through the shared core: the same intervals, rounded
            np.testing.assert_allclose(sp.spans, np.asarray(got.intervals).reshape(-1, 2), atol=1e-9, rtol=0,
                                       err_msg=text)
        assert (sp.status == "spans") == (len(sp.spans) > 0), text
        value = parse_time(text)
        assert value is None or isinstance(value, float)


@pytest.mark.parametrize("value", [None, 12, 1.5, b"1-2 s", ["1-2 s"]])
def test_non_string_answers_raise_the_project_error(value: object, config: Config) -> None:
    with pytest.raises(ParameterError, match="must be a string"):
        parse_response(value)  # type: ignore[arg-type]
    if value is not None:
        with pytest.raises(ParameterError, match="must be a string or None"):
            extract_spans(value, empty_patterns=[])  # type: ignore[arg-type]


def test_out_of_range_numbers_are_not_times() -> None:
    assert parse_response("[" + "9" * 400 + ", 1]").failed
    assert parse_response('{"start": 1, "end": ' + "9" * 400 + "}").failed
    with pytest.raises(ParameterError, match="non-numeric time"):
        parse_interval_list([[10**400, 1]], where="r.jsonl:1")
    assert extract_spans("[[1, " + "9" * 400 + "]]", empty_patterns=[]).status == "invalid"


def test_bad_empty_answer_pattern_is_a_project_error() -> None:
    with pytest.raises(ParameterError, match="empty_answer_patterns: '\\(' is not a regular"):
        extract_spans("nothing here", empty_patterns=["("])

"""MGBench scoring: span extraction, grounding metrics, empty answers, understanding judging."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from judge_stub_server import running_stub

from timingbench.cli import main
from timingbench.errors import ConfigError
from timingbench.suites.judge import OFFLINE_LABEL, ChatClient, verdict_words
from timingbench.suites.mgbench import (
    LlmSpanExtractor,
    LlmUnderstandingJudge,
    MgQuestion,
    MgResponse,
    OfflineUnderstandingJudge,
    RegexSpanExtractor,
    SpanParse,
    aggregate_grounding,
    concept_group,
    extract_spans,
    load_ground_truth,
    load_responses,
    score_grounding_question,
    score_mgbench,
)

TH = [0.5, 0.7]


@pytest.fixture
def patterns(config) -> list[str]:
    return config.params.mgbench.empty_answer_patterns


@pytest.mark.parametrize(
    ("text", "status", "spans"),
    [
        ("[0.22, 1.34]", "spans", [[0.22, 1.34]]),
        ("[[0.5, 1.0], [2, 3]]", "spans", [[0.5, 1.0], [2.0, 3.0]]),
        ('{"intervals": [[1.25, 2.5]]}', "spans", [[1.25, 2.5]]),
        ('[{"start": 0.1, "end": 0.4}]', "spans", [[0.1, 0.4]]),
        ("0.22-1.34s, 1.90 - 2.47", "spans", [[0.22, 1.34], [1.9, 2.47]]),
        ("The note sounds from 1.2 seconds to 2.0 seconds.", "spans", [[1.2, 2.0]]),
        ("between 1.2 and 2.5 s", "spans", [[1.2, 2.5]]),
        ("start: 1.2, end: 2.0; start: 3, end: 3.5", "spans", [[1.2, 2.0], [3.0, 3.5]]),
        ("1200ms ~ 1500 ms", "spans", [[1.2, 1.5]]),
        ("0:05 to 0:07.5", "spans", [[5.0, 7.5]]),
        ("(0.25s, 0.75s) and (1.0s, 1.5s)", "spans", [[0.25, 0.75], [1.0, 1.5]]),
        ("<0.3~0.9>", "spans", [[0.3, 0.9]]),
        ("There is no such note.", "empty", []),
        ("None", "empty", []),
        ("[]", "empty", []),
        ('{"intervals": []}', "empty", []),
        ("The clip does not contain that interval.", "empty", []),
        ("I cannot hear the audio.", "invalid", []),
        ("notes 2 and 3 are a fifth apart", "invalid", []),
        ("[3.0, 2.0]", "invalid", []),
        ("", "invalid", []),
        (None, "invalid", []),
    ],
)
def test_extract_spans(text, status: str, spans: list, patterns) -> None:
    p = extract_spans(text, empty_patterns=patterns)
    assert p.status == status
    np.testing.assert_allclose(p.spans, np.asarray(spans, dtype=float).reshape(-1, 2), atol=1e-9)


def test_reversed_span_is_dropped_with_a_note(patterns) -> None:
    p = extract_spans("[0.5, 1.0], [3.0, 2.0]", empty_patterns=patterns)
    assert p.status == "spans" and p.spans.tolist() == [[0.5, 1.0]]
    assert "end before start" in p.note


@pytest.mark.parametrize(
    ("text", "status", "spans"),
    [
        # a JSON document's spans pass the core's clean_spans rule, as the cascade's do
        ("[[-1, 2]]", "invalid", []),  # a start before the clip is no time of the clip
        ("[[1.0000001, 2], [1.0000002, 2]]", "spans", [[1.0, 2.0]]),  # alike once rounded: one span
        ("[[1.0000001, 1.0000004]]", "invalid", []),  # zero length once rounded
        ("[[0, 1e308], [1, 2]]", "spans", [[1.0, 2.0]]),  # rounding overflows: no time
        ("[[1, 2], [1, 2]]", "spans", [[1.0, 2.0]]),
    ],
)
def test_json_document_spans_are_cleaned_like_text_spans(text, status, spans, patterns) -> None:
    p = extract_spans(text, empty_patterns=patterns)
    assert p.status == status
    assert p.spans.tolist() == spans
    assert np.isfinite(p.spans).all()


@pytest.mark.parametrize(
    ("reply", "status", "spans"),
    [("[[2, 1]]", "invalid", []), ("[[3, 3]]", "invalid", []), ("[]", "empty", []),
     ("```json\n[[0.5, 1.5], [2, 1]]\n```", "spans", [[0.5, 1.5]])],
)
def test_llm_extractor_reply_spans_follow_the_regex_rule(tmp_path, reply, status, spans) -> None:
    with running_stub({"rules": [], "default": {"content": reply}}, tmp_path) as url:
        client = ChatClient(url=url, model="stub", timeout_s=5, max_retries=0, backoff_s=0.0, temperature=0,
                            max_tokens=8)
        p = LlmSpanExtractor(client=client, empty_patterns=[]).extract("somewhere")
    assert (p.status, p.spans.tolist()) == (status, spans)


def _parse(spans, status: str = "spans") -> SpanParse:
    return SpanParse(status, np.asarray(spans, dtype=float).reshape(-1, 2))


@pytest.mark.parametrize(
    ("ref", "parse", "follows", "merged", "outcome"),
    [
        ([], _parse([], "empty"), True, 1.0, "correct_empty"),
        ([], _parse([[1, 2]]), True, 0.0, "false_alarm"),
        ([], _parse([], "invalid"), False, 0.0, "invalid"),
        ([[1, 2]], _parse([], "empty"), True, 0.0, "missed"),
        ([[1, 2]], _parse([], "invalid"), False, 0.0, "invalid"),
        ([[1, 2]], _parse([[1, 2]]), True, 1.0, None),
    ],
)
def test_empty_answer_outcomes(ref, parse, follows, merged, outcome) -> None:
    ev = score_grounding_question(np.asarray(ref, dtype=float).reshape(-1, 2), parse, iou_thresholds=TH)
    assert (ev["follows"], ev["merged_iou"], ev["empty_outcome"]) == (follows, merged, outcome)


def test_iou_exactly_on_threshold_is_matched() -> None:
    # IoU = 1/2 exactly: matched at 0.5, not at 0.7
    ev = score_grounding_question(np.array([[0.0, 2.0]]), _parse([[0.0, 1.0]]), iou_thresholds=TH)
    assert ev["at"]["0.5"]["tp"] == 1 and ev["at"]["0.7"]["tp"] == 0
    # 0.1 + 0.2 style noise must not push 0.7 below the threshold: [0, 0.7] in [0, 1]
    ev = score_grounding_question(np.array([[0.0, 1.0]]), _parse([[0.1 + 0.2 - 0.3, 0.7]]), iou_thresholds=TH)
    assert ev["at"]["0.7"]["tp"] == 1


def test_merged_iou_ignores_how_spans_are_split() -> None:
    ref = np.array([[0.0, 1.0], [1.0, 2.0]])
    ev = score_grounding_question(ref, _parse([[0.0, 0.5], [0.5, 2.0]]), iou_thresholds=TH)
    assert ev["merged_iou"] == pytest.approx(1.0)
    # span matching does see the split: IoUs are 1/2 and 2/3, so 2 matches at 0.5, none at 0.7
    assert (ev["at"]["0.5"]["tp"], ev["at"]["0.7"]["tp"]) == (2, 0)


def _random_sets(rng, n_q: int) -> list[np.ndarray]:
    out = []
    for _ in range(n_q):
        k = int(rng.integers(0, 4))
        starts = np.sort(rng.uniform(0, 8, k))
        out.append(np.round(np.column_stack([starts, starts + rng.uniform(0.2, 1.0, k)]), 3))
    return out


def test_perfect_predictions_score_one(rng) -> None:
    refs = _random_sets(rng, 50)
    evs = [score_grounding_question(r, _parse(r, "spans" if len(r) else "empty"), iou_thresholds=TH) for r in refs]
    agg = aggregate_grounding(evs, iou_thresholds=TH)
    assert agg["ifr"] == 1.0 and agg["merged_iou"] == pytest.approx(1.0)
    for t in ("0.5", "0.7"):
        m = agg[f"iou_{t}"]
        assert m["precision"] == m["recall"] == m["f1"] == 1.0
        assert m["onset_mae_ms"] == 0.0 and m["offset_mae_ms"] == 0.0
    assert agg["empty"]["correct_empty"] == agg["empty"]["n_empty_truth"] == sum(len(r) == 0 for r in refs)


def test_shifted_predictions_give_shift_as_mae(rng) -> None:
    refs = [r for r in _random_sets(rng, 60) if len(r)]
    shift = 0.04
    evs = [score_grounding_question(r, _parse(r + shift), iou_thresholds=[0.5]) for r in refs]
    agg = aggregate_grounding(evs, iou_thresholds=[0.5])
    assert agg["iou_0.5"]["onset_mae_ms"] == pytest.approx(1000 * shift, abs=1e-6)
    assert agg["iou_0.5"]["offset_mae_ms"] == pytest.approx(1000 * shift, abs=1e-6)


def test_span_counts_precision_recall() -> None:
    ref = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    est = _parse([[0.0, 1.1], [2.5, 3.0], [6.0, 7.0]])  # IoU 0.909, 0.5, 0
    ev = score_grounding_question(ref, est, iou_thresholds=TH)
    agg = aggregate_grounding([ev, score_grounding_question(ref, _parse([], "invalid"), iou_thresholds=TH)],
                              iou_thresholds=TH)
    m5, m7 = agg["iou_0.5"], agg["iou_0.7"]
    assert (m5["tp"], m5["fp"], m5["fn"]) == (2, 1, 4)
    assert (m7["tp"], m7["fp"], m7["fn"]) == (1, 2, 5)
    assert m5["precision"] == pytest.approx(2 / 3) and m5["recall"] == pytest.approx(2 / 6)
    assert m5["f1"] == pytest.approx(2 * (2 / 3) * (1 / 3) / (2 / 3 + 1 / 3))
    assert m5["onset_mae_ms"] == pytest.approx(1000 * (0.0 + 0.5) / 2)
    assert m7["offset_mae_ms"] == pytest.approx(100.0)
    assert agg["ifr"] == 0.5 and agg["n_following"] == 1


@pytest.mark.parametrize(
    ("category", "group"),
    [("Bar comparison", "bar_comparison"), ("BarComparison", "bar_comparison"), ("HarmonicPattern", "harmonic_pattern"),
     ("rhythm", "rhythm"), ("ABS", "ABS")],
)
def test_concept_group(category: str, group: str, config) -> None:
    assert concept_group(category, groups=config.params.mgbench.concept_groups) == group


def _write(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


GT_ROWS = [
    {"id": "g1", "subset": "3N", "task": "grounding", "category": "ABS",
     "question": "Locate the note(s) whose pitch is 72 (MIDI).", "intervals": [[0.2, 1.0]]},
    {"id": "g2", "subset": "3N", "task": "grounding", "category": "ABS",
     "question": "Locate the note(s) whose pitch is 40 (MIDI).", "intervals": []},
    {"id": "g3", "subset": "2B", "task": "grounding", "category": "rhythm",
     "question": "Locate the downbeat note(s).", "intervals": [[0.0, 0.5], [2.0, 2.5]]},
    {"id": "u1", "subset": "2B", "task": "understanding", "category": "Rhythm",
     "question": "What is the time signature of this clip?", "answer": "3/4"},
    {"id": "u2", "subset": "2B", "task": "understanding", "category": "Bar comparison",
     "question": "Are the two bars identical?", "answer": "No"},
    {"id": "u3", "subset": "2B", "task": "understanding", "category": "Chord",
     "question": "Which chord is in bar 1?", "answer": "C major"},
]


@pytest.mark.parametrize(
    ("row", "match"),
    [
        ({"subset": "3N", "task": "grounding", "category": "ABS", "question": "q", "intervals": []}, "'id' is missing"),
        ({"id": "g1", "subset": "3N", "task": "grounding", "category": "ABS", "question": "q", "intervals": []},
         "duplicate id 'g1'"),
        ({"id": "x", "subset": "3N", "task": "grounding", "category": "ABS", "question": "q",
          "intervals": [["0.5", 1]]}, "non-numeric"),
        ({"id": "x", "subset": "3N", "task": "grounding", "category": "ABS", "question": "q",
          "intervals": [[2, 1]]}, "intervals"),
        ({"id": "x", "subset": "3N", "task": "grounding", "category": "ABS", "question": "q"},
         "needs field 'intervals'"),
        ({"id": "x", "subset": "4N", "task": "grounding", "category": "ABS", "question": "q", "intervals": []},
         "'subset'"),
        ({"id": "x", "subset": "2B", "task": "qa", "category": "c", "question": "q", "answer": "a"}, "'task'"),
        ({"id": "x", "subset": "2B", "task": "understanding", "category": "c", "question": "q"}, "'answer'"),
        ("{broken", "not valid JSON"),
    ],
)
def test_bad_ground_truth_rows(tmp_path, row, match: str) -> None:
    gt = load_ground_truth(_write(tmp_path / "gt.jsonl", [*GT_ROWS, row]))
    assert len(gt.rows) == len(GT_ROWS)
    assert len(gt.errors) == 1 and f":{len(GT_ROWS) + 1}:" in gt.errors[0]
    assert match in gt.errors[0]


@pytest.mark.parametrize(
    ("row", "match"),
    [
        ({"response": "[0, 1]"}, "'id' is missing"),
        ({"id": "nope", "response": "[0, 1]"}, "not a valid question"),
        ({"id": "g1", "response": "[5, 6]"}, "duplicate id 'g1'"),
        ({"id": "g3", "intervals": [[0, "x"]]}, "non-numeric"),
        ({"id": "g3", "intervals": [[0, float("nan")]]}, "non-finite"),
        ({"id": "g3"}, "neither"),
        ({"id": "g3", "response": 42}, "'response' must be a string"),
    ],
)
def test_bad_response_rows(tmp_path, row, match: str) -> None:
    gt = load_ground_truth(_write(tmp_path / "gt.jsonl", GT_ROWS))
    pred = load_responses(_write(tmp_path / "p.jsonl", [{"id": "g1", "response": "[0.2, 1.0]"}, row]), gt.rows)
    assert list(pred.rows) == ["g1"]
    assert len(pred.errors) == 1 and ":2:" in pred.errors[0] and match in pred.errors[0]


def test_score_offline_end_to_end(config) -> None:
    qs = {r["id"]: r for r in GT_ROWS}
    gt = {k: MgQuestion(k, i + 1, r["subset"], r["task"], r["category"], r["question"],
                        np.asarray(r["intervals"], dtype=float).reshape(-1, 2) if "intervals" in r else None,
                        r.get("answer")) for i, (k, r) in enumerate(qs.items())}
    resp = {
        "g1": MgResponse("g1", 1, "[0.2, 1.0]", None),
        "g2": MgResponse("g2", 2, "There is no such note.", None),
        "g3": MgResponse("g3", 3, None, np.array([[0.0, 0.5]])),
        "u1": MgResponse("u1", 4, "It is in 3/4.", None),
        "u2": MgResponse("u2", 5, "Yes", None),
    }
    rows, s = score_mgbench(
        gt, resp, extractor=RegexSpanExtractor(empty_patterns=config.params.mgbench.empty_answer_patterns),
        judge=OfflineUnderstandingJudge(polarity_words=["yes", "no"]), iou_thresholds=TH,
        concept_groups=config.params.mgbench.concept_groups,
    )
    assert [r["id"] for r in rows] == list(qs)
    g3n, g2b = s["grounding"]["3N"], s["grounding"]["2B"]
    assert g3n["ifr"] == 1.0 and g3n["merged_iou"] == 1.0 and g3n["empty"]["correct_empty"] == 1
    assert g2b["merged_iou"] == pytest.approx(0.5) and g2b["iou_0.5"]["recall"] == 0.5
    u = s["understanding"]["2B"]
    assert (u["n"], u["n_following"], u["n_correct"]) == (3, 2, 1)  # u3 has no response: not following
    assert u["accuracy"] == 0.5 and u["per_concept"]["rhythm"]["accuracy"] == 1.0
    assert u["per_concept"]["bar_comparison"]["accuracy"] == 0.0
    assert u["per_concept"]["chord"] == {"n": 1, "n_following": 0, "n_correct": 0, "accuracy": None}
    assert s["missing"] == ["u3"]


def _mg_script() -> dict:
    return {
        "rules": [
            {"name": "u1", "match": "Model answer:\nthree-four time",
             "replies": [{"content": "FOLLOWS: yes\nCORRECT: yes"}]},
            {"name": "u2", "match": "Model answer:\nI am not sure",
             "replies": [{"content": "FOLLOWS: no\nCORRECT: no"}]},
            {"name": "u3", "match": "Model answer:\nG minor", "replies": [{"content": "The answer is wrong."}]},
            {"name": "x1", "match": "Reply:\nThe note starts around",
             "replies": [{"content": "```json\n[[0.21, 1.02]]\n```"}]},
            {"name": "x2", "match": "Reply:\nI can't locate", "replies": [{"content": "INVALID"}]},
            {"name": "x3", "match": "Reply:\nNo note has that pitch", "replies": [{"content": "[]"}]},
        ],
        "default": {"content": "???"},
    }


def test_cli_with_llm_judge_and_extractor(tmp_path, capsys) -> None:
    gt = _write(tmp_path / "gt.jsonl", [*GT_ROWS, {"id": "g4", "subset": "3N", "task": "grounding",
                                                    "category": "REL", "question": "Locate the highest note.",
                                                    "intervals": [[1.0, 2.0]]}])
    pred = _write(tmp_path / "pred.jsonl", [
        {"id": "g1", "response": "The note starts around 0.21 s and ends near 1.02 s."},
        {"id": "g2", "response": "No note has that pitch."},
        {"id": "g4", "response": "I can't locate it."},
        {"id": "g3", "intervals": [[0.0, 0.5], [2.0, 2.5]]},
        {"id": "u1", "response": "three-four time"},
        {"id": "u2", "response": "I am not sure"},
        {"id": "u3", "response": "G minor"},
    ])
    out = tmp_path / "out"
    with running_stub(_mg_script(), tmp_path) as url:
        rc = main(["mgbench", "score", "--gt", str(gt), "--pred", str(pred), "--out", str(out),
                   "--judge", url, "--judge-model", "stub", "--extractor", "llm", "--judge-retries", "1"])
    s = json.loads((out / "summary.json").read_text())
    g = s["grounding"]["3N"]
    assert (g["n"], g["n_following"]) == (3, 2)
    assert g["iou_0.7"]["tp"] == 1 and g["empty"]["correct_empty"] == 1
    u = s["understanding"]["2B"]
    assert (u["n"], u["unjudged"], u["n_following"], u["n_correct"]) == (2, 1, 1, 1)
    assert s["grounding"]["2B"]["merged_iou"] == 1.0  # the intervals track needs no extraction
    assert rc == 1  # u3 stayed unjudged
    out_text = capsys.readouterr().out
    assert "llm-extractor" in out_text and "IFR" in out_text


def test_cli_offline_default_labels_judge(tmp_path, capsys) -> None:
    gt = _write(tmp_path / "gt.jsonl", GT_ROWS)
    pred = _write(tmp_path / "pred.jsonl", [{"id": "u1", "response": "3/4"}, {"id": "g1", "response": "0.2-1.0"}])
    out = tmp_path / "out"
    rc = main(["mgbench", "score", "--gt", str(gt), "--pred", str(pred), "--out", str(out)])
    assert rc == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["judge"]["label"] == OFFLINE_LABEL and s["extractor"] == "regex"
    assert sorted(s["missing"]) == ["g2", "g3", "u2", "u3"]
    rows = [json.loads(x) for x in (out / "questions.jsonl").read_text().splitlines()]
    assert len(rows) == len(GT_ROWS)
    assert OFFLINE_LABEL in capsys.readouterr().out


def test_llm_extractor_malformed_reply_is_not_following(tmp_path, config) -> None:
    with running_stub({"rules": [], "default": {"content": "the spans are unclear"}}, tmp_path) as url:
        client = ChatClient(url=url, model="stub", timeout_s=5, max_retries=1, backoff_s=0.0, temperature=0,
                            max_tokens=8)
        p = LlmSpanExtractor(client=client, empty_patterns=[]).extract("somewhere in the middle")
        j = LlmUnderstandingJudge(client=client, **verdict_words(config.params.judge))
        q = MgQuestion("u", 1, "2B", "understanding", "chord", "q?", None, "C")
        v = j.judge(question=q, answer="C")
    assert p.status == "invalid" and "malformed extractor reply" in p.note
    assert v.follows is None and "malformed judge reply" in v.note


@pytest.mark.parametrize(
    ("key", "value"),
    [("mgbench.iou_thresholds", [0.5, 1.2]), ("mgbench.concept_groups", ["rhythm", "rhythm"]),
     ("mgbench.concept_groups", []), ("mgbench.empty_answer_patterns", ["(unclosed"])],
)
def test_invalid_mgbench_constant_is_a_config_error_naming_it(config, key: str, value: object) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        config.with_value(key, value).params.mgbench  # noqa: B018

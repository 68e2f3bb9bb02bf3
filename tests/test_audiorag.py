"""AudioRAG scoring: release metadata, answer rows, audio fallback, offline and LLM judges."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from judge_stub_server import running_stub, stub_stats

from timingbench.cli import main
from timingbench.errors import ConfigError
from timingbench.suites.audiorag import (
    LlmRagJudge,
    OfflineRagJudge,
    load_answers,
    load_metadata,
    resolve_audio,
    score_audiorag,
)
from timingbench.suites.judge import OFFLINE_LABEL, ChatClient, verdict_words

DATA = Path(__file__).resolve().parent / "data"
META = DATA / "audiorag_metadata.jsonl"
N_VALID = 7  # rows 0-6 of the fixture are valid; 7-9 are broken on purpose


def _release(tmp_path: Path) -> Path:
    """A release layout: metadata/metadata.jsonl plus data/ with some of the audio."""
    (tmp_path / "metadata").mkdir()
    shutil.copy(META, tmp_path / "metadata" / "metadata.jsonl")
    for rel in ["FMA/000/000212.wav", "FMA/045/045152.wav", "MusicNet/audios_cropped/1751.wav",
                "MusicNet/audios_cropped/2191.wav", "CHEER/sentences/buzzword_107.wav"]:
        p = tmp_path / "data" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"RIFF")
    return tmp_path / "metadata" / "metadata.jsonl"


def _write(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def test_load_metadata_keeps_good_rows_and_names_bad_ones() -> None:
    meta = load_metadata(META)
    assert [it.index for it in meta.items] == list(range(N_VALID))
    assert len(meta.errors) == 3
    assert any(":8: field 'question'" in e for e in meta.errors)
    assert any(":9: field 'audio_path'" in e for e in meta.errors)
    assert any(":10: not valid JSON" in e for e in meta.errors)
    nan_item = meta.items[5]
    assert nan_item.data_source == "self-collected"
    assert meta.by_path()["FMA/045/045152.wav"] == [1, 2]


def test_resolve_audio_uses_musicnet_fallback_and_reports_unresolved(tmp_path, config) -> None:
    gt = _release(tmp_path)
    meta = load_metadata(gt)
    res = resolve_audio(meta.items, audio_root=tmp_path / "data",
                        fallback_subdirs=config.params.audiorag.fallback_subdirs)
    assert sorted(res.via_fallback) == [3, 4]
    assert res.resolved[3].endswith("MusicNet/audios_cropped/1751.wav")
    assert res.unresolved == ["online_data/PVh9y42j2eg_0_20108.wav"]
    res_none = resolve_audio(meta.items, audio_root=None, fallback_subdirs=["audios_cropped"])
    assert res_none.root is None and not res_none.unresolved


@pytest.mark.parametrize(
    ("row", "match"),
    [
        ({"answer": "x"}, "'id' is missing"),
        ({"id": "", "answer": "x"}, "'id' is missing"),
        ({"id": 99, "answer": "x"}, "not the index of a valid metadata row"),
        ({"id": 7, "answer": "x"}, "not the index of a valid metadata row"),
        ({"id": "FMA/045/045152.wav", "answer": "x"}, "audio_path of 2 questions"),
        ({"id": "nope.wav", "answer": "x"}, "matches no audio_path"),
        ({"id": 0, "answer": 3}, "'answer' must be a string"),
        ({"id": 0, "answer": "x", "run": 1.5}, "'run' must be"),
        ({"id": [0], "answer": "x"}, "must be a row index or an audio_path"),
    ],
)
def test_bad_answer_rows_are_reported_and_skipped(tmp_path, row: dict, match: str) -> None:
    meta = load_metadata(META)
    pred = _write(tmp_path / "a.jsonl", [{"id": 1, "answer": "Detroit"}, row, {"id": 3, "answer": "Leipzig"}])
    answers, errors = load_answers(pred, meta)
    assert [a.index for a in answers] == [1, 3]
    assert len(errors) == 1 and ":2:" in errors[0]
    assert re.search(match, errors[0])


def test_duplicate_answers_keep_the_first(tmp_path) -> None:
    meta = load_metadata(META)
    pred = _write(tmp_path / "a.jsonl", [
        {"id": "MusicNet/1751.wav", "answer": "Leipzig", "run": 1},
        {"id": 3, "answer": "Berlin", "run": 1},
        {"id": 3, "answer": "Berlin", "run": 2},
    ])
    answers, errors = load_answers(pred, meta)
    assert [(a.run, a.answer) for a in answers] == [("1", "Leipzig"), ("2", "Berlin")]
    assert len(errors) == 1 and "duplicate answer" in errors[0] and "line 1" in errors[0]


def test_offline_scoring_over_runs(tmp_path, config) -> None:
    meta = load_metadata(META)
    run1 = [
        {"id": 0, "answer": "It was Bob Dylan.", "run": 1},
        {"id": 1, "answer": "Chicago", "run": 1},
        {"id": 2, "answer": "Tomorrowland", "run": 1},
        {"id": 3, "answer": "Leipzig", "run": 1},
        {"id": 4, "answer": "Yes, he was.", "run": 1},
        {"id": 5, "answer": "", "run": 1},
        {"id": 6, "answer": "两箱油司机", "run": 1},
    ]
    run2 = [{"id": 0, "answer": "Joan Baez", "run": 2}, {"id": 4, "answer": "no", "run": 2}]
    answers, errors = load_answers(_write(tmp_path / "a.jsonl", run1 + run2), meta)
    assert not errors
    judge = OfflineRagJudge(polarity_words=config.params.judge.offline_polarity_words)
    rows, s = score_audiorag(meta, answers, judge=judge, error_types=config.params.audiorag.error_types, workers=2)
    assert len(rows) == 2 * N_VALID
    correct1 = [r["correct"] for r in rows if r["run"] == "1"]
    assert correct1 == [True, False, True, True, True, False, True]
    assert s["runs"]["1"]["accuracy"] == pytest.approx(5 / 7)
    assert s["runs"]["2"]["accuracy"] == 0.0
    assert s["runs"]["2"]["missing"] == N_VALID - 2
    assert s["accuracy_mean"] == pytest.approx((5 / 7 + 0.0) / 2)
    assert s["per_source"]["MusicNet"]["per_run"] == {"1": 1.0, "2": 0.0}
    assert s["per_source"]["FMA"]["accuracy_mean"] == pytest.approx((2 / 3 + 0.0) / 2)
    # empty answer (run 1) and the 5 unanswered questions of run 2 are invalid answers (d)
    assert s["error_types"]["d"]["count"] == 1 + (N_VALID - 2)
    assert s["error_types"]["unclassified"]["count"] == 1 + 2  # offline cannot classify a-c
    assert judge.label == OFFLINE_LABEL


def _rag_script() -> dict:
    def correctness(answer: str, reply: str) -> dict:
        return {"name": f"c:{answer}", "match": f"Model answer:\n{answer}\n\nReply with exactly one word",
                "replies": [{"content": reply}]}

    def error_type(answer: str, reply: str) -> dict:
        return {"name": f"e:{answer}", "match": f"Model answer:\n{answer}\n\nReply with the letter",
                "replies": [{"content": reply}]}

    return {
        "rules": [
            correctness("Dylan", "yes"),
            correctness("Chicago", "no"), error_type("Chicago", "c) Knowledge Error"),
            correctness("Berlin", "No."), error_type("Berlin", "b"),
            correctness("Tomorrowland", "I think so"),  # malformed verdict, every time
            correctness("Yes", "no"), error_type("Yes", "the answer is wrong"),  # malformed type
        ],
        "default": {"content": "yes"},
    }


def test_llm_judge_through_stub(tmp_path, config) -> None:
    meta = load_metadata(META)
    pred = _write(tmp_path / "a.jsonl", [
        {"id": 0, "answer": "Dylan"}, {"id": 1, "answer": "Chicago"}, {"id": 2, "answer": "Tomorrowland"},
        {"id": 3, "answer": "Berlin"}, {"id": 4, "answer": "Yes"}, {"id": 5, "answer": "  "},
    ])
    answers, _ = load_answers(pred, meta)
    with running_stub(_rag_script(), tmp_path) as url:
        client = ChatClient(url=url, model="stub", timeout_s=5, max_retries=1, backoff_s=0.01, temperature=0,
                            max_tokens=8)
        judge = LlmRagJudge(client=client, letters=list(config.params.audiorag.error_types),
                            **verdict_words(config.params.judge))
        rows, s = score_audiorag(meta, answers, judge=judge, error_types=config.params.audiorag.error_types, workers=3)
        hits = stub_stats(url)
    by_id = {r["id"]: r for r in rows}
    assert by_id[0]["correct"] is True
    assert (by_id[1]["correct"], by_id[1]["error_type"]) == (False, "c")
    assert (by_id[3]["correct"], by_id[3]["error_type"]) == (False, "b")
    assert by_id[2]["correct"] is None and "malformed judge reply" in by_id[2]["judge_note"]
    assert (by_id[4]["correct"], by_id[4]["error_type"]) == (False, None)
    assert (by_id[5]["correct"], by_id[5]["error_type"]) == (False, "d")  # empty: no request
    assert (by_id[6]["correct"], by_id[6]["error_type"]) == (False, "d")  # unanswered
    assert hits["c:Tomorrowland"] == 2  # malformed verdict asked again once (max_retries=1)
    assert s["unjudged"] == 1
    assert s["runs"]["1"]["accuracy"] == pytest.approx(1 / 6)
    assert s["error_types"]["c"]["count"] == 1 and s["error_types"]["b"]["count"] == 1
    assert s["error_types"]["unclassified"]["count"] == 1


def test_cli_offline_writes_json_and_table(tmp_path, capsys) -> None:
    gt = _release(tmp_path)
    pred = _write(tmp_path / "answers.jsonl", [
        {"id": 0, "answer": "Bob Dylan", "run": 1}, {"id": 0, "answer": "Bob Dylan", "run": 1},
        {"id": "MusicNet/1751.wav", "answer": "Leipzig", "run": 1}, {"id": 0, "answer": "x", "run": 2},
    ])
    out = tmp_path / "out"
    rc = main(["audiorag", "score", "--gt", str(gt), "--pred", str(pred), "--out", str(out)])
    assert rc == 1  # the duplicate row is an error; the run still completes
    s = json.loads((out / "summary.json").read_text())
    assert s["judge"]["kind"] == "offline" and s["judge"]["label"] == OFFLINE_LABEL
    assert s["audio"]["via_fallback"] == 2 and s["audio"]["unresolved"] == ["online_data/PVh9y42j2eg_0_20108.wav"]
    assert s["runs"]["1"]["accuracy"] == pytest.approx(2 / N_VALID)
    assert len(s["errors"]) == 3 + 1
    lines = (out / "answers.jsonl").read_text().splitlines()
    assert len(lines) == 2 * N_VALID
    text = capsys.readouterr()
    assert "offline" in text.out and "MusicNet" in text.out and "duplicate" in text.err


def test_cli_llm_judge(tmp_path, capsys) -> None:
    gt = _release(tmp_path)
    pred = _write(tmp_path / "answers.jsonl", [{"id": 0, "answer": "Dylan"}, {"id": 1, "answer": "Chicago"}])
    out = tmp_path / "out"
    with running_stub(_rag_script(), tmp_path) as url:
        rc = main(["audiorag", "score", "--gt", str(gt), "--pred", str(pred), "--out", str(out),
                   "--judge", url, "--judge-model", "stub", "--judge-retries", "0"])
    s = json.loads((out / "summary.json").read_text())
    assert s["judge"]["kind"] == "llm" and "stub" in s["judge"]["label"]
    assert s["runs"]["1"]["correct"] == 1
    assert s["error_types"]["c"]["count"] == 1
    assert rc == 1  # the fixture's three broken metadata rows
    assert "llm stub" in capsys.readouterr().out


def test_cli_llm_judge_needs_model(tmp_path, capsys) -> None:
    gt = _release(tmp_path)
    pred = _write(tmp_path / "answers.jsonl", [{"id": 0, "answer": "Dylan"}])
    rc = main(["audiorag", "score", "--gt", str(gt), "--pred", str(pred), "--out", str(tmp_path / "o"),
               "--judge", "http://127.0.0.1:9/v1"])
    assert rc == 1 and "--judge-model" in capsys.readouterr().err


def test_cli_llm_judge_model_from_the_server(tmp_path, capsys) -> None:
    # formats §7: `--judge URL` alone; a server that lists one model names it
    gt = _release(tmp_path)
    pred = _write(tmp_path / "answers.jsonl", [{"id": 0, "answer": "Dylan"}, {"id": 1, "answer": "Chicago"}])
    out = tmp_path / "out"
    with running_stub(_rag_script(), tmp_path) as url:
        main(["audiorag", "score", "--gt", str(gt), "--pred", str(pred), "--out", str(out),
              "--judge", url, "--judge-retries", "0"])
    s = json.loads((out / "summary.json").read_text())
    assert s["judge"]["kind"] == "llm" and "llm stub @" in s["judge"]["label"]
    assert s["runs"]["1"]["correct"] == 1


def test_cli_unreachable_judge_is_reported(tmp_path, capsys) -> None:
    gt = _release(tmp_path)
    pred = _write(tmp_path / "answers.jsonl", [{"id": 0, "answer": "Dylan"}])
    rc = main(["audiorag", "score", "--gt", str(gt), "--pred", str(pred), "--out", str(tmp_path / "o"),
               "--judge", "http://127.0.0.1:9/v1", "--judge-model", "m", "--judge-retries", "0",
               "--judge-timeout", "2"])
    err = capsys.readouterr().err
    assert rc == 1 and "1 answers could not be judged" in err


@pytest.mark.parametrize(
    ("key", "value"),
    [("audiorag.audio_subdir", ""), ("audiorag.fallback_subdirs", [""]), ("audiorag.error_types", {"ab": "x"}),
     ("audiorag.error_types", {"a": ""}), ("audiorag.error_types", {})],
)
def test_invalid_audiorag_constant_is_a_config_error_naming_it(config, key: str, value: object) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        config.with_value(key, value).params.audiorag  # noqa: B018

"""Tests of `timingbench score`: outputs per formats §3, bad input, determinism, resume."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import timingbench.runner as runner
from timingbench.cli import main
from timingbench.runner import ScoreOptions, score_folder

EVENT_KEYS = ["clip", "prompt_id", "sample", "event_id", "kind", "family", "instructed_s", "tolerance_s",
              "outcome", "detected_s", "error_s", "gates", "rejected_by", "detector", "p_chance", "floor_s"]
CLIP_KEYS = ["clip", "prompt_id", "sample", "duration_s", "duration_ok", "tempo", "timbre_match", "error"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """Three rendered clips with exact truth, a second sample, a corrupt and a stray file."""
    from timingbench.render import render_recipe

    root = tmp_path_factory.mktemp("corpus")
    rows, truth = [], []
    for recipe, seed, params in (("silence_then_start", 2101, {}), ("end_cut", 2102, {}),
                                 ("energy_increase", 2103, {})):
        rc = render_recipe(recipe, seed=seed, out_dir=root, duration_s=16.0, **params)
        rows.append(rc.prompt)
        truth.extend(rc.truth)
    (root / "truth.jsonl").write_text("".join(json.dumps(r) + "\n" for r in truth))
    clips = root / "clips"
    first = sorted(clips.glob("*.wav"))[0]
    (clips / f"{first.stem}__2.wav").write_bytes(first.read_bytes())
    (clips / "broken__1.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk")
    (clips / "stray.wav").write_bytes(first.read_bytes())
    rows.append(dict(rows[0], id="broken", events=[dict(rows[0]["events"][0], id="broken/e1")]))
    rows.append(dict(rows[0], id="never-made", events=[dict(rows[0]["events"][0], id="never-made/e1")]))
    (root / "prompts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def _run(corpus: Path, out: Path, jobs: int = 1, **kw) -> runner.RunResult:
    return score_folder(corpus / "clips", corpus / "prompts.jsonl", out, _cfg(),
                        opts=ScoreOptions(separation="dsp", family_evidence="none", **kw), jobs=jobs)


def _cfg():
    from timingbench.config import load_config

    return load_config()


def test_outputs_follow_spec(corpus, tmp_path):
    res = _run(corpus, tmp_path / "r")
    events = [json.loads(x) for x in (tmp_path / "r" / "events.jsonl").read_text().splitlines()]
    clips = [json.loads(x) for x in (tmp_path / "r" / "clips.jsonl").read_text().splitlines()]
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert events and all(list(e)[: len(EVENT_KEYS)] == EVENT_KEYS for e in events)
    assert all(set(CLIP_KEYS) <= set(c) for c in clips)
    for e in events:
        assert e["outcome"] in ("on_time", "off_time", "none")
        assert (e["detected_s"] is None) == (e["outcome"] == "none")
        if e["detected_s"] is not None:
            assert e["error_s"] == pytest.approx(e["detected_s"] - e["instructed_s"], abs=1e-6)
        assert e["rejected_by"] is None or e["gates"][e["rejected_by"]] == "fail"
        # a clip that could not be scored: its event is none, with the reason, and no chance estimate
        assert (e["error"] is not None and e["p_chance"] is None) or 0.0 <= e["p_chance"] <= 1.0
        # evidence: the statistics of the gates the verdict rests on, keyed by gate name
        assert set(e["gate_stats"]) <= set(e["gates"]) - {"detection"}
        if e["rejected_by"] not in (None, "detection"):
            assert e["rejected_by"] in e["gate_stats"]
        for stats in e["gate_stats"].values():
            for v in stats.values():
                assert v is None or isinstance(v, (str, bool)) or v == round(v, 4)
    assert summary["results_format"] == 5  # 4: error clips' events are rows (none, with the error); 5: evidence
    assert all(c["controls"] is None for c in clips if c["error"] is None)
    assert summary["unmatched"] == ["stray.wav"]
    assert summary["missing"] == ["never-made"]
    assert [x["clip"] for x in summary["errors"]] == ["broken__1.wav"]
    assert "broken__1.wav" in summary["errors"][0]["error"]
    broken = next(c for c in clips if c["clip"] == "broken__1.wav")
    assert broken["error"] and broken["duration_ok"] is False
    assert [(e["outcome"], e["error"]) for e in events if e["clip"] == "broken__1.wav"] == [("none", broken["error"])]
    assert all(e["error"] is None for e in events if e["clip"] != "broken__1.wav")
    assert summary["counts"]["error_events"] == 1
    assert summary["rates_excluding_errors"]["n"] == len(events) - 1
    assert summary["config"]["hash"] and summary["separation"]["used"] == {"dsp": 4}
    assert summary["counts"]["scored_clips"] == 4
    assert res.summary["rates"]["n"] == len(events)
    # the second sample of a prompt is scored as sample 2 of the same prompt
    assert {e["sample"] for e in events if e["clip"].endswith("__2.wav")} == {2}


def test_delivered_events_are_credited(corpus, tmp_path):
    res = _run(corpus, tmp_path / "r", chance=False)
    truth = {}
    for line in (corpus / "truth.jsonl").read_text().splitlines():
        r = json.loads(line)
        truth[r["event_id"]] = r
    for e in res.events:
        if e["error"] is not None:
            continue
        t = truth[e["event_id"]]
        assert t["occurred"]
        assert e["outcome"] == "on_time", e
        assert abs(e["detected_s"] - t["onset_s"]) <= 0.1


def test_jobs_do_not_change_bytes(corpus, tmp_path):
    _run(corpus, tmp_path / "a", jobs=1)
    _run(corpus, tmp_path / "b", jobs=2)
    for name in ("events.jsonl", "clips.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_resume_after_kill_scores_only_what_is_missing(corpus, tmp_path, monkeypatch):
    out = tmp_path / "r"
    _run(corpus, out)
    reference = (out / "events.jsonl").read_bytes()
    # a killed run: final files never written, one clip's part missing
    (out / "events.jsonl").unlink()
    (out / "clips.jsonl").unlink()
    parts = sorted((out / runner.PARTS).glob("*.json"))
    parts[0].unlink()
    calls = []
    real = runner.score_clip

    def counting(ref, *a, **k):
        calls.append(ref.clip)
        return real(ref, *a, **k)

    monkeypatch.setattr(runner, "score_clip", counting)
    _run(corpus, out)
    assert calls == [parts[0].name[: -len(".json")]]
    assert (out / "events.jsonl").read_bytes() == reference


def test_a_write_the_kill_left_unfinished_is_cleared_on_resume(corpus, tmp_path):
    out = tmp_path / "r"
    _run(corpus, out)
    listing = sorted(p.name for p in (out / runner.PARTS).iterdir())
    reference = (out / "events.jsonl").read_bytes()
    # killed between the temp file and its rename: the temp files stay behind
    part = sorted((out / runner.PARTS).glob("*.json"))[0]
    part.unlink()
    (out / runner.PARTS / f".{part.name}.k1l2x3.tmp").write_text('{"half": ')
    (out / ".events.jsonl.a1b2c3.tmp").write_text("")
    _run(corpus, out)
    assert sorted(p.name for p in (out / runner.PARTS).iterdir()) == listing
    assert not list(out.glob(".*.tmp"))
    assert (out / "events.jsonl").read_bytes() == reference


def test_changed_config_is_rescored(corpus, tmp_path, monkeypatch):
    out = tmp_path / "r"
    _run(corpus, out)
    calls = []
    real = runner.score_clip
    monkeypatch.setattr(runner, "score_clip", lambda ref, *a, **k: calls.append(ref.clip) or real(ref, *a, **k))
    cfg = _cfg().with_value("search.default_tolerance_s", 0.4)
    score_folder(corpus / "clips", corpus / "prompts.jsonl", out, cfg,
                 opts=ScoreOptions(separation="dsp", family_evidence="none"))
    assert len(calls) == 5


def test_cli_prints_table(corpus, tmp_path, capsys):
    rc = main(["score", str(corpus / "clips"), "--prompts", str(corpus / "prompts.jsonl"),
               "--out", str(tmp_path / "r"), "--separation", "dsp", "--family-evidence", "none"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "all events" in out and "kind music_end" in out and "error: broken__1.wav" in out


def test_gain_copies_give_identical_verdicts(corpus, tmp_path):
    clips = tmp_path / "clips"
    clips.mkdir()
    src = sorted((corpus / "clips").glob("*__2.wav"))[0]
    x, sr = sf.read(src, dtype="float32")
    prompt_id = src.stem.split("__")[0]
    for k, g in enumerate((0.0, -12.0, -20.0), start=1):
        sf.write(clips / f"{prompt_id}__{k}.wav", x * np.float32(10 ** (g / 20)), sr, subtype="FLOAT")
    res = score_folder(clips, corpus / "prompts.jsonl", tmp_path / "r", _cfg(),
                       opts=ScoreOptions(separation="dsp", family_evidence="none", chance=False))
    outcomes = {e["outcome"] for e in res.events}
    detected = [e["detected_s"] for e in res.events]
    assert len(outcomes) == 1
    hop_s = 512 / 44100
    assert max(detected) - min(detected) <= hop_s + 1e-9



def _summary_of(tmp_path, events, *, chance=True):
    """build_summary over event rows of one clean clip (no tempo, no errors)."""
    from types import SimpleNamespace

    from timingbench.config import load_config
    from timingbench.summary import build_summary

    clips = [{"clip": "a.wav", "duration_ok": True, "error": None, "tempo": None}]
    prompts = tmp_path / "p.jsonl"
    prompts.write_text("{}\n")
    opts = SimpleNamespace(separation="dsp", family_evidence="none", chance=chance, disabled_gates=())
    return build_summary(events, clips, config=load_config(None), opts=opts, unmatched=[], missing=[],
                         prompt_errors=[], parts=[], prompts_path=str(prompts))


def test_table_columns_line_up_for_long_labels(tmp_path):
    from timingbench.summary import format_table

    events = [{"kind": k, "family": "mix", "outcome": o, "p_chance": 0.0}
              for k, o in (("music_start_after_silence", "on_time"), ("music_end", "none"))]
    rows = [ln for ln in format_table(_summary_of(tmp_path, events)).splitlines()
            if ln.startswith(("identity-verified events", "all events", "  kind", "  family"))]
    assert len(rows) == 5
    assert len({len(ln) for ln in rows}) == 1  # every rate column ends in the same place


def test_discounted_rate_is_null_without_chance(tmp_path):
    events = [{"kind": "music_end", "family": "mix", "outcome": "on_time", "p_chance": None}]
    for chance, expected in ((False, None), (True, 1.0)):
        assert _summary_of(tmp_path, events, chance=chance)["p_chance_discounted_on_time_rate"] == expected


def test_part_key_depends_on_model_folders(corpus):
    from timingbench.config import load_config
    from timingbench.prompts import load_prompts, match_clips

    cfg = load_config(None)
    ps = load_prompts(corpus / "prompts.jsonl")
    ref = match_clips(corpus / "clips", ps.prompts).clips[0]
    keys = {runner.part_key(ref, ps.prompts[ref.prompt_id], cfg, ScoreOptions(**kw))
            for kw in ({}, {"demucs_repo": "/m"}, {"clap_dir": "/c"})}
    assert len(keys) == 3

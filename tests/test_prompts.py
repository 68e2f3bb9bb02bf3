"""Tests of the prompt schema (formats §1) and clip matching (formats §2)."""

from __future__ import annotations

import copy
import json

import pytest

from timingbench.cli import main
from timingbench.errors import PromptError
from timingbench.prompts import load_prompts, match_clips, parse_clip_name, parse_prompt

GOOD = {
    "id": "tb1-0042",
    "family": "single_event",
    "text": "Create a tense cinematic electronic track for exactly 30 seconds. "
    "Bring in drums at exactly the 6th second.",
    "style": "cinematic electronic",
    "duration_s": 30.0,
    "events": [
        {"id": "tb1-0042/e1", "kind": "instrument_entry", "target": "drums",
         "family": "percussion", "time_s": 6.0, "tolerance_s": 0.5}
    ],
    "tempo": None,
}


def _with(path: str, value):
    row = copy.deepcopy(GOOD)
    node = row
    keys = path.split(".")
    for k in keys[:-1]:
        node = node[int(k)] if k.isdigit() else node[k]
    last = keys[-1]
    if value is KeyError:
        del node[last]
    else:
        node[last] = value
    return row


def test_spec_example_is_valid():
    p = parse_prompt(GOOD)
    assert p.id == "tb1-0042" and p.events[0].time_s == 6.0 and p.events[0].family == "percussion"


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        ("family", "tempo-ish", "family"),
        ("duration_s", -1, "duration_s"),
        ("duration_s", "30", "duration_s"),
        ("events.0.kind", "drop", "events[0].kind"),
        ("events.0.family", "kazoo", "events[0].family"),
        ("events.0.family", "mix", "events[0].family"),
        ("events.0.time_s", 31.0, "events[0].time_s"),
        ("events.0.time_s", None, "events[0].time_s"),
        ("events.0.tolerance_s", -0.1, "events[0].tolerance_s"),
        ("text", "", "text"),
        ("tempo", {"bpm": -3}, "tempo.bpm"),
        ("events", [], "events"),
    ],
)
def test_rule_breaks_name_id_and_field(path, value, field):
    with pytest.raises(PromptError) as info:
        parse_prompt(_with(path, value))
    msg = str(info.value)
    assert "tb1-0042" in msg and f"'{field}'" in msg


def test_unsorted_events_rejected():
    row = copy.deepcopy(GOOD)
    row["family"] = "event_sequence"
    row["events"] = [dict(GOOD["events"][0], id="a", time_s=10.0), dict(GOOD["events"][0], id="b", time_s=5.0)]
    with pytest.raises(PromptError, match="ordered by time"):
        parse_prompt(row)


def test_mix_kind_needs_mix_family():
    row = _with("events.0.kind", "music_end")
    with pytest.raises(PromptError, match="must be 'mix'"):
        parse_prompt(row)
    row["events"][0]["family"] = "mix"
    assert parse_prompt(row).events[0].kind == "music_end"


def test_bad_rows_do_not_stop_the_others(tmp_path):
    f = tmp_path / "p.jsonl"
    rows = [
        json.dumps(GOOD),
        "{not json",
        json.dumps(_with("id", "tb1-0043") | {"events": [dict(GOOD["events"][0], id="x", kind="nope")]}),
        json.dumps(GOOD),  # duplicate id
        json.dumps(_with("id", "tb1-0044") | {"extra_key": 1, "events": [dict(GOOD["events"][0], id="y")]}),
    ]
    f.write_text("\n".join(rows) + "\n")
    ps = load_prompts(f)
    assert sorted(ps.prompts) == ["tb1-0042", "tb1-0044"]
    assert len(ps.errors) == 3
    assert any(":2:" in str(e) and "JSON" in str(e) for e in ps.errors)
    assert any("duplicate prompt id" in str(e) for e in ps.errors)
    assert ps.prompts["tb1-0044"].raw["extra_key"] == 1  # unknown keys preserved
    assert main(["validate-prompts", str(f)]) == 1


def test_clip_matching(tmp_path):
    for name in ["tb1-0042.wav", "tb1-0042__2.flac", "tb1-0042__1.mp3", "other.wav", "notes.txt",
                 "tb1-0042__b.wav"]:
        (tmp_path / name).write_bytes(b"x")
    m = match_clips(tmp_path, ["tb1-0042", "tb1-0043"])
    assert [(c.clip, c.sample) for c in m.clips] == [
        ("tb1-0042.wav", 0), ("tb1-0042__1.mp3", 1), ("tb1-0042__2.flac", 2)]
    assert m.unmatched == ["notes.txt", "other.wav", "tb1-0042__b.wav"]
    assert m.missing == ["tb1-0043"]
    assert parse_clip_name("a__b.wav") == ("a__b", 0)
    assert parse_clip_name("a__12.ogg") == ("a", 12)


def test_missing_folder(tmp_path):
    with pytest.raises(PromptError, match="not found"):
        match_clips(tmp_path / "none", ["a"])

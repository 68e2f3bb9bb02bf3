"""Tests of the v1 prompt set: the committed file, the generator and `timingbench prompts`."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from timingbench.cli import main
from timingbench.config import Config
from timingbench.errors import ConfigError, ParameterError
from timingbench.prompts import EVENT_KINDS, PROMPT_FAMILIES, load_prompts
from timingbench.promptset import (
    V1_PLAN,
    check_plan,
    composition,
    generate_prompt_set,
    settings_from_config,
)

PROMPTS = Path(__file__).resolve().parent.parent / "prompts" / "timingbench-v1.jsonl"


@pytest.fixture(scope="module")
def committed() -> list[dict]:
    return [json.loads(line) for line in PROMPTS.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_committed_set_is_valid_and_has_the_paper_counts() -> None:
    ps = load_prompts(PROMPTS)
    assert ps.errors == []
    prompts = list(ps.prompts.values())
    assert Counter(p.family for p in prompts) == {"single_event": 100, "event_sequence": 100, "tempo": 50}
    kinds = Counter(e.kind for p in prompts for e in p.events)
    assert sum(kinds.values()) == 399
    assert kinds["instrument_entry"] == 287
    assert kinds["instrument_exit"] == 59
    assert kinds["music_start_after_silence"] == 27
    assert kinds["music_end"] + kinds["music_pause"] == 19
    assert kinds["mix_energy_increase"] == 7
    assert sum(p.tempo_bpm is not None for p in prompts) == 50
    assert all(p.duration_s == 30.0 for p in prompts)
    assert all(2 <= len(p.events) <= 3 for p in prompts if p.family == "event_sequence")


def test_committed_set_equals_generator_output(committed: list[dict], config: Config) -> None:
    rows = generate_prompt_set(seed=int(config.params.prompts.seed), config=config)
    assert rows == committed


def test_no_duplicate_texts_and_unique_ids(committed: list[dict]) -> None:
    texts = [r["text"] for r in committed]
    assert len(set(texts)) == len(texts)
    assert len({r["id"] for r in committed}) == 250


def test_every_family_and_kind_represented_evenly(committed: list[dict], config: Config) -> None:
    fams = Counter(e["family"] for r in committed for e in r["events"])
    instrument = list(config.params.prompts.instrument_families)
    assert len(instrument) == 9
    counts = [fams[f] for f in instrument]
    assert min(counts) >= 1 and max(counts) - min(counts) <= 2, counts
    kinds = {e["kind"] for r in committed for e in r["events"]}
    assert kinds == set(EVENT_KINDS)
    # every prompt family but 'controls' (the v1 set carries no time-varying controls)
    assert {r["family"] for r in committed} == set(PROMPT_FAMILIES) - {"controls"}
    styles = Counter(r["style"] for r in committed)
    assert 35 <= len(styles) <= 45


def test_times_leave_room_for_the_search_window(committed: list[dict], config: Config) -> None:
    window = float(config.params.search.window_s)
    gap = float(config.params.prompts.min_sibling_gap_s)
    for r in committed:
        times = [e["time_s"] for e in r["events"]]
        assert all(window <= t <= r["duration_s"] - window for t in times), r["id"]
        assert all(b - a >= gap for a, b in zip(times, times[1:], strict=False)), r["id"]
        for e in r["events"]:
            assert e["tolerance_s"] == config.params.search.default_tolerance_s
            assert e["id"].startswith(r["id"] + "/")


def test_text_names_every_target_and_time(committed: list[dict]) -> None:
    for r in committed:
        text = r["text"]
        assert "30" in text and ("instrumental" in text or "no vocals" in text), r["id"]
        if r["tempo"] is not None:
            assert f"{r['tempo']['bpm']:g} BPM" in text
        for e in r["events"]:
            t = e["time_s"]
            spoken = [f"{t:g} s", f"{t:g}-second", f"{t:g} seconds", f"0:{int(t):02d}", f"{int(t)}th", f"{int(t)}st",
                      f"{int(t)}nd", f"{int(t)}rd"]
            assert any(s in text for s in spoken), (r["id"], t)
            if e["family"] != "mix":
                assert e["target"] in text, (r["id"], e["target"])


def test_generator_is_deterministic_and_seed_changes_wording_only(config: Config) -> None:
    a = generate_prompt_set(seed=7, config=config)
    b = generate_prompt_set(seed=7, config=config)
    c = generate_prompt_set(seed=8, config=config)
    assert a == b
    assert [r["text"] for r in a] != [r["text"] for r in c]
    kinds = [Counter(e["kind"] for r in rows for e in r["events"]) for rows in (a, c)]
    assert kinds[0] == kinds[1]


def test_plan_totals_are_checked_against_config(config: Config) -> None:
    s = settings_from_config(config)
    check_plan(V1_PLAN, settings=s)
    broken = list(V1_PLAN)
    broken[0] = ("single_event", ("in",), 67)
    with pytest.raises(ConfigError, match="single_event"):
        check_plan(broken, settings=s)


def test_negative_seed_rejected(config: Config) -> None:
    with pytest.raises(ParameterError, match="seed"):
        generate_prompt_set(seed=-1, config=config)


def test_composition_counts_match(config: Config) -> None:
    ps = load_prompts(PROMPTS)
    comp = composition(ps.prompts.values(), default_tolerance_s=0.5)
    assert comp.n_events == 399
    assert comp.events_by_kind["instrument_entry"] == {"single_event": 68, "event_sequence": 190, "tempo": 29}
    assert comp.min_sibling_gap_s is not None and comp.min_sibling_gap_s >= 6.0


def test_cli_generate_and_stats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "p.jsonl"
    assert main(["prompts", "generate", "--seed", "3", "--out", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 250
    capsys.readouterr()
    assert main(["prompts", "stats", str(PROMPTS)]) == 0
    table = capsys.readouterr().out
    assert "250 prompts, 399 timed events, 50 tempo targets" in table
    line = next(x for x in table.splitlines() if x.startswith("instrument_entry"))
    assert line.split()[1:] == ["68", "190", "29", "287"]


def test_cli_stats_reports_rejected_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    rows = PROMPTS.read_text().splitlines()[:3]
    broken = json.loads(rows[0])
    broken["events"][0]["time_s"] = 99.0
    bad.write_text("\n".join([json.dumps(broken), *rows[1:]]) + "\n")
    assert main(["prompts", "stats", str(bad)]) == 1
    captured = capsys.readouterr()
    assert "2 prompts" in captured.out
    assert "time_s" in captured.err

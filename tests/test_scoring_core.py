"""Tests of search windows, outcome decisions, chance draws and gates on plain arrays."""

from __future__ import annotations

import numpy as np
import pytest

from timingbench.curves import Grid, accent, falling_crossings, rising_crossings
from timingbench.gates import absence_before, level_change, persistence
from timingbench.params.detectors import StemParams
from timingbench.prompts import parse_prompt
from timingbench.scoring import chance_times, decide, search_window
from timingbench.verdicts import Candidate


def _stem(config) -> StemParams:
    return config.params.stem


def _prompt(times):
    return parse_prompt({
        "id": "p", "family": "event_sequence" if len(times) > 1 else "single_event", "text": "t",
        "duration_s": 30.0,
        "events": [{"id": f"p/e{i}", "kind": "instrument_entry", "target": "drums",
                    "family": "percussion", "time_s": t} for i, t in enumerate(times)],
    })


@pytest.mark.parametrize(
    ("times", "index", "expected"),
    [
        ([10.0], 0, (5.0, 15.0)),
        ([2.0], 0, (0.0, 7.0)),
        ([28.0], 0, (23.0, 30.0)),
        ([6.0, 10.0], 0, (1.0, 8.0)),   # clamped to half the 4 s gap on the right
        ([6.0, 10.0], 1, (8.0, 15.0)),
        ([5.0, 12.0, 14.0], 1, (8.5, 13.0)),
        # siblings at the same time do not clamp each other; the later one still does
        ([10.0, 10.0, 20.0], 0, (5.0, 15.0)),
        ([10.0, 10.0, 20.0], 1, (5.0, 15.0)),
        ([10.0, 10.0, 14.0], 1, (5.0, 12.0)),
    ],
)
def test_search_window(config, times, index, expected):
    p = _prompt(times)
    assert search_window(p.events, index, params=config.params.search, analysed_s=30.0) == pytest.approx(expected)


def test_decide_prefers_nearest_passing_candidate():
    far = Candidate(9.0, {"absence_before": "pass"})
    near_bad = Candidate(6.1, {"absence_before": "fail", "persistence": "pass"})
    mid = Candidate(6.8, {"absence_before": "pass", "persistence": "exempt"})
    v = decide([far, near_bad, mid], instructed_s=6.0, tolerance_s=0.5)
    assert v.outcome == "off_time" and v.detected_s == 6.8 and v.error_s == pytest.approx(0.8)
    assert v.rejected_by is None


def test_decide_none_reports_first_failing_gate():
    c = Candidate(6.1, {"absence_before": "pass", "persistence": "fail", "level_change": "fail"})
    v = decide([c], instructed_s=6.0, tolerance_s=0.5)
    assert v.outcome == "none" and v.rejected_by == "persistence" and v.detected_s is None
    assert decide([], instructed_s=6.0, tolerance_s=0.5).rejected_by == "detection"
    # disabling the failing gates turns the candidate into a credit
    v2 = decide([c], instructed_s=6.0, tolerance_s=0.5, disabled_gates={"persistence", "level_change"})
    assert v2.outcome == "on_time"


@pytest.mark.parametrize(("t", "outcome"), [(6.5, "on_time"), (5.5, "on_time"), (6.500001, "off_time"),
                                             (6.0 + 0.1 + 0.2 + 0.2, "on_time")])
def test_tolerance_edges_are_inclusive(t, outcome):
    assert decide([Candidate(t, {})], instructed_s=6.0, tolerance_s=0.5).outcome == outcome


def test_chance_times_are_seeded_and_avoid_the_instruction(config):
    chance = config.params.chance
    a = chance_times(audio_key="x", event_id="e", instructed_s=6.0, lo_s=0.0, hi_s=30.0, params=chance)
    b = chance_times(audio_key="x", event_id="e", instructed_s=6.0, lo_s=0.0, hi_s=30.0, params=chance)
    c = chance_times(audio_key="y", event_id="e", instructed_s=6.0, lo_s=0.0, hi_s=30.0, params=chance)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert len(a) == chance.draws and np.all(np.abs(a - 6.0) >= 1.0) and np.all((a >= 0) & (a <= 30))


def test_crossings_and_snap():
    mask = np.array([0, 0, 1, 1, 0, 1, 1, 1, 0], bool)
    assert rising_crossings(mask, 0, 9) == [2, 5]
    assert falling_crossings(mask, 0, 9) == [4, 8]
    onset = np.array([0, 0.1, 0.05, 1.0, 0.2, 2.0, 0.1])
    assert accent(onset, 0, 7, rel_height=0.3) == 3
    assert accent(np.zeros(5), 0, 5, rel_height=0.3) is None


def test_gates_on_a_step(config):
    grid = Grid(sr=44100, hop=512, n_frames=2000)
    stem = _stem(config)
    env = np.full(2000, -60.0)
    on = grid.frame(10.0)
    env[on:] = -10.0
    present = env > -30
    assert absence_before(env, grid, t_s=10.0, ref_db=-10.0, params=stem.absence)[0] == "pass"
    assert persistence(present, grid, t_s=10.0, clip_end_s=23.0, want_present=True,
                       params=stem.persistence)[0] == "pass"
    v, e = level_change(env, grid, t_s=10.0, rising=True, params=stem.level)
    assert v == "pass" and e["change_db"] > 40
    # pre-existing source: absence-before fails at both scales
    env2 = np.full(2000, -12.0)
    v, e = absence_before(env2, grid, t_s=10.0, ref_db=-10.0, params=stem.absence)
    assert v == "fail" and e == {"strict_db": pytest.approx(-2.0), "whole_db": pytest.approx(-2.0)}
    # a short burst does not persist
    burst = np.zeros(2000, bool)
    burst[on : on + 20] = True
    assert persistence(burst, grid, t_s=10.0, clip_end_s=23.0, want_present=True,
                       params=stem.persistence)[0] == "fail"
    # a constant the stem detector reads, switched off -> that check is skipped
    off = _stem(config.with_disabled("stem.level_min_change_db"))
    assert level_change(np.zeros(2000), grid, t_s=10.0, rising=True, params=stem.level)[0] == "fail"
    assert level_change(np.zeros(2000), grid, t_s=10.0, rising=True, params=off.level) == ("pass", {"change_db": None})


@pytest.mark.parametrize(("below_db", "verdict"), [(1.9, "pass"), (2.0, "pass"), (2.1, "fail")])
def test_absence_threshold_is_the_detector_constant(config, below_db, verdict):
    # the strict level sits exactly 2 dB under the reference: the gate's own section decides
    grid = Grid(sr=44100, hop=512, n_frames=2000)
    env = np.full(2000, -12.0)
    cfg = config.with_value("stem.absence_strict_below_ref_db", below_db) \
        .with_disabled("stem.absence_whole_below_ref_db")
    v, e = absence_before(env, grid, t_s=10.0, ref_db=-10.0, params=_stem(cfg).absence)
    assert (v, e["strict_db"], e["whole_db"]) == (verdict, pytest.approx(-2.0), None)


def test_absence_before_fails_when_nothing_precedes(config):
    grid = Grid(sr=44100, hop=512, n_frames=2000)
    env = np.full(2000, -60.0)
    v, e = absence_before(env, grid, t_s=0.1, ref_db=-10.0, params=_stem(config).absence)
    assert v == "fail" and e == {"strict_db": None, "whole_db": None}


def test_persistence_min_span_comes_from_config(config):
    grid = Grid(sr=44100, hop=512, n_frames=2000)
    present = np.ones(2000, bool)
    # 0.8 s of a 2 s window left: fails at the shipped 0.5, passes at 0.3
    assert _stem(config).persistence.persistence_min_span_fraction == 0.5
    assert persistence(present, grid, t_s=10.0, clip_end_s=10.8, want_present=True,
                       params=_stem(config).persistence)[0] == "fail"
    cfg = config.with_value("stem.persistence_min_span_fraction", 0.3)
    assert persistence(present, grid, t_s=10.0, clip_end_s=10.8, want_present=True,
                       params=_stem(cfg).persistence)[0] == "pass"


def test_candidates_outside_the_window_are_not_scored(config, monkeypatch):
    import timingbench.scoring as scoring
    from timingbench.scoring import score_event
    from timingbench.verdicts import Candidate

    p = _prompt([6.0, 10.0])  # event 0 searches [1, 8]
    bank = type("B", (), {"duration_s": 30.0})()
    monkeypatch.setattr(scoring, "run_detector", lambda *a, **k: [Candidate(8.3), Candidate(6.2)])
    verdict, _ = score_event(bank, p, 0, config, with_chance=False)
    assert verdict.outcome == "on_time" and verdict.detected_s == pytest.approx(6.2)
    monkeypatch.setattr(scoring, "run_detector", lambda *a, **k: [Candidate(8.3)])
    verdict, _ = score_event(bank, p, 0, config, with_chance=False)
    assert verdict.outcome == "none" and verdict.rejected_by == "detection"


@pytest.mark.parametrize(("key", "value", "match"), [
    ("windows.persistence_s", 0.0, "persistence_s' must be positive"),
    ("windows.strict_s", 0.0, "strict_s' must be positive"),
    ("stem.persistence_min_span_fraction", 1.5, r"persistence_min_span_fraction' must lie in \[0, 1\]"),
    ("stem.absence_strict_percentile", 101.0, "must be a percentile"),
    ("percussion.absence_guard_s", -0.1, "must not be negative"),
    ("stem.level_window_s", 0.0, "must be positive"),
    ("stem.level_window_s", -1.0, "level_window_s. field .value. must not be negative"),
])
def test_gate_parameters_are_range_checked(config, key, value, match):
    from timingbench.errors import ConfigError

    section = key.split(".")[0]
    with pytest.raises(ConfigError, match=match):
        getattr(config.with_value(key, value).params, section)


def test_a_share_above_one_is_a_valid_tightening(config):
    # nothing can hold more than all of its frames: the gate then always fails
    stem = _stem(config.with_value("stem.persistence_min_fraction", 1.01))
    grid = Grid(sr=44100, hop=512, n_frames=2000)
    assert persistence(np.ones(2000, bool), grid, t_s=10.0, clip_end_s=23.0, want_present=True,
                       params=stem.persistence)[0] == "fail"


@pytest.mark.parametrize("key", ["mix.cut_max_fall_s", "mix.quiet_min_fraction", "stem.step_min_db",
                                 "tonal.min_rise_db"])
def test_an_adopted_variant_builds_as_a_full_build(config, key):
    # the sweep builds a variant's detector parameters from the base's with only the changed
    # section rebuilt (DetectorParams.adopt); the result must equal building it from scratch
    from timingbench.scoring import DetectorParams

    section = key.split(".")[0]
    base = DetectorParams.of(config)
    adopted, fresh = config.with_disabled(key), config.with_disabled(key)
    base.adopt(adopted, section)
    got = DetectorParams.of(adopted)
    assert got == DetectorParams.of(fresh)
    assert got != base

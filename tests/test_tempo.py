"""Tempo: trimmed-IBI tempo, beat-line tempo, pulse and stability, ladder, octave equivalence."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from timingbench.audio import load_clip
from timingbench.cli import main
from timingbench.config import Config
from timingbench.detectors.tempo import (
    REASON_NO_PULSE,
    REASON_SILENT,
    REASON_TOO_FEW_BEATS,
    REASON_TOO_SHORT,
    TempoEstimate,
    beat_stability,
    estimate_tempo,
    octave_match,
    relative_error_pct,
    score_tempo,
    tempo_from_beat_line,
    tempo_from_beats,
    trimmed_intervals,
)
from timingbench.errors import ParameterError
from timingbench.render.reference_signals import (
    click_track,
    click_track_at,
    drum_pattern,
    drum_pattern_at,
)

SR = 44100


def _est(bpm: float | None, reason: str | None = None) -> TempoEstimate:
    return TempoEstimate(bpm, np.empty(0), reason, {"steady": bpm is not None})


def _mean_bpm(beats: np.ndarray) -> float:
    """Mean tempo of a beat grid: beats per minute over its first-to-last span."""
    return 60.0 * (beats.size - 1) / float(beats[-1] - beats[0])


def _ritardando(bpm: float, *, duration_s: float, slow_pct: float, over_beats: int) -> np.ndarray:
    """Beats at ``bpm`` whose last ``over_beats`` intervals slow linearly by ``slow_pct``."""
    n = int((duration_s - 0.5) * bpm / 60.0)
    tempi = np.full(n, bpm)
    tempi[-over_beats:] = bpm * (1.0 - np.linspace(0.0, slow_pct / 100.0, over_beats))
    return 0.2 + np.concatenate([[0.0], np.cumsum(60.0 / tempi)])


def _humanised(bpm: float, *, duration_s: float, jitter_ms: float, seed: int) -> np.ndarray:
    """A ``bpm`` grid with each beat moved uniformly within +-``jitter_ms``."""
    grid = 0.2 + np.arange(int((duration_s - 0.5) * bpm / 60.0)) * 60.0 / bpm
    rng = np.random.default_rng(seed)
    return grid + rng.uniform(-jitter_ms / 1000.0, jitter_ms / 1000.0, grid.size)


# ---------------------------------------------------------------- metric functions


def test_tempo_from_exact_beats_is_exact() -> None:
    beats = 0.3 + np.arange(40) * 60.0 / 97.3
    assert tempo_from_beats(beats, trim_pct=(5.0, 95.0)) == pytest.approx(97.3, rel=1e-12)


def test_trimming_drops_pickup_artifacts() -> None:
    beats = np.concatenate([[0.0, 0.31], 0.31 + 0.5 * np.arange(1, 60), [30.1]])
    kept = trimmed_intervals(beats, trim_pct=(5.0, 95.0))
    assert kept.min() == pytest.approx(0.5) and kept.max() == pytest.approx(0.5)
    assert tempo_from_beats(beats, trim_pct=(5.0, 95.0)) == pytest.approx(120.0)
    untrimmed = tempo_from_beats(beats, trim_pct=(0.0, 100.0))
    assert untrimmed is not None and abs(untrimmed - 120.0) > 1.0


def test_beat_line_is_exact_on_exact_beats_and_ignores_edge_artifacts() -> None:
    beats = 0.3 + np.arange(40) * 60.0 / 97.3
    assert tempo_from_beat_line(beats, trim_pct=(5.0, 95.0)) == pytest.approx(97.3, rel=1e-12)
    pickup = np.concatenate([[0.0, 0.31], 0.31 + 0.5 * np.arange(1, 60), [30.1]])
    assert tempo_from_beat_line(pickup, trim_pct=(5.0, 95.0)) == pytest.approx(120.0, rel=1e-12)


def test_beat_line_counts_a_skipped_beat_and_drops_an_extra_one() -> None:
    grid = 0.2 + 0.5 * np.arange(50)
    skipped = np.delete(grid, 20)
    assert tempo_from_beat_line(skipped, trim_pct=(5.0, 95.0)) == pytest.approx(120.0, rel=1e-12)
    extra = np.sort(np.append(grid, grid[30] + 0.1))
    assert tempo_from_beat_line(extra, trim_pct=(5.0, 95.0)) == pytest.approx(120.0, rel=1e-12)
    assert tempo_from_beat_line([1.0, 1.5], trim_pct=(5.0, 95.0)) is None


def test_beat_line_is_unmoved_by_a_per_sound_lag_the_reciprocal_mean_is_not() -> None:
    # the tracker placing each sound of a bar at its own lag (bar-periodic errors): the
    # tempo is still exact, the trimmed reciprocal mean is pulled off it
    k = np.arange(55)
    beats = 0.3 + k * 60.0 / 110.0 + np.array([0.0, 0.03, -0.01, 0.02])[k % 4]
    paper = tempo_from_beats(beats, trim_pct=(5.0, 95.0))
    line = tempo_from_beat_line(beats, trim_pct=(5.0, 95.0))
    assert paper is not None and line is not None
    assert abs(line - 110.0) / 110.0 * 100.0 < 0.01
    assert abs(paper - 110.0) / 110.0 * 100.0 > 0.06


def test_tempo_from_one_beat_warns_and_returns_none() -> None:
    with pytest.warns(UserWarning, match="fewer than two beats"):
        assert tempo_from_beats([1.0], trim_pct=(5.0, 95.0)) is None


@pytest.mark.parametrize(
    ("beats", "match"),
    [([1.0, 0.5, 2.0], "strictly increasing"), ([0.0, np.nan], "finite"), ([[0.0, 1.0]], "1-D")],
)
def test_malformed_beats_raise(beats: list, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        trimmed_intervals(beats, trim_pct=(5.0, 95.0))


def test_stability_steady_grid(config: Config) -> None:
    beats = 0.2 + 0.5 * np.arange(60)
    s = beat_stability(beats, beat_activation=np.full(60, 0.7), tempo=config.params.tempo)
    assert s["steady"] and s["ibi_cv"] == pytest.approx(0.0, abs=1e-9)
    assert s["longest_steady_run_s"] == pytest.approx(29.5)
    assert s["n_beats"] == 60


def test_stability_flags_tempo_change_and_jitter(config: Config, rng: np.random.Generator) -> None:
    change = np.concatenate([np.arange(0.1, 15.0, 0.6), np.arange(15.0, 30.0, 60.0 / 130.0)])
    s = beat_stability(change, beat_activation=None, tempo=config.params.tempo)
    assert not s["steady"] and any("ibi_cv" in b for b in s["unsteady_because"])
    assert s["has_pulse"]  # unsteady, but a pulse: the estimate is still given
    jitter = np.sort(0.1 + 0.5 * np.arange(60) + rng.normal(0.0, 0.03, 60))
    s = beat_stability(jitter, beat_activation=None, tempo=config.params.tempo)
    assert not s["steady"] and s["steady_run_fraction"] < 0.6 and s["has_pulse"]


def test_stability_flags_weak_activation(config: Config) -> None:
    beats = 0.2 + 0.5 * np.arange(60)
    s = beat_stability(beats, beat_activation=np.full(60, 0.02), tempo=config.params.tempo)
    assert not s["steady"] and not s["has_pulse"] and s["n_heard_beats"] == 0
    assert any("beat activation" in r for r in s["unsteady_because"])
    off = config.with_disabled("tempo.min_beat_activation")
    assert beat_stability(beats, beat_activation=np.full(60, 0.02), tempo=off.params.tempo)["steady"]


# ---------------------------------------------------------------- scoring


@pytest.mark.parametrize(
    ("estimate", "within", "credited"),
    [
        (120.0, {"2": True, "3": True, "5": True}, True),
        (122.4, {"2": True, "3": True, "5": True}, True),  # exactly +2 %: on the edge counts
        (123.6, {"2": False, "3": True, "5": True}, True),  # exactly +3 %
        (116.4, {"2": False, "3": True, "5": True}, True),  # exactly -3 %
        (123.61, {"2": False, "3": False, "5": True}, False),
        (126.0, {"2": False, "3": False, "5": True}, False),  # exactly +5 %
        (126.1, {"2": False, "3": False, "5": False}, False),
    ],
)
def test_ladder_edges(config: Config, estimate: float, within: dict, credited: bool) -> None:
    row = score_tempo(_est(estimate), target_bpm=120.0, tolerance_pct=3.0, tempo=config.params.tempo)
    assert row["within_pct"] == within
    assert row["credited"] is credited


@pytest.mark.parametrize(
    ("estimate", "factor"),
    [(60.0, 0.5), (240.0, 2.0), (40.0, 1 / 3), (360.0, 3.0), (120.0, 1.0), (61.7, 0.5), (61.9, None), (90.0, None)],
)
def test_half_and_double_time_fail_headline_but_match_octave(
    config: Config, estimate: float, factor: float | None
) -> None:
    row = score_tempo(_est(estimate), target_bpm=120.0, tolerance_pct=3.0, tempo=config.params.tempo)
    assert row["credited"] is (factor == 1.0)
    if factor is None:
        assert row["octave_equivalent"] is None
    else:
        assert row["octave_equivalent"] == pytest.approx(factor)


def test_no_estimate_is_never_credited(config: Config) -> None:
    row = score_tempo(_est(None, "no steady beat: x"), target_bpm=58.0, tolerance_pct=3.0, tempo=config.params.tempo)
    assert row["estimate_bpm"] is None and row["credited"] is False
    assert row["octave_equivalent"] is None and not any(row["within_pct"].values())
    assert row["reason"] == "no steady beat: x"
    assert row["precise_bpm"] is None and row["precise_error_pct"] is None
    json.dumps(row)


def test_precise_estimate_is_reported_beside_never_credited(config: Config) -> None:
    est = TempoEstimate(126.0, np.empty(0), None, {"steady": True}, precise_bpm=120.0)
    row = score_tempo(est, target_bpm=120.0, tolerance_pct=3.0, tempo=config.params.tempo)
    assert row["precise_bpm"] == 120.0 and row["precise_error_pct"] == pytest.approx(0.0)
    assert row["error_pct"] == pytest.approx(5.0) and row["credited"] is False
    assert row["within_pct"]["3"] is False


def test_score_rejects_bad_target(config: Config) -> None:
    with pytest.raises(ParameterError, match="target_bpm"):
        score_tempo(_est(120.0), target_bpm=0.0, tolerance_pct=3.0, tempo=config.params.tempo)
    with pytest.raises(ParameterError, match="tolerance_pct"):
        score_tempo(_est(120.0), target_bpm=120.0, tolerance_pct=-1.0, tempo=config.params.tempo)


def test_relative_error_and_octave_match_helpers() -> None:
    assert relative_error_pct(99.0, 100.0, decimals=6) == pytest.approx(-1.0)
    assert octave_match(100.0, 100.0, factors=[0.5, 1.0, 2.0], tolerance_pct=0.0, decimals=6) == 1.0
    with pytest.raises(ParameterError, match="positive"):
        octave_match(100.0, 100.0, factors=[0.0], tolerance_pct=3.0, decimals=6)


# ---------------------------------------------------------------- estimator on audio


@pytest.mark.parametrize("bpm", [97.3, 143.7])
def test_exact_click_references_within_paper_bound(config: Config, bpm: float) -> None:
    est = estimate_tempo(click_track(bpm=bpm, duration_s=30.0), sr=SR, tempo=config.params.tempo,
                         audio=config.params.audio)
    assert est.estimate_bpm is not None and est.reason is None
    bound = float(config.params.tempo.reference_max_error_pct)
    assert abs(est.estimate_bpm - bpm) / bpm * 100.0 <= bound
    assert est.precise_bpm is not None
    precise_bound = float(config.params.tempo.reference_max_precise_error_pct)
    assert abs(est.precise_bpm - bpm) / bpm * 100.0 <= precise_bound
    assert est.beat_stability["steady"]
    np.testing.assert_allclose(np.diff(est.beats_s), 60.0 / bpm, atol=0.006)


def test_half_time_rendering_is_not_credited(config: Config) -> None:
    est = estimate_tempo(click_track(bpm=60.0, duration_s=20.0), sr=SR, tempo=config.params.tempo,
                         audio=config.params.audio)
    row = score_tempo(est, target_bpm=120.0, tolerance_pct=3.0, tempo=config.params.tempo)
    assert row["estimate_bpm"] == pytest.approx(60.0, rel=1e-3)
    assert row["credited"] is False and row["octave_equivalent"] == 0.5


def test_silent_and_short_clips_give_no_number(config: Config) -> None:
    est = estimate_tempo(np.zeros(10 * SR, dtype=np.float32), sr=SR, tempo=config.params.tempo,
                         audio=config.params.audio)
    assert est.estimate_bpm is None and est.reason == REASON_SILENT
    est = estimate_tempo(click_track(bpm=120.0, duration_s=0.5), sr=SR, tempo=config.params.tempo,
                         audio=config.params.audio)
    assert est.estimate_bpm is None and est.reason is not None
    assert est.reason.startswith(REASON_TOO_SHORT)


def test_too_few_beats(config: Config) -> None:
    # 3 clicks then silence: the tracker finds too few beats or no steady stream
    x = click_track(bpm=120.0, duration_s=1.2)
    x = np.concatenate([x, np.zeros(2 * SR, dtype=np.float32)])
    est = estimate_tempo(x, sr=SR, tempo=config.params.tempo, audio=config.params.audio)
    assert est.estimate_bpm is None and est.reason is not None
    assert est.reason.startswith(REASON_TOO_FEW_BEATS)
    assert est.beat_stability["n_heard_beats"] < 5


def test_beatless_drone_gives_reason_not_number(config: Config) -> None:
    t = np.arange(10 * SR) / SR
    drone = (0.3 * np.sin(2 * np.pi * 220.0 * t)).astype(np.float32)
    est = estimate_tempo(drone, sr=SR, tempo=config.params.tempo, audio=config.params.audio)
    assert est.estimate_bpm is None and est.reason is not None
    # the DBN still decodes a regular beat stream in a drone; the network does not hear it
    assert est.beat_stability["n_beats"] >= 5 and est.beat_stability["n_heard_beats"] == 0
    assert est.reason.startswith(REASON_TOO_FEW_BEATS)
    assert est.beat_stability["steady"] is False


def test_noise_and_chord_pad_give_no_number(config: Config, rng: np.random.Generator) -> None:
    noise = (0.3 * rng.standard_normal(20 * SR)).astype(np.float32)
    t = np.arange(20 * SR) / SR
    pad = np.zeros_like(t)
    chords = [(220.0, 261.6, 329.6), (174.6, 220.0, 261.6), (196.0, 246.9, 293.7), (164.8, 196.0, 246.9)]
    for i, chord in enumerate(chords * 2):  # 2.5 s chords, triangular cross-fades
        env = np.clip(1.0 - np.abs(t - (2.5 * i + 1.25)) / 2.5, 0.0, 1.0)
        for f in chord:
            pad += 0.1 * env * np.sin(2 * np.pi * f * t)
    for x in (noise, pad.astype(np.float32)):
        est = estimate_tempo(x, sr=SR, tempo=config.params.tempo, audio=config.params.audio)
        assert est.estimate_bpm is None and est.precise_bpm is None and est.reason is not None
        assert est.reason.startswith((REASON_TOO_FEW_BEATS, REASON_NO_PULSE))
        assert est.beat_stability["has_pulse"] is False
        row = score_tempo(est, target_bpm=120.0, tolerance_pct=3.0, tempo=config.params.tempo)
        assert row["credited"] is False


def test_pulse_floor_withholds_when_the_network_hears_little(config: Config) -> None:
    # a 6 s burst of clicks then 24 s of a quiet drone: enough heard beats, but the
    # median activation over the decoded beats is below the floor
    x = click_track(bpm=120.0, duration_s=30.0)
    t = np.arange(x.size) / SR
    x = np.where(t < 6.0, x, 0.05 * np.sin(2 * np.pi * 220.0 * t)).astype(np.float32)
    est = estimate_tempo(x, sr=SR, tempo=config.params.tempo, audio=config.params.audio)
    s = est.beat_stability
    assert s["n_heard_beats"] >= 5 and s["beat_activation"] < float(config.params.tempo.min_beat_activation)
    assert est.estimate_bpm is None and est.reason is not None
    assert est.reason.startswith(REASON_NO_PULSE)


@pytest.mark.parametrize(
    ("make", "beats"),
    [
        (click_track_at, _ritardando(120.0, duration_s=30.0, slow_pct=2.0, over_beats=32)),
        (drum_pattern_at, _ritardando(84.0, duration_s=30.0, slow_pct=2.0, over_beats=24)),
    ],
    ids=["click-120-rit", "drums-84-rit"],
)
def test_gentle_ritardando_gets_an_estimate_within_1pct(
    config: Config, make: Callable[..., np.ndarray], beats: np.ndarray
) -> None:
    est = estimate_tempo(make(beats, duration_s=30.0), sr=SR, tempo=config.params.tempo, audio=config.params.audio)
    mean = _mean_bpm(beats)
    assert est.estimate_bpm is not None and est.precise_bpm is not None, est.reason
    assert abs(est.estimate_bpm - mean) / mean * 100.0 <= 1.0
    assert abs(est.precise_bpm - mean) / mean * 100.0 <= 1.0


@pytest.mark.parametrize("bpm", [84.0, 120.0, 160.0])
def test_humanised_drums_get_an_estimate_within_1pct(config: Config, bpm: float) -> None:
    # +-15 ms of timing spread: the beat stream is unsteady by the stability statistics,
    # and the estimate is still given (the paper reports stability beside the tempo)
    beats = _humanised(bpm, duration_s=30.0, jitter_ms=15.0, seed=1)
    est = estimate_tempo(drum_pattern_at(beats, duration_s=30.0), sr=SR, tempo=config.params.tempo,
                         audio=config.params.audio)
    mean = _mean_bpm(beats)
    assert est.estimate_bpm is not None and est.precise_bpm is not None, est.reason
    assert abs(est.estimate_bpm - mean) / mean * 100.0 <= 1.0
    assert abs(est.precise_bpm - mean) / mean * 100.0 <= 1.0
    assert est.beat_stability["steady"] is False and est.beat_stability["has_pulse"] is True
    row = score_tempo(est, target_bpm=bpm, tolerance_pct=3.0, tempo=config.params.tempo)
    assert row["credited"] is True


def test_estimate_rejects_bad_input(config: Config) -> None:
    with pytest.raises(ParameterError, match="mono"):
        estimate_tempo(np.zeros((2, SR), dtype=np.float32), sr=SR, tempo=config.params.tempo, audio=config.params.audio)
    with pytest.raises(ParameterError, match="NaN"):
        estimate_tempo(np.full(SR, np.nan, dtype=np.float32), sr=SR, tempo=config.params.tempo,
                       audio=config.params.audio)


# ---------------------------------------------------------------- real audio


def test_808_kick_mp3_is_120_bpm(config: Config, realdata: Path) -> None:
    clip = load_clip(realdata / "beatnet" / "808kick120bpm.mp3", config)
    est = estimate_tempo(clip.samples, sr=clip.sr, tempo=config.params.tempo, audio=config.params.audio)
    assert est.estimate_bpm is not None
    assert abs(est.estimate_bpm - 120.0) / 120.0 * 100.0 < 0.5
    row = score_tempo(est, target_bpm=120.0, tolerance_pct=3.0, tempo=config.params.tempo)
    assert row["credited"] and row["within_pct"]["2"] and row["beat_stability"]["steady"]
    assert est.precise_bpm is not None and abs(est.precise_bpm - 120.0) / 120.0 * 100.0 < 0.5


def test_vocadito_singing_is_estimated_and_flagged_unsteady(config: Config, realdata: Path) -> None:
    # solo singing carries a pulse the network hears (median activation ~0.24), so it
    # gets an estimate; its stability statistics say the beat stream is not steady
    clip = load_clip(realdata / "vocadito" / "Audio" / "vocadito_1.wav", config)
    est = estimate_tempo(clip.samples, sr=clip.sr, tempo=config.params.tempo, audio=config.params.audio)
    assert est.estimate_bpm is not None and est.reason is None
    s = est.beat_stability
    assert s["has_pulse"] is True and s["steady"] is False
    assert s["ibi_cv"] > float(config.params.tempo.max_ibi_cv)
    assert any("ibi_cv" in b for b in s["unsteady_because"])


# ---------------------------------------------------------------- command


def test_tempo_check_command_synth(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["tempo-check", "--source", "synth", "--out", str(tmp_path), "--tempi", "143.7",
               "--kinds", "click,double_time", "--duration-s", "20"])
    out = json.loads((tmp_path / "tempo-check.json").read_text())
    summary = out["summary"]
    assert summary["n_exact"] == 1 and summary["n_variants"] == 3
    assert summary["max_abs_error_pct"] <= summary["bound_pct"]
    assert summary["max_abs_precise_error_pct"] <= summary["precise_bound_pct"]
    assert summary["precise_ok"] and summary["variants_ok"] and rc == 0
    assert out["references"][0]["precise_bpm"] is not None
    assert "max |error|" in capsys.readouterr().out


def test_tempo_check_rejects_unknown_kind(tmp_path: Path) -> None:
    assert main(["tempo-check", "--source", "synth", "--out", str(tmp_path), "--kinds", "waltz"]) == 1


def test_tempo_check_soundfont_needs_rendered_references(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["tempo-check", "--source", "synth", "--out", str(tmp_path), "--soundfont", "x.sf2"])
    assert rc == 1 and "--soundfont" in capsys.readouterr().err


# ---------------------------------------------------------------- slow sweeps


@pytest.mark.slow
def test_click_sweep_50_to_174_within_paper_bound(config: Config) -> None:
    bound = float(config.params.tempo.reference_max_error_pct)
    errors = []
    for i, bpm in enumerate(np.arange(50.0, 175.0, 4.3)):
        x = click_track(bpm=float(bpm), duration_s=30.0, offset_s=0.05 + 0.0131 * i)
        est = estimate_tempo(x, sr=SR, tempo=config.params.tempo, audio=config.params.audio)
        assert est.estimate_bpm is not None, (bpm, est.reason)
        errors.append(abs(est.estimate_bpm - bpm) / bpm * 100.0)
    assert max(errors) <= bound


def test_drum_pattern_exact_at_target_at_range_ends(config: Config) -> None:
    # every hit on a beat: the headline estimate is the target itself at 50 and 174 BPM
    bound = float(config.params.tempo.reference_max_error_pct)
    for bpm in (50.0, 174.0):
        est = estimate_tempo(drum_pattern(bpm=bpm, duration_s=20.0), sr=SR, tempo=config.params.tempo,
                             audio=config.params.audio)
        row = score_tempo(est, target_bpm=bpm, tolerance_pct=3.0, tempo=config.params.tempo)
        assert row["credited"] is True and row["octave_equivalent"] == 1.0
        assert abs(row["estimate_bpm"] - bpm) / bpm * 100.0 <= bound


@pytest.mark.slow
def test_drum_pattern_grid_within_paper_bound(config: Config) -> None:
    bound = float(config.params.tempo.reference_max_error_pct)
    for bpm in config.params.tempo.reference_tempi_bpm:
        est = estimate_tempo(drum_pattern(bpm=float(bpm), duration_s=30.0), sr=SR, tempo=config.params.tempo,
                             audio=config.params.audio)
        assert est.estimate_bpm is not None, (bpm, est.reason)
        assert abs(est.estimate_bpm - bpm) / bpm * 100.0 <= bound, (bpm, est.estimate_bpm)


@pytest.mark.slow
def test_tempo_check_with_renderer(tmp_path: Path) -> None:
    main(["tempo-check", "--source", "render", "--out", str(tmp_path), "--tempi", "50,143.7,174",
          "--kinds", "click,drums"])
    summary = json.loads((tmp_path / "tempo-check.json").read_text())["summary"]
    assert summary["source"] == "render" and summary["n_exact"] == 6
    assert summary["n_octave_errors"] == 0
    assert summary["max_abs_error_pct"] <= summary["bound_pct"]


def test_estimate_is_gain_invariant(config: Config) -> None:
    # the beat network's input is level-normalised (audio.input_loud_level_dbfs)
    x = drum_pattern(bpm=97.3, duration_s=12.0)
    ests = [estimate_tempo((x * g).astype(np.float32), sr=SR, tempo=config.params.tempo,
                           audio=config.params.audio).estimate_bpm
            for g in (1.0, 10 ** (-20 / 20), 10 ** (-40 / 20), 1000.0)]
    assert None not in ests
    assert max(ests) - min(ests) <= 1e-6 * ests[0]


# ---------------------------------------------------------------- summary


def test_summary_reports_steady_only_accuracy_beside_the_headline(tmp_path: Path, config: Config) -> None:
    from types import SimpleNamespace

    from timingbench.summary import build_summary, format_table

    def clip(name: str, est: float | None, steady: bool) -> dict:
        t = score_tempo(TempoEstimate(est, np.empty(0), None if est else "no pulse: x", {"steady": steady}),
                        target_bpm=120.0, tolerance_pct=3.0, tempo=config.params.tempo)
        return {"clip": name, "duration_ok": True, "error": None, "tempo": t}

    clips = [clip("a.wav", 120.5, True), clip("b.wav", 150.0, True), clip("c.wav", 119.0, False),
             clip("d.wav", None, False)]
    prompts = tmp_path / "p.jsonl"
    prompts.write_text("{}\n")
    opts = SimpleNamespace(separation="dsp", family_evidence="none", chance=False, disabled_gates=())
    summary = build_summary([], clips, config=config, opts=opts, unmatched=[], missing=[],
                            prompt_errors=[], parts=[], prompts_path=str(prompts))
    tempo = summary["tempo"]
    assert tempo["n"] == 4 and tempo["accuracy_3pct"] == 0.5 and tempo["no_estimate"] == 1
    assert tempo["n_steady"] == 2 and tempo["accuracy_3pct_steady"] == 0.5
    assert "within ±3%, steady clips only (n=2)  50.0%" in format_table(summary)

"""Time-varying controls: schema, metric functions (against mir_eval's own outputs), chance control."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

from timingbench.audio import Clip
from timingbench.config import Config
from timingbench.controls import beats as cb
from timingbench.controls.chance import (
    chance_stats,
    draw_shifts,
    shift_chords,
    shift_curve,
    shift_times,
)
from timingbench.controls.chords import chord_accuracy
from timingbench.controls.drums import onset_scores, pick_onsets
from timingbench.controls.dynamics import dynamics_scores
from timingbench.controls.frames import a_weighting_db, pool
from timingbench.controls.melody import melody_accuracy, produced_pitch_class
from timingbench.controls.report import summarise_controls
from timingbench.controls.schema import Chord
from timingbench.controls.score import ControlSections, score_controls
from timingbench.features import compute_bank
from timingbench.prompts import validate_prompt_rows

SR = 44100


def _row(controls: object, pid: str = "p1") -> dict[str, object]:
    return {"id": pid, "family": "tempo", "text": "x", "style": "", "duration_s": 30.0, "events": [],
            "tempo": {"bpm": 120.0}, "controls": controls}


def test_valid_controls_parse_with_partial_curves():
    ps = validate_prompt_rows([(1, _row({"beats_s": [0.5, 1.0], "downbeats_s": [0.5],
                                         "dynamics": {"hop_s": 0.5, "db": [-20, None, -10]},
                                         "melody": {"hop_s": 0.1, "midi": [None, 60, 62]},
                                         "chords": [{"start_s": 0, "end_s": 2, "label": "C:maj"},
                                                    {"start_s": 2, "end_s": 4, "label": "A:min7/b7"}],
                                         "drums_s": [0.5]}))], source="set.jsonl")
    assert not ps.errors
    c = ps.prompts["p1"].controls
    assert c.names() == ("beats_s", "downbeats_s", "dynamics", "melody", "chords", "drums_s")
    assert np.isnan(c.dynamics_db[1]) and c.melody_midi[2] == 62.0


@pytest.mark.parametrize(("controls", "field", "rule"), [
    ({"beats_s": [1.0, 0.5]}, "controls.beats_s[1]", "strictly increasing"),
    ({"beats_s": [31.0]}, "controls.beats_s[0]", "outside"),
    ({"beats_s": []}, "controls.beats_s", "non-empty"),
    ({"dynamics": {"hop_s": 0, "db": [1]}}, "controls.dynamics.hop_s", "positive"),
    ({"dynamics": {"hop_s": 1.0, "db": [None, None]}}, "controls.dynamics.db", "every frame is null"),
    ({"melody": {"hop_s": 0.1, "midi": [60, 200]}}, "controls.melody.midi[1]", r"\[0, 127\]"),
    ({"melody": {"hop_s": 1.0, "midi": [60] * 40}}, "controls.melody.midi", "run past duration_s"),
    ({"chords": [{"start_s": 0, "end_s": 2, "label": "Cmajor"}]}, "controls.chords[0].label", "Harte"),
    ({"chords": [{"start_s": 0, "end_s": 2, "label": "C"}, {"start_s": 1, "end_s": 3, "label": "G"}]},
     "controls.chords[1]", "overlap"),
    ({"drums_s": "no/such/file.wav"}, "controls.drums_s", "not found"),
    ({"tempo_map": [1]}, "controls.tempo_map", "unknown control"),
])
def test_malformed_controls_name_file_line_prompt_field_and_rule(controls, field, rule):
    ps = validate_prompt_rows([(1, _row({"beats_s": [1.0]}, "ok")), (2, _row(controls, "bad"))],
                              source="set.jsonl")
    assert list(ps.prompts) == ["ok"]  # the rest of the set goes on
    (err,) = ps.errors
    assert str(err).startswith(f"set.jsonl:2: prompt 'bad': field '{field}': ")
    assert re.search(rule, str(err))


def test_drum_control_audio_path_is_resolved_against_the_prompt_file(tmp_path: Path):
    (tmp_path / "kit.wav").write_bytes(b"")
    src = tmp_path / "set.jsonl"
    ps = validate_prompt_rows([(1, _row({"drums_s": "kit.wav"}))], source=str(src))
    assert ps.prompts["p1"].controls.drums_path == tmp_path / "kit.wav"


@pytest.mark.parametrize("i", [0, 4, 5, 6, 7, 9])
def test_beat_scores_match_mir_eval_published_outputs(i, realdata: Path, config: Config):
    import mir_eval

    d = realdata / "mir_eval" / "beat"
    ref = mir_eval.beat.trim_beats(np.loadtxt(d / f"ref{i:02d}.txt"))
    est = mir_eval.beat.trim_beats(np.loadtxt(d / f"est{i:02d}.txt"))
    want = json.loads((d / f"output{i:02d}.json").read_text())
    got = cb.beat_scores(ref, est, controls=config.params.controls)
    np.testing.assert_allclose([got["f_measure"], got["cmlt"], got["amlt"]],
                               [want["F-measure"], want["Correct Metric Level Total"],
                                want["Any Metric Level Total"]], atol=1e-9)


def test_beat_window_edges_and_partial_span(config: Config):
    ref = np.arange(10.0, 20.0, 0.5)
    on_edge = ref + 0.07  # exactly on the 70 ms window still matches
    assert cb.f_measure(ref, on_edge, window_s=0.07) == pytest.approx(1.0)
    assert cb.f_measure(ref, ref + 0.071, window_s=0.07) == 0.0
    # beats outside the requested span are neither hits nor false alarms
    est = np.concatenate([np.arange(0.0, 9.5, 0.37), ref])
    assert cb.f_measure(ref, est, window_s=0.07) == pytest.approx(1.0)
    s = cb.beat_scores(ref, ref[::2], controls=config.params.controls)  # half tempo: AMLt credits it
    assert s["cmlt"] < 0.5 and s["amlt"] == pytest.approx(1.0)
    assert s["requested_bpm"] == pytest.approx(120.0) and s["tracked_bpm"] == pytest.approx(60.0)


def test_onset_scores_match_mir_eval_published_outputs(realdata: Path):
    d = realdata / "mir_eval" / "onset"
    for ref_p in sorted(d.glob("ref*.txt")):
        k = ref_p.stem[3:]
        ref, est = np.atleast_1d(np.loadtxt(ref_p)), np.atleast_1d(np.loadtxt(d / f"est{k}.txt"))
        if est.size and (est.min() < ref.min() - 0.05 or est.max() > ref.max() + 0.05):
            continue  # outside the request's span a produced onset is not scored
        want = json.loads((d / f"output{k}.json").read_text())
        got = onset_scores(ref, est, window_s=0.05)
        np.testing.assert_allclose([got["f_measure"], got["precision"], got["recall"]],
                                   [want["F-measure"], want["Precision"], want["Recall"]], atol=1e-9)


def test_a_weighting_is_zero_at_1khz_and_cuts_lows():
    g = a_weighting_db([1000.0, 100.0, 50.0])
    np.testing.assert_allclose(g[0], 0.0, atol=0.01)
    np.testing.assert_allclose(g[1:], [-19.1, -30.2], atol=0.1)  # IEC 61672 table values


def test_pool_assigns_frames_by_control_frame_edges():
    v = np.arange(8.0)  # frames at 0, 0.25, ..., 1.75 s
    np.testing.assert_allclose(pool(v, frame_hop_s=0.25, hop_s=0.5, n=5), [0.5, 2.5, 4.5, 6.5, np.nan])


def test_dynamics_scores_offset_and_correlation():
    r = np.array([-30.0, -20.0, -10.0, np.nan, -20.0])
    s = dynamics_scores(r, r + 7.0)
    assert s["pearson_r"] == pytest.approx(1.0) and s["mae_db"] == pytest.approx(0.0)
    assert s["offset_db"] == pytest.approx(7.0) and s["n_frames"] == 4
    assert dynamics_scores(r, np.full(5, -5.0))["pearson_r"] is None  # a flat curve has no r


def test_melody_accuracy_counts_only_requested_frames():
    req = np.array([60.0, np.nan, 62.0, 73.0])
    pc = np.array([0, 5, 3, 1])
    assert melody_accuracy(req, pc) == (pytest.approx(2 / 3), 3)
    assert produced_pitch_class(np.zeros((12, 2))).tolist() == [-1, -1]


def test_chord_accuracy_weights_overlaps_and_fills_gaps_with_no_chord():
    req = [Chord(0, 2, "C:maj"), Chord(2, 4, "A:min7"), Chord(4, 5, "B:dim")]
    prod = [Chord(0, 1, "C:maj"), Chord(1, 3, "A:min")]
    s = chord_accuracy(req, prod)
    # C:maj 1 s right + 1 s wrong; A:min7 (a min triad at majmin) 1 s right + 1 s uncovered (N)
    assert s["accuracy"] == pytest.approx(0.5) and s["scored_s"] == pytest.approx(4.0)


def test_chance_shifts_are_reproducible_and_circular():
    a = draw_shifts(span_s=30.0, draws=16, min_shift_s=1.0, seed=1, key="c.wav/beats_s")
    b = draw_shifts(span_s=30.0, draws=16, min_shift_s=1.0, seed=1, key="c.wav/beats_s")
    np.testing.assert_array_equal(a, b)
    assert a.min() >= 1.0 and a.max() <= 29.0
    np.testing.assert_allclose(shift_times(np.array([1.0, 29.0]), 2.0, span_s=30.0), [1.0, 3.0])
    np.testing.assert_array_equal(shift_curve(np.arange(4.0), 0.5, hop_s=0.5), [3.0, 0.0, 1.0, 2.0])
    w = shift_chords([Chord(27.0, 30.0, "C:maj")], 2.0, span_s=30.0)
    assert [(c.start_s, c.end_s) for c in w] == [(0.0, 2.0), (29.0, 30.0)]
    st = chance_stats(0.5, np.arange(4.0), lambda s: s / 4)
    assert st == {"mean": pytest.approx(0.375), "p_chance": 0.5, "draws": 4}


def _tone_melody(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A 12 s sine-harmonic melody (MIDI 60-84, 0.25 s notes) over a 55 Hz bass, with the request at 0.05 s."""
    hop, note_s = 0.05, 0.25
    pitches = rng.integers(60, 85, size=48)
    t = np.arange(int(12.0 * SR)) / SR
    y = 0.3 * np.sin(2 * np.pi * 55.0 * t)
    for k, p in enumerate(pitches):
        seg = (t >= k * note_s) & (t < (k + 1) * note_s)
        f0 = 440.0 * 2 ** ((p - 69) / 12)
        y[seg] += sum(0.2 / h * np.sin(2 * np.pi * h * f0 * t[seg]) for h in (1, 2, 3))
    midi = np.repeat(pitches.astype(float), int(round(note_s / hop)))
    return y.astype(np.float32), midi


def test_melody_oracle_on_a_known_line_and_at_chance_shuffled(config: Config, rng: np.random.Generator):
    y, midi = _tone_melody(rng)
    clip = Clip(path=Path("melody.wav"), samples=y, sr=SR, duration_s=y.size / SR, source_sr=SR,
                source_channels=1, content_hash=hashlib.sha256(y.tobytes()).hexdigest()[:16])
    bank = compute_bank(clip, config, separation="dsp")
    from timingbench.controls.schema import Controls

    row = score_controls(bank, Controls(melody_hop_s=0.05, melody_midi=midi), ControlSections.of(config), span_s=12.0,
                         key="m.wav")
    m = row["melody"]
    assert m["accuracy"] >= 0.9
    # the shuffled control and the time-shifted chance both sit near 1/12 per pitch-class spread
    assert m["shuffled_accuracy"] < 0.3 and m["chance"]["mean"] < 0.3 and m["chance"]["p_chance"] == 0.0


def test_summary_reports_rate_chance_and_floor(config: Config):
    clips = [{"controls": {"beats": {"f_measure": 0.9, "cmlt": 0.8, "amlt": 0.9,
                                     "chance": {"mean": 0.2, "p_chance": 0.0, "draws": 16}}}},
             {"controls": None}]
    s = summarise_controls(clips, config=config)
    assert s["beats"]["n"] == 1 and s["beats"]["above_chance"] == pytest.approx(0.7)
    assert s["beats"]["floor"] == config.params.controls.floor_beat_f1


def test_pick_onsets_keeps_the_stronger_of_close_peaks():
    x = np.zeros(100)
    x[[10, 12, 50]] = [1.0, 2.0, 1.5]
    t = np.arange(100) * 0.01
    np.testing.assert_allclose(pick_onsets(x, t, rel=0.3, min_ioi_s=0.05), [0.12, 0.50])

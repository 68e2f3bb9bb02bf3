"""Controls through the scoring run: rows, summary and table, a rejected control, a control audio file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from timingbench.audio import load_clip
from timingbench.config import Config
from timingbench.controls.schema import Controls
from timingbench.controls.score import ControlSections, score_controls
from timingbench.features import compute_bank
from timingbench.runner import ScoreOptions, score_folder
from timingbench.summary import format_table

SR = 44100


def _clicks(bpm: float, dur: float) -> tuple[np.ndarray, np.ndarray]:
    beats = np.arange(0.5, dur - 0.5, 60.0 / bpm)
    y = np.zeros(int(dur * SR), dtype=np.float32)
    burst = (np.random.default_rng(0).standard_normal(400) * np.exp(-np.arange(400) / 60)).astype(np.float32)
    for t in beats:
        i = int(round(t * SR))
        y[i:i + 400] += 0.5 * burst
    return y, beats


def test_score_folder_writes_control_rows_and_rejects_a_malformed_control(tmp_path: Path, config: Config):
    y, beats = _clicks(120.0, 12.0)
    clips = tmp_path / "clips"
    clips.mkdir()
    sf.write(clips / "c1.wav", y, SR)
    rows = [{"id": "c1", "family": "tempo", "text": "clicks", "style": "", "duration_s": 12.0, "events": [],
             "tempo": {"bpm": 120.0}, "controls": {"beats_s": [round(float(b), 6) for b in beats],
                                                    "drums_s": [round(float(b), 6) for b in beats]}},
            {"id": "c2", "family": "tempo", "text": "clicks", "style": "", "duration_s": 12.0, "events": [],
             "tempo": {"bpm": 120.0}, "controls": {"beats_s": [2.0, 1.0]}}]
    prompts = tmp_path / "p.jsonl"
    prompts.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = score_folder(clips, prompts, tmp_path / "out", config,
                       opts=ScoreOptions(separation="dsp", family_evidence="none"))
    (err,) = res.summary["prompts"]["rejected"]
    assert err == f"{prompts}:2: prompt 'c2': field 'controls.beats_s[1]': times must be strictly increasing"
    (row,) = [json.loads(line) for line in (tmp_path / "out" / "clips.jsonl").read_text().splitlines()]
    ctl = row["controls"]
    assert set(ctl) == {"beats", "drums"}
    assert ctl["beats"]["f_measure"] >= 0.95 and ctl["beats"]["instructed_bpm"] == 120.0
    assert ctl["drums"]["f_measure"] >= 0.95 and ctl["drums"]["chance"]["draws"] == config.params.chance.draws
    assert res.summary["results_format"] == 5
    assert res.summary["controls"]["beats"]["n"] == 1
    assert "beat F1" in format_table(res.summary)


def _controls_prompt(**kw: object) -> dict[str, object]:
    row: dict[str, object] = {"id": "ctl", "family": "controls", "text": "Play clicks on these beats.", "style": "",
                              "duration_s": 12.0, "events": [], "tempo": None, "controls": {"beats_s": [1.0, 1.5, 2.0]}}
    row.update(kw)
    return row


def test_a_controls_only_prompt_needs_no_event_and_no_tempo(tmp_path: Path, config: Config):
    """Family ``controls``: a rhythm request with no timed event and no tempo is scored on its controls."""
    y, beats = _clicks(120.0, 12.0)
    clips = tmp_path / "clips"
    clips.mkdir()
    sf.write(clips / "ctl.wav", y, SR)
    prompts = tmp_path / "p.jsonl"
    prompts.write_text(json.dumps(_controls_prompt(controls={"beats_s": [round(float(b), 6) for b in beats]})) + "\n")
    res = score_folder(clips, prompts, tmp_path / "out", config,
                       opts=ScoreOptions(separation="dsp", family_evidence="none", chance=False))
    assert res.summary["prompts"]["rejected"] == [] and res.events == []
    (row,) = res.clips
    assert row["error"] is None and row["tempo"] is None
    assert row["controls"]["beats"]["f_measure"] >= 0.95


@pytest.mark.parametrize(("change", "field", "rule"), [
    ({"controls": None}, "controls", "a 'controls' prompt needs a 'controls' object"),
    ({"tempo": {"bpm": 100.0}}, "tempo", "a 'controls' prompt has no tempo target"),
    ({"events": [{"id": "ctl/e1", "kind": "music_end", "family": "mix", "time_s": 6.0}]}, "events",
     "a 'controls' prompt has no timed event, got 1"),
    ({"controls": {"beats_s": [2.0, 1.0]}}, "controls.beats_s[1]", "times must be strictly increasing"),
    ({"controls": {}}, "controls", ""),
    ({"controls": {"tempo_bpm": 120}}, "controls", ""),
])
def test_malformed_controls_only_prompts_are_rejected_naming_the_field(change: dict[str, object], field: str,
                                                                       rule: str) -> None:
    from timingbench.errors import PromptError
    from timingbench.prompts import parse_prompt

    with pytest.raises(PromptError, match=re.escape(f"prompt 'ctl': field '{field}")) as exc:
        parse_prompt(_controls_prompt(**change))
    assert rule in str(exc.value)


def test_drum_control_from_an_audio_file(config: Config, realdata: Path):
    """The 808 kick as its own control audio: its extracted onsets are the request; shifted, they miss."""
    kick = realdata / "beatnet" / "808kick120bpm.mp3"
    clip = load_clip(kick, config)
    bank = compute_bank(clip, config, separation="dsp")
    row = score_controls(bank, Controls(drums_path=kick), ControlSections.of(config), span_s=clip.duration_s,
                         key="kick",
                         control_bank=lambda p: compute_bank(load_clip(p, config), config, separation="dsp"))
    d = row["drums"]
    assert d["source"] == "audio" and d["n_requested"] >= 10
    assert d["f_measure"] == pytest.approx(1.0)
    assert d["chance"]["mean"] < 0.8


def test_a_clip_that_could_not_be_scored_scores_zero_on_its_controls(tmp_path: Path, config: Config):
    """Failing never takes a clip out of the control-adherence means: its controls score 0."""
    y, beats = _clicks(120.0, 12.0)
    clips = tmp_path / "clips"
    clips.mkdir()
    sf.write(clips / "good.wav", y, SR)
    (clips / "broken.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk")
    beats_s = [round(float(b), 6) for b in beats]
    rows = [_controls_prompt(id=pid, controls={"beats_s": beats_s, "chords": [
        {"start_s": 1.0, "end_s": 3.0, "label": "C:maj"}]}) for pid in ("good", "broken")]
    prompts = tmp_path / "p.jsonl"
    prompts.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = score_folder(clips, prompts, tmp_path / "out", config,
                       opts=ScoreOptions(separation="dsp", family_evidence="none", chance=False))
    broken = next(c for c in res.clips if c["clip"] == "broken.wav")
    assert broken["error"] and broken["controls"]["beats"]["f_measure"] == 0.0
    assert broken["controls"]["chords"] == {"accuracy": 0.0, "chance": None, "reason": "error"}
    good = next(c for c in res.clips if c["clip"] == "good.wav")["controls"]["beats"]["f_measure"]
    summary = res.summary["controls"]["beats"]
    assert summary["n"] == 2 and summary["mean"] == pytest.approx(good / 2, abs=1e-4)
    assert "beat F1" in format_table(res.summary)


def test_silence_is_scored_on_its_controls(tmp_path: Path, config: Config):
    """Silent audio delivers nothing: its requested beats and drums score 0 (it is not an error)."""
    clips = tmp_path / "clips"
    clips.mkdir()
    sf.write(clips / "ctl.wav", np.zeros(12 * SR, np.float32), SR)
    prompts = tmp_path / "p.jsonl"
    prompts.write_text(json.dumps(_controls_prompt(controls={"beats_s": [1.0, 1.5, 2.0], "drums_s": [1.0, 2.0]}))
                       + "\n")
    res = score_folder(clips, prompts, tmp_path / "out", config,
                       opts=ScoreOptions(separation="dsp", family_evidence="none", chance=False))
    (row,) = res.clips
    assert row["error"] is None and row["silent"] is True
    assert row["controls"]["beats"]["f_measure"] == 0.0 and row["controls"]["drums"]["f_measure"] == 0.0


def test_control_chance_draws_follow_the_audio_not_the_file_name(tmp_path: Path, config: Config):
    """Two names of one clip (``ctl.wav`` and ``ctl__1.wav``) get the same control chance figures."""
    y, beats = _clicks(120.0, 12.0)
    y = y + 0.02 * np.random.default_rng(5).standard_normal(y.size).astype(np.float32)  # busy enough to credit by luck
    clips = tmp_path / "clips"
    clips.mkdir()
    for name in ("ctl.wav", "ctl__1.wav"):
        sf.write(clips / name, y, SR)
    prompts = tmp_path / "p.jsonl"
    shifted = [round(float(b) + 0.13, 6) for b in beats]
    prompts.write_text(json.dumps(_controls_prompt(controls={"beats_s": shifted})) + "\n")
    res = score_folder(clips, prompts, tmp_path / "out", config,
                       opts=ScoreOptions(separation="dsp", family_evidence="none"))
    a, b = (row["controls"]["beats"]["chance"] for row in res.clips)
    assert a == b

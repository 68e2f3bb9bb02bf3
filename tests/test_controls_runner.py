"""Controls through the scoring run: rows, summary and table, a rejected control, a control audio file."""

from __future__ import annotations

import json
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
    assert ctl["drums"]["f_measure"] >= 0.95 and ctl["drums"]["chance"]["draws"] == 16
    assert res.summary["results_format"] == 3
    assert res.summary["controls"]["beats"]["n"] == 1
    assert "beat F1" in format_table(res.summary)


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

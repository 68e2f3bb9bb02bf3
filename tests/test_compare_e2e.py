"""End to end: clips -> `timingbench score` -> `timingbench compare` (slow: real scoring)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from timingbench.cli import main

PROMPT = {"id": "e2e-drums", "family": "single_event",
          "text": "Create a calm ambient track for exactly 30 seconds. Bring in drums at exactly the 6th second.",
          "style": "ambient", "duration_s": 30.0,
          "events": [{"id": "e2e-drums/e1", "kind": "instrument_entry", "target": "drums",
                      "family": "percussion", "time_s": 6.0, "tolerance_s": 0.5}], "tempo": None}


def _clip(path: Path, *, drums_from_s: float, rng: np.random.Generator) -> None:
    sr = 44100
    t = np.arange(30 * sr) / sr
    y = 0.2 * np.sin(2 * np.pi * 220 * t)
    for k in np.arange(drums_from_s, 30.0, 0.5):
        i = int(round(k * sr))
        y[i:i + 2000] += rng.normal(0, 0.5, 2000) * np.exp(-np.arange(2000) / 300)
    sf.write(path, y.astype(np.float32), sr)


@pytest.mark.slow
def test_score_then_compare_ranks_on_time_above_late(tmp_path: Path, rng: np.random.Generator) -> None:
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text(json.dumps(PROMPT) + "\n")
    for name, start in (("ontime", 6.0), ("late", 6.8)):
        clips = tmp_path / f"clips-{name}"
        clips.mkdir()
        for k in (1, 2):
            _clip(clips / f"e2e-drums__{k}.wav", drums_from_s=start, rng=rng)
        assert main(["score", str(clips), "--prompts", str(prompts), "--out", str(tmp_path / name),
                     "--separation", "dsp", "--family-evidence", "none", "--no-chance",
                     "--cache", str(tmp_path / "cache")]) == 0
    out = tmp_path / "cmp"
    assert main(["compare", str(tmp_path / "ontime"), str(tmp_path / "late"), "--names", "ontime,late",
                 "--out", str(out)]) == 0
    data = json.loads((out / "comparison.json").read_text())
    metrics = {s["name"]: s["metrics"] for s in data["systems"]}
    assert metrics["ontime"]["on_time_rate"]["value"] == 1.0
    assert metrics["late"]["on_time_rate"]["value"] == 0.0
    assert metrics["late"]["error_median_s"]["value"] == pytest.approx(0.8, abs=0.05)
    # One prompt is below compare.min_prompts: the difference is not resolved, never ranked.
    pair = next(p for p in data["pairwise"] if p["metric"] == "on_time_rate")
    assert pair["resolved"] is False

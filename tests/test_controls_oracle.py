"""Oracle tests of control adherence on renders with exact controls, and on a real recording."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from timingbench.audio import load_clip
from timingbench.config import Config
from timingbench.controls.beats import track_beats
from timingbench.controls.score import ControlSections, score_controls
from timingbench.features import compute_bank
from timingbench.prompts import parse_prompt


@pytest.fixture(scope="module")
def renders(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    """Two clips with exact controls, a lead entering over a bed (a clarinet at 120 BPM, a trumpet at 97 BPM),
    each with its lead rendered alone as well (the ``target`` stem)."""
    import shutil

    from timingbench.render.pipeline import render_recipe

    if shutil.which("fluidsynth") is None:
        pytest.skip("FluidSynth is not installed")
    out = tmp_path_factory.mktemp("controls")
    kw = {"out_dir": out, "controls": True, "stems": True, "stem_parts": ["target"]}
    return [render_recipe("entry_on_time", seed=3, bpm=120.0, family="woodwinds", time_s=6.0, **kw),
            render_recipe("entry_on_time", seed=8, bpm=97.0, family="brass", time_s=8.0, **kw)]


def _score(rc: Any, controls_of: Any, config: Config, audio: Path | None = None) -> dict[str, Any]:
    path = rc.audio_path if audio is None else audio
    bank = compute_bank(load_clip(path, config), config, separation="dsp")
    p = parse_prompt(controls_of.prompt)
    return score_controls(bank, p.controls, ControlSections.of(config), span_s=p.duration_s, key=path.name)


def test_a_rendered_lead_scored_against_its_own_melody(renders: list[Any], config: Config):
    """The lead as rendered (its stem) against the written melody control: the salience measure reaches
    0.9 on both clips, where the chroma argmax follows the third harmonic (the clarinet's fifth); on the
    full mix both measures stay above chance but under 0.9, the lead being quieter than the bed."""
    from timingbench.render.instruments import INSTRUMENTS

    for rc in renders:
        lead = {x["part"]: x["instrument"] for x in rc.meta["parts"]}["target"]
        assert INSTRUMENTS[lead].role == "lead", lead
        alone = _score(rc, rc, config, audio=rc.stem_paths["target"])["melody"]
        mix = _score(rc, rc, config)["melody"]
        print(f"{lead}: alone chroma {alone['accuracy']:.3f} salience {alone['salience']['accuracy']:.3f}; "
              f"mix chroma {mix['accuracy']:.3f} salience {mix['salience']['accuracy']:.3f} "
              f"(chance {mix['salience']['chance']['mean']:.3f})")
        assert alone["salience"]["accuracy"] >= 0.9
        assert alone["salience"]["accuracy"] > alone["accuracy"]
        assert alone["salience"]["chance"]["p_chance"] == 0.0
        assert mix["salience"]["accuracy"] - mix["salience"]["chance"]["mean"] > 0.1


def test_own_controls_score_near_one_and_above_every_chance_draw(renders: list[Any], config: Config):
    row = _score(renders[0], renders[0], config)
    assert {"beats", "downbeats", "dynamics", "melody", "chords"} <= set(row)
    print({k: {m: v for m, v in r.items() if m in ("f_measure", "pearson_r", "accuracy")} for k, r in row.items()})
    assert row["beats"]["f_measure"] >= 0.95
    assert row["downbeats"]["f_measure"] >= 0.9
    assert row["dynamics"]["pearson_r"] >= 0.95
    for name in ("dynamics", "chords"):
        assert row[name]["chance"]["p_chance"] == 0.0, name  # no shifted control scores as well
    # a beat grid shifted by whole beats is the same grid: chance draws can hit, the mean stays low
    for name in ("beats", "downbeats"):
        assert row[name]["f_measure"] - row[name]["chance"]["mean"] > 0.3, name


def test_another_clips_controls_score_at_chance(renders: list[Any], config: Config):
    own = _score(renders[0], renders[0], config)
    other = _score(renders[0], renders[1], config)
    for name, metric in (("beats", "f_measure"), ("downbeats", "f_measure"), ("dynamics", "pearson_r"),
                         ("melody", "accuracy"), ("chords", "accuracy")):
        o, ch = other[name][metric], other[name]["chance"]
        assert o < own[name][metric], name
        # no further above the same control's time-shifted chance mean than 0.1
        assert o - ch["mean"] < 0.1, (name, o, ch)
    o, ch = other["melody"]["salience"]["accuracy"], other["melody"]["salience"]["chance"]
    assert o < own["melody"]["salience"]["accuracy"] and o - ch["mean"] < 0.1, (o, ch)


def test_808_kick_beats_on_its_half_second_grid(config: Config, realdata: Path):
    """Real mp3: the kicks lie on a 0.5 s grid (120 BPM); the grid's phase is the first kick's onset."""
    from timingbench.controls.beats import beat_scores
    from timingbench.controls.drums import bank_drum_onsets

    clip = load_clip(realdata / "beatnet" / "808kick120bpm.mp3", config)
    bank = compute_bank(clip, config, separation="dsp")
    kicks = bank_drum_onsets(bank, percussion=config.params.percussion, controls=config.params.controls,
                             features=config.params.features)
    grid = np.arange(kicks[0], clip.duration_s - 0.25, 0.5)
    beats, _ = track_beats(clip.samples, sr=clip.sr, tempo=config.params.tempo, audio=config.params.audio,
                           controls=config.params.controls)
    s = beat_scores(grid, beats, controls=config.params.controls)
    print(f"808 kick: beat F1 {s['f_measure']:.3f} CMLt {s['cmlt']:.3f} AMLt {s['amlt']:.3f} "
          f"tracked {s['tracked_bpm']:.2f} BPM over {grid.size} grid beats")
    assert s["f_measure"] >= 0.9
    assert s["tracked_bpm"] == pytest.approx(120.0, rel=0.02)

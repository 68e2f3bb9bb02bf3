"""Long reference-renderer checks: every family, the demo corpus, reverb determinism."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from timingbench.families import FAMILY_NAMES
from timingbench.prompts import load_prompts
from timingbench.render import CORPORA, render_corpus, render_recipe

HOP, SR = 512, 44100

pytestmark = pytest.mark.slow


def _first_nonzero_s(path: Path) -> float:
    x, sr = sf.read(str(path), dtype="float64")
    assert sr == SR
    return int(np.flatnonzero(x)[0]) / SR


@pytest.mark.parametrize("family", FAMILY_NAMES)
@pytest.mark.parametrize("recipe", ["entry_on_time", "entry_off_time"])
def test_entry_truth_matches_stem_for_every_family(tmp_path: Path, family: str, recipe: str) -> None:
    rc = render_recipe(recipe, seed=101, out_dir=tmp_path, duration_s=12.0, stems=True, family=family)
    onset = rc.truth[0]["onset_s"]
    assert rc.meta["target_family"] == family
    assert abs(_first_nonzero_s(rc.stem_paths["target"]) - onset) <= HOP / SR
    assert onset == pytest.approx(rc.meta["delivered_s"], abs=1e-3)


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_exit_target_is_silent_after_release(tmp_path: Path, family: str) -> None:
    rc = render_recipe("exit_on_time", seed=102, out_dir=tmp_path, duration_s=14.0, stems=True,
                       family=family, time_s=7.0)
    x, _ = sf.read(str(rc.stem_paths["target"]), dtype="float64")
    onset = rc.truth[0]["onset_s"]
    i = int(round(onset * SR))
    before = np.sqrt(np.mean(x[i - SR // 4:i] ** 2))
    after = np.sqrt(np.mean(x[i + 4 * SR:i + 5 * SR] ** 2))
    assert before > 0 and after < before * 10 ** (-40 / 20)


def test_demo_corpus_renders_with_valid_prompts_and_truth(tmp_path: Path) -> None:
    out = render_corpus("demo", out_dir=tmp_path, jobs=2, progress=False)
    ps = load_prompts(out / "prompts.jsonl")
    assert len(ps.prompts) == len(CORPORA["demo"].specs) and not ps.errors
    truth = [line for line in (out / "truth.jsonl").read_text().splitlines() if line]
    assert len(truth) == sum(len(p.events) for p in ps.prompts.values())
    assert len(list((out / "clips").glob("*.wav"))) == len(ps.prompts)


def test_reverb_renders_are_deterministic(tmp_path: Path) -> None:
    a = render_recipe("end_decay", seed=7, out_dir=tmp_path / "a", duration_s=10.0, reverb=True)
    b = render_recipe("end_decay", seed=7, out_dir=tmp_path / "b", duration_s=10.0, reverb=True)
    dry = render_recipe("end_decay", seed=7, out_dir=tmp_path / "c", duration_s=10.0)
    digest = [hashlib.sha256(r.audio_path.read_bytes()).hexdigest() for r in (a, b, dry)]
    assert digest[0] == digest[1] != digest[2]
    assert a.truth == dry.truth


@pytest.mark.parametrize("recipe", ["tempo_click", "tempo_drums", "tempo_half_time", "tempo_double_time"])
@pytest.mark.parametrize("bpm", [50.0, 97.3, 174.0])
def test_every_beat_is_an_onset_of_the_rhythm_part(tmp_path: Path, recipe: str, bpm: float) -> None:
    rc = render_recipe(recipe, seed=5, out_dir=tmp_path, duration_s=12.0, stems=True, bpm=bpm)
    beats = np.asarray(rc.meta["beats_s"])
    assert 60.0 / np.mean(np.diff(beats)) == pytest.approx(bpm, rel=1e-4)
    part = "click" if recipe == "tempo_click" else "drums"
    x, _ = sf.read(str(rc.stem_paths[part]), dtype="float64")

    def db(t0: float, t1: float) -> float:
        seg = x[int(t0 * SR):int(t1 * SR)]
        return float(10 * np.log10(np.mean(seg**2) + 1e-20))

    for b in beats[beats < 11.9]:
        assert db(b, b + 0.02) > db(b - 0.02, b) + 6, f"no onset at beat {b:.3f} s"

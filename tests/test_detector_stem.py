"""Stem detector: level-step kernel, synthetic stems with exact onsets, rendered clips (slow)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from timingbench.audio import load_clip
from timingbench.config import DEFAULT_CONFIG_PATH, load_config
from timingbench.detectors.stem import level_step, smoothed_db
from timingbench.features import compute_bank
from timingbench.scoring import DetectorParams, decide, run_detector
from timingbench.verdicts import EventContext

SR = 44100
CFG = load_config(DEFAULT_CONFIG_PATH)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20260114)


# ----------------------------------------------------------------------------- kernel


def test_level_step_of_a_constant_is_zero() -> None:
    np.testing.assert_allclose(level_step(np.full(50, -20.0), before=5, after=4, gap=1), 0.0, atol=1e-12)


@pytest.mark.parametrize("edge", [10, 25, 39])
def test_level_step_peaks_at_the_step(edge: int) -> None:
    x = np.where(np.arange(50) >= edge, -10.0, -30.0)
    s = level_step(x, before=6, after=6)
    assert int(np.argmax(s)) == edge
    np.testing.assert_allclose(s[edge], 20.0, atol=1e-12)
    np.testing.assert_allclose(level_step(-x, before=6, after=6), -s, atol=1e-12)


def test_level_step_is_gain_invariant(rng: np.random.Generator) -> None:
    x = rng.normal(-30.0, 3.0, 200)
    np.testing.assert_allclose(level_step(x - 20.0, before=9, after=7, gap=2),
                               level_step(x, before=9, after=7, gap=2), atol=1e-9)


def test_level_step_empty_and_smoothing_edges() -> None:
    assert level_step(np.zeros(0), before=3, after=3).shape == (0,)
    np.testing.assert_allclose(smoothed_db(np.full(7, -5.0), 4), -5.0, atol=1e-12)


# ----------------------------------------------------------------------------- synthetic stems


def _notes(t: np.ndarray, f0: float, *, amp: float, note_s: float) -> np.ndarray:
    """A train of decaying harmonic notes on ``f0`` (a plucked/keyboard-like part)."""
    phase = np.mod(t, note_s)
    env = np.exp(-phase / (0.6 * note_s))
    return amp * env * sum(np.sin(2 * np.pi * f0 * k * t) / k for k in (1, 2, 3))


def _bank(tmp_path: Path, y: np.ndarray, gain_db: float = 0.0) -> object:
    path = tmp_path / f"clip{gain_db:g}.wav"
    y = 0.5 * y / np.max(np.abs(y)) * 10 ** (gain_db / 20)
    sf.write(path, y.astype(np.float32), SR, subtype="PCM_24")
    return compute_bank(load_clip(path, CFG), CFG, separation="dsp")


def _mix(n: int, rng: np.random.Generator, *, onset_s: float | None, target: str,
         exit_s: float | None = None) -> np.ndarray:
    t = np.arange(n) / SR
    bed = _notes(t, 330.0, amp=0.15, note_s=0.5) + 0.002 * rng.standard_normal(n)
    f0 = 55.0 if target == "bass" else 880.0
    part = _notes(t, f0, amp=0.5 if target == "bass" else 0.3, note_s=0.25)
    on = np.ones(n)
    if onset_s is not None:
        on[: int(onset_s * SR)] = 0.0
    if exit_s is not None:
        on[int(exit_s * SR):] = 0.0
    return bed + on * part


def _ctx(kind: str, family: str, t: float, *, lo: float, hi: float) -> EventContext:
    return EventContext(kind, family, family, t, lo, hi)


@pytest.mark.parametrize("family", ["bass"])
@pytest.mark.parametrize("onset_s", [5.0, 6.25])
def test_entry_over_a_bed_is_localised(tmp_path: Path, rng: np.random.Generator, family: str,
                                       onset_s: float) -> None:
    bank = _bank(tmp_path, _mix(12 * SR, rng, onset_s=onset_s, target=family))
    cands = run_detector(bank, _ctx("instrument_entry", family, onset_s, lo=1.5, hi=10.0), DetectorParams.of(CFG))
    v = decide(cands, instructed_s=onset_s, tolerance_s=0.5)
    assert v.outcome == "on_time", (v, [c.gates for c in cands])
    assert abs(v.error_s) <= 0.05  # type: ignore[arg-type]
    if family != "bass":  # the coarse stem asks the family gate, which has no evidence here
        assert v.gates["semantic_family"] == "exempt"


@pytest.mark.parametrize("family", ["bass", "piano"])
def test_pre_existing_part_is_rejected(tmp_path: Path, rng: np.random.Generator, family: str) -> None:
    bank = _bank(tmp_path, _mix(12 * SR, rng, onset_s=None, target=family))
    cands = run_detector(bank, _ctx("instrument_entry", family, 6.0, lo=1.0, hi=11.0), DetectorParams.of(CFG))
    assert decide(cands, instructed_s=6.0, tolerance_s=0.5).outcome == "none"


@pytest.mark.parametrize("family", ["bass"])
def test_exit_is_localised_and_a_steady_part_has_none(tmp_path: Path, rng: np.random.Generator,
                                                      family: str) -> None:
    bank = _bank(tmp_path, _mix(14 * SR, rng, onset_s=None, target=family, exit_s=7.0))
    v = decide(run_detector(bank, _ctx("instrument_exit", family, 7.0, lo=2.0, hi=12.0), DetectorParams.of(CFG)),
               instructed_s=7.0, tolerance_s=0.5)
    assert v.outcome == "on_time"
    assert abs(v.error_s) <= 0.1  # type: ignore[arg-type]
    steady = _bank(tmp_path, _mix(14 * SR, rng, onset_s=None, target=family), gain_db=-1.0)
    w = decide(run_detector(steady, _ctx("instrument_exit", family, 7.0, lo=2.0, hi=12.0), DetectorParams.of(CFG)),
               instructed_s=7.0, tolerance_s=0.5)
    assert w.outcome == "none"


@pytest.mark.parametrize("gain_db", [-12.0, -20.0])
def test_entry_verdict_is_gain_invariant(tmp_path: Path, rng: np.random.Generator, gain_db: float) -> None:
    y = _mix(12 * SR, rng, onset_s=5.5, target="bass")
    ctx = _ctx("instrument_entry", "bass", 5.5, lo=1.0, hi=10.0)
    a = decide(run_detector(_bank(tmp_path, y), ctx, DetectorParams.of(CFG)), instructed_s=5.5, tolerance_s=0.5)
    b = decide(run_detector(_bank(tmp_path, y, gain_db), ctx, DetectorParams.of(CFG)), instructed_s=5.5,
               tolerance_s=0.5)
    assert a.outcome == b.outcome == "on_time"
    assert abs(a.detected_s - b.detected_s) <= 512 / SR + 1e-9  # type: ignore[operator]


def test_no_candidate_without_a_step(tmp_path: Path, rng: np.random.Generator) -> None:
    bank = _bank(tmp_path, _mix(10 * SR, rng, onset_s=None, target="piano"))
    assert run_detector(bank, _ctx("instrument_entry", "piano", 5.0, lo=2.0, hi=8.0), DetectorParams.of(CFG)) == []


def test_disabled_step_threshold_gives_no_candidate(tmp_path: Path, rng: np.random.Generator) -> None:
    bank = _bank(tmp_path, _mix(10 * SR, rng, onset_s=5.0, target="piano"))
    cfg = CFG.with_disabled("stem.step_min_db")
    assert run_detector(bank, _ctx("instrument_entry", "piano", 5.0, lo=1.0, hi=9.0), DetectorParams.of(cfg)) == []


# ----------------------------------------------------------------------------- rendered clips


_DSP_BASS = pytest.mark.xfail(
    strict=True,
    reason="known limit (issue 6): the dsp bass stem is harmonic energy under 250 Hz, where "
           "the bed's kick and low pad notes already sound, so these deliveries are scored none",
)


@pytest.mark.slow
@pytest.mark.parametrize(("recipe", "seed", "want"), [
    pytest.param("entry_on_time", 2000, "on_time", marks=_DSP_BASS),
    pytest.param("exit_on_time", 2002, "on_time", marks=_DSP_BASS),
    ("pre_existing", 2005, "none"),
])
def test_rendered_bass_events(tmp_path: Path, recipe: str, seed: int, want: str) -> None:
    from timingbench.prompts import parse_prompt
    from timingbench.render import render_recipe
    from timingbench.scoring import score_event

    clip = render_recipe(recipe, seed=seed, out_dir=tmp_path, split="dev", family="bass")
    bank = compute_bank(load_clip(clip.audio_path, CFG), CFG, separation="dsp")
    prompt = parse_prompt(clip.prompt)
    verdict, _ = score_event(bank, prompt, 0, CFG, with_chance=False)
    assert verdict.outcome == want, verdict
    truth = clip.truth[0]["onset_s"]
    if want == "on_time" and truth is not None:
        assert abs(verdict.detected_s - truth) <= 0.25  # type: ignore[operator]

"""Tonal-layer detector: synthetic layers with exact onsets, and rendered clips (slow)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf

from timingbench.audio import load_clip
from timingbench.config import DEFAULT_CONFIG_PATH, load_config
from timingbench.detectors.tonal import register_levels
from timingbench.features import compute_bank
from timingbench.scoring import DetectorParams, decide, run_detector
from timingbench.verdicts import EventContext

SR = 44100
CFG = load_config(DEFAULT_CONFIG_PATH)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20260113)


def _tone(freqs: list[float], t: np.ndarray, *, amp: float) -> np.ndarray:
    return sum(amp * np.sin(2 * np.pi * f * t) for f in freqs)  # type: ignore[return-value]


def _bed(n: int, rng: np.random.Generator) -> np.ndarray:
    """A low drone and a quiet noise floor: tonal content already present everywhere."""
    t = np.arange(n) / SR
    return _tone([110.0, 165.0], t, amp=0.2) + 0.003 * rng.standard_normal(n)


def _bank(tmp_path: Path, y: np.ndarray) -> Any:
    path = tmp_path / "clip.wav"
    sf.write(path, (0.5 * y / np.max(np.abs(y))).astype(np.float32), SR, subtype="PCM_24")
    return compute_bank(load_clip(path, CFG), CFG, separation="dsp")


def _ctx(kind: str, t: float, *, lo: float, hi: float) -> EventContext:
    return EventContext(kind, "synth", "synth pad", t, lo, hi)


def test_register_levels_shape_and_blocks() -> None:
    m = np.zeros((20, 5))
    m[8:16] = -10.0
    lv = register_levels(m, width=8)
    assert lv.shape == (3, 5)
    np.testing.assert_allclose(lv[:, 0], [0.0, -10.0, 0.0], atol=1e-12)


@pytest.mark.parametrize("onset_s", [4.0, 6.5])
def test_entry_of_a_new_register_is_localised(tmp_path: Path, rng: np.random.Generator, onset_s: float) -> None:
    n = 12 * SR
    y = _bed(n, rng)
    k = int(onset_s * SR)
    tt = np.arange(n - k) / SR
    y[k:] += _tone([880.0, 1108.7, 1318.5], tt, amp=0.15)
    bank = _bank(tmp_path, y)
    cands = run_detector(bank, _ctx("instrument_entry", onset_s, lo=onset_s - 3, hi=onset_s + 3),
                         DetectorParams.of(CFG))
    v = decide(cands, instructed_s=onset_s, tolerance_s=0.5)
    assert v.outcome == "on_time"
    assert v.detected_s is not None
    assert abs(v.detected_s - onset_s) <= 0.05
    assert v.gates["semantic_family"] == "exempt"


def test_no_change_gives_no_credit(tmp_path: Path, rng: np.random.Generator) -> None:
    y = _bed(12 * SR, rng)
    bank = _bank(tmp_path, y)
    v = decide(run_detector(bank, _ctx("instrument_entry", 6.0, lo=3.0, hi=9.0), DetectorParams.of(CFG)),
               instructed_s=6.0, tolerance_s=0.5)
    assert v.outcome == "none"


def test_pre_existing_layer_is_rejected(tmp_path: Path, rng: np.random.Generator) -> None:
    """The same high chord played before, a gap, then again: not an entrance."""
    n = 14 * SR
    y = _bed(n, rng)
    t = np.arange(n) / SR
    layer = _tone([880.0, 1108.7, 1318.5], t, amp=0.15)
    on = (t < 5.5) | (t >= 8.0)
    y += layer * on
    bank = _bank(tmp_path, y)
    v = decide(run_detector(bank, _ctx("instrument_entry", 8.0, lo=6.0, hi=11.0), DetectorParams.of(CFG)),
               instructed_s=8.0, tolerance_s=0.5)
    assert v.outcome == "none"
    assert v.rejected_by == "register_absent_before"


def test_exit_needs_sustained_absence(tmp_path: Path, rng: np.random.Generator) -> None:
    n = 14 * SR
    t = np.arange(n) / SR
    layer = _tone([880.0, 1108.7, 1318.5], t, amp=0.15)
    stop = _bed(n, rng) + layer * (t < 7.0)
    back = _bed(n, rng) + layer * ((t < 7.0) | (t >= 8.0))
    ok = decide(run_detector(_bank(tmp_path, stop), _ctx("instrument_exit", 7.0, lo=4.0, hi=10.0),
                             DetectorParams.of(CFG)),
                instructed_s=7.0, tolerance_s=0.5)
    assert ok.outcome == "on_time"
    assert ok.detected_s is not None and abs(ok.detected_s - 7.0) <= 0.15
    brief = decide(run_detector(_bank(tmp_path, back), _ctx("instrument_exit", 7.0, lo=4.0, hi=10.0),
                                DetectorParams.of(CFG)),
                   instructed_s=7.0, tolerance_s=0.5)
    assert brief.outcome == "none"


@pytest.mark.slow
@pytest.mark.parametrize(("recipe", "family", "seed"), [("entry_on_time", "strings", 2101),
                                                       ("entry_on_time", "brass", 2102)])
def test_rendered_entrance_is_credited(tmp_path: Path, recipe: str, family: str, seed: int) -> None:
    from timingbench.prompts import parse_prompt
    from timingbench.render import render_recipe
    from timingbench.runner import ScoreOptions, family_evidence_for

    clip = render_recipe(recipe, seed=seed, out_dir=tmp_path, split="dev", family=family)
    bank = compute_bank(load_clip(clip.audio_path, CFG), CFG, separation="dsp")
    prompt = parse_prompt(clip.prompt)
    ev, _ = family_evidence_for(bank, prompt, CFG, ScoreOptions(separation="dsp"))
    e = prompt.events[0]
    cands = run_detector(bank, EventContext(e.kind, e.family, e.target, e.time_s, e.time_s - 5, e.time_s + 5),
                         DetectorParams.of(CFG), family_evidence=ev)
    v = decide(cands, instructed_s=e.time_s, tolerance_s=0.5)
    truth = clip.truth[0]["onset_s"]
    assert v.outcome == "on_time", v
    assert v.detected_s is not None and abs(v.detected_s - truth) <= 0.25


def test_harmonic_registers_follow_the_mix_frames(tmp_path: Path, rng: np.random.Generator) -> None:
    """Harmonic-part log-mel: same frames as the mix; drum clicks barely move its registers."""
    from timingbench.detectors.tonal import harmonic_logmel

    n = 8 * SR
    y = _bed(n, rng)
    clicks = np.zeros(n)
    clicks[:: SR // 4] = 1.0
    y = y + np.convolve(clicks, 0.5 * rng.standard_normal(256), mode="same")
    bank = _bank(tmp_path, y)
    h = harmonic_logmel(bank)
    assert h.shape == np.asarray(bank.logmel).shape and h.dtype == np.float32
    top = slice(96, 128)  # registers far above the drone: only the clicks reach them

    def spread(m: np.ndarray) -> float:
        return float(np.ptp(register_levels(m[top], width=8).mean(axis=0)))

    assert spread(h) < spread(np.asarray(bank.logmel))


def test_unknown_register_source_raises(tmp_path: Path, rng: np.random.Generator) -> None:
    from timingbench.errors import ParameterError

    bank = _bank(tmp_path, _bed(6 * SR, rng))
    cfg = CFG.with_value("tonal.register_source", "stems")
    with pytest.raises(ParameterError, match="register_source"):
        run_detector(bank, _ctx("instrument_entry", 3.0, lo=1.0, hi=5.0), DetectorParams.of(cfg))

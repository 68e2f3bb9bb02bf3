"""Whole-mix detectors (music start, end, pause) and the energy-increase detector.

Fast tests build synthetic clips whose event times are exact by construction (a
sample-accurate cut, a fade that is linear in dB, a final hit that decays exponentially);
slow tests render reference scenarios with FluidSynth and compare with their truth rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from timingbench.audio import load_clip
from timingbench.config import Config
from timingbench.detectors.energy import window_means
from timingbench.features import compute_bank
from timingbench.render.synth import write_wav
from timingbench.scoring import DetectorParams, decide, run_detector
from timingbench.verdicts import Candidate, EventContext

SR = 44100
DUR = 30.0


def _notes(rng: np.random.Generator, t0: float, t1: float, *, step_s: float = 0.25,
           decay_s: float = 0.3) -> np.ndarray:
    """A pulse of decaying tone bursts (one every ``step_s``) over ``[t0, t1)``."""
    y = np.zeros(int(round(DUR * SR)))
    burst_n = int(round(4 * decay_s * SR))
    tt = np.arange(burst_n) / SR
    env = np.exp(-tt / decay_s)
    for k, start in enumerate(np.arange(t0, t1, step_s)):
        f = 220.0 * 2 ** (rng.integers(0, 12) / 12)
        burst = env * (np.sin(2 * np.pi * f * tt) + 0.5 * np.sin(4 * np.pi * f * tt))
        burst += 0.05 * rng.standard_normal(burst_n) * env
        a = int(round(start * SR))
        b = min(a + burst_n, y.size)
        y[a:b] += (1.0 if k % 4 == 0 else 0.7) * burst[: b - a]
    return y


def _bank(tmp_path: Path, y: np.ndarray, config: Config, *, name: str, gain_db: float = 0.0) -> Any:
    path = tmp_path / f"{name}.wav"
    peak = float(np.max(np.abs(y)))
    write_wav(path, y / peak * 10 ** ((-1.0 + gain_db) / 20), sr=SR)
    return compute_bank(load_clip(path, config), config, separation="none")


def _ctx(kind: str, t: float, *, window_s: float = 5.0) -> EventContext:
    return EventContext(kind, "mix", "music", t, max(t - window_s, 0.0), min(t + window_s, DUR))


def _passing(cands: list[Candidate]) -> list[Candidate]:
    return [c for c in cands if c.rejected_by is None]


@pytest.fixture
def cut_clip(rng: np.random.Generator) -> tuple[np.ndarray, float]:
    t_cut = 17.3 + 123 / SR  # off the frame grid
    y = _notes(rng, 0.0, DUR)
    y[int(round(t_cut * SR)):] = 0.0
    return y, t_cut


def test_cut_is_placed_within_a_frame(tmp_path: Path, config: Config,
                                      cut_clip: tuple[np.ndarray, float]) -> None:
    y, t_cut = cut_clip
    bank = _bank(tmp_path, y, config, name="cut")
    got = _passing(run_detector(bank, _ctx("music_end", 17.0), DetectorParams.of(config)))
    assert len(got) == 1
    assert got[0].stats["edge"] == "cut"
    np.testing.assert_allclose(got[0].time_s, t_cut, atol=0.012)


@pytest.mark.parametrize("gain_db", [-12.0, -20.0])
def test_verdicts_do_not_depend_on_gain(tmp_path: Path, config: Config, rng: np.random.Generator,
                                        gain_db: float) -> None:
    y = _notes(rng, 0.0, 20.0)
    fade = np.ones_like(y)
    f0, length = 15.0, 6.0
    t = np.arange(y.size) / SR
    inside = (t >= f0) & (t < f0 + length)
    fade[inside] = 10 ** (-60.0 * (t[inside] - f0) / length / 20)
    fade[t >= f0 + length] = 0.0
    y = y * fade
    ref = run_detector(_bank(tmp_path, y, config, name="ref"), _ctx("music_end", 17.0), DetectorParams.of(config))
    low = run_detector(_bank(tmp_path, y, config, name="low", gain_db=gain_db), _ctx("music_end", 17.0),
                       DetectorParams.of(config))
    assert [c.rejected_by for c in low] == [c.rejected_by for c in ref]
    np.testing.assert_allclose([c.time_s for c in low], [c.time_s for c in ref], atol=0.012)


def test_fade_point_is_23_db_down(tmp_path: Path, config: Config, rng: np.random.Generator) -> None:
    y = _notes(rng, 0.0, DUR)
    f0, length, depth = 12.0, 6.0, 60.0
    t = np.arange(y.size) / SR
    g = np.ones_like(y)
    inside = (t >= f0) & (t < f0 + length)
    g[inside] = 10 ** (-depth * (t[inside] - f0) / length / 20)
    g[t >= f0 + length] = 0.0
    bank = _bank(tmp_path, y * g, config, name="fade")
    point = f0 + length * float(config.params.mix.fade_point_below_loud_db) / depth
    got = _passing(run_detector(bank, _ctx("music_end", point), DetectorParams.of(config)))
    assert got and {c.stats["edge"] for c in got} == {"fade"}
    # the decaying bursts of the tail may cross the silence line twice: both read one fade
    np.testing.assert_allclose([c.time_s for c in got], point, atol=0.15)


def test_final_hit_that_rings_out_is_the_edge(tmp_path: Path, config: Config,
                                              rng: np.random.Generator) -> None:
    t_hit = 16.0
    y = 0.5 * _notes(rng, 0.0, t_hit - 0.1)
    n0 = int(round(t_hit * SR))
    tt = np.arange(int(2.5 * SR)) / SR
    # a loud chord decaying 20 dB/s, then released 60 dB down in 0.2 s
    chord = sum(np.sin(2 * np.pi * f * tt) for f in (110.0, 164.8, 220.0, 277.2)) * 10 ** (-20 * tt / 20)
    chord[-int(0.2 * SR):] *= np.linspace(1.0, 0.0, int(0.2 * SR))
    y[n0 : n0 + tt.size] += chord
    bank = _bank(tmp_path, y, config, name="hit")
    got = _passing(run_detector(bank, _ctx("music_end", t_hit), DetectorParams.of(config)))
    assert len(got) == 1 and got[0].stats["edge"] == "accent"
    np.testing.assert_allclose(got[0].time_s, t_hit, atol=0.03)


def test_pause_resumes_and_is_not_an_end(tmp_path: Path, config: Config, rng: np.random.Generator) -> None:
    t_p, gap = 9.5, 4.0
    y = _notes(rng, 0.0, DUR)
    y[int(round(t_p * SR)) : int(round((t_p + gap) * SR))] = 0.0
    bank = _bank(tmp_path, y, config, name="pause")
    pause = _passing(run_detector(bank, _ctx("music_pause", t_p), DetectorParams.of(config)))
    assert len(pause) == 1
    np.testing.assert_allclose(pause[0].time_s, t_p, atol=0.012)
    end = run_detector(bank, _ctx("music_end", t_p), DetectorParams.of(config))
    assert end and not _passing(end)
    assert {c.rejected_by for c in end} == {"stays_down"}


@pytest.mark.parametrize(("gap", "credited"), [(3.2, True), (1.7, False)])
def test_pause_needs_the_bounded_3_s_quiet(tmp_path: Path, config: Config, rng: np.random.Generator,
                                          gap: float, credited: bool) -> None:
    # paper Sec. IV-B: a pause is quiet for the bounded 3 s after its edge, then may resume
    t_p = 9.5
    y = _notes(rng, 0.0, DUR)
    y[int(round(t_p * SR)) : int(round((t_p + gap) * SR))] = 0.0
    bank = _bank(tmp_path, y, config, name=f"gap{gap}")
    assert bool(_passing(run_detector(bank, _ctx("music_pause", t_p), DetectorParams.of(config)))) is credited


def test_disabled_quiet_fraction_skips_the_check(tmp_path: Path, config: Config,
                                                 rng: np.random.Generator) -> None:
    # switching a constant off removes its check; it never makes the gate stricter
    t_p = 9.5
    y = _notes(rng, 0.0, DUR)
    y[int(round(t_p * SR)) : int(round((t_p + 1.0) * SR))] = 0.0
    bank = _bank(tmp_path, y, config, name="short-gap")
    cands = run_detector(bank, _ctx("music_end", t_p), DetectorParams.of(config))
    assert cands and all(c.gates["stays_down"] == "fail" for c in cands)
    off = config.with_disabled("mix.quiet_min_fraction")
    assert all(c.gates["stays_down"] == "pass"
               for c in run_detector(bank, _ctx("music_end", t_p), DetectorParams.of(off)))


@pytest.mark.parametrize("kind", ["music_end", "music_pause", "music_start_after_silence",
                                  "mix_energy_increase"])
def test_music_throughout_credits_nothing(tmp_path: Path, config: Config, rng: np.random.Generator,
                                          kind: str) -> None:
    bank = _bank(tmp_path, _notes(rng, 0.0, DUR), config, name="steady")
    assert not _passing(run_detector(bank, _ctx(kind, 14.0), DetectorParams.of(config)))


def test_start_after_silence(tmp_path: Path, config: Config, rng: np.random.Generator) -> None:
    t_s = 4.0
    bank = _bank(tmp_path, _notes(rng, t_s, DUR), config, name="start")
    got = _passing(run_detector(bank, _ctx("music_start_after_silence", t_s), DetectorParams.of(config)))
    assert len(got) == 1
    np.testing.assert_allclose(got[0].time_s, t_s, atol=0.03)


def test_energy_increase_and_silence_before(tmp_path: Path, config: Config, rng: np.random.Generator) -> None:
    t_e = 12.0
    y = 0.25 * _notes(rng, 0.0, t_e, step_s=0.5) + _notes(rng, t_e, DUR, step_s=0.125)
    bank = _bank(tmp_path, y, config, name="energy")
    got = _passing(run_detector(bank, _ctx("mix_energy_increase", t_e), DetectorParams.of(config)))
    assert len(got) >= 1
    best = min(got, key=lambda c: abs(c.time_s - t_e))
    np.testing.assert_allclose(best.time_s, t_e, atol=0.03)
    # music out of digital silence is a start, not an energy increase
    quiet_start = _bank(tmp_path, _notes(rng, 1.0, DUR), config, name="from_silence")
    cands = run_detector(quiet_start, _ctx("mix_energy_increase", 3.0, window_s=3.0), DetectorParams.of(config))
    assert not _passing(cands)


def test_window_means_edges() -> None:
    pre, post = window_means(np.arange(6.0), 2, 3)
    assert np.isnan(pre[:2]).all() and np.isnan(pre[4:]).all()
    np.testing.assert_allclose(pre[2:4], [0.5, 1.5])
    np.testing.assert_allclose(post[2:4], [3.0, 4.0])


@pytest.mark.parametrize(("detected", "outcome"), [(20.5, "on_time"), (19.5, "on_time"),
                                                    (20.500001, "off_time")])
def test_credit_exactly_on_the_tolerance_edge(detected: float, outcome: str) -> None:
    cand = Candidate(detected, gates={"decay": "pass", "stays_down": "pass"})
    assert decide([cand], instructed_s=20.0, tolerance_s=0.5).outcome == outcome


# ----------------------------------------------------------------- rendered references

RENDERED = [
    ("end_cut", 4901, {"offset_s": 0.0}),
    ("end_decay", 4902, {"offset_s": 0.0}),
    ("end_fade", 4901, {"offset_s": -1.5}),
    ("pause", 4901, {"offset_s": 0.8}),
    ("silence_then_start", 4901, {"offset_s": 0.0}),
    ("energy_increase", 4901, {"offset_s": 1.2}),
]


@pytest.mark.slow
@pytest.mark.parametrize(("recipe", "seed", "params"), RENDERED)
def test_rendered_scenarios_match_truth(tmp_path: Path, config: Config, recipe: str, seed: int,
                                        params: dict[str, Any]) -> None:
    from timingbench.prompts import parse_prompt
    from timingbench.render import render_recipe
    from timingbench.scoring import score_event

    clip = render_recipe(recipe, seed=seed, out_dir=tmp_path, split="dev", **params)
    bank = compute_bank(load_clip(clip.audio_path, config), config, separation="none")
    prompt = parse_prompt(clip.prompt)
    verdict, _ = score_event(bank, prompt, 0, config, with_chance=False)
    truth = clip.truth[0]["onset_s"]
    instructed = prompt.events[0].time_s
    expected = "on_time" if abs(truth - instructed) <= 0.5 else "off_time"
    assert verdict.outcome == expected
    assert verdict.detected_s is not None
    np.testing.assert_allclose(verdict.detected_s, truth, atol=0.1)


@pytest.mark.slow
def test_soft_final_chord_gives_no_candidate(tmp_path: Path, config: Config) -> None:
    """A final chord with no attack on the onset curve (a pad swelling in) has no last
    accent to snap to; the detector reports nothing rather than the later release."""
    from timingbench.render import render_recipe

    clip = render_recipe("end_decay", seed=4901, out_dir=tmp_path, split="dev", offset_s=0.0)
    bank = compute_bank(load_clip(clip.audio_path, config), config, separation="none")
    truth = clip.truth[0]["onset_s"]
    assert not _passing(run_detector(bank, _ctx("music_end", truth), DetectorParams.of(config)))

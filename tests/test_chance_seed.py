"""p_chance is a property of the audio and the event: never of the clip's file name; its
draws are stratified, and the discounted rate carries the spread the draws give it."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf
from hypothesis import given, settings
from hypothesis import strategies as st

from timingbench.config import Config
from timingbench.executors import LocalExecutor
from timingbench.runner import ScoreOptions, score_folder
from timingbench.scoring import audio_content_key, chance_times
from timingbench.summary import chance_standard_error

SR = 22050
DURATION_S = 20.0


def _rising_noise(rng: np.random.Generator) -> np.ndarray:
    """Noise bursts whose level jumps by 15 dB every 5 s: chance instructions land on a rise often."""
    t = np.arange(int(SR * DURATION_S)) / SR
    level = np.where((t % 5.0) < 2.5, 0.05, 0.3)
    return (rng.normal(0.0, 1.0, t.size) * level * (0.3 + np.exp(-(t % 0.25) * 30.0))).astype(np.float32)


def _prompt_file(tmp: Path) -> Path:
    path = tmp / "prompts.jsonl"
    path.write_text(json.dumps({
        "id": "p1", "family": "single_event", "text": "Lift the energy at the 8th second.", "duration_s": DURATION_S,
        "events": [{"id": "p1/e1", "kind": "mix_energy_increase", "family": "mix", "time_s": 8.0,
                    "tolerance_s": 0.5}]}) + "\n")
    return path


def _score(clips: Path, prompts: Path, out: Path, config: Config) -> Any:
    return score_folder(clips, prompts, out, config, jobs=1, executor=LocalExecutor(1),
                        opts=ScoreOptions(separation="dsp", family_evidence="none", use_cache=False))


def test_renaming_a_clip_leaves_its_p_chance_unchanged(tmp_path: Path, config: Config,
                                                       rng: np.random.Generator) -> None:
    # byte-identical copies of one clip under four sample names got p_chance 0.06 to 0.25
    clips = tmp_path / "clips"
    clips.mkdir()
    sf.write(clips / "p1.wav", _rising_noise(rng), SR, subtype="FLOAT")
    for name in ("p1__1.wav", "p1__2.wav", "p1__3.wav"):
        shutil.copy(clips / "p1.wav", clips / name)
    res = _score(clips, _prompt_file(tmp_path), tmp_path / "out", config)
    p = [e["p_chance"] for e in res.events]
    assert len(p) == 4 and p[0] is not None and 0.0 < p[0] < 1.0  # the clip is one chance can credit
    assert p == [p[0]] * 4


def test_one_audio_in_two_containers_gets_one_p_chance(tmp_path: Path, config: Config,
                                                       rng: np.random.Generator) -> None:
    # the same 16-bit samples in a WAV and a FLAC file: different bytes, one decoded signal
    x = np.round(np.clip(_rising_noise(rng), -1.0, 1.0) * 32767).astype(np.int16)
    clips = tmp_path / "clips"
    clips.mkdir()
    sf.write(clips / "p1.wav", x, SR, subtype="PCM_16")
    sf.write(clips / "p1__1.flac", x, SR, subtype="PCM_16")
    assert (clips / "p1.wav").read_bytes() != (clips / "p1__1.flac").read_bytes()
    res = _score(clips, _prompt_file(tmp_path), tmp_path / "out", config)
    assert res.events[0]["p_chance"] is not None
    assert res.events[0]["p_chance"] == res.events[1]["p_chance"]


def test_audio_content_key_reads_the_samples_and_the_rate(rng: np.random.Generator) -> None:
    x = rng.normal(size=1000).astype(np.float32)
    assert audio_content_key(x, sr=SR) == audio_content_key(x.copy(), sr=SR)
    assert audio_content_key(x, sr=SR) != audio_content_key(x, sr=2 * SR)
    y = x.copy()
    y[500] += 1e-3
    assert audio_content_key(x, sr=SR) != audio_content_key(y, sr=SR)


@settings(max_examples=60)
@given(st.floats(0.0, 40.0), st.floats(0.5, 40.0), st.integers(1, 200))
def test_chance_times_are_stratified_over_the_span_minus_the_instruction(t: float, span: float, draws: int) -> None:
    from timingbench.params.detectors import ChanceParams

    params = ChanceParams(draws=draws, seed=1, min_distance_s=1.0)
    times = chance_times(audio_key="k", event_id="e", instructed_s=t, lo_s=0.0, hi_s=span, params=params)
    if span <= 2.0:
        assert times.size == 0
        return
    assert times.size == draws
    assert np.all((times >= 0.0) & (times <= span))
    assert np.all(np.abs(times - t) >= 1.0 - 1e-9)
    # one draw per stratum of the allowed length: sorted draws in distinct strata
    allowed = span - (min(span, t + 1.0) - max(0.0, min(t - 1.0, span)))
    u = np.where(times < t, times, times - (min(span, t + 1.0) - max(0.0, min(t - 1.0, span))))
    strata = np.floor(np.clip(u / allowed * draws, 0, draws - 1e-9)).astype(int)
    assert sorted(strata.tolist()) == list(range(draws))


def test_stratified_draws_spread_no_more_than_binomial_draws() -> None:
    """Across seeds, p_chance of a known credit pattern varies at most as a binomial proportion."""
    from timingbench.params.detectors import ChanceParams

    rises = np.array([2.5, 7.5, 12.5, 17.5])  # chance is credited within 0.5 s of a rise

    def p_chance(seed: int, draws: int) -> float:
        params = ChanceParams(draws=draws, seed=seed, min_distance_s=1.0)
        t = chance_times(audio_key="k", event_id="e", instructed_s=8.0, lo_s=0.0, hi_s=20.0, params=params)
        return float(np.mean(np.min(np.abs(t[:, None] - rises[None, :]), axis=1) <= 0.5))

    truth = 3.0 / 18.0  # credited seconds (the rise at 7.5 s lies in the excluded 7-9 s) / allowed seconds
    for draws, bound in ((16, 1.0), (128, 0.5)):  # independent draws would spread the full binomial s.e.
        ps = np.array([p_chance(seed, draws) for seed in range(300)])
        assert abs(ps.mean() - truth) < 0.01  # unbiased
        assert ps.std() <= bound * math.sqrt(truth * (1 - truth) / draws)


def test_chance_standard_error_is_the_binomial_one() -> None:
    rows = [{"outcome": "on_time", "p_chance": 0.25}, {"outcome": "on_time", "p_chance": None},
            {"outcome": "none", "p_chance": 0.5}, {"outcome": "on_time", "p_chance": 0.0}]
    se = chance_standard_error(rows, draws=64)
    assert se == pytest.approx(math.sqrt(0.25 * 0.75 / 64) / 4, abs=1e-6)
    assert chance_standard_error(rows, draws=None) is None and chance_standard_error([], draws=64) is None


def test_summary_and_table_carry_the_chance_spread(tmp_path: Path, config: Config,
                                                    rng: np.random.Generator) -> None:
    from timingbench.summary import format_table

    clips = tmp_path / "clips"
    clips.mkdir()
    sf.write(clips / "p1.wav", _rising_noise(rng), SR, subtype="FLOAT")
    res = _score(clips, _prompt_file(tmp_path), tmp_path / "out", config)
    s = res.summary
    assert s["chance_credit"]["draws"] == config.params.chance.draws
    expected = chance_standard_error(res.events, draws=config.params.chance.draws)
    assert s["p_chance_discounted_on_time_rate_chance_se"] == expected
    assert "p_chance_discounted_on_time_rate_identity_verified_chance_se" in s
    assert "chance s.e." in format_table(s)

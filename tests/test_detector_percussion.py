"""Percussion detector with the dsp route: routing invariants and rendered clips with exact truth."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from timingbench.audio import load_clip
from timingbench.config import Config
from timingbench.detectors.percussion import (
    _route_features,
    _train_start,
    percussion_routes,
)
from timingbench.errors import ConfigError
from timingbench.features import compute_bank
from timingbench.features.separation import route_percussion, route_percussion_low
from timingbench.prompts import parse_prompt
from timingbench.render import render_recipe
from timingbench.scoring import score_event

SR, NFFT = 44100, 2048


def _freqs(n_bins: int) -> np.ndarray:
    return np.arange(n_bins) * (SR / NFFT)


def test_route_keeps_only_drum_bands(rng: np.random.Generator) -> None:
    h = rng.uniform(0.0, 1.0, (1025, 40))
    p = rng.uniform(0.0, 1.0, (1025, 40))
    out = route_percussion(h, p, sr=SR, n_fft=NFFT, margin=2.0, sub_hz=90.0, high_hz=5000.0)
    f = _freqs(1025)
    mid = (f >= 90.0) & (f < 5000.0)
    assert np.all(out[mid] == 0.0)
    assert np.all(out[~mid] <= (h + p)[~mid] + 1e-12)


@pytest.mark.parametrize("margin", [1.0, 2.0, 4.0])
def test_route_margin_monotone_and_exact_at_edges(margin: float) -> None:
    # a purely percussive bin passes whole, a purely harmonic one not at all
    h = np.array([[0.0, 1.0, 1.0]] * 3)
    p = np.array([[1.0, 0.0, 1.0]] * 3)
    out = route_percussion(h, p, sr=SR, n_fft=NFFT, margin=margin, sub_hz=SR, high_hz=SR + 1.0)
    np.testing.assert_allclose(out[:, 0], 1.0, atol=1e-12)
    np.testing.assert_allclose(out[:, 1], 0.0, atol=1e-12)
    np.testing.assert_allclose(out[:, 2], 2.0 / (1.0 + margin**4), atol=1e-12)


@pytest.mark.parametrize("kw", [{"margin": 0.5}, {"sub_hz": 6000.0}, {"margin": None}])
def test_route_rejects_bad_constants(kw: dict) -> None:
    args = {"margin": 2.0, "sub_hz": 90.0, "high_hz": 5000.0, **kw}
    with pytest.raises(ConfigError, match="percussion.route_"):
        route_percussion(np.ones((4, 2)), np.ones((4, 2)), sr=SR, n_fft=NFFT, **args)


def test_low_route_keeps_only_its_band(rng: np.random.Generator) -> None:
    h = rng.uniform(0.0, 1.0, (1025, 40))
    p = rng.uniform(0.0, 1.0, (1025, 40))
    out = route_percussion_low(h, p, sr=SR, n_fft=NFFT, margin=2.0, lo_hz=40.0, hi_hz=240.0)
    f = _freqs(1025)
    band = (f >= 40.0) & (f < 240.0)
    assert np.all(out[~band] == 0.0)
    np.testing.assert_allclose(out[band], route_percussion(h, p, sr=SR, n_fft=NFFT, margin=2.0, sub_hz=240.0,
                                                           high_hz=SR)[band], atol=1e-12)


@pytest.mark.parametrize("kw", [{"lo_hz": 300.0}, {"hi_hz": None}])
def test_low_route_rejects_bad_constants(kw: dict) -> None:
    args = {"margin": 2.0, "lo_hz": 40.0, "hi_hz": 240.0, **kw}
    with pytest.raises(ConfigError, match="percussion.route_low"):
        route_percussion_low(np.ones((4, 2)), np.ones((4, 2)), sr=SR, n_fft=NFFT, **args)


class _DspBank:
    separation_backend = "dsp"


def test_low_route_is_read_only_when_enabled(config: Config) -> None:
    on = config.with_value("percussion.route_low_hz", 40.0)
    assert percussion_routes(_DspBank(), on.params.percussion) == ("high", "low")
    off = config.with_disabled("percussion.route_low_hz")
    assert percussion_routes(_DspBank(), off.params.percussion) == ("high",)


def test_route_features_gain_invariant(rng: np.random.Generator) -> None:
    mel = rng.uniform(0.0, 1.0, (16, 200)) ** 4
    mel[:, 100:] *= 30.0  # a train enters at frame 100
    g = 10.0 ** (-20.0 / 10.0)
    a, b = (_route_features(mel * s, mel_ref=float(mel.max()) * s, db_range=80.0, band_floor_pct=50.0,
                            loud_pct=95.0, smooth_frames=5) for s in (1.0, g))
    np.testing.assert_allclose(a["onset"], b["onset"], atol=1e-9)
    np.testing.assert_allclose(a["envelope_db"], b["envelope_db"], atol=1e-9)
    assert a["envelope_db"][120:180].mean() > a["envelope_db"][20:80].mean() + 3.0


@pytest.mark.parametrize(
    ("density", "expected"),
    [([0.2, 0.3, 0.5, 0.2, 0.6, 0.9], 4),  # one past the last quiet frame, not the first
     ([0.5, 0.6, 0.7, 0.8, 0.9, 1.0], 0),  # never quiet: the span's start
     ([0.1, 0.1, 0.1, 0.1, 0.1, 0.45], 5),  # exactly on the quiet level is not quiet
     ]
)
def test_train_start_after_last_quiet_frame(density: list[float], expected: int) -> None:
    assert _train_start(np.asarray(density), 0, len(density), 0.45) == expected


def test_train_start_clips_span_to_the_grid() -> None:
    d = np.array([0.1, 0.9, 0.9])
    assert _train_start(d, -5, 10, 0.45) == 1
    assert _train_start(d, 1, 3, 0.45) == 1


def _score(rc, config: Config):  # type: ignore[no-untyped-def]
    prompt = parse_prompt(rc.prompt)
    bank = compute_bank(load_clip(rc.audio_path, config), config, separation="dsp")
    verdict, _ = score_event(bank, prompt, 0, config, with_chance=False)
    return verdict


@pytest.mark.slow
@pytest.mark.parametrize(
    ("recipe", "seed", "params"),
    [("entry_on_time", 2004, {"family": "percussion"}),
     ("exit_on_time", 2032, {"family": "percussion"})],
)
def test_rendered_kit_event_is_on_time_within_a_frame(recipe: str, seed: int, params: dict, config: Config,
                                                      tmp_path: Path) -> None:
    rc = render_recipe(recipe, seed=seed, out_dir=tmp_path, split="dev", **params)
    verdict = _score(rc, config)
    truth = rc.truth[0]["onset_s"]
    assert verdict.outcome == "on_time", verdict
    assert abs(verdict.detected_s - truth) <= 0.012


@pytest.mark.slow
def test_rendered_never_delivered_gives_none(config: Config, tmp_path: Path) -> None:
    rc = render_recipe("never_delivered", seed=2072, out_dir=tmp_path, split="dev",
                       family="percussion", kind="instrument_entry")
    assert _score(rc, config).outcome == "none"


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2061, 2069])
def test_rendered_pre_existing_train_with_a_gap_is_rejected(seed: int, config: Config, tmp_path: Path) -> None:
    # drums play, pause a few seconds, and resume at the instructed time: not an entrance
    rc = render_recipe("pre_existing", seed=seed, out_dir=tmp_path, split="dev", family="percussion")
    verdict = _score(rc, config)
    assert verdict.outcome == "none"
    assert verdict.rejected_by == "absence_before"


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2011, 2008])
def test_rendered_entry_snaps_past_bleed_to_the_first_hit(seed: int, config: Config, tmp_path: Path) -> None:
    # bleed before the train (2011) and a first hit that alone barely lifts the density (2008)
    rc = render_recipe("entry_on_time", seed=seed, out_dir=tmp_path, split="dev", family="percussion")
    verdict = _score(rc, config)
    assert verdict.outcome == "on_time", verdict
    assert abs(verdict.detected_s - rc.truth[0]["onset_s"]) <= 0.012

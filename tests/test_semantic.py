"""Family evidence: the gate's decisions, the timbre match, the backends and the bank cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from timingbench.config import Config
from timingbench.errors import ParameterError
from timingbench.families import FAMILY_NAMES
from timingbench.identity.evidence import FamilyEvidence
from timingbench.identity.providers import family_evidence
from timingbench.identity.rules import family_rise, timbre_match

HOP = 0.5
WINDOW = 3.0


def _evidence(curves: dict[str, np.ndarray], *, exempt: dict[str, str] | None = None) -> FamilyEvidence:
    n = len(next(iter(curves.values())))
    times = 1.5 + HOP * np.arange(n)
    return FamilyEvidence(times=times, curves={k: np.asarray(v, float) for k, v in curves.items()},
                          backend="musicnn", exempt=exempt or {}, window_s=WINDOW)


def _step(t_enter: float, lo: float, hi: float, n: int = 50) -> np.ndarray:
    """Evidence of a family entering at t_enter: windows overlapping it ramp up."""
    times = 1.5 + HOP * np.arange(n)
    frac = np.clip((times + WINDOW / 2 - t_enter) / WINDOW, 0.0, 1.0)
    return lo + (hi - lo) * frac


def test_entrance_from_quiet_passes(config: Config) -> None:
    ev = _evidence({"strings": _step(12.0, 0.02, 0.8)})
    verdict, detail = family_rise(ev, "strings", candidate_s=12.0, semantic=config.params.semantic,
                                  evidence_params=config.params.evidence)
    assert verdict == "pass"
    assert detail["before"] == pytest.approx(0.02) and detail["after"] == pytest.approx(0.8)


def test_family_present_before_fails_not_quiet(config: Config) -> None:
    # rises by 2.2 log-odds, but was already at 0.6 before
    ev = _evidence({"strings": _step(12.0, 0.6, 0.95)})
    verdict, detail = family_rise(ev, "strings", candidate_s=12.0, semantic=config.params.semantic,
                                  evidence_params=config.params.evidence)
    assert (verdict, detail["reason"]) == ("fail", "not_quiet_before")


def test_other_family_entering_fails_no_rise(config: Config) -> None:
    ev = _evidence({"strings": np.full(50, 0.05), "piano": _step(12.0, 0.0, 0.9)})
    verdict, detail = family_rise(ev, "strings", candidate_s=12.0, semantic=config.params.semantic,
                                  evidence_params=config.params.evidence)
    assert (verdict, detail["reason"]) == ("fail", "no_rise")


def test_gate_only_vetoes_at_the_candidate(config: Config) -> None:
    # the family enters at 20 s: a candidate at 12 s must be rejected, one at 20 s passes
    ev = _evidence({"strings": _step(20.0, 0.02, 0.8)})
    assert family_rise(ev, "strings", candidate_s=12.0, semantic=config.params.semantic,
                       evidence_params=config.params.evidence)[0] == "fail"
    assert family_rise(ev, "strings", candidate_s=20.0, semantic=config.params.semantic,
                       evidence_params=config.params.evidence)[0] == "pass"


def test_window_exactly_on_the_edge_counts(config: Config) -> None:
    # candidate 6.0: the window centred at 4.5 (= 6.0 - 1.5) ends exactly at the candidate
    curve = np.full(50, 0.9)
    curve[:7] = 0.0  # centres 1.5 .. 4.5 quiet
    ev = _evidence({"strings": curve})
    verdict, detail = family_rise(ev, "strings", candidate_s=6.0, semantic=config.params.semantic,
                                  evidence_params=config.params.evidence)
    assert verdict == "pass" and detail["before"] == 0.0
    curve[6] = 0.9  # the edge window now holds the family: it is part of "before"
    strict = config.with_value("semantic.pre_percentile", 100.0)
    verdict, detail = family_rise(_evidence({"strings": curve}), "strings", candidate_s=6.0,
                                  semantic=strict.params.semantic, evidence_params=strict.params.evidence)
    assert (verdict, detail["before"]) == ("fail", 0.9)
    # ... and the first window after starts exactly at the candidate (centre 7.5)
    curve[:] = 0.0
    curve[12:] = 0.9
    assert family_rise(_evidence({"strings": curve}), "strings", candidate_s=6.0, semantic=config.params.semantic,
                       evidence_params=config.params.evidence)[1]["after"] == 0.9


@pytest.mark.parametrize("t", [0.5, 2.9, 48.0])
def test_no_window_wholly_before_or_after_is_exempt(config: Config, t: float) -> None:
    ev = _evidence({"strings": _step(12.0, 0.0, 0.8)})
    verdict, detail = family_rise(ev, "strings", candidate_s=t, semantic=config.params.semantic,
                                  evidence_params=config.params.evidence)
    assert (verdict, detail["reason"]) == ("exempt", "insufficient_context")


def test_exempt_families_are_disclosed_not_judged(config: Config) -> None:
    ev = _evidence({"strings": np.zeros(50)}, exempt={"brass": "not_in_vocabulary"})
    assert family_rise(ev, "brass", candidate_s=12.0, semantic=config.params.semantic,
                       evidence_params=config.params.evidence) == (
        "exempt", {"backend": "musicnn", "before": None, "after": None, "rise": None,
                   "reason": "not_in_vocabulary"})
    assert family_rise(ev, "keys", candidate_s=12.0, semantic=config.params.semantic,
                       evidence_params=config.params.evidence)[0] == "exempt"


def test_disabled_constants_skip_their_check(config: Config) -> None:
    ev = _evidence({"strings": _step(12.0, 0.6, 0.95)})
    assert family_rise(ev, "strings", candidate_s=12.0, semantic=config.params.semantic,
                       evidence_params=config.params.evidence)[0] == "fail"
    loose = config.with_disabled("semantic.quiet_max")
    assert family_rise(ev, "strings", candidate_s=12.0, semantic=loose.params.semantic,
                       evidence_params=loose.params.evidence)[0] == "pass"
    flat = _evidence({"strings": np.full(50, 0.01)})
    assert family_rise(flat, "strings", candidate_s=12.0,
                       semantic=(loose.with_disabled("semantic.min_logit_rise")).params.semantic,
                       evidence_params=(loose.with_disabled("semantic.min_logit_rise")).params.evidence)[0] == "pass"


@pytest.mark.parametrize("bad", ["mix", "drums"])
def test_unknown_family_raises(config: Config, bad: str) -> None:
    ev = _evidence({"strings": np.zeros(50)})
    with pytest.raises(ParameterError, match="instrument"):
        family_rise(ev, bad, candidate_s=12.0, semantic=config.params.semantic, evidence_params=config.params.evidence)
    with pytest.raises(ParameterError):
        family_rise(ev, "strings", candidate_s=float("nan"), semantic=config.params.semantic,
                    evidence_params=config.params.evidence)


def test_rise_is_measured_in_log_odds(config: Config) -> None:
    from timingbench.identity.rules import logit_rise

    # 0.01 -> 0.03 is a small absolute rise but triples the odds: the gate passes it
    ev = _evidence({"woodwinds": _step(12.0, 0.01, 0.03)})
    verdict, detail = family_rise(ev, "woodwinds", candidate_s=12.0, semantic=config.params.semantic,
                                  evidence_params=config.params.evidence)
    assert verdict == "pass" and detail["rise"] == pytest.approx(np.log(0.03 / 0.97) - np.log(0.01 / 0.99), abs=1e-4)
    # digital-silence evidence is clipped, so the rise stays finite
    assert logit_rise(0.0, 1.0, clip=0.001) == pytest.approx(2 * np.log(999), rel=1e-9)
    with pytest.raises(ParameterError, match="prob_clip"):
        logit_rise(0.1, 0.2, clip=0.0)


def test_timbre_match_names_the_family_that_rose(config: Config) -> None:
    ev = _evidence({"strings": np.full(50, 0.3), "piano": _step(12.0, 0.0, 0.9),
                    "guitar": _step(12.0, 0.1, 0.4)})
    hit = timbre_match(ev, "piano", after_s=12.0, semantic=config.params.semantic,
                       evidence_params=config.params.evidence)
    assert hit["match"] is True and hit["observed_family"] == "piano"
    miss = timbre_match(ev, "strings", after_s=12.0, semantic=config.params.semantic,
                        evidence_params=config.params.evidence)
    assert miss["match"] is False and miss["observed_family"] == "piano" and miss["rise"] == 0.0
    ex = timbre_match(_evidence({"strings": np.zeros(50)}, exempt={"synth": "unreliable_for_generated_audio"}),
                      "synth", after_s=12.0, semantic=config.params.semantic, evidence_params=config.params.evidence)
    assert ex["match"] is None and ex["reason"] == "unreliable_for_generated_audio"


# ------------------------------------------------------------------ musicnn backend


class _Bank:
    """The feature-bank surface family_evidence relies on."""

    def __init__(self, samples: np.ndarray, sr: int) -> None:
        self.samples, self.sr = samples, sr
        self.cache: dict[str, Any] = {}
        self.calls = 0

    def derived(self, key: str, fn: Any) -> Any:
        if key not in self.cache:
            self.calls += 1
            self.cache[key] = fn(self)
        return self.cache[key]


@pytest.fixture(scope="module")
def tone() -> np.ndarray:
    t = np.arange(44100 * 5) / 44100
    return (0.2 * np.sin(2 * np.pi * 261.6 * t) * np.exp(-(t % 0.5) * 4)).astype(np.float32)


def test_musicnn_evidence_shapes_and_exemptions(config: Config, tone: np.ndarray) -> None:
    ev = family_evidence(tone, sr=44100, semantic=config.params.semantic, evidence_params=config.params.evidence,
                         audio=config.params.audio)
    assert ev.backend == "musicnn"
    assert ev.times.shape == (5,)  # 5 s: patch centres 1.49 .. 3.49 s every 0.5 s
    np.testing.assert_allclose(np.diff(ev.times), 0.5, atol=0.016)  # rounded to 16 ms frames
    backend_only = {"bass": "not_in_vocabulary", "brass": "not_in_vocabulary",
                    "keys": "not_in_vocabulary", "synth": "unreliable_for_generated_audio",
                    "woodwinds": "tag_silent_on_dev_renders", "plucked": "tag_silent_on_dev_renders"}
    # what musicnn cannot hear keeps its reason; every other family the registry exempts is exempt with the
    # registry's reason, so musicnn judges no family the registry has not judged
    registry = dict(config.params.families.exempt)
    assert ev.exempt == {**{f: r for f, r in registry.items()}, **backend_only}
    assert set(ev.curves) | set(ev.exempt) == set(FAMILY_NAMES)
    for curve in ev.curves.values():
        assert curve.shape == (5,) and np.all((curve >= 0) & (curve <= 1))
    # a family's evidence is the max over its tags
    np.testing.assert_allclose(ev.curves["strings"], np.maximum.reduce(
        [ev.tag_curves[t] for t in ("strings", "violin", "cello")]))
    assert ev.disclosure()["exempt"]["synth"] == "unreliable_for_generated_audio"


def test_bank_caches_the_curves_under_a_versioned_key(config: Config, tone: np.ndarray) -> None:
    bank = _Bank(tone, 44100)
    a = family_evidence(bank, sr=44100, semantic=config.params.semantic, evidence_params=config.params.evidence,
                        audio=config.params.audio)
    b = family_evidence(bank, sr=44100, semantic=config.params.semantic, evidence_params=config.params.evidence,
                        audio=config.params.audio)
    assert bank.calls == 1
    (key,) = bank.cache
    assert key.startswith("semantic:musicnn:")
    np.testing.assert_array_equal(a.curves["piano"], b.curves["piano"])
    # the key is a digest of what the curves depend on: the input level is part of it
    louder = config.with_value("audio.input_loud_level_dbfs", config.params.audio.input_loud_level_dbfs + 6.0)
    family_evidence(bank, sr=44100, semantic=louder.params.semantic, evidence_params=louder.params.evidence,
                    audio=louder.params.audio)
    assert bank.calls == 2 and len(bank.cache) == 2
    np.testing.assert_allclose(a.curves["piano"],
                               family_evidence(tone, sr=44100, semantic=config.params.semantic,
                                               evidence_params=config.params.evidence,
                                               audio=config.params.audio).curves["piano"])


def test_short_clip_gives_no_windows(config: Config) -> None:
    ev = family_evidence(np.zeros(44100, dtype=np.float32), sr=44100, semantic=config.params.semantic,
                         evidence_params=config.params.evidence, audio=config.params.audio)
    assert ev.times.size == 0 and all(c.size == 0 for c in ev.curves.values())
    assert family_rise(ev, "piano", candidate_s=0.5, semantic=config.params.semantic,
                       evidence_params=config.params.evidence)[0] == "exempt"


def test_bad_arguments_raise(config: Config, tone: np.ndarray) -> None:
    with pytest.raises(ParameterError, match="backend"):
        family_evidence(tone, sr=44100, semantic=config.params.semantic, evidence_params=config.params.evidence,
                        audio=config.params.audio, backend="dsp")
    with pytest.raises(ParameterError, match="mono"):
        family_evidence(np.zeros((2, 100)), sr=44100, semantic=config.params.semantic,
                        evidence_params=config.params.evidence, audio=config.params.audio)


# ------------------------------------------------------------------ clap backend


def test_clap_without_checkpoint_exempts_every_family(config: Config, tone: np.ndarray, tmp_path: Path) -> None:
    for clap_dir in (None, tmp_path / "absent"):
        ev = family_evidence(tone, sr=44100, semantic=config.params.semantic, evidence_params=config.params.evidence,
                             audio=config.params.audio, backend="clap", clap_dir=clap_dir)
        assert ev.backend == "clap" and ev.curves == {} and ev.note
        assert ev.exempt == {f: "model_unavailable" for f in FAMILY_NAMES}
        assert family_rise(ev, "strings", candidate_s=12.0, semantic=config.params.semantic,
                           evidence_params=config.params.evidence)[1]["reason"] == "model_unavailable"


def _tiny_clap(d: Path) -> None:
    import torch
    from transformers import (
        ClapConfig,
        ClapFeatureExtractor,
        ClapModel,
        ClapProcessor,
        RobertaTokenizer,
    )

    chars = list("abcdefghijklmnopqrstuvwxyz,")
    vocab = {t: i for i, t in enumerate(["<s>", "<pad>", "</s>", "<unk>", "<mask>", *chars,
                                         *("\u0120" + c for c in chars)])}
    (d / "vocab.json").write_text(json.dumps(vocab))
    (d / "merges.txt").write_text("#version: 0.2\n")
    tok = RobertaTokenizer(str(d / "vocab.json"), str(d / "merges.txt"))
    fe = ClapFeatureExtractor(truncation="rand_trunc", padding="repeatpad")
    ClapProcessor(feature_extractor=fe, tokenizer=tok).save_pretrained(d)
    torch.manual_seed(0)
    cfg = ClapConfig(
        text_config={"vocab_size": len(vocab), "hidden_size": 16, "num_hidden_layers": 1,
                     "num_attention_heads": 2, "intermediate_size": 16,
                     "max_position_embeddings": 96, "pad_token_id": 1},
        audio_config={"patch_embeds_hidden_size": 8, "depths": [1, 1], "num_attention_heads": [1, 1],
                      "hidden_size": 16},
        projection_dim=8,
    )
    ClapModel(cfg).eval().save_pretrained(d)


def test_clap_path_with_a_tiny_random_model(config: Config, tone: np.ndarray, tmp_path: Path) -> None:
    _tiny_clap(tmp_path)
    bank = _Bank(tone, 44100)
    ev = family_evidence(bank, sr=44100, semantic=config.params.semantic, evidence_params=config.params.evidence,
                         audio=config.params.audio, backend="clap", clap_dir=tmp_path)
    assert ev.backend == "clap" and ev.note is None
    registry = dict(config.params.families.exempt)
    assert ev.exempt == {**registry, "synth": "unreliable_for_generated_audio"}
    assert set(ev.curves) == set(FAMILY_NAMES) - {"synth"}
    # 3 s windows every 0.5 s over 5 s, centred
    np.testing.assert_allclose(ev.times, [1.5, 2.0, 2.5, 3.0, 3.5])
    probs = np.stack(list(ev.curves.values()), axis=1)
    assert np.all(probs > 0) and np.all(probs.sum(axis=1) < 1.0)  # softmax share, synth removed
    again = family_evidence(bank, sr=44100, semantic=config.params.semantic, evidence_params=config.params.evidence,
                            audio=config.params.audio, backend="clap", clap_dir=tmp_path)
    assert bank.calls == 1 and next(iter(bank.cache)).startswith("semantic:clap:")
    np.testing.assert_array_equal(again.curves["piano"], ev.curves["piano"])


# ------------------------------------------------------------------ rendered audio


@pytest.mark.slow
def test_rendered_choir_entrance_passes_for_vocals_only(config: Config, tmp_path: Path) -> None:
    from timingbench.render.arrangement import Grid, Part, generate_part, random_harmony
    from timingbench.render.instruments import INSTRUMENTS
    from timingbench.render.synth import render_midi, resolve_soundfont, write_midi

    sr, n = 44100, 44100 * 20
    rng = np.random.default_rng(3)
    harmony, grid = random_harmony(rng), Grid(bpm=96.0, origin_s=0.0)

    def stem(name: str, t0: float) -> np.ndarray:
        spec = INSTRUMENTS[name]
        notes = generate_part(spec, grid=grid, harmony=harmony, rng=rng, t0=t0, t1=20.0)
        midi = tmp_path / f"{name}.mid"
        write_midi([Part(name=name, spec=spec, notes=notes)], midi, ticks_per_beat=960)
        y = render_midi(midi, n_samples=n, soundfont=resolve_soundfont(None, config.params.render),
                        params=config.params.render)
        return y / np.max(np.abs(y))

    mix = (0.5 * stem("piano", 0.0) + 0.5 * stem("choir", 10.0)).astype(np.float32)
    ev = family_evidence(mix, sr=sr, semantic=config.params.semantic, evidence_params=config.params.evidence,
                         audio=config.params.audio)
    assert family_rise(ev, "vocals", candidate_s=10.0, semantic=config.params.semantic,
                       evidence_params=config.params.evidence)[0] == "pass"
    assert family_rise(ev, "vocals", candidate_s=5.0, semantic=config.params.semantic,
                       evidence_params=config.params.evidence)[0] == "fail"  # no entrance there
    assert family_rise(ev, "strings", candidate_s=10.0, semantic=config.params.semantic,
                       evidence_params=config.params.evidence)[0] == "fail"  # decoy family
    assert timbre_match(ev, "vocals", after_s=10.0, semantic=config.params.semantic,
                        evidence_params=config.params.evidence)["match"] is True


def test_per_family_context_and_after_statistic(config: Config) -> None:
    """A slow swell: the median of the 3 s after barely moves; the max over 6 s does."""
    times = 1.5 + HOP * np.arange(50)
    curve = np.where(times < 12.0, 0.10, 0.10 + 0.08 * np.clip((times - 13.5) / 4.0, 0.0, 1.0))
    ev = _evidence({"strings": curve, "percussion": curve})
    assert family_rise(ev, "strings", candidate_s=12.0, semantic=config.params.semantic,
                       evidence_params=config.params.evidence)[1]["reason"] == "no_rise"
    swell = config.with_value("semantic.context_s_by_family", {"strings": 6.0}).with_value(
        "semantic.after_statistic_by_family", {"strings": "max"})
    verdict, detail = family_rise(ev, "strings", candidate_s=12.0, semantic=swell.params.semantic,
                                  evidence_params=swell.params.evidence)
    assert verdict == "pass" and detail["after"] == pytest.approx(0.18)
    # families not listed keep the default rule exactly
    assert family_rise(ev, "percussion", candidate_s=12.0, semantic=swell.params.semantic,
                       evidence_params=swell.params.evidence) == \
        family_rise(ev, "percussion", candidate_s=12.0, semantic=config.params.semantic,
                    evidence_params=config.params.evidence)
    with pytest.raises(ParameterError, match="median"):
        family_rise(ev, "strings", candidate_s=12.0,
                    semantic=(config.with_value("semantic.after_statistic_by_family",
                                                {"strings": "mean"})).params.semantic,
                    evidence_params=(config.with_value("semantic.after_statistic_by_family",
                                                       {"strings": "mean"})).params.evidence)


def test_musicnn_exemption_is_disclosed(config: Config, tone: np.ndarray) -> None:
    cfg = config.with_value("semantic.musicnn_exempt_families", {"strings": "tag_silent_on_dev_renders"})
    ev = family_evidence(tone, sr=44100, semantic=cfg.params.semantic, evidence_params=cfg.params.evidence,
                         audio=cfg.params.audio)
    assert ev.exempt["strings"] == "tag_silent_on_dev_renders" and "strings" not in ev.curves
    assert family_rise(ev, "strings", candidate_s=3.0, semantic=cfg.params.semantic,
                       evidence_params=cfg.params.evidence) == (
        "exempt", {"backend": "musicnn", "before": None, "after": None, "rise": None,
                   "reason": "tag_silent_on_dev_renders"})
    assert "percussion" in ev.curves and "woodwinds" in family_evidence(
        tone, sr=44100, semantic=(config.with_value("semantic.musicnn_exempt_families", {})).params.semantic,
        evidence_params=(config.with_value("semantic.musicnn_exempt_families", {})).params.evidence,
        audio=(config.with_value("semantic.musicnn_exempt_families", {})).params.audio).curves


def test_evidence_does_not_depend_on_gain(config: Config, tone: np.ndarray) -> None:
    loud = family_evidence(tone, sr=44100, semantic=config.params.semantic, evidence_params=config.params.evidence,
                           audio=config.params.audio)
    quiet = family_evidence((tone * np.float32(0.1)).astype(np.float32), sr=44100, semantic=config.params.semantic,
                            evidence_params=config.params.evidence, audio=config.params.audio)
    for fam, curve in loud.curves.items():
        np.testing.assert_allclose(quiet.curves[fam], curve, rtol=1e-3, atol=1e-5)

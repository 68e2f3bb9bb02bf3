"""A clip that fails (undecodable, too short, silent) never raises a system's rate, interval or rank.

Every rate of ``compare`` and ``summary.json`` counts the events of every submitted clip, so
turning any set of a system's clips into failures can only lower what it is credited with.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from timingbench.audio import Clip
from timingbench.compare.core import compare_systems, metric_info
from timingbench.compare.report import format_text
from timingbench.compare.results import SystemResults
from timingbench.config import Config
from timingbench.prompts import ClipRef, parse_prompt
from timingbench.runner import ScoreOptions, error_part, score_silent
from timingbench.summary import build_summary, carries_timbre, identity_exempt_families, is_identity_verified

BACKEND = "tagger"
FAMILIES = ("percussion", "bass", "strings", "synth", "mix")
OUTCOMES = ("on_time", "off_time", "none")


def _prompt(i: int, family: str, tempo: bool) -> Any:
    kind = "mix_energy_increase" if family == "mix" else "instrument_entry"
    return parse_prompt({"id": f"p{i:02d}", "family": "single_event", "text": "x", "duration_s": 12.0,
                         "events": [{"id": f"p{i:02d}/e1", "kind": kind, "family": family, "time_s": 6.0,
                                     "tolerance_s": 0.5}],
                         "tempo": {"bpm": 120.0} if tempo else None})


def _scored_part(ref: ClipRef, prompt: Any, outcome: str, p_chance: float | None, ok: bool,
                 exempt: dict[str, str]) -> dict[str, Any]:
    """The part the scorer writes for a clip it could score (one event), ``exempt``: the run's exempt families."""
    ev = prompt.events[0]
    err = None if outcome == "none" else (0.1 if outcome == "on_time" else 2.0)
    row = {"clip": ref.clip, "prompt_id": prompt.id, "sample": ref.sample, "event_id": ev.id, "kind": ev.kind,
           "family": ev.family, "instructed_s": 6.0, "tolerance_s": 0.5, "outcome": outcome,
           "detected_s": None if err is None else 6.0 + err, "error_s": err, "gates": {}, "rejected_by": None,
           "detector": "x", "p_chance": p_chance, "floor_s": 0.01, "gate_stats": {}, "error": None,
           "identity_verified": is_identity_verified(ev.family, exempt)}
    timbre = ([{"event_id": ev.id, "family": ev.family, "match": ok}]
              if carries_timbre(ev.kind, ev.family, BACKEND) else None)
    tempo = None if prompt.tempo_bpm is None else {
        "estimate_bpm": 120.0 if ok else 90.0, "target_bpm": 120.0, "credited": ok,
        "within_pct": {"2": ok, "3": ok, "5": ok}, "octave_equivalent": 1.0 if ok else None}
    clip = {"clip": ref.clip, "prompt_id": prompt.id, "sample": ref.sample, "duration_s": 12.0, "duration_ok": ok,
            "tempo": tempo, "timbre_match": timbre, "error": None, "controls": None, "silent": False}
    return {"events": [row], "clip": clip}


def _system(name: str, parts: list[dict[str, Any]], exempt: dict[str, str]) -> SystemResults:
    events = [r for p in parts for r in p["events"]]
    clips = [p["clip"] for p in parts]
    summary = {"family_evidence": {"requested": BACKEND, "exempt_families": exempt},
               "chance_credit": {"enabled": True, "draws": 128}}
    return SystemResults(name=name, path=Path(name), events=events,
                         clips=[c for c in clips if c["error"] is None],
                         errors=[c for c in clips if c["error"] is not None], missing=[], unmatched=[],
                         summary=summary, config_version="v", config_hash="h", prompts_hash=None,
                         prompt_ids=frozenset(c["prompt_id"] for c in clips))


def _fail(how: str, ref: ClipRef, prompt: Any, config: Config) -> dict[str, Any]:
    opts = ScoreOptions(separation="dsp", family_evidence=BACKEND, chance=True)
    if how == "error":
        return error_part(ref, prompt, config, opts, f"{ref.path}: undecodable")
    clip = Clip(ref.path, np.zeros(44100 * 12, np.float32), 44100, 12.0, 44100, 1, "silent")
    return score_silent(clip, ref, prompt, config, opts)


def _summary(config: Config, parts: list[dict[str, Any]], tmp: Path) -> dict[str, Any]:
    prompts = tmp / "p.jsonl"
    prompts.write_text("{}\n")
    opts = SimpleNamespace(separation="dsp", family_evidence=BACKEND, chance=True, disabled_gates=())
    return build_summary([r for p in parts for r in p["events"]], [p["clip"] for p in parts], config=config,
                         opts=opts, unmatched=[], missing=[], prompt_errors=[], parts=[], prompts_path=str(prompts))


CLIP = st.tuples(st.sampled_from(FAMILIES), st.sampled_from(OUTCOMES), st.one_of(st.none(), st.floats(0, 1)),
                 st.booleans(), st.booleans())


@pytest.fixture(scope="module")
def cfg(config: Config) -> Config:
    return config.with_value("compare.bootstrap_n", 100).with_value("compare.min_prompts", 3)


@settings(max_examples=25)
@given(st.lists(CLIP, min_size=4, max_size=14), st.lists(CLIP, min_size=14, max_size=14), st.data())
def test_no_failure_raises_a_rate_an_interval_or_a_rank(cfg: Config, tmp_path_factory: pytest.TempPathFactory,
                                                        a_spec: list[Any], b_spec: list[Any],
                                                        data: st.DataObject) -> None:
    tmp = tmp_path_factory.mktemp("fail")
    n = len(a_spec)
    prompts = [_prompt(i, fam, tempo) for i, (fam, _, _, _, tempo) in enumerate(a_spec)]
    refs = {s: [ClipRef(f"p{i:02d}.wav", tmp / s / f"p{i:02d}.wav", f"p{i:02d}", 0) for i in range(n)]
            for s in "ab"}
    ex = identity_exempt_families(cfg, BACKEND)
    a = [_scored_part(r, p, oc, pc, ok, ex)
         for r, p, (_, oc, pc, ok, _) in zip(refs["a"], prompts, a_spec, strict=True)]
    b = [_scored_part(r, p, oc, pc, ok, ex)
         for r, p, (_, oc, pc, ok, _) in zip(refs["b"], prompts, b_spec, strict=False)]
    failed = data.draw(st.sets(st.integers(0, n - 1), min_size=1))
    how = data.draw(st.sampled_from(["error", "silent"]))
    a_failed = [_fail(how, refs["a"][i], prompts[i], cfg) if i in failed else part for i, part in enumerate(a)]

    before = compare_systems([_system("a", a, ex), _system("b", b, ex)], config=cfg)
    after = compare_systems([_system("a", a_failed, ex), _system("b", b, ex)], config=cfg)
    for key, e0 in before.estimates["a"].items():
        better = metric_info(key).better
        if better == 0 or (how == "silent" and key == "duration_ok_rate"):  # silence of the right length complies
            continue
        e1 = after.estimates["a"][key]
        for v0, v1 in ((e0.value, e1.value), (e0.lo, e1.lo), (e0.hi, e1.hi)):
            if np.isfinite(v0):
                assert np.isfinite(v1), (key, "failing emptied the rate's denominator")
                assert better * (v1 - v0) <= 1e-9, (key, v0, v1)
        assert e1.n_items >= e0.n_items or key == "duration_ok_rate", key
    for key, r0 in before.ranks.items():
        if how == "silent" and key == "duration_ok_rate":
            continue
        assert after.ranks[key]["a"] >= r0["a"], key
        assert after.ranks[key]["b"] <= r0["b"], key

    s0, s1 = _summary(cfg, a, tmp), _summary(cfg, a_failed, tmp)
    for key in ("timbre_match_rate", "p_chance_discounted_on_time_rate",
                "p_chance_discounted_on_time_rate_identity_verified"):
        if s0[key] is not None:
            assert s1[key] is not None and s1[key] <= s0[key] + 1e-9, key
    for part in ("rates", "rates_identity_verified"):
        assert s1[part]["n"] == s0[part]["n"]
        if s0[part]["on_time_rate"] is not None:
            assert s1[part]["on_time_rate"] <= s0[part]["on_time_rate"] + 1e-9


def test_a_broken_system_is_not_best_on_the_low_p_chance_column(cfg: Config, tmp_path: Path) -> None:
    # the run of the report: 3 of bad's 10 clips scored (all on time, p_chance 0), 7 undecodable;
    # the low-p_chance column dropped the failures and read 100 % beside a raw 30 %
    prompts = [_prompt(i, "mix", False) for i in range(10)]
    refs = [ClipRef(f"p{i:02d}.wav", tmp_path / f"p{i:02d}.wav", f"p{i:02d}", 0) for i in range(10)]
    good = [_scored_part(r, p, "on_time" if i < 9 else "none", 0.0, True, {})
            for i, (r, p) in enumerate(zip(refs, prompts, strict=True))]
    bad = [_scored_part(r, p, "on_time", 0.0, True, {}) if i < 3 else _fail("error", r, p, cfg)
           for i, (r, p) in enumerate(zip(refs, prompts, strict=True))]
    comp = compare_systems([_system("good", good, {}), _system("bad", bad, {})], config=cfg)
    low = {n: comp.estimates[n]["on_time_rate_low_p_chance"] for n in ("good", "bad")}
    assert low["good"].value == pytest.approx(0.9) and low["bad"].value == pytest.approx(0.3)
    assert low["bad"].n_items == 10  # every event of every submitted clip
    assert comp.ranks["on_time_rate_low_p_chance"] == {"good": 1, "bad": 2}
    assert "30.0" in format_text(comp).split("on-time with p_chance")[1]


def test_a_failed_clip_fails_the_timbre_match_of_its_tonal_entrance(cfg: Config, tmp_path: Path) -> None:
    # a clip that could not be scored has no timbre_match: it dropped out and the rate rose to 100 %
    prompts = [_prompt(i, "strings", False) for i in range(4)]
    refs = [ClipRef(f"p{i:02d}.wav", tmp_path / f"p{i:02d}.wav", f"p{i:02d}", 0) for i in range(4)]
    parts = [_scored_part(r, p, "on_time", 0.0, i < 3, {}) for i, (r, p) in enumerate(zip(refs, prompts, strict=True))]
    parts[3] = _fail("error", refs[3], prompts[3], cfg)
    assert _summary(cfg, parts, tmp_path)["timbre_match_rate"] == 0.75
    est = compare_systems([_system("a", parts, {}), _system("b", parts, {})], config=cfg).estimates["a"]
    assert est["timbre_match_rate"].value == pytest.approx(0.75) and est["timbre_match_rate"].n_items == 4

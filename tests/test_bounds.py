"""Each threshold is declared once (timingbench.params.bounds); explain, the sweep and the fitter read it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import timingbench
from timingbench.config import Config
from timingbench.explain.thresholds import RULES, _resolve, direction_of, find_rule
from timingbench.params.bounds import (
    BOUNDS,
    DESCRIPTIVE,
    DETECTOR_READS,
    MEASURED_ONLY,
    own_section,
    section_readers,
    stricter,
)

PKG = Path(__file__).resolve().parents[1] / "timingbench"
#: Where gates record their statistics.
EMITTERS = ("gates.py", "identity", "scoring.py", "detectors")
#: Rendered scenarios that run every detector: percussion, stem and tonal entries and exits,
#: a start after silence, an ending, an energy increase.
SCENARIOS = (("entry_on_time", 3701, {"family": "percussion"}), ("entry_on_time", 3702, {"family": "bass"}),
             ("entry_on_time", 3703, {"family": "piano"}), ("exit_on_time", 3704, {}),
             ("silence_then_start", 3705, {}), ("end_cut", 3706, {}), ("energy_increase", 3707, {}),
             ("entry_off_time", 3708, {"family": "strings"}))


def _emitting_source() -> str:
    files = [p for name in EMITTERS for p in ((PKG / name).rglob("*.py") if (PKG / name).is_dir() else [PKG / name])]
    return "\n".join(p.read_text(encoding="utf-8") for p in files)


def test_every_bound_names_a_statistic_some_gate_emits() -> None:
    text = _emitting_source()
    missing = sorted({b.key for b in BOUNDS if not re.search(r"[\"']" + re.escape(b.key) + r"[\"']", text)})
    assert missing == []


def test_every_bound_names_a_constant_of_the_configuration(config: Config) -> None:
    for b in BOUNDS:
        names = ([b.constant.replace("{section}", own_section(d) or "") for d in DETECTOR_READS]
                 if "{section}" in b.constant else [b.constant])
        assert any(n in config.constants for n in names), b


def test_explain_and_the_sweep_derive_from_the_declaration() -> None:
    assert RULES is BOUNDS
    from timingbench.calibration.sweep import SECTION_READERS

    assert SECTION_READERS == section_readers()
    assert SECTION_READERS["mix"] == ("mix.start", "mix.stop", "energy")


def test_the_direction_of_each_bounded_constant_agrees_with_the_yaml(config: Config) -> None:
    checked = 0
    for key, c in config.constants.items():
        try:
            sign = stricter(key)
        except KeyError:
            continue
        if c.loosening is not None:
            assert sign == (-1 if c.loosening == "increase" else 1), key
            checked += 1
    assert checked >= 5
    with pytest.raises(KeyError):
        stricter("search.window_s")


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> timingbench.FolderResult:
    import json

    from timingbench.render import render_recipe

    root = tmp_path_factory.mktemp("bounds")
    rows = [render_recipe(r, seed=s, out_dir=root, duration_s=14.0, **kw).prompt for r, s, kw in SCENARIOS]
    (root / "prompts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return timingbench.score_folder(root / "clips", root / "prompts.jsonl", chance=False)


def test_every_statistic_a_gate_emits_has_a_declared_rule(scored: timingbench.FolderResult, config: Config) -> None:
    seen_detectors, unruled = set(), set()
    for e in scored.events:
        seen_detectors.add(e.detector)
        stats = e.extra.get("gate_stats") or {}
        for gate, values in stats.items():
            for key, value in values.items():
                if key in DESCRIPTIVE or key in MEASURED_ONLY or value is None or isinstance(value, str | bool):
                    continue
                rule = find_rule(key, gate=gate, direction=direction_of(e.kind))
                section = own_section(e.detector)
                if rule is None or _resolve(rule.constant, section, config) is None:
                    unruled.add((e.detector, gate, key))
    assert seen_detectors >= {"percussion", "stem", "tonal", "mix.start", "mix.stop", "energy"}
    assert sorted(unruled) == [], sorted(unruled)

"""Explicit parameters: the adopt-a-variant path has no per-section case; caches live in memo.py."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from timingbench.config import Config
from timingbench.errors import ConfigError, ParameterError
from timingbench.scoring import DetectorParams

PKG = Path(__file__).resolve().parents[1] / "timingbench"
#: Modules that keep a process-wide cache of a loaded model or sample set (read-only data, no constant).
ELSEWHERE = {"identity/providers.py", "models/family_net_infer.py", "render/kits.py"}


def _variant(config: Config, section: str) -> Config | None:
    """``config`` with one number of ``section`` nudged (None when no nudge builds)."""
    for key in sorted(k for k in config.constants if k.split(".")[0] == section):
        value = config.constants[key].value
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        for new in (value * 1.1 + 1 if isinstance(value, float) else value + 1, value * 0.9 if value else 0.5):
            try:
                variant = config.with_value(key, type(value)(new) if isinstance(value, int) else new)
                getattr(variant.params, section)
                DetectorParams.of(variant)
            except (ConfigError, ValueError):
                continue
            return config.with_value(key, type(value)(new) if isinstance(value, int) else new)
    return None


def _sections(config: Config) -> list[str]:
    return sorted({k.split(".")[0] for k in config.constants})


def test_every_sections_variant_builds_alike_by_both_paths(config: Config) -> None:
    base = DetectorParams.of(config)
    read = {type(getattr(config.params, s)) for s in _sections(config)}
    held = set()
    for f in dataclasses.fields(base):
        v = getattr(base, f.name)
        held.add(type(v))
        if dataclasses.is_dataclass(v):
            held.update(type(getattr(v, g.name)) for g in dataclasses.fields(v))
    checked = 0
    for section in _sections(config):
        adopted, fresh = _variant(config, section), _variant(config, section)
        if adopted is None or fresh is None:
            continue
        base.adopt(adopted, section)
        got = DetectorParams.of(adopted)
        assert got == DetectorParams.of(fresh), section
        # a section the detectors hold changes them; any other leaves them as they were
        assert (got != base) == (type(getattr(config.params, section)) in held), section
        checked += 1
    assert checked >= 20 and read & held


def _module_level_caches(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("lru_cache", "cache") and \
                isinstance(node.value, ast.Name) and node.value.id == "functools":
            found.append(f"{node.lineno}: functools.{node.attr}")
        if isinstance(node, ast.ImportFrom) and node.module == "functools" and \
                any(a.name in ("lru_cache", "cache") for a in node.names):
            found.append(f"{node.lineno}: from functools import lru_cache")
    for node in tree.body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if isinstance(value, ast.Call):
            fn = value.func
            name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
            if name in ("WeakKeyDictionary", "WeakValueDictionary", "OrderedDict"):
                found.append(f"{node.lineno}: {name}()")
    return found


def test_no_module_level_cache_outside_memo() -> None:
    bad = {}
    for p in PKG.rglob("*.py"):
        rel = str(p.relative_to(PKG))
        if rel == "memo.py" or rel in ELSEWHERE:
            continue
        hits = _module_level_caches(p)
        if hits:
            bad[rel] = hits
    assert bad == {}


@pytest.mark.parametrize("source", ["import functools\n@functools.lru_cache(maxsize=2)\ndef f(): ...\n",
                                    "from functools import lru_cache\n",
                                    "import weakref\n_T = weakref.WeakKeyDictionary()\n"])
def test_the_cache_check_sees_each_form(tmp_path: Path, source: str) -> None:
    p = tmp_path / "m.py"
    p.write_text(source, encoding="utf-8")
    assert _module_level_caches(p)


def test_controls_take_their_own_sections() -> None:
    import inspect

    from timingbench.controls import score

    src = inspect.getsource(score)
    assert "config.params" not in src.replace("p = config.params", "")  # only ControlSections.of picks them
    assert "bank.params" not in src
    assert list(inspect.signature(score.score_controls).parameters)[:3] == ["bank", "controls", "sections"]


def test_the_percussion_detector_is_handed_the_features_it_reads(config: Config) -> None:
    import inspect

    import numpy as np

    from timingbench.audio import clip_from_array
    from timingbench.controls import frames
    from timingbench.detectors import percussion
    from timingbench.features import compute_bank

    for module in (percussion, frames):
        assert "bank.params" not in inspect.getsource(module)
    assert DetectorParams.of(config).features is config.params.features
    y = (0.1 * np.random.default_rng(1).standard_normal(44100 * 4)).astype(np.float32)
    bank = compute_bank(clip_from_array(y, 44100, config=config), config, separation="dsp")
    other = config.with_value("features.db_range", config.constants["features.db_range"].value + 10).params.features
    with pytest.raises(ParameterError, match="features constants"):
        percussion.route_curves(bank, config.params.percussion, "high", features=other)
    with pytest.raises(ParameterError, match="features constants"):
        frames.bank_frames(bank, features=other, highpass_hz=config.params.controls.melody_highpass_hz)
    assert percussion.route_curves(bank, config.params.percussion, "high", features=config.params.features).route

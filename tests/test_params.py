"""Typed parameter sets: every configured constant is read by code, and no code reads one the config lacks."""

from __future__ import annotations

import ast
import dataclasses
import re
import typing
from pathlib import Path

import pytest

from timingbench.config import load_config
from timingbench.errors import ConfigError
from timingbench.params import REGISTRY, all_keys
from timingbench.params.base import Params

PKG = Path(__file__).resolve().parent.parent / "timingbench"


def _code_files() -> list[Path]:
    return [p for p in PKG.rglob("*.py") if "params" not in p.relative_to(PKG).parts[:1]]


def _attributes_read() -> set[str]:
    """Attribute names read anywhere in the package (in the params modules: by a derived
    property, not by a ``validate`` range check)."""
    names: set[str] = set()
    for p in PKG.rglob("*.py"):
        tree = ast.parse(p.read_text(encoding="utf-8"))
        if p.relative_to(PKG).parts[0] == "params":
            for fn in ast.walk(tree):
                if isinstance(fn, ast.FunctionDef) and fn.name != "validate":
                    names.update(n.attr for n in ast.walk(fn) if isinstance(n, ast.Attribute)
                                 and isinstance(n.value, ast.Name) and n.value.id == "self")
            continue
        names.update(n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute))
    return names


def _fields(cls: type[Params]) -> list[tuple[str, str]]:
    hints = typing.get_type_hints(cls)
    out: list[tuple[str, str]] = []
    for f in dataclasses.fields(cls):
        t = hints[f.name]
        if isinstance(t, type) and issubclass(t, Params):
            out.extend(_fields(t))
        else:
            out.append((cls.__name__, f.name))
    return out


def test_every_configured_constant_has_a_field():
    cfg = load_config()
    assert set(cfg) == all_keys(), sorted(set(cfg) ^ all_keys())


def test_every_field_is_read_by_some_code():
    read = _attributes_read()
    unread = sorted(f"{cls.SECTION}.{name}" for cls in REGISTRY.values() for _, name in _fields(cls)
                    if name not in read)
    assert not unread, f"constants no code reads: {unread}"


def test_no_code_looks_up_a_constant_by_string_key():
    pattern = re.compile(r"\.value\(\s*f?[\"']")
    hits = [f"{p.relative_to(PKG)}:{i}" for p in _code_files()
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if pattern.search(line) and not p.name == "config.py"]
    assert not hits, hits


def test_missing_constant_fails_at_load(tmp_path):
    text = (PKG.parent / "configs" / "timingbench-v1.yaml").read_text(encoding="utf-8")
    cut = re.sub(r"\n    step_min_db: .*", "", text, count=1)
    assert cut != text
    p = tmp_path / "cut.yaml"
    p.write_text(cut, encoding="utf-8")
    with pytest.raises(ConfigError, match="step_min_db"):
        load_config(p)


def test_wrong_type_and_switched_off_convention_fail():
    cfg = load_config()
    with pytest.raises(ConfigError, match="search.window_s"):
        cfg.with_value("search.window_s", "five").params.search  # noqa: B018
    with pytest.raises(ConfigError, match="no off state"):
        cfg.with_disabled("search.window_s").params.search  # noqa: B018
    with pytest.raises(ConfigError, match="finite"):
        cfg.with_value("search.window_s", float("nan")).params.search  # noqa: B018


def test_disabled_calibrated_constant_reads_none_and_replace_matches():
    cfg = load_config()
    key = next(k for k in cfg.keys(provenance=("calibrated",)) if isinstance(cfg.value(k), float))
    sec, name = key.split(".", 1)
    off = getattr(cfg.with_disabled(key).params, sec)
    assert getattr(off, name) is None
    assert off == dataclasses.replace(getattr(cfg.params, sec), **{name: None})


def test_record_reads_names_each_field_read_with_its_section():
    from timingbench.params.base import record_reads

    cfg = load_config()
    stem = cfg.params.stem
    nested = next(f.name for f in dataclasses.fields(stem) if isinstance(getattr(stem, f.name), Params))
    inner = getattr(stem, nested)
    inner_field = dataclasses.fields(inner)[0].name
    with record_reads() as reads:
        _ = stem.step_min_db, getattr(inner, inner_field)
    assert reads == {"stem.step_min_db", f"stem.{inner_field}"}
    _ = stem.step_before_s  # outside the block: not recorded
    assert "stem.step_before_s" not in reads


def test_a_negative_duration_is_refused_naming_the_constant():
    cfg = load_config()
    with pytest.raises(ConfigError, match=r"'search.window_s'.*must not be negative"):
        cfg.with_value("search.window_s", -1.0).params.search  # noqa: B018
    with pytest.raises(ConfigError, match=r"'stem.absence_guard_s'"):
        cfg.with_value("stem.absence_guard_s", -0.1).params.stem  # noqa: B018


@pytest.mark.parametrize("key,value,needle", [("tempo.beat_refine", "cubic", "tempo.beat_refine"),
                                               ("tempo.beat_fps", 13, "tempo.beat_fps"),
                                               ("tempo.min_bpm", 400.0, "tempo.min_bpm")])
def test_tempo_tracker_settings_are_checked_when_the_config_is_built(key, value, needle):
    with pytest.raises(ConfigError, match=needle):
        load_config().with_value(key, value).params.tempo  # noqa: B018

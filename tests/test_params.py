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


def _reads_by_module() -> dict[Path, tuple[set[str], set[str]]]:
    """Per module: the attribute names it reads, and the parameter classes and sections it names
    (a class by name, a section as ``.params.<section>``)."""
    out: dict[Path, tuple[set[str], set[str]]] = {}
    for p in PKG.rglob("*.py"):
        tree = ast.parse(p.read_text(encoding="utf-8"))
        attrs = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        named = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        named |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Attribute)
                  and n.value.attr == "params"}
        named |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        named |= attrs & set(REGISTRY)  # a section reached through a ParamSet held in a variable
        out[p] = (attrs, named)
    return out


def _owners() -> dict[type[Params], set[str]]:
    """The names under which code reaches each registered set: its class, its section, and
    the classes that embed it."""
    out: dict[type[Params], set[str]] = {}
    for cls in REGISTRY.values():
        out.setdefault(cls, set()).update({cls.__name__, cls.SECTION})
    for cls in REGISTRY.values():
        for f in dataclasses.fields(cls):
            t = typing.get_type_hints(cls)[f.name]
            if isinstance(t, type) and issubclass(t, Params):
                out.setdefault(t, set()).update({t.__name__, cls.__name__, cls.SECTION, f.name})
    return out


def _unread(by_module: dict[Path, tuple[set[str], set[str]]], read: set[str]) -> list[str]:
    """Fields no code reads: a field counts as read only in a module that reads the name and
    names the field's own set (its class, its section as ``.params.<section>``, or the set
    that embeds it), or by the set's own code; so that ``bank.hop`` or another set's
    ``.seed`` cannot hide an unread constant."""
    owners = _owners()
    unread = []
    for cls in REGISTRY.values():
        for owner, name in _fields(cls):
            holder = next(c for c in [cls, *owners] if c.__name__ == owner)
            names = owners.get(holder, {holder.__name__}) | owners.get(cls, set())
            ok = name in read and any(name in attrs and (names & named or p.relative_to(PKG).parts[0] == "params")
                                      for p, (attrs, named) in by_module.items())
            if not ok:
                unread.append(f"{cls.SECTION}.{name}")
    return sorted(unread)


def test_every_field_is_read_by_some_code():
    unread = _unread(_reads_by_module(), _attributes_read())
    assert not unread, f"constants no code reads: {unread}"


def test_a_shared_name_read_only_by_other_sets_is_caught():
    # without the modules that name the features section, the banks' and grids' ``.hop``
    # reads elsewhere must not count for ``features.hop``
    by_module = {p: v for p, v in _reads_by_module().items()
                 if not ({"features", "FeaturesParams"} & v[1]) and p.relative_to(PKG).parts[0] != "params"}
    assert "hop" in set().union(*(attrs for attrs, _ in by_module.values()))  # still read elsewhere
    assert "features.hop" in _unread(by_module, _attributes_read())


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

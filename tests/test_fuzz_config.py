"""Fuzzing of the configuration loader (formats §4).

A fuzzed file is a small configuration (constants drawn from the packaged one) with one
mutation: a constant's field deleted or given a junk value, an unknown field, a section
that is not a mapping, a junk version, or damage to the YAML text (bad UTF-8, tabs, deep
nesting, alias bombs, unhashable keys, BOM, CRLF). Properties: the loader raises only
:class:`~timingbench.errors.ConfigError`, naming the file (and the constant's key when one
constant is at fault); an unmutated file loads with every constant; no input takes longer
than the per-input bound.
"""

from __future__ import annotations

import copy
import random
import tempfile
from pathlib import Path
from typing import Any

import yaml
from fuzz_support import SEEDS, bounded, junk, wild_text
from hypothesis import given

from timingbench.config import DEFAULT_CONFIG_PATH, load_config
from timingbench.errors import ConfigError

_PACKAGED = yaml.safe_load(DEFAULT_CONFIG_PATH.read_text(encoding="utf-8"))
_CONSTANTS = [(sec, name, entry) for sec, entries in _PACKAGED["constants"].items()
              for name, entry in entries.items()]


def _dump(obj: Any) -> str:
    return yaml.dump(obj, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), allow_unicode=True, sort_keys=False)


def _section_text(sec: str, body: Any) -> str:
    """One section as it sits under ``constants:`` (indented by two spaces)."""
    return "".join("  " + line + "\n" for line in _dump({sec: body}).splitlines())


#: The packaged sections as YAML text: a fuzzed file re-dumps only the sections it changed.
_PACKAGED_TEXT = {sec: _section_text(sec, body) for sec, body in _PACKAGED["constants"].items()}


def _alias_bomb(levels: int) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for k in range(1, levels):
        lines.append(f"a{k}: &a{k} [" + ", ".join([f"*a{k - 1}"] * 10) + "]")
    return "\n".join(lines)


def config_case(seed: int) -> tuple[bytes, bool, str | None]:
    """YAML bytes, whether they must load, and the key an error must name (if any)."""
    rng = random.Random(seed)
    picked = rng.sample(_CONSTANTS, rng.randint(1, 6))
    doc: dict[str, Any] = {"version": "fuzz-" + wild_text(rng, 0, 5),
                           "constants": dict(_PACKAGED["constants"])}
    for sec in {sec for sec, _, _ in picked}:  # only the sections a mutation may touch are copied
        doc["constants"][sec] = copy.deepcopy(_PACKAGED["constants"][sec])
    kind = rng.choice(["valid", "field", "field", "unknown", "section", "version", "text", "text"])
    must_load, key = kind == "valid", None
    if kind in ("field", "unknown"):
        sec, name, _ = rng.choice(picked)
        entry = doc["constants"][sec][name]
        key = f"{sec}.{name}"
        if kind == "unknown":
            entry[wild_text(rng, 1, 6)] = junk(rng)
        else:
            fld = rng.choice(["value", "provenance", "why", "loosening", "disabled"])
            if rng.random() < 0.3 and fld in entry:
                del entry[fld]
            else:
                entry[fld] = junk(rng)
    elif kind == "section":
        sec = rng.choice(picked)[0]
        doc["constants"][sec] = junk(rng)
    elif kind == "version":
        doc["version"] = junk(rng)
    touched = {sec for sec, _, _ in picked}
    text = _dump({"version": doc["version"]}) + "constants:\n" + "".join(
        _section_text(sec, body) if sec in touched else _PACKAGED_TEXT[sec]
        for sec, body in doc["constants"].items())
    if kind == "text":
        damage = rng.choice(["bytes", "tab", "nest", "bomb", "unhashable", "mixed_keys", "truncate",
                             "duplicate", "garbage", "binary"])
        if damage == "bytes":
            text = text[:5] + "\udcff\udcc3" + text[5:]
        elif damage == "tab":
            text = text.replace("  ", "\t", 1)
        elif damage == "nest":
            depth = rng.choice([100, 3000, 50_000])
            text += "  x:\n    nest: {value: " + "[" * depth + "]" * depth + ", provenance: convention, why: w}\n"
        elif damage == "bomb":
            levels = rng.choice([3, 6, 9])
            text = (_alias_bomb(levels) + "\nversion: v\nconstants:\n  bomb:\n"
                    f"    b: {{value: *a{levels - 1}, provenance: convention, why: w}}\n")
        elif damage == "unhashable":
            text += "  ? [a, b]\n  : {c: {value: 1, provenance: convention, why: w}}\n"
        elif damage == "mixed_keys":
            text += "  mixed:\n    m: {value: {1: a, b: c, null: d}, provenance: convention, why: w}\n"
        elif damage == "truncate":
            text = text[:rng.randint(0, len(text))]
        elif damage == "duplicate":
            text += text[text.index("constants:") + len("constants:"):]
        elif damage == "binary":
            text = "".join(chr(rng.randint(0, 255)) for _ in range(rng.randint(1, 200)))
        else:
            pos = rng.randint(0, len(text))
            text = text[:pos] + wild_text(rng, 1, 20) + text[pos:]
    if rng.random() < 0.2:
        text = "\ufeff" + text
    if rng.random() < 0.2:
        text = text.replace("\n", "\r\n")
    return text.encode("utf-8", errors="surrogateescape"), must_load, key


@given(SEEDS)
def test_config_loader_raises_only_config_errors(seed: int) -> None:
    data, must_load, key = config_case(seed)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "config.yaml"
        path.write_bytes(data)
        with bounded():
            try:
                cfg = load_config(path)
            except ConfigError as exc:
                assert not must_load, f"valid config rejected: {exc}"
                msg = str(exc)
                assert str(path) in msg, msg
                if key is not None and "constants." not in msg:
                    assert repr(key) in msg or key in msg, (key, msg)
                return
    if must_load:
        assert len(cfg.constants) >= 1 and cfg.content_hash

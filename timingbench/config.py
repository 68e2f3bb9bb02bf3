"""Versioned configuration: every threshold and constant, with provenance.

A configuration file (``configs/*.yaml``) has a ``version`` and a ``constants`` mapping of
sections to constants. Each constant is a mapping with

- ``value``: the number, list, string or bool the code reads;
- ``provenance``: ``convention`` | ``calibrated`` | ``few_shot``;
- ``why``: one line saying why the value is what it is;
- optional ``loosening``: ``increase`` | ``decrease`` — the direction in which changing a
  ``calibrated`` or ``few_shot`` value admits more detections (used by the sweep).

Code never looks a constant up by key: :attr:`Config.params` holds one typed, validated
dataclass per section (``config.params.stem.step_min_db``, see :mod:`timingbench.params`).
A constant may be *disabled* by the sensitivity sweep (:meth:`Config.with_disabled`); its
field then reads ``None`` and the check it controls is skipped, which every reader of a
``calibrated``/``few_shot`` constant handles.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from timingbench.errors import ConfigError
from timingbench.memo import process_cache
from timingbench.packaged import data_path
from timingbench.params.sets import ParamSet

PROVENANCES = ("convention", "calibrated", "few_shot")
LOOSENING = ("increase", "decrease")

#: libyaml's safe loader when PyYAML was built with it (about 10x faster), else the pure one.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: The configuration shipped with the package (package data, the file docs/formats.md names
#: ``configs/timingbench-v1.yaml``; see :mod:`timingbench.packaged`), used when no
#: ``--config`` is given.
DEFAULT_CONFIG_PATH = data_path("configs", "timingbench-v1.yaml")


@dataclass(frozen=True)
class Constant:
    """One configured constant.

    Attributes
    ----------
    key : str
        Dotted key, ``section.name``.
    value : Any
        The configured value (``None`` when disabled).
    provenance : str
        ``convention`` | ``calibrated`` | ``few_shot``.
    why : str
        One-line justification.
    loosening : str or None
        Direction (``increase``/``decrease``) that admits more detections, if known.
    disabled : bool
        True when the sweep switched the constant off.
    """

    key: str
    value: Any
    provenance: str
    why: str
    loosening: str | None = None
    disabled: bool = False


@dataclass(frozen=True)
class Config:
    """An immutable, validated configuration.

    Use :func:`load_config` to build one. ``content_hash`` is the SHA-256 of the canonical
    JSON form of the version and all constants (values, provenance, disabled flags), so an
    overridden configuration has a different hash than the file it came from.
    """

    version: str
    constants: Mapping[str, Constant]
    source: str = "<memory>"
    _hash: str = field(default="", compare=False)

    @property
    def content_hash(self) -> str:
        """SHA-256 hex digest of the canonical content (first 16 hex digits)."""
        if not self._hash:  # computed on first use (sweep variants rarely need it)
            object.__setattr__(self, "_hash", digest(self.to_dict()))
        return self._hash

    @cached_property
    def params(self) -> ParamSet:
        """The typed parameter sets of this configuration (``config.params.stem``)."""
        return ParamSet(self)

    def value(self, key: str) -> Any:
        """Return the value of constant ``key`` (``None`` when disabled).

        Raises
        ------
        ConfigError
            If the key does not exist.
        """
        try:
            c = self.constants[key]
        except KeyError:
            raise ConfigError(
                f"{self.source}: no constant {key!r}; add it under 'constants' with value, "
                "provenance and why"
            ) from None
        return None if c.disabled else c.value

    def keys(self, *, provenance: tuple[str, ...] | None = None) -> list[str]:
        """Dotted keys, optionally only those of the given provenance classes."""
        return [
            k for k, c in self.constants.items() if provenance is None or c.provenance in provenance
        ]

    def __iter__(self) -> Iterator[str]:
        return iter(self.constants)

    def with_value(self, key: str, value: Any) -> Config:
        """Return a copy with constant ``key`` set to ``value`` (new content hash)."""
        self.value(key)
        consts = dict(self.constants)
        old = consts[key]
        consts[key] = Constant(key, value, old.provenance, old.why, old.loosening, False)
        return _build(self.version, consts, self.source)

    def with_disabled(self, key: str) -> Config:
        """Return a copy with constant ``key`` disabled (its value reads as ``None``)."""
        self.value(key)
        consts = dict(self.constants)
        old = consts[key]
        consts[key] = Constant(key, old.value, old.provenance, old.why, old.loosening, True)
        return _build(self.version, consts, self.source)

    def to_dict(self) -> dict[str, Any]:
        """Canonical nested mapping (the YAML layout)."""
        sections: dict[str, dict[str, Any]] = {}
        for key, c in self.constants.items():
            sec, name = key.split(".", 1)
            entry: dict[str, Any] = {"value": c.value, "provenance": c.provenance, "why": c.why}
            if c.loosening is not None:
                entry["loosening"] = c.loosening
            if c.disabled:
                entry["disabled"] = True
            sections.setdefault(sec, {})[name] = entry
        return {"version": self.version, "constants": sections}


def digest(obj: Any) -> str:
    """SHA-256 (first 16 hex digits) of the canonical JSON form of ``obj``."""
    canon = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()[:16]


def _build(version: str, consts: Mapping[str, Constant], source: str) -> Config:
    return Config(version=version, constants=dict(consts), source=source)


#: Most nodes (numbers, strings, list items, mapping entries) one constant's value may hold,
#: counting every use of a YAML alias: a bound on the memory and time of an alias bomb.
MAX_VALUE_NODES = 100_000
#: Deepest nesting of lists and mappings in one constant's value.
MAX_VALUE_DEPTH = 50


def _check_value(value: Any, key: str, source: str) -> None:
    """Refuse a value that is too large once aliases are expanded, too deep, or has non-string keys."""
    budget = [MAX_VALUE_NODES]

    def walk(v: Any, depth: int) -> None:
        budget[0] -= 1
        if budget[0] < 0:
            raise ConfigError(f"{source}: constant {key!r} field 'value' holds more than "
                              f"{MAX_VALUE_NODES} items (aliases expanded)")
        if depth > MAX_VALUE_DEPTH:
            raise ConfigError(f"{source}: constant {key!r} field 'value' is nested more than "
                              f"{MAX_VALUE_DEPTH} levels deep")
        if isinstance(v, Mapping):
            for k, item in v.items():
                if not isinstance(k, str):
                    raise ConfigError(f"{source}: constant {key!r} field 'value' has a mapping key "
                                      f"{k!r:.40} that is not a string")
                walk(item, depth + 1)
        elif isinstance(v, list | tuple | set):
            for item in v:
                walk(item, depth + 1)

    walk(value, 0)


def parse_config(data: Any, *, source: str = "<memory>") -> Config:
    """Validate a parsed YAML document and build a :class:`Config`.

    Parameters
    ----------
    data : Any
        The parsed document.
    source : str
        File name used in error messages.

    Returns
    -------
    config : Config

    Raises
    ------
    ConfigError
        Naming the file and the offending key when anything is missing or malformed.
    """
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: top level must be a mapping with 'version' and 'constants'")
    version = data.get("version")
    if not isinstance(version, str) or not version:
        raise ConfigError(f"{source}: 'version' must be a non-empty string")
    sections = data.get("constants")
    if not isinstance(sections, Mapping) or not sections:
        raise ConfigError(f"{source}: 'constants' must be a non-empty mapping of sections")
    consts: dict[str, Constant] = {}
    for sec, entries in sections.items():
        if not isinstance(entries, Mapping):
            raise ConfigError(f"{source}: section 'constants.{sec}' must be a mapping")
        for name, entry in entries.items():
            key = f"{sec}.{name}"
            if not isinstance(entry, Mapping):
                raise ConfigError(
                    f"{source}: constant {key!r} must be a mapping with value, provenance, why"
                )
            unknown = set(entry) - {"value", "provenance", "why", "loosening", "disabled"}
            if unknown:
                raise ConfigError(f"{source}: constant {key!r} has unknown field(s) {sorted(unknown)}")
            if "value" not in entry:
                raise ConfigError(f"{source}: constant {key!r} has no 'value'")
            prov = entry.get("provenance")
            if prov not in PROVENANCES:
                raise ConfigError(
                    f"{source}: constant {key!r} field 'provenance' must be one of "
                    f"{list(PROVENANCES)}, got {prov!r}"
                )
            why = entry.get("why")
            if not isinstance(why, str) or not why.strip():
                raise ConfigError(f"{source}: constant {key!r} field 'why' must be a one-line reason")
            loos = entry.get("loosening")
            if loos is not None and loos not in LOOSENING:
                raise ConfigError(
                    f"{source}: constant {key!r} field 'loosening' must be one of {list(LOOSENING)}"
                )
            _check_value(entry["value"], key, source)
            consts[key] = Constant(
                key, copy.deepcopy(entry["value"]), prov, why.strip(), loos, bool(entry.get("disabled", False))
            )
    return _build(version, consts, source)


def load_config(path: str | Path | None = None) -> Config:
    """Load and validate a configuration file.

    Parameters
    ----------
    path : str or Path, optional
        YAML file (formats §4); the packaged ``timingbench-v1.yaml`` when omitted
        (read once per process while the file is unchanged: a :class:`Config` is immutable).

    Returns
    -------
    config : Config

    Raises
    ------
    ConfigError
        If the file is missing, is not YAML, or breaks the schema (names the key).
    """
    if path is None:
        return _packaged_config(DEFAULT_CONFIG_PATH.stat().st_mtime_ns)
    return _read_config(Path(path))


@process_cache(maxsize=2)
def _packaged_config(mtime_ns: int) -> Config:
    return _read_config(DEFAULT_CONFIG_PATH)


def _read_config(p: Path) -> Config:
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read configuration ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{p}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})") from None
    try:
        data = yaml.load(text, Loader=_SAFE_LOADER)  # noqa: S506 (a safe loader)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{p}: not valid YAML ({exc})") from None
    except RecursionError:
        raise ConfigError(f"{p}: not valid YAML (nested too deeply)") from None
    config = parse_config(data, source=str(p))
    config.params.build_all()
    return config

"""Typed parameter sets built from a :class:`~timingbench.config.Config`.

Every configured constant is read by exactly one field of one frozen dataclass, built once
from the configuration (:attr:`Config.params`). Code receives those dataclasses and reads
attributes; it never looks a constant up by string key. A field's name is the constant's
name inside its section, units included (``step_before_s``, ``step_min_db``), so the YAML
and the code say the same thing.

A field that the sensitivity sweep may switch off (a ``calibrated`` or ``few_shot``
constant) is typed ``float | None``; ``None`` means "this check is off" and every reader
handles it. The sweep switches a field off with :func:`dataclasses.replace` on the params,
or with :meth:`Config.with_disabled` on the configuration.

A dataclass field whose type is itself a params dataclass is built from the same section
(a detector's own copy of a gate's constants, e.g. ``stem.absence_guard_s``), unless that
class sets ``OWN_SECTION``: then the field holds the configuration's set of that class's own
section (``evidence.families`` is the ``families`` section's set, the family registry).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import types
import typing
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, Protocol, TypeVar

from timingbench.errors import ConfigError
from timingbench.memo import object_table

P = TypeVar("P", bound="Params")

#: Field-name endings of quantities that cannot be negative (seconds, hertz, frame counts).
NON_NEGATIVE_SUFFIXES = ("_s", "_hz", "_frames")

#: Section name -> params class, filled by :func:`register`.
REGISTRY: dict[str, type[Params]] = {}


class ConfigSource(Protocol):
    """What parameter sets are read from: a :class:`timingbench.config.Config` (named here
    by its shape, so that this layer does not import the one above it)."""

    @property
    def source(self) -> str: ...

    @property
    def params(self) -> Any: ...  # a ParamSet (timingbench.params.sets)

    def value(self, key: str) -> Any: ...


@dataclasses.dataclass(frozen=True)
class Params:
    """Base of every parameter set.

    Subclasses set ``SECTION`` (the configuration section they are built from) and declare
    one field per constant. ``validate`` (called after the fields are set) raises
    :class:`~timingbench.errors.ConfigError` for values out of range.
    """

    SECTION: ClassVar[str] = ""
    #: When True, a field of this type in another set holds this section's own set (read
    #: from the configuration as it is), not a copy built from the embedding set's section.
    OWN_SECTION: ClassVar[bool] = False

    def __getattribute__(self, name: str) -> Any:
        value = object.__getattribute__(self, name)
        if _RECORDERS and name in type(self).__dataclass_fields__ and not isinstance(value, Params):
            sec = self.section
            for reads in _RECORDERS:
                reads.add(f"{sec}.{name}")
        return value

    @property
    def section(self) -> str:
        """The configuration section this set was built from (a nested set: its parent's)."""
        return self.__dict__.get("_section") or (_BUILDING[-1] if _BUILDING else type(self).SECTION)

    def __post_init__(self) -> None:
        try:
            self.validate()
        except (TypeError, ValueError, OverflowError) as exc:  # a value of the wrong shape
            if isinstance(exc, ConfigError):
                raise
            raise ConfigError(f"section '{self.section}' holds a value of the wrong shape ({exc})") from None

    def validate(self) -> None:
        """Check value ranges.

        The default checks that every number is finite and that durations, frequencies and
        frame counts (fields named ``*_s``, ``*_hz``, ``*_frames``) are not negative;
        subclasses add their own rules and call this first.

        Raises
        ------
        ConfigError
            Naming the section and field of the first invalid value.
        """
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, float) and not math.isfinite(v):
                raise ConfigError(f"constant '{self.section}.{f.name}' field 'value' must be a finite number, "
                                  f"got {v!r}")
            if (isinstance(v, int | float) and not isinstance(v, bool) and v < 0
                    and f.name.endswith(NON_NEGATIVE_SUFFIXES)):
                raise ConfigError(f"constant '{self.section}.{f.name}' field 'value' must not be negative "
                                  f"(a duration, frequency or frame count), got {v!r}")

    @classmethod
    def keys(cls, section: str | None = None) -> list[str]:
        """The dotted configuration keys this class reads (nested sets included)."""
        sec = section or cls.SECTION
        out: list[str] = []
        hints = _hints(cls)
        for f in dataclasses.fields(cls):
            sub = _params_type(hints[f.name])
            if sub is None:
                out.append(f"{sec}.{f.name}")
            else:
                out.extend(sub.keys(sub.SECTION if sub.OWN_SECTION else sec))
        return out

    @classmethod
    def from_config(cls: type[P], config: ConfigSource, section: str | None = None) -> P:
        """Build the parameter set from ``config``'s section.

        Parameters
        ----------
        config : Config
            The configuration.
        section : str, optional
            Section to read (default ``SECTION``).

        Returns
        -------
        params : Params

        Raises
        ------
        ConfigError
            If a constant is missing, has the wrong type, is switched off where the field
            does not allow it, or fails :meth:`validate`.
        """
        sec = section or cls.SECTION
        hints = _hints(cls)
        kwargs: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            tp = hints[f.name]
            sub = _params_type(tp)
            if sub is not None:
                kwargs[f.name] = getattr(config.params, sub.SECTION) if sub.OWN_SECTION \
                    else sub.from_config(config, sec)
                continue
            key = f"{sec}.{f.name}"
            kwargs[f.name] = _coerce(config.value(key), tp, key, config.source)
        _BUILDING.append(sec)
        try:
            built = cls(**kwargs)
        except ConfigError as exc:
            raise ConfigError(f"{config.source}: {exc}") from None
        finally:
            _BUILDING.pop()
        object.__setattr__(built, "_section", sec)  # for nested sets, whose SECTION is not theirs
        return built


#: Sections being built (innermost last): nested sets name their parent's section.
_BUILDING: list[str] = []

#: Active read recorders (see :func:`record_reads`).
_RECORDERS: list[set[str]] = []


@contextlib.contextmanager
def record_reads() -> Iterator[set[str]]:
    """Record the dotted key of every parameter field read inside the block.

    A computation that read no field of a constant gives the same result whatever that
    constant's value: the sensitivity sweep re-scores only the events whose baseline run
    read the constant it varies.

    Yields
    ------
    reads : set of str
        Filled with ``section.name`` keys as fields are read.
    """
    reads: set[str] = set()
    _RECORDERS.append(reads)
    try:
        yield reads
    finally:
        _RECORDERS.remove(reads)


def register(cls: type[P]) -> type[P]:
    """Class decorator: make ``cls`` the parameter set of its ``SECTION``."""
    if not cls.SECTION:
        raise TypeError(f"{cls.__name__} has no SECTION")
    if cls.SECTION in REGISTRY and REGISTRY[cls.SECTION] is not cls:
        raise TypeError(f"section {cls.SECTION!r} already has {REGISTRY[cls.SECTION].__name__}")
    REGISTRY[cls.SECTION] = cls
    return cls


def _hints(cls: type) -> dict[str, Any]:
    """The resolved field annotations of a params class (resolved once per class)."""
    table = object_table("params-type-hints")
    hints: dict[str, Any] | None = table.get(cls)
    if hints is None:
        hints = table[cls] = typing.get_type_hints(cls)
    return hints


def constant_error(section: str, name: str, what: str, value: Any) -> ConfigError:
    """``constant 'section.name' <what>, got <value>``: a constant that breaks its set's rule."""
    return ConfigError(f"constant '{section}.{name}' {what}, got {value!r:.80}")


def _params_type(tp: Any) -> type[Params] | None:
    return tp if isinstance(tp, type) and issubclass(tp, Params) else None


def _coerce(value: Any, tp: Any, key: str, source: str) -> Any:
    """Check ``value`` against the field type ``tp`` (ints are accepted for floats)."""
    args = typing.get_args(tp)
    origin = typing.get_origin(tp)
    optional = origin in (typing.Union, types.UnionType) and type(None) in args
    if value is None:
        if optional or tp is Any:
            return None
        raise ConfigError(f"{source}: constant {key!r} cannot be switched off or null (it has no off state)")
    base = tp
    if optional:
        rest = [a for a in args if a is not type(None)]
        base = rest[0] if len(rest) == 1 else Any
    border = typing.get_origin(base) or base
    if base is Any:
        return value
    if border is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{source}: constant {key!r} field 'value' must be a number, got {value!r:.60}")
        try:
            return float(value)
        except OverflowError:
            raise ConfigError(f"{source}: constant {key!r} field 'value' is beyond the float range") from None
    if border is int:
        if (isinstance(value, bool) or not isinstance(value, int | float)
                or (isinstance(value, float) and not value.is_integer())):
            raise ConfigError(f"{source}: constant {key!r} field 'value' must be an integer, got {value!r:.60}")
        return int(value)
    if border is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{source}: constant {key!r} field 'value' must be true or false, got {value!r:.60}")
        return value
    if border is str:
        if not isinstance(value, str):
            raise ConfigError(f"{source}: constant {key!r} field 'value' must be a string, got {value!r:.60}")
        return value
    if border in (list, tuple):
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{source}: constant {key!r} field 'value' must be a list, got {value!r:.60}")
        (item,) = typing.get_args(base) or (Any,)
        for i, v in enumerate(value):  # checked, kept as written (an int stays an int)
            _coerce(v, item, f"{key}[{i}]", source)
        return list(value)
    if border in (dict, Mapping) or border is typing.get_origin(Mapping[str, Any]):
        if not isinstance(value, Mapping):
            raise ConfigError(f"{source}: constant {key!r} field 'value' must be a mapping, got {value!r:.60}")
        return dict(value)
    return value


def zero_if_off(x: float | None) -> float:
    """A constant the configuration may leave null ("off"), as the 0.0 it then means."""
    return 0.0 if x is None else float(x)

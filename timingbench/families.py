"""The family registry: every instrument family, read from the configuration's ``families`` section.

One table (``families.table`` in ``configs/timingbench-v1.yaml``) says, per instrument family,
what every part of timingbench knows it by: its General MIDI programs (the reference
renderer's instruments and the evidence model's training parts belong to a family by their
program), its AudioSet classes (what a tagger reads it from), its separation stem, the names
generated prompts give its instruments, its published localization floor
(``families.floors_s``), and whether its identity is judged or exempt, with the reason. The
list of families is data: a family added to the table is accepted by prompt validation,
rendered, trained on, judged or exempted, reported and tabulated without a code change.

Besides the instrument families there is the whole-mix family :data:`MIX`, which events that
concern the whole mix name (``music_end``, ...); it carries no identity and is in no row.

Two ways in:

- the module constants (:data:`FAMILY_NAMES`, :data:`EVENT_FAMILIES`, :data:`STEM_FAMILIES`,
  :data:`TONAL_FAMILIES`) are read from the packaged configuration when this module is first
  imported. The rows' order is the shipped evidence network's output order. Prompt
  validation, the renderer's catalogue and the evidence model's program table use these;
- the functions take a configuration (default: the packaged one) for what a run may change:
  which families are judged, their floors, their AudioSet classes. A configuration whose
  family *list* differs from the packaged one is refused (:func:`registry`): the list is fixed
  by the installation (the network's rows, the catalogue), its contents are configurable.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import timingbench.config as _config
from timingbench.config import Config
from timingbench.errors import ConfigError, ParameterError
from timingbench.params.families import MIX, FamiliesParams, Family

__all__ = [
    "EVENT_FAMILIES",
    "FAMILY_NAMES",
    "MIX",
    "STEM_FAMILIES",
    "TONAL_FAMILIES",
    "FamiliesParams",
    "Family",
    "animal_classes",
    "drum_kit_families",
    "event_families",
    "exempt_families",
    "family",
    "floor_s",
    "instrument_families",
    "judged_families",
    "judging",
    "judging_every_family",
    "program_families",
    "registry",
    "speech_classes",
]


def registry(config: Config | None = None) -> FamiliesParams:
    """The family registry of ``config`` (its ``families`` parameter set).

    Parameters
    ----------
    config : Config, optional
        The run's configuration; the packaged one when omitted.

    Returns
    -------
    registry : FamiliesParams
        Rows (:attr:`FamiliesParams.rows`), names, judged and exempt families, floors.

    Raises
    ------
    ConfigError
        If ``config`` lists other families, or lists them in another order, than the
        packaged configuration: the list is the installation's (the evidence network's
        output rows, the renderer's catalogue, prompt validation); edit the packaged
        ``configs/timingbench-v1.yaml`` to add a family.
    """
    packaged = _config.load_config().params.families
    if config is None:
        return packaged
    reg = config.params.families
    if reg.names != packaged.names:
        raise ConfigError(
            f"{config.source}: 'families.table' lists the families {list(reg.names)}, but this installation's "
            f"are {list(packaged.names)} (the packaged {Path(_config.DEFAULT_CONFIG_PATH).name}, in the evidence "
            "network's output order): a configuration may change a family's row, not the list; add a family "
            "to the packaged configuration")
    return reg


def instrument_families(config: Config | None = None) -> tuple[str, ...]:
    """The instrument families in registry order (``mix`` not among them).

    Parameters
    ----------
    config : Config, optional
        The configuration; the packaged one when omitted.

    Returns
    -------
    names : tuple of str
    """
    return registry(config).names


def event_families(config: Config | None = None) -> tuple[str, ...]:
    """The families an event may name: the instrument families, then :data:`MIX`."""
    return (*registry(config).names, MIX)


def family(name: str, config: Config | None = None) -> Family:
    """The registry row of instrument family ``name``.

    Parameters
    ----------
    name : str
        An instrument family (not ``mix``).
    config : Config, optional
        The configuration; the packaged one when omitted.

    Returns
    -------
    family : Family
        ``gm_programs``, ``gm_drum_kits``, ``audioset_classes``, ``stem``,
        ``prompt_targets``, ``judged``, ``exempt_reason``, ``floor_s``.

    Raises
    ------
    ParameterError
        If the registry has no family ``name``.
    """
    reg = registry(config)
    row = reg.family(name)
    if row is None:
        raise ParameterError(f"family {name!r} is not an instrument family; use one of {list(reg.names)}")
    return row


def judged_families(config: Config | None = None) -> tuple[str, ...]:
    """The instrument families whose identity is judged, in registry order."""
    return registry(config).judged


def exempt_families(config: Config | None = None) -> dict[str, str]:
    """Family -> why its identity is not judged (``exempt: <reason>`` of its row), in registry order."""
    return registry(config).exempt


def judging_every_family(config: Config) -> Config:
    """``config`` with every row of the registry judged (no ``exempt``).

    What ``timingbench calibrate evidence`` fits on: the presence steps are chosen with every
    family's events scored through the family evidence, before the registry says which
    families meet the bar.
    """
    return judging(config, registry(config).names)


def judging(config: Config, names: Iterable[str]) -> Config:
    """``config`` with the registry rows of ``names`` judged as well (their ``exempt`` dropped), the others as
    they are."""
    judge = set(names)
    table = [({k: v for k, v in dict(row).items() if k != "exempt"} | {"judged": True}) if row["name"] in judge
             else dict(row) for row in registry(config).table]
    return config.with_value("families.table", table)


def floor_s(name: str, config: Config | None = None) -> float | None:
    """The published localization floor of family ``name`` (or of ``mix``) in seconds.

    Returns
    -------
    floor_s : float or None
        None when not measured, or for a name the registry does not know.
    """
    return registry(config).floor_of(name)


def program_families(config: Config | None = None) -> dict[int, str]:
    """General MIDI melodic program (0-based) -> the family it belongs to."""
    return {p: f.name for f in registry(config).rows for p in f.gm_programs}


def drum_kit_families(config: Config | None = None) -> dict[int, str]:
    """General MIDI drum-kit program (percussion channel) -> the family it belongs to."""
    return {p: f.name for f in registry(config).rows for p in f.gm_drum_kits}


def speech_classes(config: Config | None = None) -> tuple[str, ...]:
    """AudioSet classes of speech: negatives of the vocals family (``families.speech_classes``)."""
    return tuple(registry(config).speech_classes)


def animal_classes(config: Config | None = None) -> tuple[str, ...]:
    """AudioSet classes of animal sounds: negatives of every family (``families.animal_classes``)."""
    return tuple(registry(config).animal_classes)


#: The instrument families of the packaged registry, in its order (the evidence network's rows).
FAMILY_NAMES: tuple[str, ...] = instrument_families()
#: Every family an event may name: :data:`FAMILY_NAMES`, then ``mix``.
EVENT_FAMILIES: tuple[str, ...] = event_families()
#: Families read from a separation stem of their own (stem detector; percussion its own).
STEM_FAMILIES: tuple[str, ...] = tuple(f.name for f in registry().rows if f.stem is not None)
#: Families without a stem of their own (the tonal detector's).
TONAL_FAMILIES: tuple[str, ...] = tuple(f.name for f in registry().rows if f.stem is None)

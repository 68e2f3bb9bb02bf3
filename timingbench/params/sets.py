"""The typed parameter sets of one configuration, and lookups across every section.

Importing this module imports every section module, so the registry
(:data:`timingbench.params.base.REGISTRY`) is complete wherever these are used.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from timingbench.errors import ConfigError
from timingbench.params.analysis import (
    AudioParams,
    EvidenceParams,
    FeaturesParams,
    SemanticParams,
    SeparationParams,
)
from timingbench.params.base import REGISTRY, ConfigSource, Params
from timingbench.params.benchmarks import AudioragParams, JudgeParams, MgbenchParams, TagParams
from timingbench.params.controls import ControlsParams
from timingbench.params.detectors import (
    ChanceParams,
    DurationParams,
    EnergyParams,
    MixParams,
    PercussionParams,
    SearchParams,
    StemParams,
    TempoParams,
    TonalParams,
)
from timingbench.params.families import FamiliesParams
from timingbench.params.generation import (
    MgbenchBaselineParams,
    MgbenchGenParams,
    PromptsParams,
    RenderParams,
)
from timingbench.params.presence import PresenceParams
from timingbench.params.singing import SingingParams
from timingbench.params.tagger import TaggerParams
from timingbench.params.tools import (
    AnnotationsParams,
    CalibrationParams,
    CompareParams,
    LabelParams,
    RuntimeParams,
)


class ParamSet:
    """Every registered parameter set of one configuration, by section name.

    ``config.params.stem`` is the :class:`StemParams` of ``config``. Sets are built on
    first access and kept; :func:`build_all` builds them all (``load_config`` does, so a
    file with a missing or mistyped constant fails when it is loaded).
    """

    annotations: AnnotationsParams
    audio: AudioParams
    audiorag: AudioragParams
    calibration: CalibrationParams
    chance: ChanceParams
    compare: CompareParams
    controls: ControlsParams
    duration: DurationParams
    energy: EnergyParams
    evidence: EvidenceParams
    families: FamiliesParams
    features: FeaturesParams
    judge: JudgeParams
    label: LabelParams
    mgbench: MgbenchParams
    mgbench_baseline: MgbenchBaselineParams
    mgbench_gen: MgbenchGenParams
    mix: MixParams
    percussion: PercussionParams
    presence: PresenceParams
    prompts: PromptsParams
    render: RenderParams
    runtime: RuntimeParams
    search: SearchParams
    semantic: SemanticParams
    separation: SeparationParams
    singing: SingingParams
    stem: StemParams
    tag: TagParams
    tagger: TaggerParams
    tempo: TempoParams
    tonal: TonalParams

    def __init__(self, config: ConfigSource) -> None:
        self._config = config
        self._built: dict[str, Params] = {}

    def __getattr__(self, section: str) -> Params:
        if section.startswith("_"):
            raise AttributeError(section)
        try:
            return self._built[section]
        except KeyError:
            pass
        try:
            cls = REGISTRY[section]
        except KeyError:
            raise AttributeError(f"no parameter set for section {section!r}") from None
        p = cls.from_config(self._config)
        self._built[section] = p
        return p

    def build_all(self) -> dict[str, Params]:
        """Build every registered set; return them by section."""
        return {s: getattr(self, s) for s in REGISTRY}


def all_keys() -> set[str]:
    """Every dotted key that some registered parameter set reads."""
    out: set[str] = set()
    for cls in REGISTRY.values():
        out.update(cls.keys())
    return out


def field_value(config: ConfigSource, key: str) -> Any:
    """The value code sees for the dotted ``key``: read from the typed parameter set.

    Parameters
    ----------
    config : Config
        The configuration.
    key : str
        ``section.name``, a constant of a registered section (nested sets are searched).

    Returns
    -------
    value : Any
        The field's value (``None`` when switched off).

    Raises
    ------
    ConfigError
        If no parameter set reads ``key``.
    """
    section, name = key.split(".", 1) if "." in key else (key, "")
    if section not in REGISTRY:
        raise ConfigError(f"{config.source}: no parameter set reads {key!r}")
    found, value = _find_field(getattr(config.params, section), name)
    if not found:
        raise ConfigError(f"{config.source}: no parameter set reads {key!r}")
    return value


def _find_field(params: Params, name: str) -> tuple[bool, Any]:
    for f in dataclasses.fields(params):
        v = getattr(params, f.name)
        if isinstance(v, Params):
            found, inner = _find_field(v, name)
            if found:
                return True, inner
        elif f.name == name:
            return True, v
    return False, None

"""Typed, validated parameter sets: one frozen dataclass per configuration section.

``load_config(...).params.<section>`` is the parameter set of that section; see
:mod:`timingbench.params.base`.
"""

from timingbench.params.base import REGISTRY, Params, ParamSet, all_keys, register

__all__ = ["REGISTRY", "ParamSet", "Params", "all_keys", "register"]

"""Typed, validated parameter sets: one frozen dataclass per configuration section.

``load_config(...).params.<section>`` is the parameter set of that section; see
:mod:`timingbench.params.base`.
"""

from timingbench.params.base import REGISTRY, Params, register
from timingbench.params.sets import ParamSet, all_keys

__all__ = ["REGISTRY", "ParamSet", "Params", "all_keys", "register"]

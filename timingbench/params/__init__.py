"""Typed, validated parameter sets: one frozen dataclass per configuration section.

``load_config(...).params.<section>`` is the parameter set of that section; see
:mod:`timingbench.params.base`.

Each field is the constant of the same name in the class's section of
``configs/timingbench-v1.yaml``. The fields' docstring entries (the constant's ``why`` and
provenance) are generated from it by ``tools/params_docs.py --write``;
``tests/test_params_docs.py`` fails when they drift.
"""

from timingbench.params.base import REGISTRY, Params, register
from timingbench.params.sets import ParamSet, all_keys

__all__ = ["REGISTRY", "ParamSet", "Params", "all_keys", "register"]

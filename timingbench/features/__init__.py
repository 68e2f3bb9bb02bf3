"""The feature bank: every curve the detectors read, on one frame grid, computed once per clip.

Public API::

    from timingbench.features import FeatureBank, compute_bank, get_bank, bank_build_count

See :mod:`timingbench.features.bank` (the bank), :mod:`.kernels` (numba hot loops),
:mod:`.separation` (demucs and dsp stems) and :mod:`.cache` (the disk cache).
"""

from timingbench.features.bank import (
    FeatureBank,
    FeaturesParams,
    Loudness,
    Stem,
    bank_build_count,
    clear_memory_cache,
    compute_bank,
    get_bank,
)

__all__ = [
    "FeatureBank",
    "FeaturesParams",
    "Loudness",
    "Stem",
    "bank_build_count",
    "clear_memory_cache",
    "compute_bank",
    "get_bank",
]

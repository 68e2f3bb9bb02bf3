"""Shared pytest fixtures."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from timingbench.config import Config, load_config

#: Hypothesis profiles. ``ci`` (the default) is seeded, so every run of the default suite
#: draws the same inputs; ``long`` (``TIMINGBENCH_HYPOTHESIS_PROFILE=long``, set by
#: ``make test-slow``) draws 10^5 fresh inputs per fuzzed parser (``TIMINGBENCH_FUZZ_EXAMPLES``
#: sets another count). Tests that set their own
#: ``max_examples`` keep it under either profile.
_FUZZ_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile("ci", max_examples=100, derandomize=True, deadline=None, database=None,
                          suppress_health_check=_FUZZ_HEALTH)
settings.register_profile("long", max_examples=int(os.environ.get("TIMINGBENCH_FUZZ_EXAMPLES", "100000")),
                          deadline=None, database=None, suppress_health_check=_FUZZ_HEALTH)
settings.load_profile(os.environ.get("TIMINGBENCH_HYPOTHESIS_PROFILE", "ci"))

#: The user's model cache and torch hub folder, before the suite isolates them below: only
#: tests marked ``slow`` that need real weights read them.
USER_MODEL_CACHE = Path(os.environ.get("TIMINGBENCH_MODEL_CACHE")
                        or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "timingbench" / "models")
USER_TORCH_HOME = os.environ.get("TORCH_HOME")
# An empty model cache and torch hub for the whole suite, so that `--separation auto` never
# finds real weights (fetched ONNX export or PyTorch checkpoints) and every default test
# runs the same here and on a fresh machine.
_ISOLATED_MODELS = tempfile.mkdtemp(prefix="timingbench-test-models-")
os.environ["TIMINGBENCH_MODEL_CACHE"] = os.path.join(_ISOLATED_MODELS, "models")
os.environ["TORCH_HOME"] = os.path.join(_ISOLATED_MODELS, "torch")

#: The read-only shared folder beside the repository (real recordings, papers).
SHARED = Path(__file__).resolve().parent.parent.parent / "shared"
REALDATA = SHARED / "realdata"


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded random generator (the same numbers in every test run)."""
    return np.random.default_rng(20260101)


@pytest.fixture(scope="session")
def config() -> Config:
    """The packaged configuration."""
    return load_config()


@pytest.fixture(scope="session")
def realdata() -> Path:
    """Path of ``shared/realdata``; tests that need it skip when it is absent."""
    if not REALDATA.is_dir():
        pytest.skip("shared/realdata is not present beside the repository")
    return REALDATA

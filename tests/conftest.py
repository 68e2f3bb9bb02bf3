"""Shared pytest fixtures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from timingbench.config import Config, load_config

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

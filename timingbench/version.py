"""The package version (a leaf module, so that any layer may read it)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("timingbench")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"

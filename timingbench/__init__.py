"""timingbench: measure whether audio does the right thing at the right time."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("timingbench")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]

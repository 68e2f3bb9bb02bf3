"""The one error hierarchy of timingbench.

Every error raised on purpose by the package derives from :class:`TimingbenchError`,
so a caller can catch everything the package reports with a single ``except``.
Messages name the file, the row or id, and the field, and say what to do.
"""

from __future__ import annotations


class TimingbenchError(Exception):
    """Base class of every error raised on purpose by timingbench."""


class ParameterError(TimingbenchError, ValueError):
    """A function received an argument it cannot work with (wrong shape, units, range)."""


class ConfigError(TimingbenchError, ValueError):
    """A configuration file is missing, malformed, or lacks a constant's provenance."""


class ClipError(TimingbenchError):
    """An audio clip cannot be decoded or analysed (corrupt, empty, silent, non-finite)."""


class PromptError(TimingbenchError, ValueError):
    """A prompt row breaks a rule of the prompt-set schema (formats §1)."""


class AnnotationError(TimingbenchError, ValueError):
    """An annotation row breaks a rule of the annotation format (formats §5)."""


class ModelUnavailableError(TimingbenchError):
    """Model weights (demucs, CLAP, ...) are not present locally and cannot be downloaded."""


class MemoKeyError(RuntimeError):
    """A memoised computation read a constant its key lacks (:mod:`timingbench.memo`).

    A bug in the package, not bad input: deliberately not a :class:`TimingbenchError`, so
    the runner does not turn it into a clip's error row and carry on.
    """

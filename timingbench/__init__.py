"""timingbench: measure whether audio does the right thing at the right time.

The public API (``docs/api.md``)::

    import timingbench

    res = timingbench.score_audio(samples, sr, prompt_row)   # in memory -> ClipResult
    folder = timingbench.score_folder("clips/", "prompts.jsonl")
    cfg = timingbench.load_config()                           # the packaged configuration
    prompts = timingbench.load_prompts()                      # the packaged v1 prompt set

The names are imported on first use, so ``import timingbench`` stays fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from timingbench.version import __version__

#: Public name -> the module that defines it.
_LAZY = {
    "score_audio": "timingbench.api",
    "score_folder": "timingbench.api",
    "load_config": "timingbench.api",
    "load_prompts": "timingbench.api",
    "ClipResult": "timingbench.api",
    "EventResult": "timingbench.api",
    "FolderResult": "timingbench.api",
    "Config": "timingbench.config",
    "Prompt": "timingbench.prompts",
    "PromptSet": "timingbench.prompts",
    "TimingbenchError": "timingbench.errors",
    "ParameterError": "timingbench.errors",
    "ClipError": "timingbench.errors",
    "PromptError": "timingbench.errors",
    "ConfigError": "timingbench.errors",
}

__all__ = [
    "ClipError",
    "ClipResult",
    "Config",
    "ConfigError",
    "EventResult",
    "FolderResult",
    "ParameterError",
    "Prompt",
    "PromptError",
    "PromptSet",
    "TimingbenchError",
    "__version__",
    "load_config",
    "load_prompts",
    "score_audio",
    "score_folder",
]

if TYPE_CHECKING:
    from timingbench.api import (
        ClipResult,
        EventResult,
        FolderResult,
        load_config,
        load_prompts,
        score_audio,
        score_folder,
    )
    from timingbench.config import Config
    from timingbench.errors import (
        ClipError,
        ConfigError,
        ParameterError,
        PromptError,
        TimingbenchError,
    )
    from timingbench.prompts import Prompt, PromptSet


def __getattr__(name: str) -> Any:
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'timingbench' has no attribute {name!r}") from None
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

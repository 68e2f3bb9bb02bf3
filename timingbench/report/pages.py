"""What identifies a clip page of a report: the job that writes it and its file names."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ClipJob:
    """Everything one worker needs to write one clip page (picklable).

    Attributes
    ----------
    page : int
        Index of the page (its files are ``c<page>``).
    clip : str
        Clip file name.
    rows : list of dict
        The clip's ``events.jsonl`` rows.
    clip_row : dict
        Its ``clips.jsonl`` row (empty when absent).
    summary : dict
        The run's ``summary.json``.
    results : str
        The results folder.
    out : str
        The report folder.
    audio : str
        ``none``, ``copy`` or ``mp3``.
    system : str
        Name of the reported system.
    others : list of tuple
        ``(system name, that system's rows of the same prompt and sample)`` per compared system.
    neighbours : tuple of (int or None)
        Previous and next page.
    resolve : dict
        ``clips_dir``, ``prompts_path``, ``config_path`` overrides (None: as recorded).
    overrides : dict
        Options for :func:`timingbench.explain.event.clip_inputs` (``cache_dir``, ...).
    """

    page: int
    clip: str
    rows: list[dict[str, Any]]
    clip_row: dict[str, Any]
    summary: dict[str, Any]
    results: str
    out: str
    audio: str
    system: str
    others: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)
    neighbours: tuple[int | None, int | None] = (None, None)
    resolve: dict[str, Any] = field(default_factory=dict)
    overrides: dict[str, Any] = field(default_factory=dict)


def page_name(page: int) -> str:
    """The stem of a clip page's files (``c00042``)."""
    return f"c{page:05d}"

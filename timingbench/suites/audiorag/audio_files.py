"""Where each AudioRAG question's audio file sits (a report only: scoring needs no audio)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from timingbench.errors import ParameterError
from timingbench.suites.audiorag.io import RagItem

__all__ = ["AudioResolution", "default_audio_root", "resolve_audio"]


@dataclass(frozen=True)
class AudioResolution:
    """Where the audio of each question was found.

    Attributes
    ----------
    root : str or None
        The audio root searched (None when no root was available: nothing checked).
    resolved : dict of int to str
        Row index -> existing file.
    via_fallback : list of int
        Rows found only through a fallback folder (e.g. ``MusicNet/audios_cropped``).
    unresolved : list of str
        ``audio_path`` values with no file.
    """

    root: str | None
    resolved: dict[int, str]
    via_fallback: list[int]
    unresolved: list[str]


def default_audio_root(metadata_path: str | Path, *, audio_subdir: str) -> Path | None:
    """The release's audio folder ``<release>/<audio_subdir>`` beside ``metadata/``, if present.

    Parameters
    ----------
    metadata_path : str or Path
        ``<release>/metadata/metadata.jsonl``.
    audio_subdir : str
        Config ``audiorag.audio_subdir``.

    Returns
    -------
    root : Path or None
        None when that folder does not exist (the audio check is then skipped).
    """
    cand = Path(metadata_path).resolve().parent.parent / audio_subdir
    return cand if cand.is_dir() else None


def resolve_audio(
    items: Sequence[RagItem], *, audio_root: str | Path | None, fallback_subdirs: Sequence[str]
) -> AudioResolution:
    """Find each question's audio file, with a folder fallback.

    A path ``A/B/name.wav`` that does not exist is retried as ``A/B/<sub>/name.wav`` for
    each fallback folder ``sub`` (config ``audiorag.fallback_subdirs``): the release's
    MusicNet rows name ``MusicNet/<id>.wav`` while the files sit in
    ``MusicNet/audios_cropped/<id>.wav``.

    Parameters
    ----------
    items : sequence of RagItem
        The questions.
    audio_root : str, Path or None
        Folder the ``audio_path`` values are relative to; None skips the check.
    fallback_subdirs : sequence of str
        Folder names tried between the parent folder and the file name.

    Returns
    -------
    resolution : AudioResolution

    Raises
    ------
    ParameterError
        If ``audio_root`` is given but is not a folder.
    """
    if audio_root is None:
        return AudioResolution(root=None, resolved={}, via_fallback=[], unresolved=[])
    root = Path(audio_root)
    if not root.is_dir():
        raise ParameterError(f"--audio-root {root}: not a folder")
    resolved: dict[int, str] = {}
    via: list[int] = []
    unresolved: list[str] = []
    for it in items:
        rel = Path(it.audio_path)
        direct = root / rel
        if direct.is_file():
            resolved[it.index] = str(direct)
            continue
        found = None
        for sub in fallback_subdirs:
            cand = root / rel.parent / sub / rel.name
            if cand.is_file():
                found = cand
                break
        if found is not None:
            resolved[it.index] = str(found)
            via.append(it.index)
        elif it.audio_path not in unresolved:
            unresolved.append(it.audio_path)
    return AudioResolution(root=str(root), resolved=resolved, via_fallback=via, unresolved=unresolved)

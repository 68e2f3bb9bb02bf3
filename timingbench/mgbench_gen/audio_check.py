"""Check generated note annotations against the rendered audio's onset curve.

For every annotated onset, the full-band spectral-flux onset curve of the feature bank
(:mod:`timingbench.features.bank`) must peak within ``mgbench_gen.onset_check_frames``
analysis frames of the annotated time. The peak is searched in a window around the onset
bounded by the neighbouring onsets, so each note is judged by its own attack.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from timingbench.audio import load_clip
from timingbench.config import Config
from timingbench.convert import frame_rate_hz
from timingbench.features.bank import compute_bank
from timingbench.jsonio import iter_jsonl

#: Half-width of the peak search around an annotated onset, frames (bounded by neighbours).
SEARCH_FRAMES = 8


@dataclass(frozen=True)
class OnsetCheck:
    """Outcome of the check for one clip.

    Attributes
    ----------
    clip : str
    offsets_frames : list of float
        Signed distance of the onset-curve peak from each annotated onset, in frames
        (peak frame minus the onset's fractional frame position).
    failures : list of int
        Indices of notes whose peak lies more than the tolerance away.
    """

    clip: str
    offsets_frames: list[float]
    failures: list[int]


def check_clip_onsets(audio: Path, onsets_s: list[float], cfg: Config, *, clip: str = "") -> OnsetCheck:
    """Compare annotated onsets with the onset curve of ``audio``.

    Parameters
    ----------
    audio : Path
        Rendered clip.
    onsets_s : list of float
        Annotated note onsets in seconds, in time order.
    cfg : Config
        Reads the ``features`` section and ``mgbench_gen.onset_check_frames``.
    clip : str
        Name used in the result.

    Returns
    -------
    check : OnsetCheck

    Raises
    ------
    ClipError
        If the audio cannot be read.
    """
    bank = compute_bank(load_clip(audio, cfg), cfg, separation="none")
    curve = np.asarray(bank.onset_full)
    tol = float(cfg.params.mgbench_gen.onset_check_frames)
    pos = [t * frame_rate_hz(sr=bank.sr, hop=bank.hop) for t in onsets_s]
    offsets: list[float] = []
    failures: list[int] = []
    for k, p in enumerate(pos):
        lo = p - SEARCH_FRAMES if k == 0 else max(p - SEARCH_FRAMES, (pos[k - 1] + p) / 2)
        hi = p + SEARCH_FRAMES if k == len(pos) - 1 else min(p + SEARCH_FRAMES, (p + pos[k + 1]) / 2)
        a, b = max(int(np.ceil(lo)), 0), min(int(np.floor(hi)), curve.size - 1)
        j = a + int(np.argmax(curve[a:b + 1]))
        d = float(j - p)
        offsets.append(round(d, 6))
        if abs(d) > tol + 1e-9:
            failures.append(k)
    return OnsetCheck(clip, offsets, failures)


def check_split(out_dir: str | Path, cfg: Config, *, limit: int | None = None) -> list[OnsetCheck]:
    """Run :func:`check_clip_onsets` on the clips of a generated split (``notes.jsonl``).

    Parameters
    ----------
    out_dir : str or Path
        A folder written by ``timingbench mgbench generate``.
    cfg : Config
    limit : int, optional
        Check only the first ``limit`` clips.

    Returns
    -------
    checks : list of OnsetCheck
    """
    base = Path(out_dir)
    out: list[OnsetCheck] = []
    rows: list[Any] = [r for _, r in iter_jsonl(base / "notes.jsonl")]
    for row in rows[:limit]:
        out.append(check_clip_onsets(base / row["audio_path"], [n["onset_s"] for n in row["notes"]], cfg,
                                     clip=row["clip"]))
    return out

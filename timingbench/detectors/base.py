"""What every detector shares: the event context, candidates and frame-grid helpers.

A detector looks for one instructed event inside its search window and returns
:class:`Candidate` objects. Each candidate carries the verdict of every gate it was put
through, in the order they were applied (gate name -> ``pass`` | ``fail`` | ``exempt``),
and the evidence the verdicts rest on. Detectors never decide the outcome: scoring picks
the candidate and turns it into ``on_time`` / ``off_time`` / ``none``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from timingbench.convert import frames_to_time, time_to_frames

PASS, FAIL, EXEMPT = "pass", "fail", "exempt"


@dataclass(frozen=True)
class EventContext:
    """One instructed event as a detector sees it (all times in seconds).

    Attributes
    ----------
    kind : str
        SPEC section 1 event kind.
    family : str
        Coarse target family (SPEC section 1).
    target : str
        Free-text instrument named in the prompt.
    instructed_s : float
        The instructed time.
    window_lo_s, window_hi_s : float
        The search window (already clamped to siblings and to the analysed audio).
    """

    kind: str
    family: str
    target: str
    instructed_s: float
    window_lo_s: float
    window_hi_s: float


@dataclass
class Candidate:
    """A candidate time for an instructed event and the gates it went through.

    Attributes
    ----------
    time_s : float
        Candidate event time in seconds.
    gates : dict of str to str
        Gate name -> ``pass`` | ``fail`` | ``exempt``, in application order.
    evidence : dict
        Numbers the verdicts rest on (levels in dB, durations in s ...).
    """

    time_s: float
    gates: dict[str, str] = field(default_factory=dict)
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def rejected_by(self) -> str | None:
        """The first failing gate, or None when every gate passed or was exempt."""
        for name, verdict in self.gates.items():
            if verdict == FAIL:
                return name
        return None


class Grid:
    """Frame-grid helper for one feature bank (seconds in, frame slices out).

    Parameters
    ----------
    sr : int
        Sample rate in Hz.
    hop : int
        Hop length in samples.
    n_frames : int
        Number of frames of the bank.
    """

    def __init__(self, *, sr: int, hop: int, n_frames: int) -> None:
        self.sr = sr
        self.hop = hop
        self.n = n_frames

    def frame(self, t_s: float) -> int:
        """Nearest frame index of ``t_s``, clipped to the grid."""
        f = int(time_to_frames([t_s], sr=self.sr, hop=self.hop)[0])
        return min(max(f, 0), self.n - 1)

    def frames(self, duration_s: float) -> int:
        """Whole number of frames (at least 1) spanning ``duration_s``."""
        return max(1, int(round(duration_s * self.sr / self.hop)))

    def span(self, t0_s: float, t1_s: float) -> slice:
        """Slice of frames covering ``[t0_s, t1_s)``, clipped to the grid."""
        a = min(max(int(np.floor(t0_s * self.sr / self.hop + 1e-9)), 0), self.n)
        b = min(max(int(np.ceil(t1_s * self.sr / self.hop - 1e-9)), 0), self.n)
        return slice(a, max(a, b))

    def time(self, frame: int | float) -> float:
        """Seconds of a (possibly fractional) frame index."""
        return float(frames_to_time([frame], sr=self.sr, hop=self.hop)[0])


def rising_crossings(mask: npt.NDArray[np.bool_], lo: int, hi: int) -> list[int]:
    """Frames in ``[lo, hi)`` where ``mask`` turns from False to True."""
    lo = max(lo, 1)
    if hi <= lo:
        return []
    m = mask[lo - 1 : hi].astype(np.int8)
    return [int(i) + lo for i in np.flatnonzero(np.diff(m) == 1)]


def falling_crossings(mask: npt.NDArray[np.bool_], lo: int, hi: int) -> list[int]:
    """Frames in ``[lo, hi)`` where ``mask`` turns from True to False (first False frame)."""
    lo = max(lo, 1)
    if hi <= lo:
        return []
    m = mask[lo - 1 : hi].astype(np.int8)
    return [int(i) + lo for i in np.flatnonzero(np.diff(m) == -1)]


def fraction_true(mask: npt.NDArray[np.bool_], sl: slice) -> float:
    """Fraction of True frames in ``mask[sl]`` (0.0 for an empty slice)."""
    seg = mask[sl]
    return float(seg.mean()) if seg.size else 0.0


def snap_to_accent(
    onset: npt.NDArray[np.floating[Any]], lo: int, hi: int, *, rel_height: float
) -> int | None:
    """Earliest local peak of ``onset`` in ``[lo, hi)`` reaching ``rel_height`` of the span's maximum.

    Returns None when the span is empty or carries no positive onset energy.
    """
    lo, hi = max(lo, 0), min(hi, len(onset))
    if hi <= lo:
        return None
    seg = onset[lo:hi]
    top = float(seg.max())
    if top <= 0:
        return None
    left = np.concatenate(([-np.inf], seg[:-1]))
    right = np.concatenate((seg[1:], [-np.inf]))
    peaks = np.flatnonzero((seg >= left) & (seg >= right) & (seg >= rel_height * top))
    return int(peaks[0]) + lo if peaks.size else None

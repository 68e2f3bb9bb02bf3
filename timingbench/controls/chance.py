"""The chance control of control adherence: the same metric against time-shifted controls.

A clip's controls are shifted circularly in time by ``chance.draws`` random
offsets drawn uniformly from ``[controls.chance_min_shift_s, span - chance_min_shift_s]``
(``span`` the clip's instructed duration): times move to ``(t + shift) mod span``, curves
rotate by the shift rounded to whole frames, chords move with their boundaries (a chord
cut by the wrap becomes two). The shifted controls keep every statistic of the request
(tempo, pitch histogram, level range) except its alignment with the audio, so the
metric's mean over them is what the clip earns without following the request;
``p_chance`` is the share of draws that score at least the real score.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from timingbench.controls.schema import Chord

F64 = npt.NDArray[np.float64]


def draw_shifts(*, span_s: float, draws: int, min_shift_s: float, seed: int, key: str) -> F64:
    """The chance shifts of one clip and control (seconds), reproducible from ``seed`` and ``key``."""
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), zlib.crc32(key.encode())]))
    lo, hi = float(min_shift_s), float(span_s) - float(min_shift_s)
    if hi <= lo:
        return np.empty(0)
    return rng.uniform(lo, hi, size=int(draws))


def shift_times(times_s: F64, shift_s: float, *, span_s: float) -> F64:
    """Times moved by ``shift_s`` circularly over ``[0, span_s)``, sorted."""
    return np.sort(np.mod(times_s + shift_s, span_s))


def shift_curve(values: F64, shift_s: float, *, hop_s: float) -> F64:
    """A curve rotated by ``shift_s`` rounded to whole frames of ``hop_s``."""
    return np.roll(values, int(round(shift_s / hop_s)))


def shift_chords(chords: Sequence[Chord], shift_s: float, *, span_s: float) -> list[Chord]:
    """Chords moved by ``shift_s`` circularly over ``[0, span_s)`` (a wrapped chord is split)."""
    out: list[Chord] = []
    for c in chords:
        s, e = c.start_s + shift_s, c.end_s + shift_s
        k = np.floor(s / span_s)
        s, e = s - k * span_s, e - k * span_s
        if e <= span_s:
            out.append(Chord(s, e, c.label))
        else:
            out.append(Chord(s, span_s, c.label))
            out.append(Chord(0.0, e - span_s, c.label))
    return sorted(out, key=lambda c: c.start_s)


def chance_stats(observed: float | None, shifts: F64, score: Callable[[float], float | None]) -> dict[str, Any]:
    """Mean chance score and ``p_chance`` of one metric.

    Parameters
    ----------
    observed : float or None
        The metric against the real controls.
    shifts : np.ndarray, shape (k,)
        Chance shifts, seconds.
    score : callable
        ``score(shift_s)``: the metric against the controls shifted by ``shift_s``.

    Returns
    -------
    chance : dict
        ``mean`` (None without draws), ``p_chance`` (share of draws scoring at least
        ``observed``; None when either is missing), ``draws``.
    """
    vals = [v for v in (score(float(s)) for s in shifts) if v is not None]
    if not vals:
        return {"mean": None, "p_chance": None, "draws": 0}
    arr = np.asarray(vals, dtype=np.float64)
    p = None if observed is None else float(np.mean(arr >= observed - 1e-12))
    return {"mean": float(arr.mean()), "p_chance": p, "draws": int(arr.size)}

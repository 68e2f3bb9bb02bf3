"""Signal primitives on a frame grid: one peak picker, one window mean, one moving average.

Every detector and gate reads its curves through these functions, so each edge rule is
written (and tested) once. Inputs are 1-D arrays on the feature bank's frame grid; frame
indices are ints, spans are half-open ``[lo, hi)``. :class:`Grid` converts seconds to
frames and back (:mod:`timingbench.convert`).

Edge rules
----------
``local_peaks(edges=...)``
    ``"open"``: samples outside ``[lo, hi)`` count as ``-inf``, so the span's first and last
    frames are peaks when they are not below their one inner neighbour.
    ``"interior"``: only frames with both neighbours inside the span can be peaks.
    ``"neighbours"``: frames of the span are compared with their neighbours in the whole
    curve, also those just outside the span; beyond the curve's own ends lies ``-inf``
    (callers that never want the curve's first or last frame clip the span to
    ``[1, n - 1)``).
``window_means(edges=...)``
    ``"hold"``: the curve is extended with its edge values, so every frame has full windows.
    ``"nan"``: frames without a full window on either side read NaN on both sides.
    ``"clip"``: windows are cut at the curve's ends and average what is left (an empty
    window reads 0.0).
``moving_average(edges=...)``
    ``"hold"``: the curve is extended with its edge values. ``"zero"``: zeros outside the
    curve (numpy's ``same`` convolution); a curve shorter than the window is returned as is.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from timingbench.convert import frame_span, frames_to_time, seconds_to_frame_count, time_to_frames

F64 = npt.NDArray[np.float64]
PeakEdges = Literal["open", "interior", "neighbours"]
MeanEdges = Literal["hold", "nan", "clip"]
SmoothEdges = Literal["hold", "zero"]


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
        return seconds_to_frame_count(duration_s, sr=self.sr, hop=self.hop)

    def span(self, t0_s: float, t1_s: float) -> slice:
        """Slice of frames covering ``[t0_s, t1_s)``, clipped to the grid."""
        return frame_span(t0_s, t1_s, sr=self.sr, hop=self.hop, n_frames=self.n)

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


def local_peaks(
    x: npt.ArrayLike, lo: int, hi: int, *, edges: PeakEdges, strict_left: bool = False,
    strict_right: bool = False, min_value: float | None = None,
) -> npt.NDArray[np.intp]:
    """Frames in ``[lo, hi)`` where ``x`` is a local maximum, ascending.

    Parameters
    ----------
    x : array_like, shape (n,)
        The curve.
    lo, hi : int
        Half-open frame span (clipped to the curve).
    edges : {"open", "interior", "neighbours"}
        How the span's first and last frames are judged (module docstring).
    strict_left, strict_right : bool
        A peak must exceed (rather than equal) its left (right) neighbour. With both
        False, every frame of a plateau is a peak.
    min_value : float, optional
        A peak must reach this value (compared in the curve's own dtype); NaN never does.

    Returns
    -------
    frames : np.ndarray of int, shape (k,)
    """
    v = _floating(x)
    n = v.size
    lo, hi = max(lo, 0), min(hi, n)
    if hi - lo < (3 if edges == "interior" else 1):
        return np.zeros(0, dtype=np.intp)
    if edges == "neighbours":
        padded = np.concatenate(([-np.inf], v, [-np.inf]))
        left, mid, right, first = padded[lo:hi], v[lo:hi], padded[lo + 2 : hi + 2], lo
    else:
        seg = v[lo:hi]
        if edges == "open":
            left = np.concatenate(([-np.inf], seg[:-1]))
            right = np.concatenate((seg[1:], [-np.inf]))
            mid, first = seg, lo
        else:
            left, mid, right, first = seg[:-2], seg[1:-1], seg[2:], lo + 1
    ok = (mid > left if strict_left else mid >= left) & (mid > right if strict_right else mid >= right)
    if min_value is not None:
        ok &= mid >= min_value
    return np.flatnonzero(ok) + first


def strongest_apart(x: npt.ArrayLike, peaks: npt.ArrayLike, *, separation: float,
                    positions: npt.ArrayLike | None = None) -> list[int]:
    """Greedy non-maximum suppression: strongest peaks first, each suppressing weaker ones nearby.

    Parameters
    ----------
    x : array_like, shape (n,)
        The curve the peaks were picked on.
    peaks : array_like of int
        Candidate peak indices.
    separation : float
        A kept peak suppresses every weaker one whose position is closer than this
        (``< separation``; with integer frame positions, ``separation=s + 1`` suppresses
        within ``s`` frames).
    positions : array_like, optional
        Position of each index of ``x`` (default: the index itself).

    Returns
    -------
    kept : list of int
        Ascending. Ties keep the earlier peak.
    """
    v = np.asarray(x, dtype=np.float64)
    pos = np.arange(v.size, dtype=np.float64) if positions is None else np.asarray(positions, dtype=np.float64)
    order = sorted((int(i) for i in np.asarray(peaks).tolist()), key=lambda i: -v[i])
    kept: list[int] = []
    for i in order:
        if all(abs(pos[i] - pos[k]) >= separation for k in kept):
            kept.append(i)
    return sorted(kept)


def window_means(
    x: npt.ArrayLike, *, before: int, after: int, edges: MeanEdges, gap: int = 0,
    at: npt.ArrayLike | None = None,
) -> tuple[F64, F64]:
    """Mean of ``x`` over the ``before`` frames before and the ``after`` frames after each frame.

    ``pre[f] = mean(x[f - gap - before : f - gap])`` and
    ``post[f] = mean(x[f + gap : f + gap + after])``.

    Parameters
    ----------
    x : array_like, shape (n,)
        The curve.
    before, after : int
        Window lengths in frames (at least 1).
    edges : {"hold", "nan", "clip"}
        Windows that leave the curve (module docstring).
    gap : int
        Frames left out on each side of ``f`` (the transition itself).
    at : array_like of int, optional
        Frames to evaluate (default: every frame).

    Returns
    -------
    pre, post : np.ndarray, shape (n,) or (len(at),)
        Cumulative sums are taken in the curve's own floating dtype (cast ``x`` to
        float64 first for float64 accumulation).

    Raises
    ------
    ValueError
        If a window length is under 1 or ``gap`` is negative.
    """
    if before < 1 or after < 1 or gap < 0:
        raise ValueError(f"window_means needs before, after >= 1 and gap >= 0 frames, "
                         f"got before={before}, after={after}, gap={gap}")
    v = _floating(x)
    n = v.size
    idx = np.arange(n) if at is None else np.asarray(at, dtype=np.intp)
    if edges == "hold":
        if n == 0:
            return np.zeros(idx.size), np.zeros(idx.size)
        pad = before + after + 2 * gap
        c = np.concatenate(([0.0], np.cumsum(np.pad(v, (pad, pad), mode="edge"))))
        j = idx + pad
        return (c[j - gap] - c[j - gap - before]) / before, (c[j + gap + after] - c[j + gap]) / after
    c = np.concatenate(([0.0], np.cumsum(v)))
    if edges == "clip":
        a0 = np.clip(idx - gap - before, 0, n)
        a1 = np.clip(idx - gap, 0, n)
        b0 = np.clip(idx + gap, 0, n)
        b1 = np.clip(idx + gap + after, 0, n)
        return (c[a1] - c[a0]) / np.maximum(a1 - a0, 1), (c[b1] - c[b0]) / np.maximum(b1 - b0, 1)
    pre = np.full(idx.size, np.nan)
    post = np.full(idx.size, np.nan)
    full = (idx - gap - before >= 0) & (idx + gap + after <= n)
    j = idx[full]
    pre[full] = (c[j - gap] - c[j - gap - before]) / before
    post[full] = (c[j + gap + after] - c[j + gap]) / after
    return pre, post


def moving_average(x: npt.ArrayLike, frames: int, *, edges: SmoothEdges) -> F64:
    """Centred moving average over ``frames`` frames (``x[f - frames//2 : f + (frames+1)//2]``).

    Parameters
    ----------
    x : array_like, shape (n,)
    frames : int
        Window length; 1 or less returns the curve unchanged.
    edges : {"hold", "zero"}
        Samples outside the curve (module docstring).

    Returns
    -------
    smoothed : np.ndarray of float64, shape (n,)
    """
    v = np.asarray(x, dtype=np.float64)
    if frames <= 1 or v.size == 0:
        return v
    k = np.ones(frames) / frames
    if edges == "zero":
        return np.convolve(v, k, mode="same") if v.size >= frames else v
    padded = np.pad(v, (frames // 2, frames - 1 - frames // 2), mode="edge")
    return np.convolve(padded, k, mode="valid")


def first_or_last(peaks: npt.NDArray[np.intp], *, last: bool) -> int | None:
    """The first (last) of ``peaks``, None when there is none."""
    if not peaks.size:
        return None
    return int(peaks[-1] if last else peaks[0])


def accent(
    onset: npt.ArrayLike, lo: int, hi: int, *, rel_height: float, edges: PeakEdges = "open",
    last: bool = False,
) -> int | None:
    """Earliest (``last``: latest) local peak of ``onset`` in ``[lo, hi)`` reaching ``rel_height`` of the span's
    maximum.

    The maximum is taken over the whole span ``[lo, hi)`` (clipped to the curve). None when
    the span is empty (fewer than 3 frames with ``edges="interior"``), carries no positive
    onset energy, or no peak qualifies.
    """
    v = _floating(onset)
    lo, hi = max(lo, 0), min(hi, v.size)
    if hi <= lo or (edges == "interior" and hi - lo < 3):
        return None
    top = float(v[lo:hi].max())
    if top <= 0:
        return None
    return first_or_last(local_peaks(v, lo, hi, edges=edges, min_value=rel_height * top), last=last)


def _floating(x: npt.ArrayLike) -> npt.NDArray[np.floating[Any]]:
    """``x`` as an array, keeping a floating dtype (float32 curves are compared as float32)."""
    v = np.asarray(x)
    return v if np.issubdtype(v.dtype, np.floating) else v.astype(np.float64)

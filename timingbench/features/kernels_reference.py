"""Plain numpy references of the kernels in :mod:`timingbench.features.kernels`.

Slower but obviously correct; the tests compare every kernel with its reference (the
table in :mod:`timingbench.features.kernels` gives the tolerances). Nothing in the
pipeline calls these.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import scipy.ndimage

from timingbench.errors import ParameterError
from timingbench.features.kernels import (
    _as_bool_1d,
    _as_float_1d,
    _check_median_input,
    _unit_columns,
    checkerboard_taper,
)


def checkerboard_novelty_reference(
    features: npt.ArrayLike, *, half_frames: int, sigma_frac: float
) -> npt.NDArray[np.float64]:
    """Numpy reference of :func:`checkerboard_novelty`: full SSM and a 2-D kernel per frame."""
    x = _unit_columns(features, name="features")
    u = checkerboard_taper(half_frames=half_frames, sigma_frac=sigma_frac)
    kernel = np.outer(u, u)
    L = half_frames
    n = x.shape[1]
    ssm = np.zeros((n + 2 * L, n + 2 * L))
    ssm[L:L + n, L:L + n] = x.T @ x
    return np.array([np.sum(kernel * ssm[i:i + 2 * L, i:i + 2 * L]) for i in range(n)])


def running_median_reference(x: npt.ArrayLike, *, size: int, axis: int = -1) -> npt.NDArray[np.floating]:
    """Numpy reference of :func:`running_median`: ``np.median`` over explicitly reflected windows.

    Agrees with ``scipy.ndimage.median_filter(mode="reflect")`` whenever the line is at
    least half the window long (scipy's result is unreliable for much shorter lines;
    here the reflection simply repeats with period ``2 n``).
    """
    arr, w, ax = _check_median_input(x, size, axis)
    moved = np.moveaxis(arr, ax, -1)
    n = moved.shape[-1]
    if n == 0:
        return arr.copy()
    idx = np.arange(-(w // 2), n + w // 2) % (2 * n)
    idx = np.where(idx >= n, 2 * n - 1 - idx, idx)
    windows = np.lib.stride_tricks.sliding_window_view(moved[..., idx], w, axis=-1)
    med = np.median(windows, axis=-1).astype(arr.dtype)
    return np.ascontiguousarray(np.moveaxis(med, -1, ax))


def running_median_scipy(x: npt.ArrayLike, *, size: int, axis: int = -1) -> npt.NDArray[np.floating]:
    """``scipy.ndimage.median_filter`` with the same window and edges, for comparison."""
    arr, w, ax = _check_median_input(x, size, axis)
    shape = [1] * arr.ndim
    shape[ax] = w
    return np.asarray(scipy.ndimage.median_filter(arr, size=tuple(shape), mode="reflect"))


def hpss_power_reference(
    magnitude: npt.ArrayLike, *, kernel_frames: int, kernel_bins: int, power: float
) -> tuple[npt.NDArray[np.floating], npt.NDArray[np.floating]]:
    """Reference of :func:`hpss_power` built on ``librosa.decompose.hpss``."""
    import librosa

    s = np.asarray(magnitude)
    h, q = librosa.decompose.hpss(s, kernel_size=(kernel_frames, kernel_bins), power=power)
    return np.abs(h) ** 2, np.abs(q) ** 2


def weighted_row_sums_reference(x: npt.ArrayLike, *, weights: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Reference of :func:`weighted_row_sums`: ``weights @ x.astype(float64)``."""
    return np.asarray(np.asarray(weights, dtype=np.float64) @ np.asarray(x, dtype=np.float64))


def rectified_onset_density_reference(
    onset: npt.ArrayLike, *, window_frames: int, floor: float
) -> npt.NDArray[np.float64]:
    """Reference of :func:`rectified_onset_density` with ``np.convolve``."""
    x = _as_float_1d(onset, name="onset")
    r = np.maximum(x - float(floor), 0.0)
    return np.convolve(r, np.ones(window_frames) / window_frames)[: x.size]


def hysteresis_reference(x: npt.ArrayLike, *, high: float, low: float) -> npt.NDArray[np.bool_]:
    """Reference of :func:`hysteresis`: on inside a run of ``x >= low`` from its first ``x >= high``."""
    arr = _as_float_1d(x, name="x")
    if float(low) > float(high):
        raise ParameterError(f"hysteresis needs low <= high, got low={low!r} > high={high!r}")
    cand = arr >= low
    idx = np.arange(arr.size)
    starts = cand & ~np.concatenate(([False], cand[:-1]))
    last_start = np.maximum.accumulate(np.where(starts, idx, -1)) if arr.size else idx
    last_high = np.maximum.accumulate(np.where(arr >= high, idx, -1)) if arr.size else idx
    return np.asarray(cand & (last_high >= last_start), dtype=np.bool_)


def run_lengths_reference(
    mask: npt.ArrayLike,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """Reference of :func:`run_lengths` with ``np.diff``."""
    m = _as_bool_1d(mask)
    if m.size == 0:
        e = np.empty(0, dtype=np.int64)
        return e, e.copy(), np.empty(0, dtype=np.bool_)
    change = np.flatnonzero(np.diff(m.astype(np.int8))) + 1
    starts = np.concatenate(([0], change)).astype(np.int64)
    lengths = np.diff(np.concatenate((starts, [m.size]))).astype(np.int64)
    return starts, lengths, m[starts].copy()

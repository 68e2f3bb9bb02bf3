"""Numba kernels for the hot loops of the feature bank and the detectors.

Every public function validates its arguments and then calls a private
``numba.njit(cache=True)`` kernel. Each has a plain numpy reference implementation in
:mod:`timingbench.features.kernels_reference` (``*_reference``), slower but obviously
correct, which the tests compare against:

==============================  ==========================================  ============
kernel                          reference                                   tolerance
==============================  ==========================================  ============
:func:`checkerboard_novelty`    full self-similarity matrix x 2-D kernel    rtol 1e-9
:func:`running_median`          ``np.median`` over reflected windows         exact
:func:`hpss_power`              librosa ``decompose.hpss`` soft masks        rtol 1e-5
:func:`weighted_row_sums`       ``weights @ x.astype(float64)``              rtol 1e-12
:func:`rectified_onset_density` ``np.convolve`` of the rectified curve      atol 1e-12
:func:`hysteresis`              cumulative-max run bookkeeping              exact
:func:`run_lengths`             ``np.diff`` of the mask                     exact
==============================  ==========================================  ============

Frame counts are integers here; callers convert seconds with :mod:`timingbench.convert`.
"""

from __future__ import annotations

import numba
import numpy as np
import numpy.typing as npt

from timingbench.errors import ParameterError

FloatArray = npt.NDArray[np.floating]


# ----------------------------------------------------------------------------- validation


_LAYOUTS = {1: "one-dimensional (n,)", 2: "two-dimensional (n_features, n_frames)"}


def _finite(arr: npt.NDArray[np.float64], *, name: str, ndim: int) -> npt.NDArray[np.float64]:
    """``arr`` itself, once checked to have ``ndim`` dimensions and only finite values."""
    if arr.ndim != ndim:
        raise ParameterError(f"{name} must be {_LAYOUTS[ndim]}, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ParameterError(f"{name} contains NaN or inf; compute it from finite audio")
    return arr


def _as_float_1d(x: npt.ArrayLike, *, name: str) -> npt.NDArray[np.float64]:
    return _finite(np.ascontiguousarray(x, dtype=np.float64), name=name, ndim=1)


def _check_positive_int(v: int, *, name: str) -> int:
    if isinstance(v, bool) or int(v) != v or v <= 0:
        raise ParameterError(f"{name} must be a positive whole number of frames, got {v!r}")
    return int(v)


def _check_finite_scalar(v: float, *, name: str) -> float:
    f = float(v)
    if not np.isfinite(f):
        raise ParameterError(f"{name} must be a finite number, got {v!r}")
    return f


# ----------------------------------------------------------------------------- novelty


def checkerboard_taper(*, half_frames: int, sigma_frac: float) -> npt.NDArray[np.float64]:
    """Signed one-dimensional factor ``u`` of the Gaussian-tapered checkerboard kernel.

    The 2-D kernel is ``K[a, b] = u[a] * u[b]`` for lags ``a, b`` in
    ``[-half_frames, half_frames)``: ``u`` is ``-g`` before the centre and ``+g`` from the
    centre on, with ``g`` a Gaussian of standard deviation ``sigma_frac * half_frames``
    centred between lags -1 and 0, so the kernel is symmetric about the centre.

    Parameters
    ----------
    half_frames : int
        Half width ``L`` of the kernel in frames.
    sigma_frac : float
        Gaussian standard deviation in units of ``L`` (> 0).

    Returns
    -------
    u : np.ndarray of float64, shape (2 * L,)

    Raises
    ------
    ParameterError
        If ``half_frames`` is not a positive integer or ``sigma_frac`` is not positive.
    """
    L = _check_positive_int(half_frames, name="half_frames")
    s = _check_finite_scalar(sigma_frac, name="sigma_frac")
    if s <= 0:
        raise ParameterError(f"sigma_frac must be > 0, got {sigma_frac!r}")
    lags = np.arange(-L, L, dtype=np.float64) + 0.5
    g = np.exp(-0.5 * (lags / (s * L)) ** 2)
    return np.where(lags < 0, -g, g)


@numba.njit(cache=True)
def _novelty_kernel(x: FloatArray, u: FloatArray, out: FloatArray) -> None:  # pragma: no cover
    # The checkerboard kernel is separable (K = u u^T), so u^T S_i u with S = X^T X is the
    # squared norm of the u-weighted sum of the feature frames around frame i.
    d, n = x.shape
    two_l = u.shape[0]
    half = two_l // 2
    acc = np.empty(d, dtype=np.float64)
    for i in range(n):
        acc[:] = 0.0
        for k in range(two_l):
            j = i - half + k
            if j < 0 or j >= n:
                continue
            w = u[k]
            for c in range(d):
                acc[c] += w * x[c, j]
        s = 0.0
        for c in range(d):
            s += acc[c] * acc[c]
        out[i] = s


def _unit_columns(features: npt.ArrayLike, *, name: str) -> npt.NDArray[np.float64]:
    x = _finite(np.asarray(features, dtype=np.float64), name=name, ndim=2)
    norms = np.linalg.norm(x, axis=0)
    safe = np.where(norms > 0, norms, 1.0)
    return np.ascontiguousarray(x / safe)


def checkerboard_novelty(
    features: npt.ArrayLike, *, half_frames: int, sigma_frac: float
) -> npt.NDArray[np.float64]:
    """Foote checkerboard-kernel novelty of a feature sequence (cosine self-similarity).

    ``N[i] = sum_{a,b} K[a, b] * S[i + a, i + b]`` where ``S`` is the cosine
    self-similarity of the feature frames (frames outside the clip count as zero
    similarity) and ``K`` the Gaussian-tapered checkerboard kernel of
    :func:`checkerboard_taper`. All-zero frames (silence) have zero similarity to
    everything.

    Parameters
    ----------
    features : array_like, shape (n_features, n_frames)
        One feature vector per frame (e.g. MFCC or chroma).
    half_frames : int
        Kernel half width in frames.
    sigma_frac : float
        Gaussian taper standard deviation in units of ``half_frames``.

    Returns
    -------
    novelty : np.ndarray of float64, shape (n_frames,)
        Non-negative, unnormalised novelty.

    Raises
    ------
    ParameterError
        If ``features`` is not 2-D and finite or the kernel parameters are invalid.
    """
    x = _unit_columns(features, name="features")
    u = checkerboard_taper(half_frames=half_frames, sigma_frac=sigma_frac)
    out = np.empty(x.shape[1], dtype=np.float64)
    if x.shape[1]:
        _novelty_kernel(x, u, out)
    return out


# ----------------------------------------------------------------------------- medians


@numba.njit(cache=True, inline="always")
def _reflect(idx: int, n: int) -> int:  # pragma: no cover
    # scipy.ndimage "reflect": (d c b a | a b c d | d c b a)
    period = 2 * n
    m = idx % period
    if m < 0:
        m += period
    if m >= n:
        m = period - 1 - m
    return m


_MEDIAN_LANES = 64


@numba.njit(cache=True)
def _running_median_lanes(x: FloatArray, size: int, out: FloatArray) -> None:  # pragma: no cover
    # Window slides along axis 0; axis 1 holds independent lanes, updated a block at a
    # time. Each lane keeps its window sorted in a column of ``state``; one step deletes
    # the outgoing value and inserts the incoming one with compare/select only
    # (d[j] = s[j] if s[j] < old else s[j+1]; s'[j] = max(d[j-1], min(new, d[j]))), so the
    # inner loop runs across lanes without branches and vectorises. The first ``size``
    # steps fill a window of +inf sentinels (deleting +inf). Output values are window
    # elements, so the result is exact.
    n, lanes = x.shape
    half = size // 2
    block = _MEDIAN_LANES
    big = np.inf
    state = np.empty((size, block), dtype=x.dtype)
    newv = np.empty(block, dtype=x.dtype)
    oldv = np.empty(block, dtype=x.dtype)
    prev = np.empty(block, dtype=x.dtype)
    for l0 in range(0, lanes, block):
        nb = min(block, lanes - l0)
        state[:, :] = big
        for i in range(1 - size, n):
            sn = _reflect(i + half, n)
            for lane in range(nb):
                newv[lane] = x[sn, l0 + lane]
            if i <= 0:
                for lane in range(nb):
                    oldv[lane] = big
            else:
                so = _reflect(i - 1 - half, n)
                for lane in range(nb):
                    oldv[lane] = x[so, l0 + lane]
            for lane in range(nb):
                prev[lane] = -big
            for j in range(size - 1):
                for lane in range(nb):
                    s0 = state[j, lane]
                    s1 = state[j + 1, lane]
                    d = s0 if s0 < oldv[lane] else s1
                    v = newv[lane]
                    r = v if v < d else d
                    p = prev[lane]
                    state[j, lane] = p if p > r else r
                    prev[lane] = d
            for lane in range(nb):
                v = newv[lane]
                p = prev[lane]
                state[size - 1, lane] = p if p > v else v
            if i >= 0:
                for lane in range(nb):
                    out[i, l0 + lane] = state[half, lane]


def _check_window(size: int, *, name: str) -> int:
    w = _check_positive_int(size, name=name)
    if w % 2 == 0:
        raise ParameterError(f"{name} must be odd so the median is centred, got {size}")
    return w


def _check_median_input(x: npt.ArrayLike, size: int, axis: int) -> tuple[npt.NDArray[np.floating], int, int]:
    arr = np.asarray(x)
    if arr.dtype not in (np.float32, np.float64):
        arr = arr.astype(np.float64)
    if arr.ndim not in (1, 2):
        raise ParameterError(f"running_median expects a 1-D or 2-D array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ParameterError("running_median input contains NaN or inf")
    w = _check_window(size, name="size")
    if axis not in (-1, 0, 1) or (arr.ndim == 1 and axis not in (-1, 0)):
        raise ParameterError(f"axis {axis} is out of range for an array of shape {arr.shape}")
    return arr, w, axis % arr.ndim


def running_median(x: npt.ArrayLike, *, size: int, axis: int = -1) -> npt.NDArray[np.floating]:
    """Centred running median with ``scipy.ndimage`` "reflect" edges.

    Parameters
    ----------
    x : array_like, shape (n,) or (rows, n)
        Finite values (float32 inputs stay float32).
    size : int
        Odd window length in samples/frames/bins.
    axis : int
        Axis along which the window slides.

    Returns
    -------
    med : np.ndarray, same shape and float dtype as ``x``

    Raises
    ------
    ParameterError
        If ``size`` is not a positive odd integer, ``x`` is not finite or not 1-/2-D.
    """
    arr, w, ax = _check_median_input(x, size, axis)
    if arr.size == 0:
        return arr.copy()
    src = np.ascontiguousarray(arr)
    out = np.empty_like(src)
    if src.ndim == 1:
        _running_median_lanes(src.reshape(-1, 1), w, out.reshape(-1, 1))
    elif ax == 0:
        _running_median_lanes(src, w, out)
    else:
        _running_median_lanes(src.T, w, out.T)
    return out


@numba.njit(cache=True)
def _softmask_power(s: FloatArray, hmed: FloatArray, pmed: FloatArray, power: float,
                    h_out: FloatArray, p_out: FloatArray) -> None:  # pragma: no cover
    tiny = np.finfo(s.dtype).tiny
    rows, n = s.shape
    for r in range(rows):
        for i in range(n):
            a = hmed[r, i]
            b = pmed[r, i]
            z = max(a, b)
            if z < tiny:
                h_out[r, i] = 0.0
                p_out[r, i] = 0.0
                continue
            if power == 2.0:
                ma = (a / z) * (a / z)
                mb = (b / z) * (b / z)
            else:
                ma = (a / z) ** power
                mb = (b / z) ** power
            tot = ma + mb
            mag2 = s[r, i] * s[r, i]
            mh = ma / tot
            mp = mb / tot
            h_out[r, i] = mag2 * mh * mh
            p_out[r, i] = mag2 * mp * mp


def hpss_power(
    magnitude: npt.ArrayLike, *, kernel_frames: int, kernel_bins: int, power: float
) -> tuple[npt.NDArray[np.floating], npt.NDArray[np.floating]]:
    """Median-filtering harmonic/percussive separation (Fitzgerald 2010), as power spectra.

    Identical in definition to ``librosa.decompose.hpss(S, kernel_size=(kernel_frames,
    kernel_bins), power=power, margin=1)`` (``scipy.ndimage`` reflect edges, Wiener soft
    masks, zero masks where both medians vanish), returning ``|H|**2`` and ``|P|**2``.

    Parameters
    ----------
    magnitude : array_like, shape (n_bins, n_frames)
        Non-negative STFT magnitude.
    kernel_frames : int
        Odd harmonic median length along time, frames.
    kernel_bins : int
        Odd percussive median length along frequency, bins.
    power : float
        Soft-mask exponent (> 0).

    Returns
    -------
    harmonic_power, percussive_power : np.ndarray, shape (n_bins, n_frames)

    Raises
    ------
    ParameterError
        If the spectrogram is not 2-D, finite and non-negative or a kernel is invalid.
    """
    s = np.asarray(magnitude)
    if s.dtype not in (np.float32, np.float64):
        s = s.astype(np.float64)
    if s.ndim != 2:
        raise ParameterError(f"magnitude must be (n_bins, n_frames), got shape {s.shape}")
    if s.size:
        # two reductions instead of an isfinite pass per median filter
        lo, hi = float(np.min(s)), float(np.max(s))
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise ParameterError("magnitude contains NaN or inf")
        if lo < 0:
            raise ParameterError("magnitude must be non-negative; pass np.abs(stft)")
    p = _check_finite_scalar(power, name="power")
    if p <= 0:
        raise ParameterError(f"power must be > 0, got {power!r}")
    kf = _check_window(kernel_frames, name="kernel_frames")
    kb = _check_window(kernel_bins, name="kernel_bins")
    s = np.ascontiguousarray(s)
    hmed = np.empty_like(s)
    pmed = np.empty_like(s)
    h = np.empty_like(s)
    q = np.empty_like(s)
    if s.size:
        _running_median_lanes(s.T, kf, hmed.T)
        _running_median_lanes(s, kb, pmed)
        _softmask_power(s, hmed, pmed, p, h, q)
    return h, q


# ----------------------------------------------------------------------------- projections


@numba.njit(cache=True)
def _weighted_row_sums(x: FloatArray, w: FloatArray, out: FloatArray) -> None:  # pragma: no cover
    # Row-major sweep over x in its own dtype with float64 accumulators, so a float32
    # spectrogram is read once and never copied to float64; zero weights (bins outside a
    # band) are skipped.
    k_out, rows = w.shape
    n = x.shape[1]
    out[:, :] = 0.0
    for r in range(rows):
        for k in range(k_out):
            wk = w[k, r]
            if wk != 0.0:
                for i in range(n):
                    out[k, i] += wk * x[r, i]


def weighted_row_sums(x: npt.ArrayLike, *, weights: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """``weights @ x`` accumulated in float64 without converting ``x`` to float64.

    Parameters
    ----------
    x : array_like, shape (rows, n)
        E.g. a float32 power spectrogram (bins, frames); float32 stays float32 in memory.
    weights : array_like, shape (k, rows) or (rows,)
        One weight row per output row (e.g. Parseval bin weights, band indicators).

    Returns
    -------
    sums : np.ndarray of float64, shape (k, n), or (n,) for one-dimensional ``weights``

    Raises
    ------
    ParameterError
        If the shapes do not match or an input is not finite.
    """
    arr = np.asarray(x)
    if arr.dtype not in (np.float32, np.float64):
        arr = arr.astype(np.float64)
    w = np.asarray(weights, dtype=np.float64)
    one_row = w.ndim == 1
    w2 = np.ascontiguousarray(w.reshape(1, -1) if one_row else w)
    if arr.ndim != 2 or w2.ndim != 2 or w2.shape[1] != arr.shape[0]:
        raise ParameterError(f"weights of shape {w.shape} do not project rows of x with shape {arr.shape}")
    if not np.all(np.isfinite(w2)):
        raise ParameterError("weights contain NaN or inf")
    out = np.empty((w2.shape[0], arr.shape[1]), dtype=np.float64)
    _weighted_row_sums(np.ascontiguousarray(arr), w2, out)
    return out[0] if one_row else out


# ----------------------------------------------------------------------------- onset density


@numba.njit(cache=True)
def _rectified_density(x: FloatArray, window: int, floor: float, out: FloatArray) -> None:  # pragma: no cover
    acc = 0.0
    n = x.shape[0]
    for i in range(n):
        v = x[i] - floor
        if v > 0.0:
            acc += v
        j = i - window
        if j >= 0:
            w = x[j] - floor
            if w > 0.0:
                acc -= w
        if acc < 0.0:  # guard against round-off drift below zero
            acc = 0.0
        out[i] = acc / window


def rectified_onset_density(
    onset: npt.ArrayLike, *, window_frames: int, floor: float
) -> npt.NDArray[np.float64]:
    """Trailing-window mean of an onset curve rectified at a floor (paper Sec. IV-B).

    ``d[i] = (1 / W) * sum_{j = i - W + 1}^{i} max(onset[j] - floor, 0)``; frames before
    the clip count as zero, so the density rises at the first hit of a train and falls
    after the last.

    Parameters
    ----------
    onset : array_like, shape (n,)
        Onset strength per frame (finite).
    window_frames : int
        Trailing window length ``W`` in frames (e.g. 1 s converted with
        :func:`timingbench.convert.seconds_to_frame_count`).
    floor : float
        Noise floor subtracted before rectification, in the curve's units.

    Returns
    -------
    density : np.ndarray of float64, shape (n,)

    Raises
    ------
    ParameterError
        If the curve is not finite and 1-D or the window/floor are invalid.
    """
    x = _as_float_1d(onset, name="onset")
    w = _check_positive_int(window_frames, name="window_frames")
    f = _check_finite_scalar(floor, name="floor")
    out = np.empty_like(x)
    if x.size:
        _rectified_density(x, w, f, out)
    return out


# ----------------------------------------------------------------------------- hysteresis


@numba.njit(cache=True)
def _hysteresis(x: FloatArray, high: float, low: float, out: npt.NDArray[np.bool_]) -> None:  # pragma: no cover
    on = False
    for i in range(x.shape[0]):
        if on:
            if x[i] < low:
                on = False
        elif x[i] >= high:
            on = True
        out[i] = on


def hysteresis(x: npt.ArrayLike, *, high: float, low: float) -> npt.NDArray[np.bool_]:
    """Two-threshold (Schmitt trigger) mask: switch on at ``x >= high``, off at ``x < low``.

    Parameters
    ----------
    x : array_like, shape (n,)
        A finite curve (e.g. level in dB relative to the loud level).
    high : float
        Switch-on threshold.
    low : float
        Switch-off threshold, ``low <= high``.

    Returns
    -------
    mask : np.ndarray of bool, shape (n,)
        True where the trigger is on; it starts off.

    Raises
    ------
    ParameterError
        If ``x`` is not finite and 1-D, or ``low > high``.
    """
    arr = _as_float_1d(x, name="x")
    hi = _check_finite_scalar(high, name="high")
    lo = _check_finite_scalar(low, name="low")
    if lo > hi:
        raise ParameterError(f"hysteresis needs low <= high, got low={low!r} > high={high!r}")
    out = np.empty(arr.shape, dtype=np.bool_)
    if arr.size:
        _hysteresis(arr, hi, lo, out)
    return out


# ----------------------------------------------------------------------------- run lengths


@numba.njit(cache=True)
def _run_lengths(m: npt.NDArray[np.bool_], starts: npt.NDArray[np.int64],
                 lengths: npt.NDArray[np.int64], values: npt.NDArray[np.bool_]) -> int:  # pragma: no cover
    k = 0
    n = m.shape[0]
    i = 0
    while i < n:
        j = i + 1
        while j < n and m[j] == m[i]:
            j += 1
        starts[k] = i
        lengths[k] = j - i
        values[k] = m[i]
        k += 1
        i = j
    return k


def _as_bool_1d(mask: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    m = np.asarray(mask)
    if m.ndim != 1:
        raise ParameterError(f"mask must be one-dimensional (n,), got shape {m.shape}")
    if m.dtype != np.bool_:
        if not np.all(np.isin(m, (0, 1))):
            raise ParameterError("mask must be boolean (or 0/1 values)")
        m = m.astype(np.bool_)
    return np.ascontiguousarray(m)


def run_lengths(
    mask: npt.ArrayLike,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """Decompose a boolean mask into maximal runs of presence/absence.

    Parameters
    ----------
    mask : array_like of bool, shape (n,)

    Returns
    -------
    starts : np.ndarray of int64, shape (r,)
        First frame of each run.
    lengths : np.ndarray of int64, shape (r,)
        Run lengths in frames (sum to ``n``).
    values : np.ndarray of bool, shape (r,)
        The mask value of each run (alternating).

    Raises
    ------
    ParameterError
        If the mask is not 1-D or holds values other than 0/1.
    """
    m = _as_bool_1d(mask)
    starts = np.empty(m.size, dtype=np.int64)
    lengths = np.empty(m.size, dtype=np.int64)
    values = np.empty(m.size, dtype=np.bool_)
    k = _run_lengths(m, starts, lengths, values) if m.size else 0
    return starts[:k].copy(), lengths[:k].copy(), values[:k].copy()



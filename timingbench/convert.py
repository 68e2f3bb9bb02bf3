"""The only place where frame indices and seconds are converted.

All frame grids in timingbench are described by a sample rate ``sr`` (Hz) and a hop
length ``hop`` (samples), and every analysis frame is centred: frame ``k`` describes the
instant ``k * hop / sr`` (librosa's ``center=True`` STFT convention, with the signal
padded by half a window at both ends). Public functions everywhere else take and return
seconds.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from timingbench.errors import ParameterError

#: Number of decimals seconds are rounded to before any tolerance comparison, so that
#: events placed exactly on a window edge compare as on the edge (1 microsecond).
TIME_DECIMALS = 6


def _check_grid(sr: float, hop: int) -> None:
    if not np.isfinite(sr) or sr <= 0:
        raise ParameterError(f"sample rate must be a positive number of Hz, got sr={sr!r}")
    if int(hop) != hop or hop <= 0:
        raise ParameterError(f"hop must be a positive whole number of samples, got hop={hop!r}")


def frames_to_time(
    frames: npt.ArrayLike, *, sr: float, hop: int
) -> npt.NDArray[np.float64]:
    """Convert frame indices to seconds.

    Parameters
    ----------
    frames : array_like of int or float, shape (n,)
        Frame indices (fractional indices are allowed for interpolated peaks).
    sr : float
        Sample rate in Hz.
    hop : int
        Hop length in samples.

    Returns
    -------
    times : np.ndarray, shape (n,)
        Times in seconds.

    Raises
    ------
    ParameterError
        If ``sr`` or ``hop`` is not positive.
    """
    _check_grid(sr, hop)
    return np.asarray(frames, dtype=np.float64) * (hop / float(sr))


def time_to_frames(
    times: npt.ArrayLike, *, sr: float, hop: int
) -> npt.NDArray[np.int64]:
    """Convert seconds to the nearest frame index.

    Parameters
    ----------
    times : array_like of float, shape (n,)
        Times in seconds.
    sr : float
        Sample rate in Hz.
    hop : int
        Hop length in samples.

    Returns
    -------
    frames : np.ndarray of int64, shape (n,)
        Nearest frame index for each time (ties round half to even).

    Raises
    ------
    ParameterError
        If ``sr`` or ``hop`` is not positive or a time is not finite.
    """
    _check_grid(sr, hop)
    t = np.asarray(times, dtype=np.float64)
    if not np.all(np.isfinite(t)):
        raise ParameterError("times must be finite seconds; did you pass NaN or inf?")
    return np.round(np.round(t * (float(sr) / hop), TIME_DECIMALS)).astype(np.int64)


def seconds_to_frame_count(duration_s: float, *, sr: float, hop: int) -> int:
    """Number of frames (at least 1) that span ``duration_s`` seconds on the grid.

    Parameters
    ----------
    duration_s : float
        A duration in seconds (window lengths, decay budgets ...).
    sr : float
        Sample rate in Hz.
    hop : int
        Hop length in samples.

    Returns
    -------
    n : int
        ``max(1, round(duration_s * sr / hop))``.
    """
    _check_grid(sr, hop)
    if not np.isfinite(duration_s) or duration_s < 0:
        raise ParameterError(f"duration must be a non-negative number of seconds, got {duration_s!r}")
    return max(1, int(round(duration_s * float(sr) / hop)))


def frame_span(t0_s: float, t1_s: float, *, sr: float, hop: int, n_frames: int) -> slice:
    """The frames whose centres lie in ``[t0_s, t1_s)``, clipped to ``[0, n_frames]``.

    Parameters
    ----------
    t0_s, t1_s : float
        Start and end of the span, seconds.
    sr : float
        Sample rate in Hz.
    hop : int
        Hop length in samples.
    n_frames : int
        Frames on the grid.

    Returns
    -------
    span : slice
        ``slice(a, b)`` with ``a <= b`` (empty when the span misses the grid).
    """
    a = min(max(int(np.floor(t0_s * sr / hop + 1e-9)), 0), n_frames)
    b = min(max(int(np.ceil(t1_s * sr / hop - 1e-9)), 0), n_frames)
    return slice(a, max(a, b))


def frame_rate_hz(*, sr: float, hop: int) -> float:
    """Frames per second of the grid (``sr / hop``)."""
    _check_grid(sr, hop)
    return sr / hop


def frame_period_s(*, sr: float, hop: int) -> float:
    """Seconds between two frames of the grid (``hop / sr``)."""
    _check_grid(sr, hop)
    return hop / sr


def grid_hop_s(times_s: npt.ArrayLike, *, default: float = 1.0) -> float:
    """The spacing of a grid given by its frame times: the median step, in seconds.

    The one hop estimate of the curves read at their own times (the evidence grids, the
    presence columns). ``default`` when the grid holds fewer than two frames.
    """
    t = np.asarray(times_s, dtype=np.float64)
    return float(np.median(np.diff(t))) if t.size > 1 else float(default)


def round_time(t: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Round seconds to :data:`TIME_DECIMALS` decimals before a tolerance comparison."""
    return np.asarray(np.round(np.asarray(t, dtype=np.float64), TIME_DECIMALS), dtype=np.float64)

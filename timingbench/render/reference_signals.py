"""Reference signals with sample-accurate beats: click tracks and drum patterns (numpy only).

The tempo estimator's error is measured on these (``timingbench tempo-check --source
synth``): every beat falls on the nearest sample to its exact time, so the tempo is
exact by construction. Only 44.1 kHz is supported.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from timingbench.errors import ParameterError

_SR = 44100
#: Hi-hat level relative to kick/snare in the synthetic drum pattern (about -22 dB).
HAT_GAIN = 0.08


def _place(
    out: npt.NDArray[np.float64], times_s: npt.NDArray[np.float64], grain: npt.NDArray[np.float64]
) -> None:
    for t in times_s:
        i = int(round(t * _SR))
        if 0 <= i < out.size:
            seg = out[i : i + grain.size]
            seg += grain[: seg.size]


def click_track(
    *, bpm: float, duration_s: float, offset_s: float = 0.1, sr: int = _SR
) -> npt.NDArray[np.float32]:
    """A metronome click track whose beats fall on the nearest sample to ``offset + k*60/bpm``.

    :func:`click_track_at` on a steady grid of beats.

    Parameters
    ----------
    bpm : float
        Tempo in beats per minute (> 0).
    duration_s, sr
        As :func:`click_track_at`.
    offset_s : float
        Time of the first click in seconds (>= 0).

    Returns
    -------
    samples : np.ndarray of float32, shape (round(duration_s * sr),)
        Mono signal, peak 0.5; every fourth click (the downbeat) is pitched higher.

    Raises
    ------
    ParameterError
        If ``bpm`` is not positive or ``offset_s`` is negative; otherwise as :func:`click_track_at`.
    """
    beats = _beat_grid(bpm=bpm, duration_s=duration_s, offset_s=offset_s, sr=sr)
    return click_track_at(beats, duration_s=duration_s, sr=sr)


def click_track_at(
    beats_s: npt.ArrayLike, *, duration_s: float, sr: int = _SR
) -> npt.NDArray[np.float32]:
    """A click track with one click on the nearest sample to each given beat time.

    Parameters
    ----------
    beats_s : array_like of float, shape (b,)
        Beat times in seconds, increasing (a drifting or humanised grid); every fourth
        click from the first (the downbeat) is pitched higher.
    duration_s : float
        Length in seconds (> 0).
    sr : int
        Sample rate in Hz; only 44100 is supported.

    Returns
    -------
    samples : np.ndarray of float32, shape (round(duration_s * sr),)
        Mono signal, peak 0.5.

    Raises
    ------
    ParameterError
        If the beats are not finite and increasing, ``duration_s`` is not positive or
        ``sr`` is not 44100.
    """
    beats = _checked_beats(beats_s, duration_s=duration_s, sr=sr)
    n = int(round(duration_s * sr))
    k = np.arange(int(0.015 * sr)) / sr
    env = np.exp(-k / 0.002)
    hi = env * np.sin(2 * np.pi * 1500.0 * k)
    lo = env * np.sin(2 * np.pi * 1000.0 * k)
    out = np.zeros(n, dtype=np.float64)
    _place(out, beats[::4], hi)
    _place(out, np.delete(beats, np.s_[::4]), lo)
    return (0.5 * out / max(1e-12, float(np.max(np.abs(out))))).astype(np.float32)


def drum_pattern(
    *, bpm: float, duration_s: float, offset_s: float = 0.1, sr: int = _SR, seed: int = 0
) -> npt.NDArray[np.float32]:
    """A kick/snare/hi-hat backbeat with sample-accurate beats (numpy only).

    Kick on beats 1 and 3, snare on 2 and 4, closed hi-hat on every beat at
    :data:`HAT_GAIN` relative level. Every hit falls on a beat, so the beat is the only
    pulse in the signal and the tempo is exact by construction at one metrical level
    (off-beat hats would make it an equally valid pattern at twice the tempo; the
    half/double-time kinds test that ambiguity separately).

    Parameters
    ----------
    bpm, duration_s, offset_s, sr
        As :func:`click_track` (its clicks are this pattern's beats).
    seed
        As :func:`drum_pattern_at`.

    Returns
    -------
    samples : np.ndarray of float32, shape (round(duration_s * sr),)
        As :func:`drum_pattern_at`.

    Raises
    ------
    ParameterError
        As :func:`click_track`.
    """
    beats = _beat_grid(bpm=bpm, duration_s=duration_s, offset_s=offset_s, sr=sr)
    return drum_pattern_at(beats, duration_s=duration_s, sr=sr, seed=seed)


def drum_pattern_at(
    beats_s: npt.ArrayLike, *, duration_s: float, sr: int = _SR, seed: int = 0
) -> npt.NDArray[np.float32]:
    """The :func:`drum_pattern` backbeat with its hits on the given beat times.

    Parameters
    ----------
    beats_s : array_like of float, shape (b,)
        Beat times in seconds, increasing (a drifting or humanised grid).
    duration_s, sr
        As :func:`click_track_at`.
    seed : int
        Seed of the noise in snare and hi-hat.

    Returns
    -------
    samples : np.ndarray of float32, shape (round(duration_s * sr),)
        As :func:`click_track_at`.

    Raises
    ------
    ParameterError
        As :func:`click_track_at`.
    """
    beats = _checked_beats(beats_s, duration_s=duration_s, sr=sr)
    rng = np.random.default_rng(seed)
    n = int(round(duration_s * sr))
    k = np.arange(int(0.25 * sr)) / sr
    kick = np.exp(-k / 0.08) * np.sin(2 * np.pi * (50.0 * k + 60.0 * 0.03 * (1 - np.exp(-k / 0.03))))
    snare = np.exp(-k / 0.05) * (0.6 * rng.standard_normal(k.size) + 0.4 * np.sin(2 * np.pi * 190.0 * k))
    kh = k[: int(0.05 * sr)]
    hat = HAT_GAIN * np.exp(-kh / 0.01) * np.diff(rng.standard_normal(kh.size + 1))
    out = np.zeros(n, dtype=np.float64)
    _place(out, beats[0::2], kick)
    _place(out, beats[1::2], 0.8 * snare)
    _place(out, beats, hat)
    return (0.5 * out / max(1e-12, float(np.max(np.abs(out))))).astype(np.float32)


def _check_length(duration_s: float, sr: int) -> None:
    """Raise :class:`ParameterError` unless ``duration_s`` is positive and ``sr`` is 44100."""
    if not (np.isfinite(duration_s) and duration_s > 0):
        raise ParameterError(f"duration_s must be a positive number of seconds, got {duration_s!r}")
    if sr != _SR:
        raise ParameterError(f"only sr={_SR} Hz is supported, got {sr!r}")


def _checked_beats(
    beats_s: npt.ArrayLike, *, duration_s: float, sr: int
) -> npt.NDArray[np.float64]:
    b = np.asarray(beats_s, dtype=np.float64)
    _check_length(duration_s, sr)
    if b.ndim != 1 or not np.all(np.isfinite(b)) or np.any(np.diff(b) <= 0):
        raise ParameterError("beats_s must be a 1-D array of finite, increasing seconds")
    return b


def _beat_grid(*, bpm: float, duration_s: float, offset_s: float, sr: int) -> npt.NDArray[np.float64]:
    if not (np.isfinite(bpm) and bpm > 0):
        raise ParameterError(f"bpm must be a positive number of beats per minute, got {bpm!r}")
    if not (np.isfinite(offset_s) and offset_s >= 0):
        raise ParameterError(f"offset_s must be >= 0 seconds, got {offset_s!r}")
    _check_length(duration_s, sr)
    period = 60.0 / bpm
    count = int(np.floor((duration_s - offset_s) / period)) + 1
    beats = offset_s + period * np.arange(max(count, 0), dtype=np.float64)
    return np.asarray(beats[beats < duration_s], dtype=np.float64)

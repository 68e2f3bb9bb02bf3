"""Harmonic-summation pitch salience: the predominant pitch of a mix, frame by frame.

The salience function of Salamon and Gómez's melody extraction (MELODIA; Salamon and
Gómez 2012, "Melody extraction from polyphonic music signals using pitch contour
characteristics", IEEE TASLP 20(6), Sec. II-A/B), on the controls' one STFT of the clip:

1. **Spectral peaks.** The local maxima of each frame's magnitude spectrum, their
   frequency and magnitude refined by parabolic interpolation of the dB spectrum; a peak
   more than ``peak_range_db`` below the frame's highest peak is dropped (MELODIA's
   magnitude threshold, 40 dB).
2. **Harmonic summation.** Every peak of frequency ``f`` and magnitude ``a`` votes for the
   fundamentals ``f / h``, ``h = 1 .. n_harmonics``, on a grid of 10-cent bins from
   55 Hz (five octaves): the vote for bin ``b`` is ``a**beta * alpha**(h - 1) *
   cos(pi / 2 * d)**2`` where ``d`` is the distance in semitones between ``b`` and
   ``f / h``, for ``|d| <= 1`` (MELODIA's harmonic weighting, ``alpha`` = 0.8,
   ``beta`` = 1).
3. **Semitones.** Each semitone of the grid takes the highest salience within a quarter
   tone of its centre (the pitch-class comparison needs no finer resolution); these are
   what is kept per STFT frame (:func:`semitone_salience`).

Per control frame, the pooled salience is weighted by a melody-range prior over the
candidate pitch (:func:`range_prior`) and its argmax is the produced pitch. MELODIA picks
the melody among pitch contours by their salience, length, pitch and vibrato; a control
frame is too short for contours, so the prior stands for MELODIA's preference of the
melody's register over the bass and inner voices.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from timingbench.errors import ParameterError

F64 = npt.NDArray[np.float64]
#: Salience grid: 10-cent bins (MELODIA's bin resolution), 600 bins = 5 octaves from ``REF_HZ``.
BINS_PER_SEMITONE = 10
N_BINS = 600
#: Lowest bin of the grid (MELODIA's reference frequency), Hz; MIDI 33 (A1).
REF_HZ = 55.0
REF_MIDI = 33
N_SEMITONES = N_BINS // BINS_PER_SEMITONE


def spectral_peaks(mag: npt.ArrayLike, *, sr: int, n_fft: int, peak_range_db: float,
                   max_hz: float) -> tuple[npt.NDArray[np.int64], F64, F64]:
    """Local maxima of each frame's magnitude spectrum, refined by parabolic interpolation.

    Parameters
    ----------
    mag : array_like, shape (n_fft // 2 + 1, m)
        Magnitude STFT.
    sr : int
        Sample rate, Hz.
    n_fft : int
        STFT window, samples.
    peak_range_db : float
        Peaks more than this many dB below the frame's highest peak are dropped.
    max_hz : float
        Peaks above this frequency are dropped, Hz.

    Returns
    -------
    frame : np.ndarray of int, shape (p,)
        Frame index of each peak.
    freq_hz : np.ndarray, shape (p,)
        Interpolated peak frequency, Hz.
    amp : np.ndarray, shape (p,)
        Interpolated peak magnitude (linear).
    """
    a = np.asarray(mag, dtype=np.float64)
    db = 20.0 * np.log10(np.maximum(a, 1e-12))
    top = max(1, min(a.shape[0] - 1, int(max_hz * n_fft / sr)))
    c, lo, hi = db[1:top], db[0:top - 1], db[2:top + 1]
    is_peak = (c > lo) & (c >= hi) & (a[1:top] > 1e-9)
    k, j = np.nonzero(is_peak)
    c, lo, hi = c[k, j], lo[k, j], hi[k, j]
    den = lo - 2.0 * c + hi
    delta = np.where(den < 0, 0.5 * (lo - hi) / np.where(den < 0, den, -1.0), 0.0)
    peak_db = c - 0.25 * (lo - hi) * delta
    frame_top = np.full(a.shape[1], -np.inf)
    np.maximum.at(frame_top, j, peak_db)
    keep = peak_db >= frame_top[j] - float(peak_range_db)
    freq = ((k[keep] + 1 + delta[keep]) * (sr / n_fft)).astype(np.float64)
    return j[keep].astype(np.int64), freq, (10.0 ** (peak_db[keep] / 20.0)).astype(np.float64)


def _kernel() -> F64:
    d = np.arange(-BINS_PER_SEMITONE, BINS_PER_SEMITONE + 1) / BINS_PER_SEMITONE
    return np.cos(np.pi / 2.0 * d) ** 2


def semitone_salience(mag: npt.ArrayLike, *, sr: int, n_fft: int, n_harmonics: int, alpha: float, beta: float,
                      peak_range_db: float, max_hz: float) -> npt.NDArray[np.float32]:
    """Harmonic-summation salience of every STFT frame, at semitone resolution.

    Parameters
    ----------
    mag, sr, n_fft
        As for :func:`spectral_peaks` (magnitude STFT; Hz; samples).
    n_harmonics : int
        Harmonics a peak votes through (``h = 1 .. n_harmonics``).
    alpha : float
        Weight ratio of consecutive harmonics, in (0, 1].
    beta : float
        Magnitude compression, in (0, 1].
    peak_range_db, max_hz : float
        As for :func:`spectral_peaks` (dB; Hz).

    Returns
    -------
    salience : np.ndarray of float32, shape (N_SEMITONES, m)
        Row ``s`` is the candidate pitch MIDI ``REF_MIDI + s``; a frame without peaks is 0.

    Raises
    ------
    ParameterError
        If a parameter is out of range.
    """
    if n_harmonics < 1 or not 0.0 < alpha <= 1.0 or not 0.0 < beta <= 1.0 or peak_range_db <= 0 or max_hz <= 0:
        raise ParameterError(f"salience parameters out of range: n_harmonics={n_harmonics!r}, alpha={alpha!r}, "
                             f"beta={beta!r}, peak_range_db={peak_range_db!r}, max_hz={max_hz!r}")
    m = np.asarray(mag).shape[1]
    frame, freq, amp = spectral_peaks(mag, sr=sr, n_fft=n_fft, peak_range_db=peak_range_db, max_hz=max_hz)
    h = np.arange(1, n_harmonics + 1, dtype=np.float64)
    # fractional grid position of every (peak, harmonic) fundamental; votes split linearly between two bins,
    # then spread by the cos^2 kernel (a convolution along pitch: the same sum, on the 10-cent grid)
    pos = BINS_PER_SEMITONE * 12.0 * np.log2(freq[:, None] / h[None, :] / REF_HZ)
    w = (amp[:, None] ** beta) * alpha ** (h[None, :] - 1.0)
    pad = BINS_PER_SEMITONE
    ok = (pos > -pad) & (pos < N_BINS - 1 + pad)
    pos, w = pos[ok], w[ok]
    fr = np.broadcast_to(frame[:, None], ok.shape)[ok]
    b0 = np.floor(pos).astype(np.int64)
    t = pos - b0
    width = N_BINS + 2 * pad + 1
    flat = np.zeros(m * width)
    for b, wt in ((b0, w * (1.0 - t)), (b0 + 1, w * t)):
        flat += np.bincount(fr * width + (b + pad), weights=wt, minlength=m * width)
    grid = flat.reshape(m, width)
    kern = _kernel()
    sal = np.zeros((m, N_BINS))
    for i, kv in enumerate(kern):  # sal[b] = sum_d grid[b - d] kern[d]
        sal += kv * grid[:, 2 * pad - i:2 * pad - i + N_BINS]
    half = BINS_PER_SEMITONE // 2
    padded = np.pad(sal, ((0, 0), (half, half)))
    centres = np.arange(N_SEMITONES) * BINS_PER_SEMITONE + half
    win = np.stack([padded[:, centres + o] for o in range(-half, half + 1)], axis=0)
    return np.ascontiguousarray(win.max(axis=0).T, dtype=np.float32)


def range_prior(*, centre_midi: float, width_semitones: float) -> F64:
    """Melody-range prior over the candidate pitches: a Gaussian in semitones.

    Parameters
    ----------
    centre_midi : float
        The register the prior favours most, MIDI.
    width_semitones : float
        Standard deviation, semitones (positive).

    Returns
    -------
    prior : np.ndarray, shape (N_SEMITONES,)
        Weight of each candidate pitch ``REF_MIDI + s``, 1 at the centre.

    Raises
    ------
    ParameterError
        If the width is not positive.
    """
    if not width_semitones > 0:
        raise ParameterError(f"melody prior width must be positive semitones, got {width_semitones!r}")
    midi = REF_MIDI + np.arange(N_SEMITONES, dtype=np.float64)
    return np.exp(-0.5 * ((midi - float(centre_midi)) / float(width_semitones)) ** 2)


def predominant_pitch_class(salience: npt.ArrayLike, prior: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Pitch class (0 = C) of the most salient candidate of each column after the prior; -1 when none.

    Parameters
    ----------
    salience : array_like, shape (N_SEMITONES, n)
        Pooled semitone salience per control frame (NaN: no analysis frame).
    prior : array_like, shape (N_SEMITONES,)
        Weight of each candidate pitch.

    Returns
    -------
    pc : np.ndarray of int, shape (n,)
    """
    s = np.nan_to_num(np.asarray(salience, dtype=np.float64), nan=0.0) * np.asarray(prior, dtype=np.float64)[:, None]
    best = np.argmax(s, axis=0)
    out = np.mod(REF_MIDI + best, 12).astype(np.int64)
    out[~(s.max(axis=0) > 0)] = -1
    return out

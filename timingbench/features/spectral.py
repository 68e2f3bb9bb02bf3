"""Spectral building blocks of the feature bank (one STFT, shared filterbanks).

Every function works on the bank's grid: a centred STFT (``center=True``, zero padding,
periodic Hann window of ``n_fft`` samples, hop ``hop``), so frame ``k`` describes the
instant ``k * hop / sr`` (see :mod:`timingbench.convert`). The definitions equal the
corresponding librosa functions (``stft``, ``feature.rms``, ``feature.melspectrogram``,
``onset.onset_strength`` with ``center=False``, ``feature.mfcc``, ``feature.chroma_stft``),
which ``benchmarks/feature_bank.py`` and the tests check.

Levels are made level-relative where a floor is needed: log spectra are clipped
``db_range`` below their own maximum, level envelopes are floored ``range_db`` below a
reference level, so a gain change shifts every dB curve by the same constant.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import scipy.fft
import scipy.sparse

from timingbench.errors import ParameterError
from timingbench.features.kernels import weighted_row_sums
from timingbench.memo import process_cache


@process_cache(maxsize=8)
def hann_window(n_fft: int) -> npt.NDArray[np.float32]:
    """Periodic Hann window of ``n_fft`` samples (librosa/scipy ``fftbins=True``)."""
    k = np.arange(n_fft, dtype=np.float64)
    return (0.5 - 0.5 * np.cos(2.0 * np.pi * k / n_fft)).astype(np.float32)


def n_frames_for(n_samples: int, *, hop: int) -> int:
    """Number of centred frames for a signal of ``n_samples`` samples (librosa convention)."""
    return 1 + n_samples // hop


def stft_magnitude(
    y: npt.NDArray[np.floating], *, n_fft: int, hop: int
) -> npt.NDArray[np.float32]:
    """Magnitude of the centred STFT.

    Parameters
    ----------
    y : np.ndarray, shape (n_samples,)
        Mono signal.
    n_fft : int
        Window length in samples (even).
    hop : int
        Hop length in samples.

    Returns
    -------
    mag : np.ndarray of float32, shape (n_fft // 2 + 1, n_frames)

    Raises
    ------
    ParameterError
        If ``y`` is not 1-D or ``n_fft`` is odd.
    """
    if y.ndim != 1:
        raise ParameterError(f"signal must be mono (n_samples,), got shape {y.shape}")
    if n_fft % 2:
        raise ParameterError(f"n_fft must be even, got {n_fft}")
    pad = n_fft // 2
    yp = np.pad(np.asarray(y, dtype=np.float32), (pad, pad))
    if yp.size < n_fft:
        yp = np.pad(yp, (0, n_fft - yp.size))
    frames = np.lib.stride_tricks.sliding_window_view(yp, n_fft)[::hop]
    frames = frames[: n_frames_for(y.size, hop=hop)]
    spec = scipy.fft.rfft(frames * hann_window(n_fft), axis=1, workers=1)
    return np.ascontiguousarray(np.abs(spec).T, dtype=np.float32)


def frame_rms(y: npt.NDArray[np.floating], *, n_fft: int, hop: int) -> npt.NDArray[np.float64]:
    """Time-domain RMS of centred, zero-padded, unwindowed frames (``librosa.feature.rms``).

    Returns
    -------
    rms : np.ndarray of float64, shape (n_frames,)
        Linear RMS (full scale = 1).
    """
    pad = n_fft // 2
    sq = np.pad(np.asarray(y, dtype=np.float64) ** 2, (pad, pad))
    if sq.size < n_fft:
        sq = np.pad(sq, (0, n_fft - sq.size))
    frames = np.lib.stride_tricks.sliding_window_view(sq, n_fft)[::hop]
    frames = frames[: n_frames_for(y.size, hop=hop)]
    return np.sqrt(frames.mean(axis=1))


def parseval_scale(n_fft: int) -> float:
    """Factor turning a Parseval-weighted bin-power sum into a time-domain mean square.

    ``2 / (n_fft * sum(w**2))`` for the periodic Hann window ``w``: for a stationary
    signal, ``parseval_scale * sum_k weight_k |X_k|**2`` (DC and Nyquist weighted 1/2,
    see :func:`bin_weights`) equals the signal's mean square, so a component's or a
    band's level in dB is directly comparable with the mix RMS in dBFS.
    """
    return 2.0 / (n_fft * float(np.sum(hann_window(n_fft).astype(np.float64) ** 2)))


def spectral_mean_square(
    power: npt.NDArray[np.floating], *, n_fft: int
) -> npt.NDArray[np.float64]:
    """Mean square of the signal behind a one-sided power spectrogram (Parseval).

    Parameters
    ----------
    power : np.ndarray, shape (n_fft // 2 + 1, n_frames)
        ``|X|**2``.
    n_fft : int
        Window length.

    Returns
    -------
    ms : np.ndarray of float64, shape (n_frames,)
    """
    return weighted_row_sums(power, weights=bin_weights(power.shape[0])) * parseval_scale(n_fft)


def bin_weights(n_bins: int) -> npt.NDArray[np.float64]:
    """Parseval weights of the one-sided spectrum: 1, with DC and Nyquist halved."""
    w = np.ones(n_bins, dtype=np.float64)
    w[0] = 0.5
    w[-1] = 0.5
    return w


@process_cache(maxsize=8)
def mel_basis(*, sr: int, n_fft: int, n_mels: int) -> scipy.sparse.csr_matrix:
    """Slaney mel filterbank (``librosa.filters.mel`` defaults) as a sparse matrix (n_mels, n_bins).

    Computed here with librosa's own operations, in its order (equal to the last bit; a test
    holds it to librosa), so that scoring never imports librosa.
    """
    fftfreqs = np.fft.rfftfreq(n=n_fft, d=1.0 / sr)
    mel_f = _mel_to_hz(np.linspace(_hz_to_mel(np.asanyarray(0.0)), _hz_to_mel(np.asanyarray(float(sr) / 2)),
                                   n_mels + 2))
    weights = np.zeros((n_mels, int(1 + n_fft // 2)), dtype=np.float32)
    fdiff = np.diff(mel_f)
    ramps = np.subtract.outer(mel_f, fftfreqs)
    for i in range(n_mels):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        weights[i] = np.maximum(0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_f[2:n_mels + 2] - mel_f[:n_mels]))[:, np.newaxis]
    return scipy.sparse.csr_matrix(weights.astype(np.float32))


#: Slaney's mel scale: linear below 1 kHz (200/3 Hz per mel), logarithmic above.
_MEL_F_SP, _MEL_MIN_LOG_HZ = 200.0 / 3, 1000.0


def _hz_to_mel(frequencies: np.ndarray) -> np.ndarray:
    mels = (frequencies - 0.0) / _MEL_F_SP
    min_log_mel = (_MEL_MIN_LOG_HZ - 0.0) / _MEL_F_SP
    logstep = np.log(6.4) / 27.0
    if frequencies.ndim:
        log_t = frequencies >= _MEL_MIN_LOG_HZ
        mels[log_t] = min_log_mel + np.log(frequencies[log_t] / _MEL_MIN_LOG_HZ) / logstep
    elif frequencies >= _MEL_MIN_LOG_HZ:
        mels = min_log_mel + np.log(frequencies / _MEL_MIN_LOG_HZ) / logstep
    return mels  # type: ignore[no-any-return]


def _mel_to_hz(mels: np.ndarray) -> np.ndarray:
    freqs = 0.0 + _MEL_F_SP * mels
    min_log_mel = (_MEL_MIN_LOG_HZ - 0.0) / _MEL_F_SP
    logstep = np.log(6.4) / 27.0
    log_t = mels >= min_log_mel
    freqs[log_t] = _MEL_MIN_LOG_HZ * np.exp(logstep * (mels[log_t] - min_log_mel))
    return freqs  # type: ignore[no-any-return]


@process_cache(maxsize=8)
def chroma_basis(*, sr: int, n_fft: int, tuning: float) -> npt.NDArray[np.float32]:
    """Chroma filterbank (``librosa.filters.chroma`` defaults), shape (12, n_bins).

    Computed here with librosa's own operations, in its order (equal to the last bit; a test
    holds it to librosa), so that scoring never imports librosa.
    """
    n_chroma, ctroct, octwidth = 12, 5.0, 2.0
    frequencies = np.linspace(0, sr, n_fft, endpoint=False)[1:]
    a440 = 440.0 * 2.0 ** (tuning / n_chroma)
    frqbins = n_chroma * np.log2(np.asanyarray(frequencies) / (float(a440) / 16))
    frqbins = np.concatenate(([frqbins[0] - 1.5 * n_chroma], frqbins))
    binwidthbins = np.concatenate((np.maximum(frqbins[1:] - frqbins[:-1], 1.0), [1]))
    d = np.subtract.outer(frqbins, np.arange(0, n_chroma, dtype="d")).T
    n_chroma2 = np.round(float(n_chroma) / 2)
    d = np.remainder(d + n_chroma2 + 10 * n_chroma, n_chroma) - n_chroma2
    wts = np.exp(-0.5 * (2 * d / np.tile(binwidthbins, (n_chroma, 1))) ** 2)
    # unit L2 norm per column (librosa.util.normalize, norm=2: a vanishing column is left as is)
    length = np.sum(np.abs(wts).astype(float) ** 2, axis=0, keepdims=True) ** (1.0 / 2)
    length[length < np.finfo(wts.dtype).tiny] = 1.0
    normed = np.empty_like(wts)
    normed[:] = wts / length
    normed *= np.tile(np.exp(-0.5 * (((frqbins / n_chroma - ctroct) / octwidth) ** 2)), (n_chroma, 1))
    normed = np.roll(normed, -3 * (n_chroma // 12), axis=0)
    return np.ascontiguousarray(normed[:, : int(1 + n_fft / 2)], dtype=np.float32)


@process_cache(maxsize=8)
def band_matrix(
    *, sr: int, n_fft: int, edges: tuple[tuple[str, float, float], ...]
) -> tuple[tuple[str, ...], npt.NDArray[np.float64]]:
    """Indicator-times-Parseval-weight matrix selecting each band's bins ``[lo, hi)`` Hz.

    Returns
    -------
    names : tuple of str
    matrix : np.ndarray, shape (n_bands, n_bins)

    Raises
    ------
    ParameterError
        If a band is empty or inverted.
    """
    freqs = np.arange(n_fft // 2 + 1) * (sr / n_fft)
    w = bin_weights(freqs.size)
    rows = []
    for name, lo, hi in edges:
        if not (0 <= lo < hi):
            raise ParameterError(f"band {name!r} must satisfy 0 <= low < high Hz, got [{lo}, {hi}]")
        sel = (freqs >= lo) & (freqs < hi)
        if not sel.any():
            raise ParameterError(f"band {name!r} [{lo}, {hi}) Hz contains no STFT bin at n_fft={n_fft}")
        rows.append(np.where(sel, w, 0.0))
    return tuple(n for n, _, _ in edges), np.array(rows)


def log_mel_db(
    mel_power: npt.NDArray[np.floating], *, db_range: float, ref_power: float | None = None
) -> npt.NDArray[np.float32]:
    """Mel power in dB relative to ``ref_power`` (default: its own maximum), clipped ``db_range`` below.

    Returns
    -------
    mel_db : np.ndarray of float32, shape like ``mel_power``, values in ``[-db_range, ...]``
    """
    ref = float(np.max(mel_power)) if ref_power is None else float(ref_power)
    if ref <= 0:
        return np.full(mel_power.shape, -float(db_range), dtype=np.float32)
    floor = ref * 10.0 ** (-float(db_range) / 10.0)
    out = 10.0 * np.log10(np.maximum(mel_power, floor) / ref)
    return np.asarray(np.maximum(out, -float(db_range)), dtype=np.float32)


def onset_from_log_mel(mel_db: npt.NDArray[np.floating]) -> npt.NDArray[np.float64]:
    """Spectral-flux onset strength: mean over mel bands of the positive dB increase.

    Equals ``librosa.onset.onset_strength(S=mel_db, lag=1, max_size=1, center=False)``:
    frame ``k`` carries the rise from frame ``k - 1``; frame 0 is 0.

    Returns
    -------
    onset : np.ndarray of float64, shape (n_frames,)
    """
    out = np.zeros(mel_db.shape[1], dtype=np.float64)
    if mel_db.shape[1] > 1:
        out[1:] = np.maximum(np.diff(mel_db, axis=1), 0.0).mean(axis=0, dtype=np.float64)
    return out


def level_db(
    mean_square: npt.NDArray[np.floating], *, ref_ms: float, range_db: float
) -> npt.NDArray[np.float64]:
    """``10 log10`` of a mean square (dBFS), floored ``range_db`` below the reference ``ref_ms``."""
    floor = max(float(ref_ms), np.finfo(np.float64).tiny) * 10.0 ** (-float(range_db) / 10.0)
    return 10.0 * np.log10(np.maximum(np.asarray(mean_square, dtype=np.float64), floor))

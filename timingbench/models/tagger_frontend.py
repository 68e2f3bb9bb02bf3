"""The log-mel front end of the pretrained AudioSet tagger (EfficientAT's MobileNets).

Every number here is a fact of the pretrained model, not a tunable: the network was trained
on exactly this input, so none of them lives in the configuration. The facts come from the
model's README (``docs/tagger-model.md``):

- mono audio at :data:`MODEL_SR` (32 kHz);
- pre-emphasis ``y[n] = x[n + 1] - 0.97 x[n]`` (one sample shorter than the input);
- a 1024-point STFT of frames 320 samples apart; each frame holds an 800-sample symmetric
  Hann window centred in it (112 zeros either side); the signal is padded by 512 samples at
  each end by reflection, so frame ``f`` is centred on sample ``320 f``; power
  ``re^2 + im^2``;
- 128 Kaldi-style triangular mel filters (``mel = 1127 ln(1 + f / 700)``) from 0 to 15 kHz
  over the first 512 FFT bins, with a zero column for the Nyquist bin;
- ``(log(mel + 1e-5) + 4.5) / 5``.

Computed in numpy and scipy (float32 frames, float32 FFT, a sparse filter bank), deterministic.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import scipy.fft
import scipy.sparse

from timingbench.errors import ParameterError
from timingbench.memo import process_cache

#: Sample rate the pretrained tagger was trained at (Hz).
MODEL_SR = 32000
#: Pre-emphasis coefficient.
PREEMPHASIS = 0.97
#: FFT length and frame length (samples).
N_FFT = 1024
#: Length of the Hann window inside each frame (samples).
WIN_LENGTH = 800
#: Hop between frames (samples; 10 ms at 32 kHz).
HOP = 320
#: Reflection padding at each end of the signal (samples).
PAD = N_FFT // 2
#: Frames per time column of the network's last feature map (its five stride-2 layers).
COLUMN_FRAMES = 32
#: Mel bands.
N_MELS = 128
#: Lowest and highest edge of the mel filter bank (Hz).
FMIN_HZ = 0.0
FMAX_HZ = 15000.0
#: Added to the mel power before the logarithm.
LOG_OFFSET = 1e-5
#: The log-mel is mapped to ``(x + NORM_SHIFT) / NORM_SCALE``.
NORM_SHIFT = 4.5
NORM_SCALE = 5.0


#: Frames transformed at a time (bounds the front end's memory on long windows).
_FRAMES_PER_BLOCK = 256


def n_frames(n_samples: int) -> int:
    """Frames of the log-mel of ``n_samples`` samples at :data:`MODEL_SR` (pre-emphasis included)."""
    return 1 + (n_samples - 1) // HOP if n_samples >= 2 else 0


def _kaldi_mel(f_hz: npt.NDArray[np.float64] | float) -> npt.NDArray[np.float64]:
    return np.asarray(1127.0 * np.log1p(np.asarray(f_hz, dtype=np.float64) / 700.0))


@process_cache(8)
def _filters(n_mels: int, fmin_hz: float, fmax_hz: float) -> scipy.sparse.csr_matrix:
    n_bins = N_FFT // 2
    mel_lo, mel_hi = float(_kaldi_mel(fmin_hz)), float(_kaldi_mel(fmax_hz))
    delta = (mel_hi - mel_lo) / (n_mels + 1)
    left = mel_lo + delta * np.arange(n_mels, dtype=np.float64)[:, None]
    centre, right = left + delta, left + 2.0 * delta
    mel = _kaldi_mel(MODEL_SR / N_FFT * np.arange(n_bins, dtype=np.float64))[None, :]
    up = (mel - left) / (centre - left)
    down = (right - mel) / (right - centre)
    bank = np.maximum(0.0, np.minimum(up, down))
    bank = np.concatenate([bank, np.zeros((n_mels, 1))], axis=1)  # the Nyquist bin gets no weight
    return scipy.sparse.csr_matrix(bank.astype(np.float32))


@process_cache(4)
def _window(periodic: bool) -> npt.NDArray[np.float32]:
    m = WIN_LENGTH
    denom = m if periodic else m - 1
    hann = 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(m, dtype=np.float64) / denom)
    w = np.zeros(N_FFT, dtype=np.float32)
    lead = (N_FFT - m) // 2
    w[lead:lead + m] = hann
    w.flags.writeable = False
    return w


def log_mel(samples: npt.ArrayLike, *, fmax_hz: float = FMAX_HZ, periodic_window: bool = False
            ) -> npt.NDArray[np.float32]:
    """The tagger's normalised log-mel of a signal at :data:`MODEL_SR`.

    Parameters
    ----------
    samples : array_like, shape (n,)
        Mono audio at 32 kHz, at least ``PAD + 2`` (514) samples.
    fmax_hz : float
        Upper edge of the mel filter bank; the model's is :data:`FMAX_HZ` (other values only
        show how sharply the network depends on it).
    periodic_window : bool
        A periodic instead of the model's symmetric Hann window (same purpose).

    Returns
    -------
    mel : np.ndarray of float32, shape (N_MELS, n_frames(n))
        ``(log(mel power + 1e-5) + 4.5) / 5``; frame ``f`` is centred on sample ``320 f``.

    Raises
    ------
    ParameterError
        If ``samples`` is not one-dimensional, too short to be padded by reflection, or not finite.
    """
    x = np.asarray(samples, dtype=np.float32)
    if x.ndim != 1:
        raise ParameterError(f"the tagger's front end takes mono samples (one dimension), got shape {x.shape}")
    if x.size < PAD + 2:
        raise ParameterError(f"the tagger needs at least {PAD + 2} samples at {MODEL_SR} Hz "
                             f"({(PAD + 2) / MODEL_SR * 1000:.0f} ms), got {x.size}")
    if not np.isfinite(x).all():
        raise ParameterError("the tagger's input holds non-finite samples (NaN or inf)")
    y = x[1:] - np.float32(PREEMPHASIS) * x[:-1]
    padded = np.pad(y, PAD, mode="reflect")
    n = n_frames(x.size)
    lead = (N_FFT - WIN_LENGTH) // 2
    # only the window's 800 nonzero samples of each frame are read; the FFT pads them back to 1024
    frames = np.lib.stride_tricks.sliding_window_view(padded[lead:lead + (n - 1) * HOP + WIN_LENGTH],
                                                      WIN_LENGTH)[::HOP]
    win = _window(bool(periodic_window))[lead:lead + WIN_LENGTH]
    filters = _filters(N_MELS, FMIN_HZ, float(fmax_hz))
    out = np.empty((N_MELS, n), dtype=np.float32)
    for i in range(0, n, _FRAMES_PER_BLOCK):  # in blocks: the spectra of a long window are never all held
        spec = scipy.fft.rfft(frames[i:i + _FRAMES_PER_BLOCK] * win, n=N_FFT, axis=1)  # complex64
        power = np.square(spec.real)
        power += np.square(spec.imag)
        out[:, i:i + _FRAMES_PER_BLOCK] = filters @ power.T
    out += np.float32(LOG_OFFSET)
    np.log(out, out=out)
    out += np.float32(NORM_SHIFT)
    out /= np.float32(NORM_SCALE)
    return out

"""Per-frame A-weighted level and high-passed chroma, and pooling onto a control's hop.

Both come from one STFT of the clip on the feature bank's grid (``features.n_fft``,
``features.hop``), computed once per clip and kept with the bank
(:meth:`~timingbench.features.bank.FeatureBank.derived`).

- **A-weighted level** (dB, A-weighted full scale): the Parseval mean square of the
  frame's spectrum with every bin weighted by the IEC 61672 A-curve, ``10 log10`` of it,
  floored ``features.level_range_db`` below the clip's loudest frame.
- **Melody chroma**: the 12 pitch-class energies (librosa's chroma filterbank at
  ``features.chroma_tuning``) of the power spectrum weighted by a second-order high-pass
  at ``controls.melody_highpass_hz`` (Music ControlNet takes its melody above middle C).
- **Pitch salience** (when asked for): the harmonic-summation salience of the same
  magnitude spectrum at semitone resolution (:mod:`timingbench.controls.salience`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from timingbench.controls.salience import semitone_salience
from timingbench.convert import frame_period_s
from timingbench.errors import ParameterError
from timingbench.features import spectral as sp
from timingbench.params.analysis import FeaturesParams
from timingbench.params.controls import ControlsParams

if TYPE_CHECKING:
    from timingbench.features.bank import FeatureBank

F64 = npt.NDArray[np.float64]


def a_weighting_db(freqs_hz: npt.ArrayLike) -> F64:
    """IEC 61672 A-weighting gain in dB at each frequency (0 dB at 1 kHz; -inf at 0 Hz)."""
    f2 = np.asarray(freqs_hz, dtype=np.float64) ** 2
    num = 12194.0**2 * f2**2
    den = (f2 + 20.6**2) * np.sqrt((f2 + 107.7**2) * (f2 + 737.9**2)) * (f2 + 12194.0**2)
    with np.errstate(divide="ignore"):
        return 20.0 * np.log10(np.where(num > 0, num / den, 0.0)) + 2.0


def spectral_frames(mag: npt.NDArray[np.floating], *, sr: int, n_fft: int, hop: int, tuning: float,
                    highpass_hz: float, salience: ControlsParams | None = None) -> dict[str, Any]:
    """A-weighted mean square and high-passed chroma of every STFT frame.

    Parameters
    ----------
    mag : np.ndarray, shape (n_fft // 2 + 1, m)
        ``|STFT|`` of a mono signal (a bank's :meth:`~timingbench.features.FeatureBank.magnitude`,
        or :func:`~timingbench.features.bank.grid_magnitude` of other audio).
    sr : int
        Sample rate, Hz.
    n_fft, hop : int
        STFT window and hop, samples (frame ``i`` is centred at ``i * hop / sr`` s).
    tuning : float
        Chroma tuning deviation in fractions of a bin.
    highpass_hz : float
        Corner of the second-order high-pass applied before the chroma, Hz.
    salience : ControlsParams, optional
        When given, also the pitch salience of every frame with its ``melody_salience_*``
        constants.

    Returns
    -------
    frames : dict
        ``a_ms`` (np.ndarray, shape (m,): A-weighted mean square, full scale = 1),
        ``chroma`` (np.ndarray, shape (12, m)), ``hop_s`` (float, frame hop in seconds) and,
        with ``salience``, ``salience`` (np.ndarray of float32, shape (60, m): semitone
        salience, MIDI 33 upwards).
    """
    power = mag.astype(np.float64) ** 2
    freqs = np.arange(power.shape[0]) * (sr / n_fft)
    a_gain = 10.0 ** (a_weighting_db(freqs) / 10.0)
    a_ms = sp.spectral_mean_square(power * a_gain[:, None], n_fft=n_fft)
    hp = freqs**4 / (freqs**4 + float(highpass_hz) ** 4)
    chroma = np.asarray(sp.chroma_basis(sr=sr, n_fft=n_fft, tuning=tuning), dtype=np.float64) @ (power * hp[:, None])
    out: dict[str, Any] = {"a_ms": a_ms, "chroma": chroma, "hop_s": frame_period_s(sr=sr, hop=hop)}
    if salience is not None:
        c = salience
        out["salience"] = semitone_salience(mag, sr=sr, n_fft=n_fft, n_harmonics=c.melody_salience_harmonics,
                                            alpha=c.melody_salience_alpha, beta=c.melody_salience_beta,
                                            peak_range_db=c.melody_salience_peak_range_db,
                                            max_hz=c.melody_salience_max_hz)
    return out


def bank_frames(bank: FeatureBank, *, features: FeaturesParams, highpass_hz: float,
                salience: ControlsParams | None = None) -> dict[str, Any]:
    """:func:`spectral_frames` of a feature bank's clip, computed once per bank and kept with it.

    ``features`` are the bank's own constants (its STFT grid and chroma tuning); other ones raise.
    """
    bank.require_params(features, reader="controls")
    p = features
    key = f"controls-frames-{p.n_fft}-{p.hop}-{p.chroma_tuning}-{highpass_hz}"
    if salience is not None:
        c = salience
        key += (f"-salience-{c.melody_salience_harmonics}-{c.melody_salience_alpha}-{c.melody_salience_beta}-"
                f"{c.melody_salience_peak_range_db}-{c.melody_salience_max_hz}")
    return bank.derived(key, lambda bk: spectral_frames(bk.magnitude(), sr=bk.sr, n_fft=p.n_fft, hop=p.hop,
                                                        tuning=p.chroma_tuning, highpass_hz=highpass_hz,
                                                        salience=salience))


def pool(values: npt.ArrayLike, *, frame_hop_s: float, hop_s: float, n: int) -> F64:
    """Mean of per-frame values over each control frame ``[k * hop_s, (k + 1) * hop_s)``.

    Parameters
    ----------
    values : array_like, shape (m,) or (c, m)
        Values of frames centred at ``i * frame_hop_s`` seconds (last axis).
    frame_hop_s : float
        Hop of ``values``, seconds.
    hop_s : float
        The control's hop, seconds.
    n : int
        Number of control frames.

    Returns
    -------
    pooled : np.ndarray of float64, shape (n,) or (c, n)
        NaN for a control frame no analysis frame falls in (past the clip's end).

    Raises
    ------
    ParameterError
        If a hop is not positive.
    """
    if frame_hop_s <= 0 or hop_s <= 0:
        raise ParameterError(f"hops must be positive seconds, got {frame_hop_s!r} and {hop_s!r}")
    v = np.asarray(values, dtype=np.float64)
    two_d = v.ndim == 2
    v2 = v if two_d else v[None, :]
    m = v2.shape[1]
    # rounded so that a frame centred exactly on a control-frame edge goes to the later frame
    k = np.floor(np.round(np.arange(m) * frame_hop_s / hop_s, 9)).astype(np.int64)
    keep = k < n
    sums = np.zeros((v2.shape[0], n))
    counts = np.bincount(k[keep], minlength=n).astype(np.float64)
    for row in range(v2.shape[0]):
        sums[row] = np.bincount(k[keep], weights=v2[row, keep], minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(counts > 0, sums / np.maximum(counts, 1.0), np.nan)
    return out if two_d else out[0]


def level_curve_db(a_ms: npt.ArrayLike, *, frame_hop_s: float, hop_s: float, n: int, range_db: float) -> F64:
    """A-weighted level in dB per control frame: ``10 log10`` of the pooled mean square,
    floored ``range_db`` below the loudest frame (NaN past the clip's end)."""
    ms = pool(a_ms, frame_hop_s=frame_hop_s, hop_s=hop_s, n=n)
    top = float(np.nanmax(ms)) if np.any(np.isfinite(ms)) else 0.0
    floor = max(top, np.finfo(np.float64).tiny) * 10.0 ** (-float(range_db) / 10.0)
    return np.where(np.isfinite(ms), 10.0 * np.log10(np.maximum(ms, floor)), np.nan)

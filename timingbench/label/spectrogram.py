"""The log-mel spectrogram shown on the labelling page.

The feature bank (``timingbench.features``) computes the log-mel once per clip; this
module takes it from there, so the page's frame grid is always the analysis grid. For
the browser the dB values are quantised to 8 bits over the clip's own range.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from timingbench.audio import Clip
from timingbench.config import Config
from timingbench.errors import ClipError

if TYPE_CHECKING:
    from timingbench.features.bank import FeatureBank


@dataclass(frozen=True)
class LogMel:
    """A log-mel spectrogram on the analysis frame grid.

    Attributes
    ----------
    db : np.ndarray of float32, shape (n_mels, n_frames)
        Power in dB (relative to the clip's maximum), low mel bands first.
    sr : int
        Sample rate in Hz of the grid.
    hop : int
        Hop length in samples (frame ``k`` is the instant ``k * hop / sr`` s).
    fmax_hz : float
        Upper edge of the top mel band in Hz.
    source : str
        Where it came from: ``"bank"`` (the feature bank).
    """

    db: npt.NDArray[np.float32]
    sr: int
    hop: int
    fmax_hz: float
    source: str


def logmel_from_bank(bank: FeatureBank) -> LogMel:
    """The log-mel of an already built feature bank (any separation backend).

    Parameters
    ----------
    bank : FeatureBank
        Its ``logmel`` (dB, shape ``(n_mels, n_frames)``), ``sr`` and ``hop`` are read.

    Returns
    -------
    logmel : LogMel
    """
    db = np.asarray(bank.logmel, dtype=np.float32)
    return LogMel(db, int(bank.sr), int(bank.hop), float(bank.sr) / 2.0, "bank")


def logmel_for_clip(clip: Clip, cfg: Config) -> LogMel:
    """The clip's log-mel, from its feature bank (mix only: never a source separation).

    Parameters
    ----------
    clip : Clip
        The decoded clip.
    cfg : Config
        The configuration the bank is built (or read from the cache) with.

    Returns
    -------
    logmel : LogMel

    Raises
    ------
    ClipError
        If the spectrogram is empty or not finite.
    """
    from timingbench.features.bank import get_bank

    # the page needs the mix spectrogram only: never start a source separation for it
    lm = logmel_from_bank(get_bank(clip, cfg, separation="none"))
    if lm.db.ndim != 2 or lm.db.shape[1] == 0:
        raise ClipError(f"{clip.path}: empty spectrogram (shape {lm.db.shape})")
    if not np.all(np.isfinite(lm.db)):
        raise ClipError(f"{clip.path}: non-finite values in the log-mel spectrogram")
    return lm


def quantise_logmel(lm: LogMel) -> tuple[npt.NDArray[np.uint8], float, float]:
    """The dB values mapped to 0-255 over the clip's own range.

    Parameters
    ----------
    lm : LogMel

    Returns
    -------
    q : np.ndarray of uint8, shape (n_mels, n_frames)
        Low mel bands first.
    db_min, db_max : float
        The dB values mapped to 0 and 255.
    """
    lo, hi = float(lm.db.min()), float(lm.db.max())
    span = hi - lo if hi > lo else 1.0
    q = np.round((lm.db - lo) * (255.0 / span)).clip(0, 255).astype(np.uint8)
    return q, lo, hi


def write_logmel_png(lm: LogMel, path: str | Path, *, cmap: str = "magma", compress_level: int = 6) -> Path:
    """Save the quantised log-mel as a PNG: one pixel per frame and mel band, high bands on top.

    Parameters
    ----------
    lm : LogMel
    path : str or Path
        PNG path; its folder must exist.
    cmap : str
        Matplotlib colour map name.
    compress_level : int
        zlib level of the PNG, 0-9.

    Returns
    -------
    path : Path
    """
    from matplotlib import colormaps
    from PIL import Image

    q, _, _ = quantise_logmel(lm)
    lut = (colormaps[cmap](np.arange(256))[:, :3] * 255).astype(np.uint8)
    out = Path(path)
    Image.fromarray(lut[q[::-1]], mode="RGB").save(out, compress_level=compress_level)
    return out


def encode_logmel(lm: LogMel) -> dict[str, Any]:
    """The page's JSON form: 8-bit quantised dB, frames as rows, base64.

    Parameters
    ----------
    lm : LogMel

    Returns
    -------
    payload : dict
        ``sr``, ``hop`` (samples), ``n_mels``, ``n_frames``, ``db_min``/``db_max`` (dB
        mapped to 0/255), ``fmax_hz``, ``source`` and ``data`` (base64 of ``n_frames *
        n_mels`` bytes, frame-major, low band first).
    """
    db = lm.db
    q, lo, hi = quantise_logmel(lm)
    return {
        "sr": lm.sr,
        "hop": lm.hop,
        "n_mels": int(db.shape[0]),
        "n_frames": int(db.shape[1]),
        "db_min": lo,
        "db_max": hi,
        "fmax_hz": lm.fmax_hz,
        "source": lm.source,
        "data": base64.b64encode(np.ascontiguousarray(q.T).tobytes()).decode("ascii"),
    }

"""Melody: frame-wise pitch-class accuracy of the produced chroma against a requested line.

As in Music ControlNet, the produced pitch class of a frame is the argmax of its chroma
(taken above middle C, :mod:`timingbench.controls.frames`); the accuracy is the share
of the frames with a requested pitch where that argmax is the requested pitch class.
Frames without a requested melody are not scored.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]


def produced_pitch_class(chroma: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Argmax pitch class (0 = C) of each column of a (12, n) chroma; -1 for a silent or missing frame."""
    c = np.asarray(chroma, dtype=np.float64)
    out = np.argmax(np.nan_to_num(c, nan=0.0), axis=0).astype(np.int64)
    out[~(np.nansum(c, axis=0) > 0)] = -1
    return out


def melody_accuracy(requested_midi: F64, produced_pc: npt.NDArray[np.int64]) -> tuple[float | None, int]:
    """Share of requested frames whose produced pitch class is the requested one.

    Parameters
    ----------
    requested_midi : np.ndarray, shape (n,)
        Requested MIDI pitch per frame (NaN: no melody requested).
    produced_pc : np.ndarray of int, shape (n,)
        Produced pitch class per frame (-1: none).

    Returns
    -------
    accuracy : float or None
        None when no frame carries a requested pitch.
    n_frames : int
        Frames scored.
    """
    ok = np.isfinite(requested_midi)
    n = int(np.count_nonzero(ok))
    if n == 0:
        return None, 0
    want = np.mod(np.rint(requested_midi[ok]).astype(np.int64), 12)
    return float(np.mean(produced_pc[ok] == want)), n


def melody_scores(requested_midi: F64, produced_pc: npt.NDArray[np.int64], *,
                  rng: np.random.Generator) -> dict[str, Any]:
    """Accuracy, and the accuracy of the same request with its frames shuffled (a chance baseline).

    Returns
    -------
    scores : dict
        ``accuracy``, ``shuffled_accuracy`` (the requested frames permuted among
        themselves, so the pitch-class histogram is kept and the timing destroyed),
        ``n_frames``.
    """
    acc, n = melody_accuracy(requested_midi, produced_pc)
    shuffled = requested_midi.copy()
    idx = np.flatnonzero(np.isfinite(requested_midi))
    shuffled[idx] = requested_midi[rng.permutation(idx)]
    sh, _ = melody_accuracy(shuffled, produced_pc)
    return {"accuracy": acc, "shuffled_accuracy": sh, "n_frames": n}

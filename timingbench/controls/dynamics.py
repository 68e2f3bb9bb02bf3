"""Dynamics: the produced A-weighted level curve against the requested one.

Music ControlNet and DITTO score a dynamics (intensity) control by the Pearson
correlation between the requested curve and the one measured on the output; beside it,
:func:`dynamics_scores` gives the mean absolute dB error after removing the best global
offset (the mean difference), since a generator's absolute level is arbitrary.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]


def dynamics_scores(requested_db: F64, produced_db: F64) -> dict[str, Any]:
    """Pearson r and offset-removed mean absolute error of two level curves on one hop.

    Parameters
    ----------
    requested_db : np.ndarray, shape (n,)
        Requested level per frame, dB (NaN: unconstrained).
    produced_db : np.ndarray, shape (n,)
        Measured level per frame, dB (NaN: past the clip's end).

    Returns
    -------
    scores : dict
        ``pearson_r`` (None under 3 frames or for a flat curve), ``mae_db`` (dB),
        ``offset_db`` (produced minus requested, mean, dB), ``n_frames`` (frames scored).
    """
    ok = np.isfinite(requested_db) & np.isfinite(produced_db)
    r, p = requested_db[ok], produced_db[ok]
    if r.size == 0:
        return {"pearson_r": None, "mae_db": None, "offset_db": None, "n_frames": 0}
    offset = float(np.mean(p - r))
    mae = float(np.mean(np.abs(p - offset - r)))
    pr: float | None = None
    if r.size >= 3 and np.std(r) > 0 and np.std(p) > 0:
        pr = float(np.corrcoef(r, p)[0, 1])
    return {"pearson_r": pr, "mae_db": mae, "offset_db": offset, "n_frames": int(r.size)}

"""Drums: onsets on the scorer's percussion route, scored with mir_eval.onset (50 ms).

The produced drum onsets are the peaks of the routed drum onset curve the percussion
detector already computes (:func:`timingbench.detectors.percussion.percussion_curves`):
local maxima reaching ``controls.drum_onset_rel`` of the curve's 99th percentile, at
least ``controls.drum_min_ioi_s`` apart (the stronger kept). A control given as an audio
file has its onsets extracted the same way.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from timingbench.curves import local_peaks, strongest_apart
from timingbench.memo import memoised
from timingbench.params.analysis import FeaturesParams
from timingbench.params.controls import ControlsParams
from timingbench.params.detectors import PercussionParams

if TYPE_CHECKING:
    from timingbench.features.bank import FeatureBank

F64 = npt.NDArray[np.float64]


def pick_onsets(onset: npt.ArrayLike, times_s: npt.ArrayLike, *, rel: float, min_ioi_s: float) -> F64:
    """Times of the local maxima of an onset curve above ``rel`` of its 99th percentile.

    Parameters
    ----------
    onset : array_like, shape (n,)
        Onset strength per frame.
    times_s : array_like, shape (n,)
        Frame times, seconds.
    rel : float
        Fraction (0-1] of the 99th percentile a peak must reach.
    min_ioi_s : float
        Peaks closer than this are one (the stronger is kept), seconds.

    Returns
    -------
    onsets_s : np.ndarray of float64, shape (k,)
    """
    x = np.asarray(onset, dtype=np.float64)
    t = np.asarray(times_s, dtype=np.float64)
    if x.size < 3:
        return np.empty(0)
    top = float(np.percentile(x, 99.0))
    if top <= 0:
        return np.empty(0)
    idx = local_peaks(x, 0, x.size, edges="interior", strict_left=True, min_value=rel * top)
    kept = strongest_apart(x, idx, separation=min_ioi_s, positions=t)
    return t[np.asarray(kept, dtype=np.int64)] if kept else np.empty(0)


def bank_drum_onsets(bank: FeatureBank, *, percussion: PercussionParams, controls: ControlsParams,
                     features: FeaturesParams) -> F64:
    """Drum onsets of a clip from its bank's percussion route (memoised per bank, the route's
    curves shared with the percussion detector)."""
    from timingbench.detectors.percussion import curves_key, route_curves

    cur = route_curves(bank, percussion, "high", features=features)
    return memoised(bank, "controls-drums", controls, ("drum_onset_rel", "drum_min_ioi_s"),
                    lambda c: pick_onsets(cur.onset, bank.times, rel=c.drum_onset_rel, min_ioi_s=c.drum_min_ioi_s),
                    curves_key(percussion, "high"))


def onset_scores(reference_s: F64, estimated_s: F64, *, window_s: float) -> dict[str, Any]:
    """mir_eval.onset F-measure, precision and recall inside the request's span.

    Only produced onsets within ``[first - window, last + window]`` of the request count.
    """
    import mir_eval

    from timingbench.controls.beats import within_span

    est = within_span(estimated_s, reference_s, window_s=window_s)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f, p, r = mir_eval.onset.f_measure(reference_s, est, window=window_s)
    return {"f_measure": float(f), "precision": float(p), "recall": float(r),
            "n_requested": int(reference_s.size), "n_detected": int(est.size)}

"""Oracle tests of the interval core against mir_eval, where the definitions coincide.

Two events ``t`` and ``u`` widened to windows ``[t - h, t + h]`` and ``[u - h, u + h]``
have IoU ``(2h - d) / (2h + d)`` with ``d = |t - u|``. With ``h = 1.5 w`` that IoU is at
least 0.5 exactly when ``d <= w``, so maximum matching of the windows at IoU 0.5 is
mir_eval's event matching within a window ``w`` -- and the F-measures mir_eval reported
for its own test data (``shared/realdata/mir_eval``) must come out of the interval core.
"""

from __future__ import annotations

import json
from pathlib import Path

import mir_eval
import numpy as np
import pytest

from timingbench.intervals import iou_matrix, match_optimal


def _windows(events: np.ndarray, *, window: float) -> np.ndarray:
    h = 1.5 * window
    return np.stack([events - h, events + h], axis=1)


def _f_measure(ref: np.ndarray, est: np.ndarray, *, window: float) -> float:
    if ref.size == 0 or est.size == 0:
        return 0.0
    n = len(match_optimal(_windows(ref, window=window), _windows(est, window=window),
                          iou_threshold=0.5))
    p, r = n / est.size, n / ref.size
    return 0.0 if n == 0 else 2 * p * r / (p + r)


@pytest.mark.parametrize("k", range(10))
def test_onset_f_measure_matches_mir_eval_reference(realdata: Path, k: int) -> None:
    folder = realdata / "mir_eval" / "onset"
    ref = mir_eval.io.load_events(str(folder / f"ref{k:02d}.txt"))
    est = mir_eval.io.load_events(str(folder / f"est{k:02d}.txt"))
    expected = json.loads((folder / f"output{k:02d}.json").read_text())["F-measure"]
    np.testing.assert_allclose(_f_measure(ref, est, window=0.05), expected, atol=1e-12)


@pytest.mark.parametrize("k", range(10))
def test_beat_f_measure_matches_mir_eval_reference(realdata: Path, k: int) -> None:
    folder = realdata / "mir_eval" / "beat"
    ref = mir_eval.beat.trim_beats(mir_eval.io.load_events(str(folder / f"ref{k:02d}.txt")))
    est = mir_eval.beat.trim_beats(mir_eval.io.load_events(str(folder / f"est{k:02d}.txt")))
    expected = json.loads((folder / f"output{k:02d}.json").read_text())["F-measure"]
    np.testing.assert_allclose(_f_measure(ref, est, window=0.07), expected, atol=1e-12)


@pytest.mark.parametrize("threshold", [0.1, 0.3, 0.5, 0.7])
def test_optimal_matching_size_equals_mir_eval(rng: np.random.Generator, threshold: float) -> None:
    for _ in range(60):
        n, m = int(rng.integers(0, 9)), int(rng.integers(0, 9))
        s = np.round(rng.uniform(0, 30, n), 2)
        ref = np.stack([s, s + np.round(rng.uniform(0.1, 6, n), 2)], axis=1)
        s = np.round(rng.uniform(0, 30, m), 2)
        est = np.stack([s, s + np.round(rng.uniform(0.1, 6, m), 2)], axis=1)
        iou = np.round(iou_matrix(ref, est), 6)

        def distance(a: np.ndarray, b: np.ndarray, iou: np.ndarray = iou) -> np.ndarray:
            return 1.0 - iou

        expected = mir_eval.util.match_events(ref, est, 1.0 - threshold, distance=distance) \
            if n and m else []
        got = match_optimal(ref, est, iou_threshold=threshold)
        assert len(got) == len(expected)

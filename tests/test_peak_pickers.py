"""The drum-onset and transcription peak pickers are curves.local_peaks + strongest_apart.

Oracles: the pickers as they were written before they shared curves.local_peaks, with their
own tie rules, on random curves full of plateaus and ties.
"""

from __future__ import annotations

import numpy as np
import pytest

from timingbench.controls.drums import pick_onsets
from timingbench.mgbench_gen.baseline import _peaks


def _old_pick_onsets(x: np.ndarray, t: np.ndarray, rel: float, min_ioi_s: float) -> np.ndarray:
    if x.size < 3:
        return np.empty(0)
    top = float(np.percentile(x, 99.0))
    if top <= 0:
        return np.empty(0)
    inner = (x[1:-1] > x[:-2]) & (x[1:-1] >= x[2:]) & (x[1:-1] >= rel * top)
    idx = np.flatnonzero(inner) + 1
    kept: list[int] = []
    for i in idx[np.argsort(-x[idx], kind="stable")]:
        if all(abs(t[i] - t[j]) >= min_ioi_s for j in kept):
            kept.append(int(i))
    return np.sort(t[np.asarray(kept, dtype=np.int64)]) if kept else np.empty(0)


def _old_peaks(curve: np.ndarray, threshold: float, min_gap: int) -> list[int]:
    top = float(np.max(curve)) if curve.size else 0.0
    if top <= 0.0:
        return []
    cand = [k for k in range(1, curve.size - 1)
            if curve[k] >= curve[k - 1] and curve[k] > curve[k + 1] and curve[k] >= threshold * top]
    out: list[int] = []
    for k in sorted(cand, key=lambda j: -curve[j]):
        if all(abs(k - j) >= min_gap for j in out):
            out.append(k)
    return sorted(out)


@pytest.mark.parametrize("seed", range(40))
def test_pick_onsets_matches_its_former_picker(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 80))
    x = rng.integers(0, 5, n).astype(np.float64)  # few levels: plateaus and ties everywhere
    t = np.arange(n) * 0.0116
    rel, ioi = float(rng.uniform(0.1, 0.9)), float(rng.uniform(0.0, 0.1))
    np.testing.assert_array_equal(pick_onsets(x, t, rel=rel, min_ioi_s=ioi), _old_pick_onsets(x, t, rel, ioi))


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_transcription_peaks_match_their_former_picker(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 80))
    curve = (rng.integers(0, 5, n) * rng.uniform(0.1, 1.0)).astype(dtype)
    thr, gap = float(rng.uniform(0.0, 0.9)), int(rng.integers(1, 6))
    assert _peaks(curve, threshold=thr, min_gap=gap) == _old_peaks(curve, thr, gap)

"""The one peak picker, window mean and moving average: edge rules, and oracles of the code they replaced.

Each ``_old_*`` function is the implementation that lived in a detector before
:mod:`timingbench.curves` (kept here verbatim as the reference); the replacements must give
identical outputs on random curves with plateaus, ties and every span edge.
"""

from __future__ import annotations

import numpy as np
import pytest

from timingbench.curves import accent, local_peaks, moving_average, strongest_apart, window_means

# ----------------------------------------------------------------------------- the edge rules


def test_open_edges_let_the_span_ends_be_peaks():
    x = np.array([5.0, 1.0, 2.0, 1.0, 3.0])
    assert local_peaks(x, 0, 5, edges="open").tolist() == [0, 2, 4]
    assert local_peaks(x, 1, 4, edges="open").tolist() == [2]
    # the span's first frame has only its inner neighbour: 1.0 < 2.0 is no peak
    assert local_peaks(x, 1, 3, edges="open").tolist() == [2]


def test_interior_edges_need_both_neighbours_in_the_span():
    x = np.array([5.0, 1.0, 2.0, 1.0, 3.0])
    assert local_peaks(x, 0, 5, edges="interior").tolist() == [2]
    assert local_peaks(x, 2, 4, edges="interior").tolist() == []  # fewer than 3 frames


def test_neighbours_edges_look_outside_the_span_and_minus_inf_beyond_the_curve():
    x = np.array([5.0, 1.0, 2.0, 1.0, 3.0])
    assert local_peaks(x, 2, 3, edges="neighbours").tolist() == [2]
    assert local_peaks(x, 1, 2, edges="neighbours").tolist() == []  # 1.0 is under both neighbours
    assert local_peaks(x, 0, 5, edges="neighbours").tolist() == [0, 2, 4]


@pytest.mark.parametrize(("strict_left", "strict_right", "expected"),
                         [(False, False, [1, 2]), (True, False, [1]), (False, True, [2]), (True, True, [])])
def test_plateaus_follow_the_strictness(strict_left, strict_right, expected):
    x = np.array([0.0, 1.0, 1.0, 0.0])
    assert local_peaks(x, 0, 4, edges="interior", strict_left=strict_left,
                       strict_right=strict_right).tolist() == expected


def test_min_value_and_nan():
    x = np.array([0.0, 1.0, 0.0, np.nan, 0.0, 3.0, 0.0])
    assert local_peaks(x, 0, 7, edges="interior", min_value=2.0).tolist() == [5]


def test_accent_earliest_latest_and_no_energy():
    onset = np.array([0, 0.1, 0.05, 1.0, 0.2, 2.0, 0.1])
    assert accent(onset, 0, 7, rel_height=0.3) == 3
    assert accent(onset, 0, 7, rel_height=0.3, last=True) == 5
    assert accent(onset, 0, 7, rel_height=0.6) == 5
    assert accent(np.zeros(5), 0, 5, rel_height=0.3) is None
    assert accent(onset, 4, 4, rel_height=0.3) is None


def test_strongest_apart_keeps_the_stronger_and_the_earlier_on_ties():
    x = np.array([0, 3, 0, 5, 0, 5, 0, 1])
    assert strongest_apart(x, [1, 3, 5, 7], separation=3) == [3, 7]
    assert strongest_apart(x, [1, 3, 5, 7], separation=2) == [1, 3, 5, 7]


def test_window_means_edge_modes():
    x = np.arange(6.0)
    pre, post = window_means(x, before=2, after=3, edges="nan")
    assert np.isnan(pre[:2]).all() and np.isnan(post[4:]).all()
    assert (pre[2], post[2]) == (0.5, 3.0)
    pre, post = window_means(x, before=2, after=3, edges="hold")
    assert (pre[0], post[5]) == (0.0, 5.0)  # the edge values, held
    pre, post = window_means(x, before=2, after=3, edges="clip")
    assert (pre[0], pre[1], post[5], post[4]) == (0.0, 0.0, 5.0, 4.5)  # cut at the ends; empty (pre[0]) reads 0.0
    with pytest.raises(ValueError, match="before, after >= 1"):
        window_means(x, before=0, after=1, edges="nan")


def test_moving_average_edges():
    x = np.array([0.0, 0.0, 3.0, 0.0, 0.0])
    np.testing.assert_allclose(moving_average(x, 3, edges="hold"), [0, 1, 1, 1, 0])
    np.testing.assert_allclose(moving_average(np.full(4, 2.0), 3, edges="hold"), 2.0)
    np.testing.assert_allclose(moving_average(np.full(4, 2.0), 3, edges="zero"), [4 / 3, 2, 2, 4 / 3])
    assert moving_average(x, 9, edges="zero") is not None and moving_average(x, 9, edges="zero").size == 5
    np.testing.assert_array_equal(moving_average(x, 1, edges="hold"), x)


# ----------------------------------------------------------------------------- oracles: the replaced code


def _old_snap_to_accent(onset, lo, hi, *, rel_height):
    lo, hi = max(lo, 0), min(hi, len(onset))
    if hi <= lo:
        return None
    seg = onset[lo:hi]
    top = float(seg.max())
    if top <= 0:
        return None
    left = np.concatenate(([-np.inf], seg[:-1]))
    right = np.concatenate((seg[1:], [-np.inf]))
    peaks = np.flatnonzero((seg >= left) & (seg >= right) & (seg >= rel_height * top))
    return int(peaks[0]) + lo if peaks.size else None


def _old_perc_last_accent(onset, lo, hi, rel):
    lo, hi = max(lo, 0), min(hi, len(onset))
    if hi - lo < 3:
        return None
    seg = onset[lo:hi]
    top = float(seg.max())
    if top <= 0:
        return None
    peaks = np.flatnonzero((seg[1:-1] >= seg[:-2]) & (seg[1:-1] >= seg[2:]) & (seg[1:-1] >= rel * top)) + 1
    return int(peaks[-1]) + lo if peaks.size else None


def _old_tonal_snap(onset, lo, hi, rel):
    lo, hi = max(lo, 1), min(hi, onset.size - 1)
    if hi <= lo:
        return None
    seg = onset[lo - 1 : hi + 1]
    mid = seg[1:-1]
    top = float(mid.max())
    if top <= 0:
        return None
    idx = np.flatnonzero((mid >= seg[:-2]) & (mid >= seg[2:]) & (mid >= rel * top))
    return int(idx[0]) + lo if idx.size else None


def _old_novelty_peaks(nov, lo, hi, thresh):
    lo, hi = max(lo, 1), min(hi, len(nov) - 1)
    if hi <= lo:
        return []
    seg = nov[lo - 1 : hi + 1]
    mid = seg[1:-1]
    idx = np.flatnonzero((mid > seg[:-2]) & (mid >= seg[2:]) & (mid >= thresh))
    return [int(i) + lo for i in idx]


def _old_stem_extrema(step, lo, hi, *, min_value, separation):
    lo, hi = max(lo, 1), min(hi, step.size - 1)
    if hi <= lo:
        return []
    seg = step[lo - 1 : hi + 1]
    mid = seg[1:-1]
    is_peak = (mid >= seg[:-2]) & (mid > seg[2:]) & (mid >= min_value)
    order = sorted((int(i) + lo for i in np.flatnonzero(is_peak)), key=lambda f: -step[f])
    kept = []
    for f in order:
        if all(abs(f - k) > separation for k in kept):
            kept.append(f)
    return sorted(kept)


def _old_mix_peaks(on, lo, hi):
    seg = on[lo - 1 : hi + 1]
    mid = seg[1:-1]
    return np.flatnonzero((mid >= seg[:-2]) & (mid >= seg[2:]) & (mid > 0)) + lo


def _old_energy_peaks(seg, start):
    mid = seg[1:-1]
    return np.flatnonzero((mid > seg[:-2]) & (mid >= seg[2:]) & np.isfinite(mid)) + 1 + start


def _old_level_step(x, *, before, after, gap=0):
    x = np.asarray(x, dtype=np.float64)
    n = x.size
    pad = before + after + 2 * gap
    c = np.concatenate(([0.0], np.cumsum(np.pad(x, (pad, pad), mode="edge"))))
    idx = np.arange(n) + pad
    return (c[idx + gap + after] - c[idx + gap]) / after - (c[idx - gap] - c[idx - gap - before]) / before


def _old_energy_window_means(x, before, after):
    v = np.asarray(x, dtype=np.float64)
    c = np.concatenate(([0.0], np.cumsum(v)))
    n = len(v)
    pre = np.full(n, np.nan)
    post = np.full(n, np.nan)
    idx = np.arange(before, n - after + 1)
    if idx.size:
        pre[idx] = (c[idx] - c[idx - before]) / before
        post[idx] = (c[idx + after] - c[idx]) / after
    return pre, post


def _old_presence_step_means(presence, sel, k):
    c = np.concatenate(([0.0], np.cumsum(presence)))
    lo = np.clip(sel - k, 0, presence.size)
    hi = np.clip(sel + k, 0, presence.size)
    return (c[sel] - c[lo]) / np.maximum(sel - lo, 1), (c[hi] - c[sel]) / np.maximum(hi - sel, 1)


def _old_tonal_step(lv, f, half):
    c = np.cumsum(np.concatenate(([0.0], lv)))
    return (c[f] - c[f - half]) / half, (c[f + half] - c[f]) / half


def _old_smoothed_db(x, frames):
    x = np.asarray(x, dtype=np.float64)
    if frames <= 1 or x.size == 0:
        return x
    k = np.ones(frames) / frames
    return np.convolve(np.pad(x, (frames // 2, frames - 1 - frames // 2), mode="edge"), k, mode="valid")


def _curves(rng, n=60, dtype=np.float64):
    """Random curves with plateaus and exact ties (values on a coarse grid)."""
    for _ in range(40):
        yield (rng.integers(0, 6, size=n) / 4.0).astype(dtype)
        yield rng.standard_normal(n).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_replacements_match_the_old_peak_pickers(rng, dtype):
    from timingbench.detectors.stem import _local_extrema
    from timingbench.detectors.tonal import _novelty_peaks, _snap_onset

    for x in _curves(rng, dtype=dtype):
        n = x.size
        for lo, hi in [(0, n), (3, 17), (-2, 9), (50, n + 5), (5, 5), (1, n - 1), (n - 3, n)]:
            assert accent(x, lo, hi, rel_height=0.4) == _old_snap_to_accent(x, lo, hi, rel_height=0.4)
            assert accent(x, lo, hi, rel_height=0.4, edges="interior", last=True) == \
                _old_perc_last_accent(x, lo, hi, 0.4)
            assert _snap_onset(x, lo, hi, 0.4) == _old_tonal_snap(x, lo, hi, 0.4)
            assert _novelty_peaks(x, lo, hi, 0.2) == _old_novelty_peaks(x, lo, hi, 0.2)
            assert _local_extrema(x, lo, hi, min_value=0.1, separation=3) == \
                _old_stem_extrema(x, lo, hi, min_value=0.1, separation=3)
            a, b = max(lo, 1), min(hi, n - 1)
            if b - a >= 3:
                got = local_peaks(x, a, b, edges="neighbours")
                np.testing.assert_array_equal(got[x[got] > 0], _old_mix_peaks(x, a, b))
            span = slice(max(lo, 0), max(max(lo, 0), min(hi, n)))
            seg = x[span]
            got = local_peaks(x, span.start, span.stop, edges="interior", strict_left=True)
            np.testing.assert_array_equal(got[np.isfinite(x[got])], _old_energy_peaks(seg, span.start))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_replacements_match_the_old_window_means_and_moving_average(rng, dtype):
    from timingbench.detectors.energy import window_means as energy_window_means
    from timingbench.detectors.stem import level_step, smoothed_db

    for x in _curves(rng, dtype=dtype):
        for before, after, gap in [(1, 1, 0), (5, 4, 1), (9, 7, 2), (70, 3, 0)]:
            np.testing.assert_array_equal(level_step(x, before=before, after=after, gap=gap),
                                          _old_level_step(x, before=before, after=after, gap=gap))
            np.testing.assert_array_equal(np.stack(energy_window_means(x, before, after)),
                                          np.stack(_old_energy_window_means(x, before, after)))
        sel = np.arange(0, x.size, 3)
        for k in (1, 4, 100):
            np.testing.assert_array_equal(np.stack(window_means(x, before=k, after=k, edges="clip", at=sel)),
                                          np.stack(_old_presence_step_means(x, sel, k)))
        half = 4
        f = np.arange(half, x.size - half)
        np.testing.assert_array_equal(
            np.stack(window_means(np.asarray(x, dtype=np.float64), before=half, after=half, edges="nan", at=f)),
            np.stack(_old_tonal_step(x, f, half)))
        for k in (1, 2, 5, 8, 100):
            np.testing.assert_array_equal(smoothed_db(x, k), _old_smoothed_db(x, k))
            lift = np.asarray(x, dtype=np.float64)
            old = np.convolve(lift, np.ones(k) / k, mode="same") if lift.size >= k else lift
            np.testing.assert_array_equal(moving_average(lift, k, edges="zero"), old)

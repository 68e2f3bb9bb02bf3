"""Numba kernels against their plain numpy references, plus validation errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from timingbench.errors import ParameterError
from timingbench.features import kernels as k
from timingbench.features import kernels_reference as kr


@pytest.mark.parametrize("shape", [(3, 1), (4, 7), (5, 200), (2, 31)])
@pytest.mark.parametrize("size", [1, 3, 31])
@pytest.mark.parametrize("axis", [0, 1])
def test_running_median_equals_reference(rng: np.random.Generator, shape: tuple[int, int], size: int,
                                         axis: int) -> None:
    x = rng.standard_normal(shape).astype(np.float32)
    got = k.running_median(x, size=size, axis=axis)
    ref = kr.running_median_reference(x, size=size, axis=axis)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("size", [1, 3, 31])
def test_running_median_equals_scipy_median_filter(rng: np.random.Generator, size: int) -> None:
    x = rng.standard_normal((6, 120)).astype(np.float32)
    for axis in (0, 1):
        if x.shape[axis] >= size // 2:
            np.testing.assert_array_equal(k.running_median(x, size=size, axis=axis),
                                          kr.running_median_scipy(x, size=size, axis=axis))


def test_running_median_with_ties_and_1d(rng: np.random.Generator) -> None:
    x = rng.integers(0, 4, size=300).astype(np.float64)  # many equal values
    np.testing.assert_array_equal(k.running_median(x, size=7), kr.running_median_reference(x, size=7))


@pytest.mark.parametrize("shape", [(64, 50), (65, 50), (200, 129), (1025, 40)])
@pytest.mark.parametrize("axis", [0, 1])
def test_running_median_across_lane_blocks(rng: np.random.Generator, shape: tuple[int, int], axis: int) -> None:
    # lines are updated in blocks of 64; full and partial blocks, ties and zeros
    x = rng.integers(0, 6, size=shape).astype(np.float32) * np.float32(0.25)
    x[:, ::7] = 0.0
    np.testing.assert_array_equal(k.running_median(x, size=31, axis=axis),
                                  kr.running_median_reference(x, size=31, axis=axis))


def test_running_median_float64_line_shorter_than_window(rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 9))
    got = k.running_median(x, size=31, axis=1)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, kr.running_median_reference(x, size=31, axis=1))


@pytest.mark.parametrize("size", [0, 2, 4, -1])
def test_running_median_rejects_bad_size(size: int) -> None:
    with pytest.raises(ParameterError, match="size"):
        k.running_median(np.zeros(10), size=size)


def test_running_median_rejects_nan() -> None:
    with pytest.raises(ParameterError, match="NaN"):
        k.running_median(np.array([1.0, np.nan, 2.0]), size=3)


def test_hpss_power_equals_librosa(rng: np.random.Generator) -> None:
    mag = np.abs(rng.standard_normal((120, 90))).astype(np.float32)
    mag[:, 40:45] = 0.0  # columns where both medians vanish
    h, p = k.hpss_power(mag, kernel_frames=31, kernel_bins=31, power=2.0)
    hr, pr = kr.hpss_power_reference(mag, kernel_frames=31, kernel_bins=31, power=2.0)
    np.testing.assert_allclose(h, hr, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(p, pr, rtol=1e-5, atol=1e-7)


def test_hpss_separates_tone_from_clicks() -> None:
    mag = np.full((101, 200), 1e-3, dtype=np.float32)
    mag[20, :] = 1.0  # a steady tone: horizontal line
    mag[:, 100] = 1.0  # a click: vertical line
    h, p = k.hpss_power(mag, kernel_frames=31, kernel_bins=31, power=2.0)
    assert h[20, 50] > 100 * p[20, 50]
    assert p[70, 100] > 100 * h[70, 100]


def test_hpss_rejects_negative() -> None:
    with pytest.raises(ParameterError, match="non-negative"):
        k.hpss_power(-np.ones((5, 5)), kernel_frames=3, kernel_bins=3, power=2.0)


def test_hpss_rejects_non_finite_and_even_kernel() -> None:
    mag = np.ones((8, 8))
    mag[3, 3] = np.inf
    with pytest.raises(ParameterError, match="NaN or inf"):
        k.hpss_power(mag, kernel_frames=3, kernel_bins=3, power=2.0)
    with pytest.raises(ParameterError, match="kernel_bins"):
        k.hpss_power(np.ones((8, 8)), kernel_frames=3, kernel_bins=4, power=2.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n_out", [1, 4])
def test_weighted_row_sums_equals_matmul(rng: np.random.Generator, dtype: type, n_out: int) -> None:
    x: np.ndarray = np.abs(rng.standard_normal((130, 77))).astype(dtype)
    w = rng.standard_normal((n_out, 130))
    w[:, 40:90] = 0.0  # skipped rows
    got = k.weighted_row_sums(x, weights=w)
    assert x.dtype == dtype and got.dtype == np.float64 and got.shape == (n_out, 77)
    np.testing.assert_allclose(got, kr.weighted_row_sums_reference(x, weights=w), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(k.weighted_row_sums(x, weights=w[0]), kr.weighted_row_sums_reference(x, weights=w[0]),
                               rtol=1e-12, atol=1e-12)


def test_weighted_row_sums_rejects_mismatched_shape() -> None:
    with pytest.raises(ParameterError, match="do not project"):
        k.weighted_row_sums(np.ones((5, 3)), weights=np.ones(4))


@pytest.mark.parametrize("half", [1, 5, 40])
def test_checkerboard_novelty_equals_full_ssm(rng: np.random.Generator, half: int) -> None:
    x = rng.standard_normal((12, 150))
    x[:, 60:70] = 0.0  # silent frames have zero similarity
    got = k.checkerboard_novelty(x, half_frames=half, sigma_frac=0.5)
    ref = kr.checkerboard_novelty_reference(x, half_frames=half, sigma_frac=0.5)
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-9)


def test_checkerboard_novelty_peaks_at_segment_boundary(rng: np.random.Generator) -> None:
    a = rng.standard_normal(6)
    b = rng.standard_normal(6)
    x = np.concatenate([np.tile(a[:, None], (1, 100)), np.tile(b[:, None], (1, 100))], axis=1)
    x += 0.01 * rng.standard_normal(x.shape)
    nov = k.checkerboard_novelty(x, half_frames=20, sigma_frac=0.5)
    # the kernel centre sits between lags -1 and 0: the boundary frame is 100
    assert abs(int(np.argmax(nov[30:170])) + 30 - 100) <= 1


def test_checkerboard_taper_is_antisymmetric() -> None:
    u = k.checkerboard_taper(half_frames=8, sigma_frac=0.5)
    np.testing.assert_allclose(u[:8], -u[8:][::-1])
    with pytest.raises(ParameterError, match="sigma_frac"):
        k.checkerboard_taper(half_frames=8, sigma_frac=0.0)


@pytest.mark.parametrize("window", [1, 10, 86, 500])
@pytest.mark.parametrize("floor", [-1.0, 0.0, 0.5])
def test_rectified_onset_density_equals_convolution(rng: np.random.Generator, window: int, floor: float) -> None:
    x = np.abs(rng.standard_normal(400)) * 2.0
    np.testing.assert_allclose(
        k.rectified_onset_density(x, window_frames=window, floor=floor),
        kr.rectified_onset_density_reference(x, window_frames=window, floor=floor),
        atol=1e-12,
    )


def test_rectified_onset_density_known_train() -> None:
    onset = np.zeros(100)
    onset[[20, 30, 40]] = 2.0
    d = k.rectified_onset_density(onset, window_frames=10, floor=1.0)
    assert d[19] == 0.0 and d[20] == pytest.approx(0.1)
    assert d[49] == pytest.approx(0.1) and d[50] == 0.0  # falls one window after the last hit


def test_density_rejects_bad_window() -> None:
    with pytest.raises(ParameterError, match="window_frames"):
        k.rectified_onset_density(np.zeros(5), window_frames=0, floor=0.0)


def test_hysteresis_known_answer() -> None:
    x = np.array([0, 5, 11, 7, 6, 4, 6, 12, 3], dtype=float)
    m = k.hysteresis(x, high=10, low=5)
    np.testing.assert_array_equal(m, [0, 0, 1, 1, 1, 0, 0, 1, 0])


def test_hysteresis_edges_are_inclusive() -> None:
    # switch on exactly at high, stay on exactly at low
    np.testing.assert_array_equal(k.hysteresis(np.array([10.0, 5.0, 4.999]), high=10, low=5), [1, 1, 0])


def test_hysteresis_rejects_inverted_thresholds() -> None:
    with pytest.raises(ParameterError, match="low <= high"):
        k.hysteresis(np.zeros(3), high=1.0, low=2.0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-20, 20, allow_nan=False), max_size=60), st.floats(-10, 10), st.floats(0, 10))
def test_hysteresis_matches_reference(values: list[float], high: float, gap: float) -> None:
    x = np.array(values, dtype=float)
    np.testing.assert_array_equal(k.hysteresis(x, high=high, low=high - gap),
                                  kr.hysteresis_reference(x, high=high, low=high - gap))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.booleans(), max_size=80))
def test_run_lengths_matches_reference(values: list[bool]) -> None:
    m = np.array(values, dtype=bool)
    got = k.run_lengths(m)
    ref = kr.run_lengths_reference(m)
    for a, b in zip(got, ref, strict=True):
        np.testing.assert_array_equal(a, b)
    assert int(got[1].sum()) == m.size
    if m.size:
        assert not np.any(got[2][1:] == got[2][:-1])  # runs alternate


def test_run_lengths_known_answer() -> None:
    starts, lengths, values = k.run_lengths(np.array([1, 1, 0, 0, 0, 1]))
    np.testing.assert_array_equal(starts, [0, 2, 5])
    np.testing.assert_array_equal(lengths, [2, 3, 1])
    np.testing.assert_array_equal(values, [True, False, True])


def test_run_lengths_rejects_non_boolean() -> None:
    with pytest.raises(ParameterError, match="boolean"):
        k.run_lengths(np.array([0, 2, 1]))

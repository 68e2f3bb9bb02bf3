"""Tests of the interval core: hand-worked examples, edges, properties, batch agreement."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from timingbench.errors import ParameterError
from timingbench.intervals import (
    count_diagnostics,
    generalized_iou,
    generalized_iou_batch,
    interval_iou,
    iou_matrix,
    match_greedy,
    match_greedy_batch,
    match_optimal,
    merge_intervals,
    midpoint_errors,
    midpoint_mae_batch,
    total_length,
    union_iou,
    union_iou_batch,
    validate_intervals,
)

# ----------------------------------------------------------------------------- strategies

_times = st.integers(min_value=0, max_value=2000).map(lambda k: k / 20.0)


@st.composite
def _interval(draw: st.DrawFn, *, positive: bool = False) -> list[float]:
    a = draw(_times)
    b = draw(_times)
    lo, hi = min(a, b), max(a, b)
    if positive and hi == lo:
        hi = lo + 0.05
    return [lo, hi]


def _sets(*, min_size: int = 0, positive: bool = False) -> st.SearchStrategy[list[list[float]]]:
    return st.lists(_interval(positive=positive), min_size=min_size, max_size=6)


# ----------------------------------------------------------------------------- validation


def test_validate_empty_gives_n_by_2() -> None:
    assert validate_intervals([]).shape == (0, 2)
    assert validate_intervals(np.zeros((0, 2))).dtype == np.float64


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ([[0.0, 1.0], [3.0, 2.0]], r"interval 1 .*\(start > end\)"),
        ([[0.0, 1.0], [1.0, float("nan")]], r"interval 1 .* non-finite"),
        ([[float("inf"), 1.0]], r"interval 0 .* non-finite"),
        ([1.0, 2.0, 3.0], r"shape \(n, 2\)"),
        ([[1.0, 2.0, 3.0]], r"shape \(n, 2\)"),
        ([["a", "b"]], r"numbers in seconds"),
    ],
)
def test_validate_rejects_with_index(bad: list, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        validate_intervals(bad, name="ref")


def test_validate_names_the_argument() -> None:
    with pytest.raises(ParameterError, match="^row 7: "):
        validate_intervals([[2.0, 1.0]], name="row 7")


# ----------------------------------------------------------------------------- hand-worked


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ([0, 10], [5, 15], 5 / 15),
        ([0, 10], [0, 10], 1.0),
        ([0, 10], [2, 4], 0.2),
        ([0, 1], [1, 2], 0.0),  # touching: no overlap
        ([0, 1], [3, 4], 0.0),
        ([2, 2], [2, 2], 0.0),  # points have no extent
        ([0, 4], [2, 2], 0.0),
    ],
)
def test_interval_iou_hand_worked(a: list, b: list, expected: float) -> None:
    np.testing.assert_allclose(interval_iou(a, b), expected, atol=1e-12)
    np.testing.assert_allclose(interval_iou(b, a), expected, atol=1e-12)


@pytest.mark.parametrize(
    ("ref", "est", "iou", "giou"),
    [
        # one-to-many: a prediction covering one of two occurrences gets half
        ([[0, 2], [10, 12]], [[0, 2]], 0.5, 0.5 - (12 - 4) / 12),
        # a long prediction covering both occurrences: 4 / 12
        ([[0, 2], [10, 12]], [[0, 12]], 4 / 12, 4 / 12),
        # disjoint, 2 s apart: IoU 0, gIoU = -(gap / hull)
        ([[0, 1]], [[3, 4]], 0.0, -2 / 4),
        # empty-prediction sentinel 0s~0s
        ([[5, 6]], [[0, 0]], 0.0, -1.0),
        ([[5, 6]], [], 0.0, -1.0),
        ([], [[5, 6]], 0.0, -1.0),
        # both empty: nothing asked, nothing given
        ([], [], 1.0, 1.0),
        ([[0, 0]], [], 1.0, 1.0),
        # overlapping references count once
        ([[0, 4], [2, 6]], [[0, 6]], 1.0, 1.0),
    ],
)
def test_union_and_generalized_iou_hand_worked(
    ref: list, est: list, iou: float, giou: float
) -> None:
    np.testing.assert_allclose(union_iou(ref, est), iou, atol=1e-12)
    np.testing.assert_allclose(generalized_iou(ref, est), giou, atol=1e-12)


def test_merge_hand_worked() -> None:
    got = merge_intervals([[5, 6], [0, 1], [1, 2], [0.5, 0.7], [8, 8], [3, 4], [3.5, 5]])
    np.testing.assert_array_equal(got, [[0, 2], [3, 6], [8, 8]])
    assert total_length([[0, 1], [0.5, 2], [4, 4]]) == 2.0


def test_merge_touching_after_rounding() -> None:
    # 0.1 + 0.2 != 0.3 in binary; rounding to microseconds makes them touch
    got = merge_intervals([[0.0, 0.1 + 0.2], [0.3, 1.0]])
    np.testing.assert_array_equal(got, [[0.0, 1.0]])


def test_midpoint_errors_hand_worked() -> None:
    err = midpoint_errors([[0, 2], [10, 12], [20, 20]], [[0, 4], [9, 11]])
    np.testing.assert_allclose(err, [1.0, 1.0, 10.0], atol=1e-12)
    assert midpoint_errors([[0, 1]], []).shape == (0,)
    assert midpoint_errors([], [[0, 1]]).shape == (0,)


@pytest.mark.parametrize(
    ("n_ref", "n_est", "expected"),
    [(1, 1, "exact"), (4, 1, "under"), (4, 0, "under"), (1, 3, "over"), (0, 0, "exact")],
)
def test_count_diagnostics(n_ref: int, n_est: int, expected: str) -> None:
    assert count_diagnostics(n_ref, n_est) == expected


@pytest.mark.parametrize("bad", [-1, 1.5, True])
def test_count_diagnostics_rejects(bad: object) -> None:
    with pytest.raises(ParameterError, match="non-negative whole number"):
        count_diagnostics(bad, 1)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- edges


@pytest.mark.parametrize("threshold", [0.5, 0.3, 0.7])
def test_match_exactly_on_threshold_edge(threshold: float) -> None:
    # est = [0, t] inside ref = [0, 1] has IoU exactly t on paper; float division may land
    # just below it, rounding makes it match
    ref = [[0.0, 1.0]]
    est = [[0.0, threshold]]
    assert match_greedy(ref, est, iou_threshold=threshold) == [(0, 0)]
    assert match_optimal(ref, est, iou_threshold=threshold) == [(0, 0)]
    # one microsecond less overlap falls below the threshold
    est_short = [[0.0, threshold - 1e-6]]
    assert match_greedy(ref, est_short, iou_threshold=threshold) == []


def test_touching_intervals_do_not_match() -> None:
    assert match_greedy([[0, 1]], [[1, 2]], iou_threshold=0.01) == []
    assert union_iou([[0, 1]], [[1, 2]]) == 0.0
    # touching intervals merge into one union
    np.testing.assert_allclose(union_iou([[0, 1], [1, 2]], [[0, 2]]), 1.0)


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5, float("nan")])
def test_threshold_validated(bad: float) -> None:
    with pytest.raises(ParameterError, match="iou_threshold"):
        match_greedy([[0, 1]], [[0, 1]], iou_threshold=bad)


def test_greedy_differs_from_optimal_where_expected() -> None:
    # ref0 overlaps est0 best, but est0 is ref1's only partner: greedy takes (0, 0) and
    # leaves ref1 unmatched; the optimal matching pairs both
    ref = [[0.0, 10.0], [6.0, 16.0]]
    est = [[1.0, 11.0], [-4.0, 6.0]]
    greedy = match_greedy(ref, est, iou_threshold=0.3)
    optimal = match_optimal(ref, est, iou_threshold=0.3)
    assert greedy == [(0, 0)]
    assert sorted(optimal) == [(0, 1), (1, 0)]


# ----------------------------------------------------------------------------- properties


@settings(max_examples=150, deadline=None)
@given(a=_interval(), b=_interval())
def test_pairwise_iou_symmetric_and_bounded(a: list, b: list) -> None:
    v = interval_iou(a, b)
    assert 0.0 <= v <= 1.0
    assert v == interval_iou(b, a)


@settings(max_examples=150, deadline=None)
@given(ref=_sets(), est=_sets())
def test_union_iou_symmetric_bounded_giou_below(ref: list, est: list) -> None:
    u = union_iou(ref, est)
    g = generalized_iou(ref, est)
    assert 0.0 <= u <= 1.0
    assert -1.0 <= g <= u + 1e-12
    assert u == union_iou(est, ref)
    np.testing.assert_allclose(g, generalized_iou(est, ref), atol=1e-12)


@settings(max_examples=150, deadline=None)
@given(s=_sets())
def test_union_iou_with_itself_is_one(s: list) -> None:
    assert union_iou(s, s) == 1.0
    # gIoU encloses the union in one hull, so a set with gaps scores |U| / |hull|
    m = merge_intervals(s)
    pos = m[m[:, 1] > m[:, 0]]
    expected = 1.0 if pos.size == 0 else total_length(s) / (pos[-1, 1] - pos[0, 0])
    np.testing.assert_allclose(generalized_iou(s, s), expected, atol=1e-12)


@settings(max_examples=150, deadline=None)
@given(s=_sets(), perm_seed=st.integers(0, 1000))
def test_merge_idempotent_and_order_invariant(s: list, perm_seed: int) -> None:
    m = merge_intervals(s)
    np.testing.assert_array_equal(merge_intervals(m), m)
    perm = np.random.default_rng(perm_seed).permutation(len(s))
    shuffled = [s[i] for i in perm]
    np.testing.assert_array_equal(merge_intervals(shuffled), m)
    if m.shape[0] > 1:
        assert np.all(m[1:, 0] > m[:-1, 1])


@settings(max_examples=100, deadline=None)
@given(ref=_sets(), est=_sets(), perm_seed=st.integers(0, 1000))
def test_set_measures_order_invariant(ref: list, est: list, perm_seed: int) -> None:
    g = np.random.default_rng(perm_seed)
    ref2 = [ref[i] for i in g.permutation(len(ref))]
    est2 = [est[i] for i in g.permutation(len(est))]
    assert union_iou(ref, est) == union_iou(ref2, est2)
    assert generalized_iou(ref, est) == generalized_iou(ref2, est2)


@settings(max_examples=100, deadline=None)
@given(
    ref=_sets(positive=True),
    est=_sets(positive=True),
    t=st.sampled_from([0.1, 0.3, 0.5, 0.7, 1.0]),
)
def test_matchings_are_one_to_one_above_threshold(ref: list, est: list, t: float) -> None:
    m = np.round(iou_matrix(ref, est), 6)
    for matcher in (match_greedy, match_optimal):
        pairs = matcher(ref, est, iou_threshold=t)
        assert len({i for i, _ in pairs}) == len(pairs) == len({j for _, j in pairs})
        assert all(m[i, j] >= t for i, j in pairs)
    assert len(match_optimal(ref, est, iou_threshold=t)) >= len(
        match_greedy(ref, est, iou_threshold=t)
    )


# ----------------------------------------------------------------------------- batch == single


def _random_batch(
    rng: np.random.Generator, q: int
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    refs, ests = [], []
    for _ in range(q):
        out = []
        for n in (rng.integers(0, 5), rng.integers(0, 5)):
            s = np.round(rng.uniform(0, 60, n), 2)
            d = np.round(rng.uniform(0, 8, n), 2) * (rng.random(n) > 0.1)
            out.append(np.stack([s, s + d], axis=1) if n else np.zeros((0, 2)))
        refs.append(out[0])
        ests.append(out[1])
    return refs, ests


def _flat(sets: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    off = np.concatenate([[0], np.cumsum([len(s) for s in sets])]).astype(np.int64)
    return np.concatenate(sets) if sets else np.zeros((0, 2)), off


def test_batch_agrees_with_single(rng: np.random.Generator) -> None:
    refs, ests = _random_batch(rng, 400)
    r, ro = _flat(refs)
    e, eo = _flat(ests)
    iou = union_iou_batch(r, ro, e, eo)
    giou = generalized_iou_batch(r, ro, e, eo)
    mae = midpoint_mae_batch(r, ro, e, eo)
    pairs = match_greedy_batch(r, ro, e, eo, iou_threshold=0.3)
    for k, (a, b) in enumerate(zip(refs, ests, strict=True)):
        np.testing.assert_allclose(iou[k], union_iou(a, b), atol=1e-12)
        np.testing.assert_allclose(giou[k], generalized_iou(a, b), atol=1e-12)
        err = midpoint_errors(a, b)
        if err.size:
            np.testing.assert_allclose(mae[k], err.mean(), atol=1e-9)
        else:
            assert np.isnan(mae[k])
        got = [(int(i), int(j)) for _, i, j in pairs[pairs[:, 0] == k]]
        assert got == match_greedy(a, b, iou_threshold=0.3)


def test_batch_rejects_mismatched_offsets() -> None:
    with pytest.raises(ParameterError, match="different numbers of sets"):
        union_iou_batch([[0, 1]], [0, 1], [[0, 1]], [0, 0, 1])
    with pytest.raises(ParameterError, match="offsets decrease at index 2"):
        union_iou_batch([[0, 1], [1, 2]], [0, 2, 1, 2], [], [0, 0, 0, 0])

"""The tagger's family curves: presence per column, entered/left from side medians, the non-music veto."""

from __future__ import annotations

import numpy as np
import pytest

from timingbench.errors import ParameterError
from timingbench.identity.presence_curves import (
    change_curves,
    frame_presence,
    group_presence,
    side_medians,
    sigmoid,
    window_percentiles,
)

LABELS = ("Speech", "Singing", "Choir", "Piano", "Drum kit")
STRIDE = 0.32


def _columns(n: int) -> np.ndarray:
    return (np.arange(n) + 0.5) * STRIDE


def test_group_presence_is_the_largest_class_logit() -> None:
    z = np.full((5, 4), -6.0)
    z[1, 2] = 1.0   # Singing
    z[2, 2] = 3.0   # Choir, larger
    z[3, 0] = 2.0   # Piano
    p = group_presence(z, LABELS, {"vocals": ["Singing", "Choir"], "piano": ["Piano"]})
    np.testing.assert_allclose(p["vocals"], sigmoid([-6.0, -6.0, 3.0, -6.0]))
    np.testing.assert_allclose(p["piano"], sigmoid([2.0, -6.0, -6.0, -6.0]))


def test_group_presence_names_an_unknown_class() -> None:
    with pytest.raises(ParameterError, match="families.piano.*Grand piano"):
        group_presence(np.zeros((5, 3)), LABELS, {"piano": ["Grand piano"]})
    with pytest.raises(ParameterError, match="shape"):
        group_presence(np.zeros((4, 3)), LABELS, {"piano": ["Piano"]})


def test_side_medians_read_the_columns_on_each_side() -> None:
    ct = _columns(40)   # 12.8 s
    v = np.where(ct < 6.0, 0.1, 0.9)[None]
    before, after = side_medians(v, ct, np.array([6.0, 1.0, 12.7]), context_s=3.0, guard_s=0.25)
    assert before[0, 0] == pytest.approx(0.1) and after[0, 0] == pytest.approx(0.9)
    assert before[0, 1] == pytest.approx(0.1)          # only the columns that exist before 0.75 s
    assert np.isnan(after[0, 2])                        # nothing after the last column


def test_entered_peaks_at_the_entrance_and_left_at_the_exit() -> None:
    ct = _columns(75)   # 24 s
    piano = np.where((ct >= 8.0) & (ct < 16.0), 0.9, 0.01)
    ft = np.arange(0, 24, 0.05)
    ent, left = change_curves({"piano": piano}, ct, ft, context_s=3.0, guard_s=0.25, prob_clip=0.01, rise_mid=2.0)
    for curve, true_s in ((ent["piano"], 8.0), (left["piano"], 16.0)):
        # medians make a plateau about the change (the after side turns once half of it has changed):
        # its centre is the change
        top = ft[curve >= 0.9 * curve.max()]
        assert abs(0.5 * (top.min() + top.max()) - true_s) <= STRIDE
    assert ent["piano"].max() > 0.9 and left["piano"].max() > 0.9
    assert ent["piano"][np.abs(ft - 12.0) < 0.5].max() < 0.2   # steady presence is no change
    assert np.all(ent["piano"][ft < 0.2] == 0.0)                # no column before: no evidence


def test_speech_rising_with_the_voice_is_not_singing() -> None:
    ct = _columns(60)
    voice = np.where(ct >= 9.0, 0.6, 0.01)
    ft = np.array([9.0])
    common = dict(context_s=3.0, guard_s=0.25, prob_clip=0.01, rise_mid=2.0)
    sung, _ = change_curves({"vocals": voice}, ct, ft, nonmusic=np.full(ct.size, 0.02), **common)
    spoken, _ = change_curves({"vocals": voice}, ct, ft, nonmusic=np.where(ct >= 9.0, 0.95, 0.02), **common)
    assert sung["vocals"][0] > 0.9
    assert spoken["vocals"][0] < 0.1


def test_frame_presence_interpolates_and_holds_the_ends() -> None:
    ct = np.array([0.16, 0.48, 0.80])
    p = frame_presence({"a": np.array([0.0, 1.0, 0.0])}, ct, np.array([0.0, 0.32, 0.48, 2.0]))
    np.testing.assert_allclose(p["a"], [0.0, 0.5, 1.0, 0.0])
    assert frame_presence({"a": np.zeros(0)}, np.zeros(0), np.arange(3.0))["a"].shape == (3,)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("percentile", [50.0, 10.0, 90.0])
def test_window_percentiles_equal_one_call_per_window(seed: int, percentile: float) -> None:
    rng = np.random.default_rng(seed)
    v = rng.random((int(rng.integers(1, 14)), int(rng.integers(1, 120))))
    n = v.shape[1]
    lo = rng.integers(0, n + 1, size=200)
    hi = np.minimum(lo + rng.integers(-2, 12, size=200), n)
    got = window_percentiles(v, lo, hi, percentile=percentile)
    for k, (a, b) in enumerate(zip(lo, hi, strict=True)):  # the oracle: numpy on each window alone
        want = np.percentile(v[:, a:b], percentile, axis=1) if b > a else np.full(v.shape[0], np.nan)
        np.testing.assert_array_equal(got[:, k], want)

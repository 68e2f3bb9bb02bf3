"""Tests of frames <-> seconds conversion."""

from __future__ import annotations

import numpy as np
import pytest

from timingbench.convert import (
    frames_to_time,
    round_time,
    seconds_to_frame_count,
    time_to_frames,
)
from timingbench.errors import ParameterError


def test_round_trip_on_grid(rng):
    frames = rng.integers(0, 10_000, size=500)
    t = frames_to_time(frames, sr=44100, hop=512)
    np.testing.assert_array_equal(time_to_frames(t, sr=44100, hop=512), frames)


def test_hop_512_is_about_11_6_ms():
    assert frames_to_time([1], sr=44100, hop=512)[0] == pytest.approx(0.011609977, abs=1e-9)


def test_nearest_frame():
    hop_s = 512 / 44100
    assert time_to_frames([0.4 * hop_s, 0.6 * hop_s], sr=44100, hop=512).tolist() == [0, 1]


@pytest.mark.parametrize("bad", [dict(sr=0, hop=512), dict(sr=44100, hop=0), dict(sr=44100, hop=1.5)])
def test_bad_grid(bad):
    with pytest.raises(ParameterError):
        frames_to_time([1], **bad)


def test_non_finite_times():
    with pytest.raises(ParameterError, match="seconds"):
        time_to_frames([np.nan], sr=44100, hop=512)


def test_frame_count_and_samples():
    assert seconds_to_frame_count(1.0, sr=44100, hop=512) == 86
    assert seconds_to_frame_count(0.0, sr=44100, hop=512) == 1
    assert round_time(0.1 + 0.2) == 0.3

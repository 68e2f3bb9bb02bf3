"""The presence fit: thresholds from stored statistics, negatives never credited, the judging bar."""

from __future__ import annotations

from timingbench.calibration.presence_fit import EventStat, best_threshold, counts, fit


def _ev(role: str, size: float | None, *, family: str = "vocals", kind: str = "entry", err: float = 0.0,
        n: int = 0) -> EventStat:
    truth = {"on_time": 6.0, "off_time": 8.5, "negative": None}[role]
    t = None if size is None else (6.0 if truth is None else truth) + err
    return EventStat("dev", f"c{n}", f"c{n}/e1", family, kind, role, 6.0, 0.5, truth, t, size)


def test_threshold_sits_above_every_negative_and_keeps_the_positives_above_it() -> None:
    stats = [_ev("on_time", s, n=i) for i, s in enumerate([3.0, 2.5, 2.2, 0.8])] + \
        [_ev("negative", s, n=10 + i) for i, s in enumerate([1.5, 0.9])]
    m = best_threshold(stats, max_negative_rate=0.0, offset_match_s=0.25, floor=0.5)
    assert 1.5 < m <= 2.2
    c = counts(stats, m, offset_match_s=0.25)
    assert (c["on_time_credited"], c["n_on_time"], c["negative_credited"]) == (3, 4, 0)


def test_a_credit_far_from_the_truth_is_not_counted_on_time() -> None:
    c = counts([_ev("on_time", 3.0, err=0.4), _ev("off_time", 3.0, err=0.1, n=1)], 1.0, offset_match_s=0.25)
    assert c["on_time_credited"] == 1  # within tolerance of the instruction and of the truth
    assert c["off_time_located"] == 1
    far = counts([_ev("off_time", 3.0, err=0.6)], 1.0, offset_match_s=0.25)
    assert far["off_time_located"] == 0


def test_judging_needs_enough_on_time_events_and_no_negative() -> None:
    good = [_ev("on_time", 3.0, n=i) for i in range(8)] + [_ev("negative", 0.2, n=20)]
    few = [_ev("on_time", 3.0, family="keys", n=i) for i in range(5)]
    rep = fit(good + few, ["vocals", "keys"], max_negative_rate=0.0, offset_match_s=0.25, floor=0.5,
              judge_min_on_time=0.8, judge_min_events=8)
    assert rep["families"]["vocals"]["judged"] is True
    assert rep["families"]["keys"]["judged"] is False
    assert rep["families"]["keys"]["reason"] == "dev_on_time_events_below_8"

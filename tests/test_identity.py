"""The identity rules of the trained evidence (timingbench.identity.rules): summary spans, the rise rule, edges,
candidates."""

from __future__ import annotations

import numpy as np
import pytest

from timingbench.config import Config
from timingbench.curves import Grid
from timingbench.errors import ConfigError
from timingbench.identity.evidence import FamilyEvidence
from timingbench.identity.rules import (
    IdentityParams,
    change_peaks,
    presence_absence,
    presence_persistence,
    side_levels,
    summarised,
    trained_candidates,
)
from timingbench.verdicts import EventContext

HOP = 0.0464
N = 500  # 23.2 s


def _ev(presence: np.ndarray, entered: np.ndarray | None = None, left: np.ndarray | None = None,
        family: str = "percussion") -> FamilyEvidence:
    z = np.zeros(presence.size)
    return FamilyEvidence(times=np.arange(presence.size) * HOP, curves={family: presence}, backend="trained",
                          exempt={}, window_s=HOP, entered={family: z if entered is None else entered},
                          left={family: z if left is None else left})


def _hits(t: np.ndarray, start_s: float, period_s: float = 0.5) -> np.ndarray:
    """Drum-like presence: 0.95 for a frame or two at each hit, 0.1 between hits, 0.02 before ``start_s``."""
    on = (t >= start_s) & (((t - start_s) % period_s) < 0.1)
    return np.where(t < start_s, 0.02, np.where(on, 0.95, 0.1))


def _ctx(kind: str, family: str, t: float) -> EventContext:
    return EventContext(kind=kind, family=family, target=family, instructed_s=t, window_lo_s=t - 5.0,
                        window_hi_s=t + 5.0)


@pytest.mark.parametrize("rule", ["rise", "absolute"])
def test_drum_presence_is_summarised_between_hits(config: Config, rule: str) -> None:
    config = config.with_value("evidence.decision_rule", rule).with_value("evidence.min_logit_rise", 1.0) \
        .with_value("evidence.present_prob", 0.5)
    t = np.arange(N) * HOP
    ev = _ev(_hits(t, 9.0))
    pers = config.params.percussion.persistence
    v, d = presence_persistence(ev, "percussion", t_s=9.0, clip_end_s=N * HOP, params=pers,
                                evidence_params=config.params.evidence, want_present=True)
    assert v == "pass" and d["held_fraction"] >= 0.9
    assert presence_absence(ev, "percussion", t_s=9.0, params=config.params.evidence, entry=True)[0] == "pass"
    # read frame by frame (no summary span) the same kit fails persistence: the old rule's miss
    frame = config.with_value("evidence.presence_span_s_by_family", {})
    v, d = presence_persistence(ev, "percussion", t_s=9.0, clip_end_s=N * HOP, params=pers,
                                evidence_params=frame.params.evidence, want_present=True)
    assert v == "fail"


def test_rise_rule_reads_the_clips_own_scale(config: Config) -> None:
    config = config.with_value("evidence.decision_rule", "rise").with_value("evidence.min_logit_rise", 1.0) \
        .with_value("evidence.present_prob", 0.25)
    t = np.arange(N) * HOP
    ev = _ev(np.where(t < 9.0, 0.01, 0.27), family="bass")  # a real entrance the network gives only 0.27
    v, d = presence_absence(ev, "bass", t_s=9.0, params=config.params.evidence, entry=True)
    assert v == "pass" and d["rise"] > 3.0
    v, _ = presence_persistence(ev, "bass", t_s=9.0, clip_end_s=N * HOP, params=config.params.stem.persistence,
                                evidence_params=config.params.evidence, want_present=True)
    assert v == "pass"
    # the fixed present level stays a floor under the rise rule
    v, d = presence_persistence(ev, "bass", t_s=9.0, clip_end_s=N * HOP, params=config.params.stem.persistence,
                                evidence_params=config.with_value("evidence.present_prob", 0.5).params.evidence,
                                want_present=True)
    assert v == "fail" and d["level"] == 0.5
    absolute = config.with_value("evidence.decision_rule", "absolute").with_value("evidence.present_prob", 0.5)
    v, _ = presence_persistence(ev, "bass", t_s=9.0, clip_end_s=N * HOP, params=config.params.stem.persistence,
                                evidence_params=absolute.params.evidence, want_present=True)
    assert v == "fail"  # 0.27 never reaches the fixed present level


@pytest.mark.parametrize(("before", "after", "verdict"),
                         [(0.6, 0.65, "fail"), (0.3, 0.95, "pass"), (0.02, 0.05, "fail")])
def test_rise_rule_rejects_a_target_already_there_or_barely_rising(config: Config, before: float, after: float,
                                                                   verdict: str) -> None:
    config = config.with_value("evidence.decision_rule", "rise").with_value("evidence.min_logit_rise", 1.0)
    t = np.arange(N) * HOP
    ev = _ev(np.where(t < 9.0, before, after), family="vocals")
    assert presence_absence(ev, "vocals", t_s=9.0, params=config.params.evidence, entry=True)[0] == verdict


def test_whole_clip_scale_rejects_a_return(config: Config) -> None:
    t = np.arange(N) * HOP
    pres = np.where(t < 4.0, 0.9, np.where(t < 9.0, 0.02, 0.9))  # sounding, 5 s away, back again
    lv = side_levels(_ev(pres, family="piano"), "piano", t_s=9.0, params=config.params.evidence, entry=True)
    assert lv.quiet is not None and lv.quiet < 0.05 and lv.whole is not None and lv.whole > 0.5
    stricter = config.with_value("evidence.whole_percentile", 95.0)
    assert presence_absence(_ev(pres, family="piano"), "piano", t_s=9.0, params=stricter.params.evidence,
                            entry=True)[0] == "fail"


def test_edges_use_the_context_that_exists(config: Config) -> None:
    config = config.with_value("evidence.decision_rule", "rise").with_value("evidence.min_logit_rise", 1.0)
    t = np.arange(N) * HOP
    ev = _ev(np.where(t < 1.5, 0.02, 0.9), family="vocals")
    v, d = presence_absence(ev, "vocals", t_s=1.5, params=config.params.evidence, entry=True)
    assert v == "pass" and 1.0 < d["context_s"] < 1.5
    # an exit 1 s before the end: the after side holds under a second, still measured
    ev = _ev(np.where(t < N * HOP - 1.5, 0.9, 0.02), family="vocals")
    v, d = presence_absence(ev, "vocals", t_s=N * HOP - 1.5, params=config.params.evidence, entry=False)
    assert v == "pass" and d["context_s"] < 1.5
    # nothing before the candidate, or less than evidence.min_context_s of it: absence cannot be shown
    assert presence_absence(ev, "vocals", t_s=0.1, params=config.params.evidence, entry=True)[0] == "fail"
    assert presence_absence(ev, "vocals", t_s=0.9, params=config.params.evidence, entry=True)[0] == "fail"


def test_summary_windows_keep_rises_and_falls_in_place() -> None:
    x = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0])
    every = np.ones(x.size, dtype=bool)
    assert summarised(x, every, 3, align="trailing").tolist() == [0, 0, 1, 1, 1, 0, 1, 1, 1]
    assert summarised(x, every, 3, align="leading").tolist() == [1, 1, 1, 0, 1, 1, 1, 0, 0]
    assert summarised(x, every, 3).tolist() == [0, 1, 1, 1, 0, 1, 1, 1, 0]
    # inside one side only: the other side's frames never leak in
    side = np.arange(x.size) < 5
    assert summarised(x, side, 5).tolist() == [1, 1, 1, 1, 1]


def test_change_peaks_keep_a_peak_at_the_window_edge() -> None:
    t = np.arange(N) * HOP
    curve = np.clip(1.0 - np.abs(t - 10.5), 0.0, None)  # peaks at 10.5 s, outside [5, 10]
    assert change_peaks(curve, t, 5.0, 10.0, floor=0.3, sep_s=1.0) == [int(np.flatnonzero(t <= 10.0)[-1])]
    assert change_peaks(curve, t, 5.0, 10.0, floor=0.9, sep_s=1.0) == []  # the edge value itself is under the floor
    assert change_peaks(curve, t, 9.0, 12.0, floor=0.3, sep_s=1.0) == [int(np.argmax(curve))]


def test_candidates_come_from_the_change_head_and_never_from_nothing(config: Config) -> None:
    config = config.with_value("evidence.entry_min_prob", 0.7)
    t = np.arange(N) * HOP
    pres = _hits(t, 9.0)
    entered = np.where(np.abs(t - 9.2) < 0.4, 0.96, 0.02)
    grid = Grid(sr=44100, hop=512, n_frames=int(N * HOP * 44100 / 512))
    onset = np.zeros(grid.n)
    onset[grid.frame(9.0)] = 1.0
    ident = IdentityParams(semantic=config.params.semantic, evidence_params=config.params.evidence)
    ctx = _ctx("instrument_entry", "percussion", 9.0)
    (cand,) = trained_candidates(onset, grid, ctx, _ev(pres, entered),
                                 persistence_params=config.params.percussion.persistence,
                                 identity=ident, clip_end_s=N * HOP)
    assert abs(cand.time_s - 9.0) < 0.02 and cand.rejected_by is None, (cand.gates, cand.stats)
    none = trained_candidates(onset, grid, ctx, _ev(pres, np.full(N, 0.1)),
                              persistence_params=config.params.percussion.persistence, identity=ident,
                              clip_end_s=N * HOP)
    assert none == []


def test_unknown_decision_rule_is_a_config_error(config: Config) -> None:
    t = np.arange(N) * HOP
    bad = config.with_value("evidence.decision_rule", "median")
    with pytest.raises(ConfigError, match="evidence.decision_rule"):
        presence_absence(_ev(np.where(t < 9.0, 0.0, 1.0)), "percussion", t_s=9.0, params=bad.params.evidence,
                         entry=True)


def test_a_confident_change_head_carries_persistence(config: Config) -> None:
    t = np.arange(N) * HOP
    pres = np.where(t < 9.0, 0.01, 0.2)  # a real entrance the network under-reads
    ev = _ev(pres, entered=np.where(np.abs(t - 9.0) < 0.3, 0.99, 0.0), family="piano")
    cfg = config.with_value("evidence.decision_rule", "absolute").with_value("evidence.present_prob", 0.35)
    args = dict(t_s=9.0, clip_end_s=N * HOP, params=cfg.params.stem.persistence, want_present=True)
    v, d = presence_persistence(ev, "piano",
                                evidence_params=cfg.with_disabled("evidence.confident_change").params.evidence,
                                **args)
    assert v == "fail" and "confident_change" not in d
    v, d = presence_persistence(ev, "piano",
                                evidence_params=cfg.with_value("evidence.confident_change", 0.97).params.evidence,
                                **args)
    assert v == "pass" and d["confident_change"] == 0.99
    v, _ = presence_persistence(ev, "piano",
                                evidence_params=cfg.with_value("evidence.confident_change", 1.01).params.evidence,
                                **args)
    assert v == "fail"

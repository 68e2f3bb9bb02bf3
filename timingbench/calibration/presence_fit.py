"""``timingbench calibrate evidence``: each judged family's least presence step, chosen on dev corpora only.

The detectors run once over every annotated dev event with every family judged and the
step thresholds off (``presence.entry_min_step_by_family`` and
``exit_min_step_by_family`` null): each event then carries its one
candidate, the candidate's time and the step's size (:mod:`timingbench.identity.decide`).
Every threshold of a family is decided from those statistics without running a detector
again (the intermediate statistics are computed once). For a threshold ``m`` an event is
credited when its step reaches ``m``; the credit is on time when the candidate lies within
the event's tolerance of the instructed time. Per family and kind (entrances, exits), ``m``
maximises

    on-time credited (rate) + off-time located (rate)

among the thresholds that credit at most ``calibration.evidence_max_negative_rate`` of the
family's negatives (busy decoys, pre-existing and absent targets, speech, animal and noise
decoys) on time; ties go to the larger (stricter) threshold.

A family is **judged** when its dev figures at the chosen thresholds reach the bar of
:mod:`timingbench.calibration.judging`: ``calibration.judge_min_on_time`` on time over at least
``calibration.judge_min_events`` events, and at most ``calibration.judge_max_negative_rate`` of at
least ``calibration.judge_min_negatives`` negatives credited; the report gives every family's
figures either way. (The step fit reads no part levels: every on-time event counts toward the
bar here; ``tools/stem_figures.py`` gives the figures by level band from scored rows.)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from timingbench.calibration.dev_corpora import DevCorpus
from timingbench.calibration.evaluate import corpus_candidates
from timingbench.config import Config
from timingbench.families import judging_every_family
from timingbench.identity.decide import judged_by_presence

#: Kinds fitted separately, by their short name.
KINDS = {"entry": "instrument_entry", "exit": "instrument_exit"}


@dataclass(frozen=True)
class EventStat:
    """One annotated dev event's statistics under the presence detection (no threshold applied).

    Attributes
    ----------
    corpus, clip, event_id, family, kind, scenario : str
        Where it comes from and what it asks; ``kind`` is ``entry`` or ``exit``.
    instructed_s, tolerance_s : float
        The instruction.
    truth_s : float or None
        The annotated onset (None: not delivered).
    time_s : float or None
        The candidate's time (None: no step the asked way).
    size : float or None
        The step's size in log-odds.
    """

    corpus: str
    clip: str
    event_id: str
    family: str
    kind: str
    scenario: str
    instructed_s: float
    tolerance_s: float
    truth_s: float | None
    time_s: float | None
    size: float | None

    @property
    def role(self) -> str:
        """``on_time`` / ``off_time`` (delivered, by the annotation) or ``negative``."""
        if self.truth_s is None:
            return "negative"
        return "on_time" if abs(self.truth_s - self.instructed_s) <= self.tolerance_s + 1e-9 else "off_time"


def event_stats(devs: Sequence[DevCorpus], config: Config) -> list[EventStat]:
    """Every annotated instrument event of the dev corpora, scored once with every family judged and no step threshold.

    Parameters
    ----------
    devs : sequence of DevCorpus
        The dev corpora (:func:`timingbench.calibration.dev_corpora.load_dev_corpora`).
    config : Config
        The configuration fitted (its other constants are kept).

    Returns
    -------
    stats : list of EventStat
        Only events whose family the evidence judges (with every family judged).
    """
    cfg = judging_every_family(config).with_value("presence.entry_min_step_by_family", {"default": None}) \
        .with_value("presence.exit_min_step_by_family", {"default": None})
    out: list[EventStat] = []
    for dev in devs:
        for it in corpus_candidates(dev.corpus, cfg):
            ev = it.event
            if ev.kind not in KINDS.values() or not judged_by_presence(dev.corpus.evidence.get(it.clip), ev.family):
                continue
            cand = it.candidates[0] if it.candidates else None
            size = None if cand is None else cand.stats.get("family_change", {}).get("size")
            truth = it.truth.onset_s if it.truth.occurred else None
            out.append(EventStat(dev.root.name, it.clip, ev.id, ev.family,
                                 "entry" if ev.kind == "instrument_entry" else "exit",
                                 dev.scenarios.get(it.clip, "unknown"), float(ev.time_s), float(it.tolerance_s),
                                 None if truth is None else float(truth),
                                 None if cand is None else float(cand.time_s), None if size is None else float(size)))
    return out


def counts(stats: Iterable[EventStat], threshold: float | None, *, offset_match_s: float) -> dict[str, int]:
    """Counts at one threshold (None: every measured step credited).

    Returns
    -------
    counts : dict
        ``n_on_time``, ``on_time_credited`` (on time and within the tolerance of the truth),
        ``n_off_time``, ``off_time_located`` (reported off time within ``offset_match_s`` of
        the truth), ``n_negative``, ``negative_credited`` (on time), ``negative_reported`` (off time).
    """
    c = dict.fromkeys(("n_on_time", "on_time_credited", "n_off_time", "off_time_located", "n_negative",
                       "negative_credited", "negative_reported"), 0)
    for s in stats:
        credited = s.time_s is not None and s.size is not None and (threshold is None or s.size >= threshold)
        on = credited and abs(s.time_s - s.instructed_s) <= s.tolerance_s + 1e-9  # type: ignore[operator]
        role = s.role
        c[f"n_{role}"] += 1
        if role == "negative":
            c["negative_credited"] += int(on)
            c["negative_reported"] += int(credited and not on)
        elif role == "on_time":
            c["on_time_credited"] += int(on and abs(s.time_s - s.truth_s) <= s.tolerance_s + 1e-9)  # type: ignore[operator]
        else:
            c["off_time_located"] += int(credited and not on
                                         and abs(s.time_s - s.truth_s) <= offset_match_s + 1e-9)  # type: ignore[operator]
    return c


def _objective(c: Mapping[str, int], *, max_negative_rate: float) -> tuple[bool, float]:
    neg = c["negative_credited"] / c["n_negative"] if c["n_negative"] else 0.0
    if neg > max_negative_rate + 1e-12:
        return False, -neg
    score = (c["on_time_credited"] / c["n_on_time"] if c["n_on_time"] else 0.0) \
        + (c["off_time_located"] / c["n_off_time"] if c["n_off_time"] else 0.0)
    return True, round(score, 9)


def best_threshold(stats: Sequence[EventStat], *, max_negative_rate: float, offset_match_s: float,
                   floor: float) -> float:
    """The threshold of least step (log-odds) that maximises the objective (module docstring).

    Candidates: every measured size at or above ``floor``, rounded down to 2 decimals, and one
    above them all (credit nothing). Ties go to the larger threshold.
    """
    sizes = sorted({float(np.floor(s.size * 100 + 1e-9) / 100) for s in stats
                    if s.size is not None and s.size >= floor})
    grid: list[float] = [max(floor, 0.0), *sizes, round((max(sizes) if sizes else floor) + 0.01, 2)]
    scored = [(_objective(counts(stats, m, offset_match_s=offset_match_s), max_negative_rate=max_negative_rate), m)
              for m in grid]
    return round(max(scored)[1], 2)


def fit(stats: Sequence[EventStat], families: Sequence[str], *, max_negative_rate: float, offset_match_s: float,
        floor: float, judge_min_on_time: float, judge_min_events: int, judge_max_negative_rate: float = 0.0,
        judge_min_negatives: int = 0) -> dict[str, Any]:
    """Per family: the entrance and exit thresholds, the dev figures at them and whether it is judged.

    Returns
    -------
    report : dict
        ``families``: family -> ``min_step`` (entry/exit, log-odds), ``counts`` (entry/exit/all
        at the chosen thresholds), ``judged`` (bool) and ``reason``.
    """
    out: dict[str, Any] = {}
    for fam in families:
        steps: dict[str, float | None] = {
            short: best_threshold(_of(stats, fam, short), max_negative_rate=max_negative_rate,
                                  offset_match_s=offset_match_s, floor=floor) for short in KINDS}
        per_kind = _counts_by_kind(stats, fam, steps, offset_match_s=offset_match_s)
        total = per_kind["all"]
        n, k = total["n_on_time"], total["on_time_credited"]
        neg, n_neg = total["negative_credited"], total["n_negative"]
        if n < judge_min_events:
            judged, reason = False, f"dev_on_time_events_below_{judge_min_events}"
        elif n_neg < judge_min_negatives:
            judged, reason = False, f"dev_negatives_below_{judge_min_negatives}"
        elif neg and neg / n_neg > judge_max_negative_rate + 1e-12:
            judged, reason = False, "dev_negatives_credited"
        elif k / n < judge_min_on_time - 1e-12:
            judged, reason = False, f"dev_on_time_below_{judge_min_on_time:.2f}"
        else:
            judged, reason = True, None
        out[fam] = {"min_step": steps, "counts": per_kind, "judged": judged, "reason": reason}
    return {"families": out}


def _of(stats: Iterable[EventStat], family: str, kind: str) -> list[EventStat]:
    return [s for s in stats if s.family == family and s.kind == kind]


def _counts_by_kind(stats: Sequence[EventStat], family: str, steps: Mapping[str, float | None], *,
                    offset_match_s: float) -> dict[str, dict[str, int]]:
    """:func:`counts` of ``family``'s entrances and exits at their thresholds, and their sum (``all``)."""
    per_kind = {short: counts(_of(stats, family, short), steps[short], offset_match_s=offset_match_s)
                for short in KINDS}
    per_kind["all"] = {k: per_kind["entry"][k] + per_kind["exit"][k] for k in per_kind["entry"]}
    return per_kind


def _frac(k: int, n: int) -> str:
    return f"{k}/{n}" if n else "-"


def format_report(report: Mapping[str, Any]) -> str:
    """The fit as a table: per family, thresholds, dev figures and the judged verdict."""
    lines = [f"{'family':<11}{'step in':>8}{'step out':>9}{'on time':>10}{'off located':>12}{'neg credited':>13}"
             f"{'neg off':>8}  verdict"]
    for fam, r in report["families"].items():
        c = r["counts"]["all"]
        verdict = "judged" if r["judged"] else f"exempt: {r['reason']}"
        steps = [("off" if r["min_step"][k] is None else f"{r['min_step'][k]:.2f}") for k in ("entry", "exit")]
        lines.append(f"{fam:<11}{steps[0]:>8}{steps[1]:>9}"
                     f"{_frac(c['on_time_credited'], c['n_on_time']):>10}"
                     f"{_frac(c['off_time_located'], c['n_off_time']):>12}"
                     f"{_frac(c['negative_credited'], c['n_negative']):>13}"
                     f"{_frac(c['negative_reported'], c['n_negative']):>8}  {verdict}")
    return "\n".join(lines)


def configured_report(stats: Sequence[EventStat], config: Config, families: Sequence[str], *,
                      offset_match_s: float) -> dict[str, Any]:
    """Per family and kind, the counts at the thresholds ``config`` holds (for measuring held-out corpora).

    Returns
    -------
    report : dict
        ``families``: family -> ``min_step`` (entry/exit) and ``counts`` (entry/exit/all), as :func:`fit`
        reports them; ``judged`` is the registry's verdict of ``config``.
    """
    from timingbench.families import judged_families

    p = config.params.presence
    judged = set(judged_families(config))
    out: dict[str, Any] = {}
    for fam in families:
        steps = {"entry": p.threshold(p.entry_min_step_by_family, fam),
                 "exit": p.threshold(p.exit_min_step_by_family, fam)}
        out[fam] = {"min_step": steps, "counts": _counts_by_kind(stats, fam, steps, offset_match_s=offset_match_s),
                    "judged": fam in judged,
                    "reason": None if fam in judged else "exempt in the registry"}
    return {"families": out}

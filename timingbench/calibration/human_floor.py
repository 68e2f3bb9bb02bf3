"""The detector's localization error beside the annotators' own (the human floor).

With two or more annotators, every scored event (rows of
:func:`timingbench.calibration.evaluate.score_corpus`) is classified again against each
annotator's Layer-1 row and against their **consensus**, and the localization floors of
:func:`timingbench.calibration.floors.localization_floors` are computed for each:

- ``detector_vs[a]``: the detector against annotator ``a``;
- ``detector_vs_annotators``: those errors pooled over the annotators. This is the
  detector's floor when annotations come from several people, and the one compared with
  the human spread: if the detector placed onsets like one more annotator, its error
  against an annotator would be distributed like one annotator's against another;
- ``detector_vs_mean``: against the consensus, whose onset is the mean of the annotators'
  onsets. The consensus exists for an event when every annotator who labelled it agrees
  on whether it occurred (events they disagree on are listed, and left out of it); its
  onset character is the most common one (ties: the first annotator in name order);
- ``annotators_vs_each_other``: ``|onset_a - onset_b|`` over every pair of annotators and
  every scored event both marked as occurred. Its ``annotations.human_band_quantiles``
  (the interquartile range) is the human band.

Per family, ``verdict`` says where the detector's pooled median error lies against the
band: ``below``, ``within`` or ``above``; ``within_human_spread`` is true for the first
two (the median does not exceed the band's upper edge).
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from timingbench.annotation_io import AnnotationSet, Layer1Row
from timingbench.calibration.agreement import DELTA_DECIMALS
from timingbench.calibration.confusion import confusion_profile
from timingbench.calibration.evaluate import classify
from timingbench.calibration.floors import localization_floors

#: Annotator name of the consensus rows.
CONSENSUS = "consensus"

EventKey = tuple[str, str]


def consensus_truth(rows: Iterable[Layer1Row]) -> tuple[dict[EventKey, Layer1Row], list[EventKey]]:
    """The consensus Layer-1 row of every event (see the module docstring).

    Parameters
    ----------
    rows : iterable of Layer1Row
        Rows of one or more annotators.

    Returns
    -------
    truth : dict
        ``(clip, event_id) -> Layer1Row`` with annotator ``consensus``; its ``extra``
        names the annotators it was made from.
    disagreements : list of (clip, event_id)
        Events the annotators disagree on (occurred or not), sorted.
    """
    groups: dict[EventKey, list[Layer1Row]] = defaultdict(list)
    for r in rows:
        groups[(r.clip, r.event_id)].append(r)
    truth: dict[EventKey, Layer1Row] = {}
    disagree: list[EventKey] = []
    for key, g in sorted(groups.items()):
        g = sorted(g, key=lambda r: r.annotator)
        if len({r.occurred for r in g}) > 1:
            disagree.append(key)
            continue
        first = g[0]
        onset = None
        character = None
        if first.occurred:
            onset = round(float(np.mean([float(r.onset_s) for r in g])), DELTA_DECIMALS)  # type: ignore[arg-type]
            chars = [r.onset_character for r in g if r.onset_character is not None]
            if chars:
                counts = Counter(chars)
                top = max(counts.values())
                character = next(c for c in chars if counts[c] == top)
        truth[key] = Layer1Row(first.clip, first.event_id, first.occurred, onset, character, None,
                               CONSENSUS, first.split, {"annotators": [r.annotator for r in g]})
    return truth, disagree


def classify_against(
    rows: Iterable[Mapping[str, Any]], truth: Mapping[EventKey, Layer1Row], *,
    annotator: str, offset_match_s: float | None,
) -> list[dict[str, Any]]:
    """Scored rows classified again against other annotations.

    Parameters
    ----------
    rows : iterable of dict
        Rows of :func:`timingbench.calibration.evaluate.score_corpus` (``outcome``,
        ``instructed_s``, ``tolerance_s``, ``detected_s`` are read).
    truth : mapping of (clip, event_id) to Layer1Row
        One annotator's (or the consensus) rows; events not in it are left out.
    annotator : str
        Written on every returned row (``annotator`` key).
    offset_match_s : float or None
        ``calibration.offset_match_s``, as for ``score_corpus``.

    Returns
    -------
    rows : list of dict
        Copies with ``truth_occurred``, ``truth_onset_s``, ``onset_character``, ``class``,
        ``abs_error_to_truth_s`` and ``offset_correct`` from ``truth``.
    """
    out = []
    for r in rows:
        tr = truth.get((r["clip"], r["event_id"]))
        if tr is None:
            continue
        cls = classify(r["outcome"], tr, instructed_s=r["instructed_s"], tolerance_s=r["tolerance_s"])
        err = None
        if r.get("detected_s") is not None and tr.occurred and tr.onset_s is not None:
            err = round(abs(float(r["detected_s"]) - tr.onset_s), DELTA_DECIMALS)
        offset_ok = None
        if r["outcome"] == "off_time" and err is not None and offset_match_s is not None:
            offset_ok = err <= offset_match_s
        out.append(dict(r, truth_occurred=bool(tr.occurred), truth_onset_s=tr.onset_s,
                        onset_character=tr.onset_character, **{"class": cls},
                        abs_error_to_truth_s=err, offset_correct=offset_ok, annotator=annotator))
    return out


@dataclass
class HumanFloor:
    """The detector against several annotators.

    Attributes
    ----------
    report : dict
        The JSON report (see :func:`human_floor`).
    floors : dict
        ``localization_floors`` of the detector against every annotator, pooled: the
        floors to publish and plot.
    consensus_rows : list of dict
        Scored rows classified against the consensus.
    annotator_rows : dict of str to list of dict
        Scored rows classified against each annotator.
    bands : dict of str to (float, float, float)
        Family -> (band low, band high, median) of the inter-annotator ``|Δ|``, seconds.
    """

    report: dict[str, Any]
    floors: dict[str, dict[str, Any]]
    consensus_rows: list[dict[str, Any]]
    annotator_rows: dict[str, list[dict[str, Any]]]
    bands: dict[str, tuple[float, float, float]]


def _brief(floor: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if floor is None:
        return None
    return {k: floor[k] for k in ("n", "median_s", "q25_s", "q75_s", "max_s")}


def _verdict(median_s: float | None, band: tuple[float, float, float] | None) -> str | None:
    if median_s is None or band is None:
        return None
    lo, hi, _ = band
    m = round(median_s, DELTA_DECIMALS)
    return "below" if m < lo else ("within" if m <= hi else "above")


def human_floor(
    rows: Sequence[Mapping[str, Any]], ann: AnnotationSet, *, offset_match_s: float | None,
    band_quantiles: Sequence[float],
) -> HumanFloor | None:
    """The detector's error against each annotator, their consensus, and each other.

    Parameters
    ----------
    rows : sequence of dict
        Rows of :func:`timingbench.calibration.evaluate.score_corpus`.
    ann : AnnotationSet
        The annotations the rows were scored on (Layer-1 rows of the scored events are
        read; others are ignored).
    offset_match_s : float or None
        ``calibration.offset_match_s``.
    band_quantiles : sequence of two floats
        ``annotations.human_band_quantiles`` (fractions in [0, 1]).

    Returns
    -------
    floor : HumanFloor or None
        None when fewer than two annotators labelled the scored events. ``report`` holds
        ``annotators``, ``band_quantiles``, ``occurred_disagreements`` and ``by_family``:
        ``detector_vs`` (per annotator), ``detector_vs_annotators``, ``detector_vs_mean``
        (each ``n``, ``median_s``, ``q25_s``, ``q75_s``, ``max_s`` or None),
        ``annotators_vs_each_other`` (``n``, ``median_s``, ``p90_s``, ``band_s``,
        ``by_pair``), ``verdict`` and ``within_human_spread``.
    """
    scored = {(r["clip"], r["event_id"]): r for r in rows}
    l1 = [r for r in ann.layer1 if (r.clip, r.event_id) in scored]
    names = sorted({r.annotator for r in l1})
    if len(names) < 2:
        return None
    per: dict[str, dict[EventKey, Layer1Row]] = {a: {} for a in names}
    for r in l1:
        per[r.annotator][(r.clip, r.event_id)] = r
    annotator_rows = {a: classify_against(rows, per[a], annotator=a, offset_match_s=offset_match_s)
                      for a in names}
    pooled_rows = [x for a in names for x in annotator_rows[a]]
    truth_c, disagree = consensus_truth(l1)
    consensus_rows = classify_against(rows, truth_c, annotator=CONSENSUS, offset_match_s=offset_match_s)
    f_each = {a: localization_floors(annotator_rows[a]) for a in names}
    f_pooled = localization_floors(pooled_rows)
    f_mean = localization_floors(consensus_rows)

    human: dict[str, list[float]] = defaultdict(list)
    by_pair: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for a, b in itertools.combinations(names, 2):
        for key in sorted(set(per[a]) & set(per[b])):
            ra, rb = per[a][key], per[b][key]
            if ra.occurred and rb.occurred and ra.onset_s is not None and rb.onset_s is not None:
                d = round(abs(ra.onset_s - rb.onset_s), DELTA_DECIMALS)
                fam = str(scored[key]["family"])
                human[fam].append(d)
                by_pair[fam][f"{a}/{b}"].append(d)
    q_lo, q_hi = (float(q) for q in band_quantiles)
    bands: dict[str, tuple[float, float, float]] = {}
    for fam, v in human.items():
        arr = np.asarray(v)
        lo, hi, med = np.quantile(arr, [q_lo, q_hi, 0.5])
        bands[fam] = (round(float(lo), DELTA_DECIMALS), round(float(hi), DELTA_DECIMALS),
                      round(float(med), DELTA_DECIMALS))

    families = sorted({str(r["family"]) for r in rows})
    by_family: dict[str, Any] = {}
    for fam in families:
        hv = np.asarray(human.get(fam, []))
        band = bands.get(fam)
        pooled = f_pooled.get(fam)
        verdict = _verdict(pooled["median_s"] if pooled else None, band)
        by_family[fam] = {
            "detector_vs": {a: _brief(f_each[a].get(fam)) for a in names},
            "detector_vs_annotators": _brief(pooled),
            "detector_vs_mean": _brief(f_mean.get(fam)),
            "annotators_vs_each_other": {
                "n": int(hv.size),
                "median_s": band[2] if band else None,
                "p90_s": round(float(np.percentile(hv, 90)), DELTA_DECIMALS) if hv.size else None,
                "band_s": [band[0], band[1]] if band else None,
                "by_pair": {p: {"n": len(d), "median_s": round(float(np.median(d)), DELTA_DECIMALS)}
                            for p, d in sorted(by_pair.get(fam, {}).items())},
            },
            "verdict": verdict,
            "within_human_spread": None if verdict is None else verdict != "above",
        }
    report = {
        "annotators": names, "band_quantiles": [q_lo, q_hi],
        "occurred_disagreements": [{"clip": c, "event_id": e} for c, e in disagree],
        "by_family": by_family,
    }
    return HumanFloor(report, f_pooled, consensus_rows, annotator_rows, bands)


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{1000 * x:.1f}"


def verdict_lines(report: Mapping[str, Any]) -> list[str]:
    """One sentence per family: does the detector's median error lie within the human spread?"""
    out = []
    for fam, v in report["by_family"].items():
        det = v["detector_vs_annotators"]
        hum = v["annotators_vs_each_other"]
        if det is None:
            out.append(f"{fam}: no credited detection to measure against the annotators")
        elif hum["band_s"] is None:
            out.append(f"{fam}: detector median {_ms(det['median_s'])} ms; no event both annotators "
                       "heard, so no human spread to compare with")
        else:
            lo, hi = hum["band_s"]
            where = {"below": "below (better than) the human spread",
                     "within": "within the human spread",
                     "above": "ABOVE the human spread"}[v["verdict"]]
            out.append(f"{fam}: detector median error {_ms(det['median_s'])} ms against the annotators "
                       f"lies {where} (inter-annotator |Δ| {_ms(lo)}-{_ms(hi)} ms, median "
                       f"{_ms(hum['median_s'])} ms, n={hum['n']})")
    return out


def format_human_floor(report: Mapping[str, Any]) -> str:
    """Text table of :func:`human_floor`'s report (ms) and the per-family verdicts."""
    names = report["annotators"]
    q = report["band_quantiles"]
    head = (f"{'family':<14}" + "".join(f"{'vs ' + a:>12}" for a in names)
            + f"{'vs all':>10}{'vs mean':>10}{'human n':>9}{'human med':>11}{'human band':>16}")
    lines = [f"detector against {len(names)} annotators ({', '.join(names)}): median |detected - "
             f"annotated| ms (n); human band = inter-annotator |Δ| quantiles {q[0]:g}-{q[1]:g}", head,
             "-" * len(head)]
    for fam, v in report["by_family"].items():
        def cell(f: Mapping[str, Any] | None, w: int) -> str:
            return f"{'-':>{w}}" if f is None else f"{_ms(f['median_s']) + ' (' + str(f['n']) + ')':>{w}}"

        hum = v["annotators_vs_each_other"]
        band = "-" if hum["band_s"] is None else f"{_ms(hum['band_s'][0])}-{_ms(hum['band_s'][1])}"
        lines.append(f"{fam:<14}" + "".join(cell(v["detector_vs"][a], 12) for a in names)
                     + cell(v["detector_vs_annotators"], 10) + cell(v["detector_vs_mean"], 10)
                     + f"{hum['n']:>9}{_ms(hum['median_s']):>11}{band:>16}")
    if report["occurred_disagreements"]:
        lines.append(f"annotators disagree on whether {len(report['occurred_disagreements'])} event(s) "
                     "occurred; those are left out of the consensus")
    lines += verdict_lines(report)
    return "\n".join(lines)


def format_annotator_confusion(floor: HumanFloor) -> str:
    """One line per annotator (and the consensus): false-credit and score-inflating rates."""
    lines = []
    for name, rows in [*floor.annotator_rows.items(), (CONSENSUS, floor.consensus_rows)]:
        p = confusion_profile(rows)
        if not p["n"]:
            continue
        lines.append(f"against {name}: {p['n']} events, false credits {p['false_credit']} "
                     f"({100 * p['false_credit_rate']:.1f} %), score-inflating {p['score_inflating']} "
                     f"({100 * p['score_inflating_rate']:.1f} %), correct credits "
                     f"{p['overall']['correct_credit']}, missed {p['overall']['missed']}")
    return "\n".join(lines)

"""``timingbench calibrate evidence``: choose the trained evidence's decision thresholds on dev corpora only.

For each decision rule of :mod:`timingbench.identity.rules` (``rise``, ``change``, ``absolute``) every point
of its grid (``calibration.evidence_*_grid``) re-scores the dev corpora on their cached
banks and evidence (only detectors and gates re-run) and is judged on the events of the
families the evidence judges: the objective is

    on-time credited + off-time located (rates)

among the points that credit at most ``calibration.evidence_max_negative_rate`` of the
negatives (busy decoys, pre-existing and absent targets, speech and animal decoys); when
no point does, the one crediting the fewest negatives. Entrances and exits
are fitted separately for their change-head floor (``evidence.entry_min_prob`` reads only
entrances, ``exit_min_prob`` only exits) and jointly for the rule's shared constants. Ties
go to the stricter point. The rule with the higher objective is kept.

Only ``dev`` truth rows are scored: a corpus with none is refused, and so is one whose
manifest says it was rendered with a held-out soundfont (MuseScore General, every
variant): validation and held-out audio never choose a threshold.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from timingbench.annotation_io import AnnotationSet, load_annotations
from timingbench.calibration.evaluate import Corpus, load_corpus, score_corpus
from timingbench.calibration.groups import event_counts, scenarios_from_manifest
from timingbench.choices import DEFAULT_FAMILY_EVIDENCE
from timingbench.config import Config
from timingbench.errors import ConfigError, ParameterError
from timingbench.families import judged_families
from timingbench.jsonio import iter_jsonl
from timingbench.params.bounds import stricter
from timingbench.params.tools import CalibrationParams
from timingbench.runner import ScoreOptions

#: Soundfonts that may only measure (the held-out set of the evidence model).
HELD_OUT_SOUNDFONT = re.compile(r"musescore", re.IGNORECASE)
#: The constants each rule fits besides the change-head floors, with their grid constant.
RULE_GRIDS: dict[str, tuple[tuple[str, Callable[[CalibrationParams], list[float]]], ...]] = {
    "rise": (("evidence.min_logit_rise", lambda c: c.evidence_rise_grid),
             ("evidence.quiet_max", lambda c: c.evidence_quiet_grid),
             ("evidence.present_prob", lambda c: c.evidence_present_grid),
             ("evidence.confident_change", lambda c: c.evidence_confident_grid)),
    "change": (("evidence.min_logit_rise", lambda c: c.evidence_rise_grid),
               ("evidence.quiet_max", lambda c: c.evidence_quiet_grid)),
    "absolute": (("evidence.quiet_max", lambda c: c.evidence_quiet_grid),
                 ("evidence.present_prob", lambda c: c.evidence_present_grid),
                 ("evidence.confident_change", lambda c: c.evidence_confident_grid)),
}
KINDS = {"entry": "instrument_entry", "exit": "instrument_exit"}
#: The change-head floor fitted for each kind (entrances and exits separately).
CHANGE_FLOORS = {"entry": "evidence.entry_min_prob", "exit": "evidence.exit_min_prob"}


class CalibrationRefused(ParameterError):
    """A corpus that may not choose thresholds (a validation split or held-out audio)."""


@dataclass(frozen=True)
class DevCorpus:
    """A dev corpus with its banks, scenarios and the judged events to fit on."""

    root: Path
    corpus: Corpus
    scenarios: dict[str, str]


def check_dev_corpus(root: Path) -> int:
    """Refuse a corpus with no dev rows or rendered with a held-out soundfont; the number of dev rows.

    A corpus may hold both splits (the real corpus does): only its ``dev`` rows are ever
    scored by the fit, its ``validation`` rows are left out.

    Raises
    ------
    CalibrationRefused
        Naming the file, the row and the field that rule it out.
    ParameterError
        If ``root`` holds no ``truth.jsonl``.
    """
    truth = root / "truth.jsonl"
    if not truth.is_file():
        raise ParameterError(f"{root}: no truth.jsonl; --dev takes a rendered or annotated corpus folder")
    n_dev, first_other = 0, None
    for n, row in iter_jsonl(truth):
        if not isinstance(row, dict):
            continue  # a malformed row is reported, with its line, when the annotations load
        if row.get("split") == "dev":
            n_dev += 1
        elif first_other is None:
            first_other = (n, row.get("split"))
    if n_dev == 0:
        n, split = first_other or (0, None)
        raise CalibrationRefused(
            f"{truth}:{n}: field 'split' is {split!r}: only dev rows may choose thresholds, and this corpus has none; "
            "a validation corpus only measures")
    manifest = root / "manifest.jsonl"
    if manifest.is_file():
        for n, row in iter_jsonl(manifest):
            if not isinstance(row, dict):
                raise CalibrationRefused(f"{manifest}:{n}: not a JSON object ({row}): the soundfont the corpus was "
                                         "rendered with cannot be checked")
            sf = str(row.get("soundfont") or "")
            if HELD_OUT_SOUNDFONT.search(sf):
                raise CalibrationRefused(
                    f"{manifest}:{n}: field 'soundfont' is {sf!r}: MuseScore General is held out; "
                    "it measures, it never chooses a threshold")
    return n_dev


def load_dev_corpora(roots: Sequence[Path], config: Config, *,
                     progress: Callable[[int, int, str], None] | None = None, cache_dir: str | None = None,
                     jobs: int = 1) -> list[DevCorpus]:
    """Check and analyse every dev corpus once (``--separation dsp``, the default family evidence).

    ``cache_dir`` reuses (and fills) a feature cache; ``jobs`` worker processes analyse the clips.
    """
    from timingbench.executors import LocalExecutor

    for r in roots:
        check_dev_corpus(r)
    opts = ScoreOptions(separation="dsp", family_evidence=DEFAULT_FAMILY_EVIDENCE, cache_dir=cache_dir)
    out = []
    for r in roots:
        ann = load_annotations(r / "truth.jsonl")
        dev_only = AnnotationSet(layer1=[row for row in ann.layer1 if row.split == "dev"], errors=ann.errors,
                                 source=ann.source)
        corpus = load_corpus(r / "clips", r / "prompts.jsonl", dev_only, config, opts, progress=progress,
                             executor=LocalExecutor(jobs))
        out.append(DevCorpus(r, corpus, scenarios_from_manifest(r / "clips")))
    return out


def fit_events(dev: DevCorpus, families: Iterable[str], kind: str) -> set[tuple[str, str]]:
    """``(clip, event_id)`` of the annotated ``kind`` events of ``families`` in a dev corpus."""
    fam = set(families)
    out = set()
    for ref in dev.corpus.refs:
        for ev in dev.corpus.prompts[ref.prompt_id].events:
            if ev.kind == kind and ev.family in fam and (ref.clip, ev.id) in dev.corpus.truth:
                out.add((ref.clip, ev.id))
    return out


def rates(rows: Sequence[Mapping[str, Any]], scenarios: Mapping[str, str], *, offset_match_s: float) -> dict[str, Any]:
    """Counts of scored rows (:func:`timingbench.calibration.groups.event_counts`)."""
    return event_counts([dict(r) for r in rows], scenarios, offset_match_s)


def merge(parts: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Sum the counts of several :func:`rates` results (the median error is not merged)."""
    keys = ("n_on_time", "on_time_credited", "n_negative", "negative_credited", "n_pre_existing",
            "pre_existing_rejected", "n_off_time", "off_time_located")
    out = {k: 0 for k in keys}
    for p in parts:
        for k in keys:
            out[k] += int(p[k])
    return out


def objective(c: Mapping[str, Any], *, max_negative_rate: float) -> tuple[bool, float]:
    """``(feasible, score)`` of counts: feasible when at most ``max_negative_rate`` of the negatives are credited;
    the score is on-time credited + off-time located (rates) when feasible, minus the negative-credit rate otherwise.

    Tuples compare feasible points above infeasible ones; an empty class adds nothing.
    """
    neg = c["negative_credited"] / c["n_negative"] if c["n_negative"] else 0.0
    if neg > max_negative_rate + 1e-12:
        return False, -neg
    score = 0.0
    if c["n_on_time"]:
        score += c["on_time_credited"] / c["n_on_time"]
    if c["n_off_time"]:
        score += c["off_time_located"] / c["n_off_time"]
    return True, round(score, 9)


def _strictness(point: Mapping[str, float]) -> tuple[float, ...]:
    return tuple(stricter(k) * float(v) for k, v in sorted(point.items()))


def _score_kind(devs: Sequence[DevCorpus], cfg: Config, events: Sequence[set[tuple[str, str]]], *,
                offset_match_s: float) -> dict[str, Any]:
    """Merged counts of the ``events`` of every dev corpus scored with ``cfg``."""
    return merge(rates(score_corpus(dev.corpus, cfg, events=evs, offset_match_s=offset_match_s), dev.scenarios,
                       offset_match_s=offset_match_s)
                 for dev, evs in zip(devs, events, strict=True) if evs)


def fit(devs: Sequence[DevCorpus], config: Config, *, rules: Sequence[str] = ("rise", "change", "absolute"),
        progress: Callable[[int, int, str], None] | None = None) -> dict[str, Any]:
    """Fit every rule's grid on the dev corpora; the report of :func:`run_fit` (module docstring).

    Returns
    -------
    report : dict
        ``rules``: per rule the chosen constants, the objective and the dev counts (per
        kind and per corpus); ``chosen_rule``; ``families`` (the judged families);
        ``corpora`` (folders).
    """
    cal: CalibrationParams = config.params.calibration  # type: ignore[assignment]
    most, match_s = float(cal.evidence_max_negative_rate), float(cal.offset_match_s)
    fams = list(judged_families(config))
    events = {k: [fit_events(d, fams, kind) for d in devs] for k, kind in KINDS.items()}
    change = [float(v) for v in cal.evidence_change_grid]
    total = sum(int(np.prod([len(g(cal)) for _, g in RULE_GRIDS.get(r, ())])) for r in rules) * 2 * len(change)
    done = 0
    report: dict[str, Any] = {"families": fams, "corpora": [str(d.root) for d in devs], "rules": {}}
    for rule in rules:
        if rule not in RULE_GRIDS:
            raise ParameterError(f"unknown decision rule {rule!r}; use one of {', '.join(RULE_GRIDS)}")
        names = [k for k, _ in RULE_GRIDS[rule]]
        grids = [[float(v) for v in g(cal)] for _, g in RULE_GRIDS[rule]]
        best: tuple[tuple[int, float], tuple[float, ...], dict[str, Any]] | None = None
        for shared in itertools.product(*grids):
            base = config.with_value("evidence.decision_rule", rule)
            for k, v in zip(names, shared, strict=True):
                base = base.with_value(k, v)
            per_kind: dict[str, Any] = {}
            for kind, const in CHANGE_FLOORS.items():
                top: tuple[tuple[bool, float], tuple[float, ...], float, dict[str, Any]] | None = None
                for v in change:
                    counts = _score_kind(devs, base.with_value(const, v), events[kind], offset_match_s=match_s)
                    done += 1
                    if progress:
                        progress(done, total, f"{rule} {kind} {const.split('.')[1]}={v}")
                    key = (objective(counts, max_negative_rate=most), (stricter(const) * v,))
                    if top is None or key > top[:2]:
                        top = (key[0], key[1], v, counts)
                assert top is not None
                per_kind[kind] = {"constant": const, "value": top[2], "objective": top[0], "counts": top[3]}
            point = {**dict(zip(names, shared, strict=True)),
                     **{per_kind[k]["constant"]: per_kind[k]["value"] for k in per_kind}}
            e, x = per_kind["entry"]["objective"], per_kind["exit"]["objective"]
            score = (int(e[0]) + int(x[0]), round(e[1] + x[1], 9))
            key2 = (score, _strictness(point))
            if best is None or key2 > best[:2]:
                best = (score, key2[1], {"point": point, "per_kind": per_kind})
        assert best is not None
        chosen = best[2]
        cfg = config.with_value("evidence.decision_rule", rule)
        for k, v in chosen["point"].items():
            cfg = cfg.with_value(k, v)
        per_corpus = {}
        for i, d in enumerate(devs):
            evs = events["entry"][i] | events["exit"][i]
            rows = score_corpus(d.corpus, cfg, events=evs, offset_match_s=match_s) if evs else []
            per_corpus[str(d.root)] = {f: rates([r for r in rows if r["family"] == f], d.scenarios,
                                                offset_match_s=match_s) for f in fams}
        report["rules"][rule] = {"objective": best[0][1], "feasible_kinds": best[0][0], "constants": chosen["point"],
                                 "entry": chosen["per_kind"]["entry"]["counts"],
                                 "exit": chosen["per_kind"]["exit"]["counts"], "per_corpus": per_corpus}
    report["chosen_rule"] = max(report["rules"], key=lambda r: (report["rules"][r]["feasible_kinds"],
                                                                report["rules"][r]["objective"], r == "rise"))
    return report


def _pct(k: int, n: int) -> str:
    return f"{100.0 * k / n:5.1f} % ({k}/{n})" if n else "    - (0)"


def format_report(report: Mapping[str, Any]) -> str:
    """A readable table of every rule's chosen point and its dev figures."""
    lines = [f"judged families: {', '.join(report['families'])}; dev corpora: {', '.join(report['corpora'])}", ""]
    head = f"{'rule':<9}{'kind':<6}{'on-time credited':>20}{'negatives credited':>20}{'pre-existing rejected':>23}" \
           f"{'off-time located':>20}{'objective':>11}"
    lines += [head, "-" * len(head)]
    for rule, r in report["rules"].items():
        for kind in KINDS:
            c = r[kind]
            lines.append(f"{rule:<9}{kind:<6}{_pct(c['on_time_credited'], c['n_on_time']):>20}"
                         f"{_pct(c['negative_credited'], c['n_negative']):>20}"
                         f"{_pct(c['pre_existing_rejected'], c['n_pre_existing']):>23}"
                         f"{_pct(c['off_time_located'], c['n_off_time']):>20}{r['objective']:>11.3f}")
        consts = ", ".join(f"{k.split('.')[1]}={v:g}" for k, v in sorted(r["constants"].items()))
        lines.append(f"{'':<9}chosen: {consts}")
    lines.append("")
    lines.append(f"chosen rule: {report['chosen_rule']}")
    return "\n".join(lines)


def _why(rule: str, report: Mapping[str, Any]) -> str:
    r = report["rules"][rule]
    e, x = r["entry"], r["exit"]
    corpora = ", ".join(Path(c).name for c in report["corpora"])
    return (f"chosen by timingbench calibrate evidence on dev corpora only ({corpora}; rule {rule}; judged families "
            f"{', '.join(report['families'])}): entrances {e['on_time_credited']}/{e['n_on_time']} on-time credited, "
            f"{e['negative_credited']}/{e['n_negative']} negatives credited; exits {x['on_time_credited']}/"
            f"{x['n_on_time']} and {x['negative_credited']}/{x['n_negative']}")


def write_constants(path: Path, config: Config, report: Mapping[str, Any]) -> list[str]:
    """Write the chosen rule and its constants into the configuration file, ``calibrated`` with their dev figures.

    Only the lines of the written constants change. Returns the written keys.

    Raises
    ------
    ConfigError
        If a constant's line cannot be found in ``path``.
    """
    rule = str(report["chosen_rule"])
    values: dict[str, Any] = {"evidence.decision_rule": rule, **report["rules"][rule]["constants"]}
    whys = {k: _why(rule, report) for k in values}
    # constants only other rules read: the best of those rules' dev points, said to be unread
    others = sorted((r for r in report["rules"] if r != rule),
                    key=lambda r: (-report["rules"][r]["feasible_kinds"], -report["rules"][r]["objective"]))
    for other in others:
        for k, v in report["rules"][other]["constants"].items():
            if k not in values:
                values[k] = v
                whys[k] = (f"not read under the calibrated rule {rule}; the best dev point of the {other} rule "
                           f"(timingbench calibrate evidence, dev corpora only)")
    write_values(path, config, values, whys)
    return list(values)


def write_values(path: Path, config: Config, values: Mapping[str, Any], whys: Mapping[str, str]) -> None:
    """Rewrite the lines of the constants ``values`` names in the configuration file, ``calibrated`` with their why.

    Only those lines change; a constant keeps its ``loosening``.

    Raises
    ------
    ConfigError
        If a constant's section or line cannot be found in ``path``.
    """
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    for key, value in values.items():
        section, name = key.split(".")
        try:
            start = next(i for i, ln in enumerate(lines) if ln.rstrip() == f"  {section}:")
        except StopIteration:
            raise ConfigError(f"{path}: no section '{section}' to write {key} into") from None
        idx = next((i for i in range(start + 1, len(lines))
                    if lines[i].startswith(f"    {name}:")), None)
        if idx is None:
            raise ConfigError(f"{path}: constant '{key}' not found")
        loosening = config.constants[key].loosening
        why = whys[key].replace('"', "'")
        loose = f", loosening: {loosening}" if loosening else ""
        lines[idx] = f"    {name}: {{value: {json.dumps(value)}, provenance: calibrated{loose}, why: \"{why}\"}}"
    path.write_text("\n".join(lines) + ("\n" if text.endswith("\n") else ""), encoding="utf-8")

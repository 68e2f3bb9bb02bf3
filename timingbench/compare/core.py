"""Compare scored systems: per-system metrics with intervals, pairwise differences, ranks.

The comparison follows the paper's rules for reading the benchmark honestly:

- every rate is macro-averaged over prompts (samples of one prompt pooled first) and
  carries a seeded bootstrap interval over prompts;
- for each pair of systems the difference of a metric is computed on paired resamples;
  it is *resolved* only when its interval excludes 0 and, for a timing metric (seconds),
  when it is at least the family's published measurement floor (``floor_s`` in the
  events rows); otherwise it is "not resolved" and never ranked;
- the headline is the on-time rate over identity-verified events (``on_time_rate_judged``:
  judged families and whole-mix events); the rate over all events stands beside it, timing
  only for exempt families; systems are ranked on the judged rate;
- the p_chance-discounted on-time rate credits each on-time event ``1 - p_chance`` (an
  event without an estimate keeps its full credit) over exactly the events and prompts of
  the raw rate beside it, so it is never above it, in the estimate and in every resample;
  the low-p_chance rate is the share of *all* events delivered on time with a ``p_chance``
  of at most ``compare.low_p_chance_max`` (an on-time event without an estimate is not
  credited), so it too is never above the raw rate, and the events of clips that could not
  be scored (``p_chance`` null) stay in its denominator; the chance standard error of the
  discounted rate (:func:`chance_standard_error`) says how much of it is the chance draws'
  own spread;
- every submitted clip counts: the events of a clip that could not be scored are ``none``
  rows, and such a clip fails duration compliance, the timbre match of each event that
  would carry one, and, when a tempo was instructed, the tempo criteria; duration
  compliance and timbre match are reported apart from timing; prompts with no clip
  (``missing``) are disclosed per system. No rate, interval or rank of a system rises when
  one of its clips fails instead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from timingbench.compare.results import SystemResults, mixed_reasons
from timingbench.compare.stats import (
    Estimate,
    Series,
    bootstrap_counts,
    difference,
    estimate,
    rate_series,
    row_series,
    timbre_verdicts,
)
from timingbench.config import Config
from timingbench.controls.report import METRICS as CONTROL_METRICS
from timingbench.errors import ParameterError, TimingbenchError
from timingbench.prompts import EVENT_FAMILIES, EVENT_KINDS
from timingbench.summary import chance_standard_error, row_identity_verified, undelivered_timbre

#: The metric systems are ranked on first: the on-time rate over identity-verified events.
HEADLINE_METRIC = "on_time_rate_judged"

OUTCOME_RATES = ("on_time_rate", "off_time_rate", "none_rate")


@dataclass(frozen=True)
class CompareSettings:
    """The constants a comparison reads (config sections ``compare`` and ``tempo``).

    Attributes
    ----------
    n_boot : int
        Bootstrap resamples.
    seed : int
        Bootstrap seed.
    ci_level : float
        Interval level, e.g. 0.95.
    low_p_chance_max : float
        Largest p_chance of the low-p_chance subset.
    time_decimals : int
        Seconds are rounded to this many decimals before tolerance/floor comparisons.
    tempo_tolerance_pct : float
        Headline tempo tolerance in percent.
    tempo_ladder_pct : tuple of float
        Tolerance ladder in percent.
    min_prompts : int
        Fewest prompts with data in both systems for a difference to be resolved.
    """

    n_boot: int
    seed: int
    ci_level: float
    low_p_chance_max: float
    time_decimals: int
    tempo_tolerance_pct: float
    tempo_ladder_pct: tuple[float, ...]
    min_prompts: int


def settings_from_config(config: Config) -> CompareSettings:
    """Read the comparison constants.

    Raises
    ------
    ConfigError
        If a constant is missing or disabled (ranges are checked by
        :meth:`CompareParams.validate` when the configuration is loaded).
    """
    p = config.params.compare
    tempo = config.params.tempo
    return CompareSettings(
        n_boot=p.bootstrap_n, seed=p.bootstrap_seed, ci_level=p.ci_level,
        low_p_chance_max=p.low_p_chance_max, time_decimals=p.time_decimals,
        tempo_tolerance_pct=float(tempo.tolerance_pct),
        tempo_ladder_pct=tuple(float(x) for x in tempo.ladder_pct),
        min_prompts=p.min_prompts,
    )


@dataclass(frozen=True)
class MetricInfo:
    """How to read and rank one metric.

    Attributes
    ----------
    label : str
        Human-readable name.
    better : int
        +1 when higher is better, -1 when lower is better, 0 when neither (signed error).
    unit : str
        ``rate`` (fraction) or ``s`` (seconds).
    family : str or None
        Event family whose floor bounds a timing difference (``*`` = the largest floor).
    q : float
        Quantile for metrics in seconds.
    """

    label: str
    better: int
    unit: str
    family: str | None = None
    q: float = 0.5


def metric_info(key: str) -> MetricInfo:
    """Describe a metric key such as ``on_time_rate|family=bass`` or ``error_median_s``.

    Raises
    ------
    ParameterError
        If the key names no known metric.
    """
    base, _, scope = key.partition("|")
    where = f" ({scope.split('=', 1)[1]})" if scope else ""
    fam = scope.split("=", 1)[1] if scope.startswith("family=") else None
    table: dict[str, MetricInfo] = {
        "on_time_rate": MetricInfo("on-time rate", +1, "rate"),
        # neither direction: a failure turns an off-time delivery into none, lowering this share
        "off_time_rate": MetricInfo("off-time rate", 0, "rate"),
        "none_rate": MetricInfo("none rate", -1, "rate"),
        "on_time_rate_discounted": MetricInfo("on-time rate, p_chance-discounted", +1, "rate"),
        "on_time_rate_judged": MetricInfo("on-time rate, identity verified", +1, "rate"),
        "off_time_rate_judged": MetricInfo("off-time rate, identity verified", 0, "rate"),
        "none_rate_judged": MetricInfo("none rate, identity verified", -1, "rate"),
        "on_time_rate_discounted_judged": MetricInfo("on-time rate, identity verified, p_chance-discounted", +1,
                                                     "rate"),
        "on_time_rate_low_p_chance": MetricInfo("on-time rate, low-p_chance credits only (all events)", +1,
                                                "rate"),
        "error_median_s": MetricInfo("off-time signed error median", 0, "s", fam or "*", 0.5),
        "error_q25_s": MetricInfo("off-time signed error 25th pct", 0, "s", fam or "*", 0.25),
        "error_q75_s": MetricInfo("off-time signed error 75th pct", 0, "s", fam or "*", 0.75),
        "late_fraction": MetricInfo("off-time deliveries that are late", 0, "rate"),
        "tempo_octave_equivalent": MetricInfo("tempo octave-equivalent accuracy", +1, "rate"),
        "duration_ok_rate": MetricInfo("duration compliance", +1, "rate"),
        "timbre_match_rate": MetricInfo("timbre-match rate", +1, "rate"),
        **{f"control_{name}": MetricInfo(f"control adherence: {label}", +1, "rate")
           for name, _, label, _ in CONTROL_METRICS},
    }
    if base.startswith("tempo_within_") and base.endswith("pct"):
        return MetricInfo(f"tempo within ±{base[len('tempo_within_'):-3]} %", +1, "rate")
    if base not in table:
        raise ParameterError(f"unknown metric {key!r}")
    info = table[base]
    return MetricInfo(info.label + where, info.better, info.unit, info.family, info.q)


def _tempo_key(pct: float) -> str:
    return f"tempo_within_{pct:g}pct"


def system_series(
    system: SystemResults, *, index: dict[str, int], settings: CompareSettings
) -> dict[str, Series]:
    """Every metric of one system as per-prompt series on the shared prompt index.

    Parameters
    ----------
    system : SystemResults
    index : dict of str to int
        Prompt id -> position in the shared prompt index.
    settings : CompareSettings

    Returns
    -------
    series : dict of str to RateSeries or RowSeries
        Keyed by metric key (see :func:`metric_info`).
    """
    n = len(index)
    nd = settings.time_decimals
    ev = system.events
    pidx = np.array([index[e["prompt_id"]] for e in ev], dtype=np.int64)
    outcome = np.array([e["outcome"] for e in ev], dtype=object)
    kind = np.array([e["kind"] for e in ev], dtype=object)
    fam = np.array([e["family"] for e in ev], dtype=object)
    pch = np.array([np.nan if e.get("p_chance") is None else float(e["p_chance"]) for e in ev])
    err = np.array([np.nan if e.get("error_s") is None else round(float(e["error_s"]), nd) for e in ev])
    out: dict[str, Series] = {}

    def rates(mask: np.ndarray, suffix: str) -> None:
        for name, oc in zip(OUTCOME_RATES, ("on_time", "off_time", "none"), strict=True):
            out[name + suffix] = rate_series(prompt_index=pidx[mask], hits=(outcome[mask] == oc).astype(float),
                                             n_prompts=n)

    def errors(mask: np.ndarray, suffix: str) -> None:
        m = mask & (outcome == "off_time")
        rows = row_series(prompt_index=pidx[m], values=err[m], n_prompts=n)
        for q in ("median", "q25", "q75"):
            out[f"error_{q}_s{suffix}"] = rows
        out["late_fraction" + suffix] = rate_series(prompt_index=pidx[m], hits=(err[m] > 0).astype(float),
                                                    n_prompts=n)

    everything = np.ones(len(ev), dtype=bool)
    judged = np.array([row_identity_verified(e, system.summary) for e in ev], dtype=bool)
    rates(everything, "")
    rates(judged, "_judged")
    has_p = np.isfinite(pch)
    on = (outcome == "on_time").astype(float)
    credit = on * (1.0 - np.nan_to_num(pch))  # no estimate: full credit, never more than the raw hit
    chance = (system.summary.get("chance_credit") or {}).get("enabled")
    if chance is True or (chance is None and np.any(has_p)):  # scored with chance credit
        for mask, key in ((everything, "on_time_rate_discounted"), (judged, "on_time_rate_discounted_judged")):
            out[key] = rate_series(prompt_index=pidx[mask], hits=credit[mask], n_prompts=n)
        # over every event: an event of a failed clip (p_chance null) is an uncredited row, never left out
        low = on * (has_p & (np.round(np.nan_to_num(pch, nan=1.0), nd) <= settings.low_p_chance_max))
        out["on_time_rate_low_p_chance"] = rate_series(prompt_index=pidx, hits=low, n_prompts=n)
    errors(everything, "")
    for k in EVENT_KINDS:
        if np.any(kind == k):
            rates(kind == k, f"|kind={k}")
    for f in EVENT_FAMILIES:
        if np.any(fam == f):
            rates(fam == f, f"|family={f}")
            errors(fam == f, f"|family={f}")

    # every submitted clip: a clip that could not be scored fails duration and (instructed) tempo
    submitted = [*system.clips, *(c for c in system.errors if "prompt_id" in c and c["prompt_id"] in index)]
    tempo_rows = [(c, c["tempo"]) for c in submitted if c.get("tempo") is not None]
    tp = np.array([index[c["prompt_id"]] for c, _ in tempo_rows], dtype=np.int64)
    dev = np.array([
        np.inf if t.get("estimate_bpm") is None
        else round(abs(float(t["estimate_bpm"]) - float(t["target_bpm"])) / float(t["target_bpm"]) * 100.0, nd)
        for _, t in tempo_rows
    ])
    for pct in sorted(set(settings.tempo_ladder_pct) | {settings.tempo_tolerance_pct}):
        # The scorer's own ladder verdict when it wrote one, else recomputed from the estimate.
        hits = []
        for (_, t), d in zip(tempo_rows, dev, strict=True):
            given = (t.get("within_pct") or {}).get(f"{pct:g}") if isinstance(t.get("within_pct"), dict) else None
            hits.append(float(given) if isinstance(given, bool) else float(d <= pct))
        out[_tempo_key(pct)] = rate_series(prompt_index=tp, hits=hits, n_prompts=n)
    octave = np.array([float(t.get("octave_equivalent") is not None) for _, t in tempo_rows])
    out["tempo_octave_equivalent"] = rate_series(prompt_index=tp, hits=octave, n_prompts=n)

    dur = [(index[c["prompt_id"]], 0.0 if c.get("error") is not None else float(c["duration_ok"]))
           for c in submitted if c.get("error") is not None or isinstance(c.get("duration_ok"), bool)]
    out["duration_ok_rate"] = rate_series(prompt_index=[d[0] for d in dur], hits=[d[1] for d in dur], n_prompts=n)
    tim = [(index[c["prompt_id"]], float(v)) for c in system.clips for v in timbre_verdicts(c.get("timbre_match"))]
    backend = ((system.summary.get("family_evidence") or {}).get("requested")
               if isinstance(system.summary.get("family_evidence"), dict) else None)
    tim += [(index[r["prompt_id"]], 0.0) for r in undelivered_timbre(ev, submitted, backend=backend)]
    out["timbre_match_rate"] = rate_series(prompt_index=[t[0] for t in tim], hits=[t[1] for t in tim], n_prompts=n)
    out.update(control_series(submitted, index=index, n_prompts=n))
    return out


def control_series(clips: Sequence[dict[str, Any]], *, index: dict[str, int], n_prompts: int) -> dict[str, Any]:
    """Per-prompt series of each control-adherence metric in [0, 1] (``control_<name>``).

    Dynamics (a correlation in [-1, 1]) is not pooled as a rate; clips without the control
    add nothing, and a system without any has no series for it.
    """
    out: dict[str, Any] = {}
    for name, metric, _, _ in CONTROL_METRICS:
        if name == "dynamics":
            continue
        got = [(index[c["prompt_id"]], float(c["controls"][name][metric])) for c in clips
               if isinstance(c.get("controls"), dict) and isinstance(c["controls"].get(name), dict)
               and isinstance(c["controls"][name].get(metric), int | float)]
        if got:
            out[f"control_{name}"] = rate_series(prompt_index=[g[0] for g in got], hits=[g[1] for g in got],
                                                 n_prompts=n_prompts)
    return out


@dataclass(frozen=True)
class PairRow:
    """One metric's difference between two systems.

    Attributes
    ----------
    metric : str
        Metric key.
    a, b : str
        System names; the difference is ``a - b``.
    diff : Estimate
    floor_s : float or None
        The measurement floor that bounds a timing difference (seconds), else None.
    resolved : bool
    verdict : str
        ``"<a> better"``, ``"<a> later"``, ... or ``"not resolved: <reason>"``.
    """

    metric: str
    a: str
    b: str
    diff: Estimate
    floor_s: float | None
    resolved: bool
    verdict: str


@dataclass
class Comparison:
    """The whole comparison.

    Attributes
    ----------
    systems : list of SystemResults
    prompt_ids : list of str
        The shared prompt index (union over systems), sorted.
    settings : CompareSettings
    mixed : list of str
        Why the folders are not strictly comparable (empty when they are).
    estimates : dict of str to dict of str to Estimate
        System name -> metric key -> estimate.
    pairwise : list of PairRow
    floors_s : dict of str to float
        Event family -> published measurement floor in seconds (median of ``floor_s``).
    ranks : dict of str to dict of str to int
        Metric key -> system name -> rank (1 + systems resolved better than it).
    chance_se : dict of str to dict of str to float or None
        System name -> discounted metric key -> the spread of that macro rate that comes from
        the chance draws alone (:func:`discounted_chance_se`).
    """

    systems: list[SystemResults]
    prompt_ids: list[str]
    settings: CompareSettings
    mixed: list[str]
    estimates: dict[str, dict[str, Estimate]]
    pairwise: list[PairRow]
    floors_s: dict[str, float]
    ranks: dict[str, dict[str, int]] = field(default_factory=dict)
    chance_se: dict[str, dict[str, float | None]] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        """System names in command-line order."""
        return [s.name for s in self.systems]


#: Metrics compared pairwise (plus the per-kind and per-family ones added by compare_systems).
PAIRWISE_METRICS = (
    "on_time_rate_judged", "none_rate_judged", "on_time_rate_discounted_judged",
    "on_time_rate", "none_rate", "on_time_rate_discounted", "on_time_rate_low_p_chance",
    "error_median_s", "tempo_octave_equivalent", "duration_ok_rate", "timbre_match_rate",
)


def family_floors(systems: Sequence[SystemResults]) -> dict[str, float]:
    """Per-family measurement floor in seconds: the median ``floor_s`` over all event rows."""
    vals: dict[str, list[float]] = {}
    for s in systems:
        for e in s.events:
            if e.get("floor_s") is not None:
                vals.setdefault(e["family"], []).append(float(e["floor_s"]))
    return {f: float(np.median(v)) for f, v in vals.items()}


def _verdict(key: str, a: str, b: str, d: Estimate, floor: float | None, *, decimals: int,
             min_prompts: int) -> tuple[bool, str]:
    info = metric_info(key)
    if not (np.isfinite(d.value) and np.isfinite(d.lo) and np.isfinite(d.hi)) or d.n_prompts < min_prompts:
        return False, f"not resolved: fewer than {min_prompts} prompts with data in both systems"
    if d.lo <= 0.0 <= d.hi:
        return False, "not resolved: interval includes 0"
    if floor is not None and round(abs(d.value), decimals) < round(floor, decimals):
        return False, f"not resolved: below the measurement floor of {floor * 1000:.0f} ms"
    if info.better == 0:
        if info.unit == "s":
            return True, f"{a} later" if d.value > 0 else f"{a} earlier"
        return True, f"{a} higher" if d.value > 0 else f"{a} lower"
    better_a = (d.value > 0) == (info.better > 0)
    return True, f"{a} better" if better_a else f"{b} better"


def compare_systems(
    systems: Sequence[SystemResults], *, config: Config, allow_mixed: bool = False
) -> Comparison:
    """Compare two or more scored systems.

    Parameters
    ----------
    systems : sequence of SystemResults
        One per system, names unique.
    config : Config
        Configuration with the ``compare`` and ``tempo`` sections.
    allow_mixed : bool
        Compare folders scored with different configurations or prompt sets anyway (the
        reasons are then carried in ``Comparison.mixed`` and printed on every table).

    Returns
    -------
    comparison : Comparison

    Raises
    ------
    ParameterError
        If fewer than two systems are given or names repeat.
    TimingbenchError
        If the folders are mixed and ``allow_mixed`` is false (the message says how).
    """
    systems = list(systems)
    if len(systems) < 2:
        raise ParameterError("compare needs at least two results folders")
    names = [s.name for s in systems]
    if len(set(names)) != len(names):
        raise ParameterError(f"system names must be unique, got {names}")
    mixed = mixed_reasons(systems)
    if mixed and not allow_mixed:
        raise TimingbenchError("refusing to compare: " + "; ".join(mixed)
                               + ". Re-score with one config and prompt set, or pass --allow-mixed "
                               "(every table then says the comparison is mixed)")
    settings = settings_from_config(config)
    prompt_ids = sorted(set().union(*(s.prompt_ids for s in systems)))
    if not prompt_ids:
        raise TimingbenchError("the results folders cover no prompts")
    index = {p: i for i, p in enumerate(prompt_ids)}
    counts = bootstrap_counts(n_prompts=len(prompt_ids), n_boot=settings.n_boot, seed=settings.seed)
    series = {s.name: system_series(s, index=index, settings=settings) for s in systems}
    estimates = {name: _estimates(ser, counts, settings) for name, ser in series.items()}
    floors = family_floors(systems)
    pair_keys = list(PAIRWISE_METRICS)
    pair_keys += [_tempo_key(settings.tempo_tolerance_pct)]
    all_keys = set().union(*(set(v) for v in series.values()))
    pair_keys += sorted(k for k in all_keys if k.startswith("control_"))
    pair_keys += sorted(k for k in all_keys if k.startswith("on_time_rate|"))
    pair_keys += sorted(k for k in all_keys if k.startswith("error_median_s|family="))
    pairwise: list[PairRow] = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            for key in pair_keys:
                if key not in series[a] or key not in series[b]:
                    continue
                info = metric_info(key)
                floor = None
                if info.unit == "s":
                    if info.family == "*":
                        floor = max(floors.values()) if floors else None
                    elif info.family is not None:
                        floor = floors.get(info.family)
                d = difference(series[a][key], series[b][key], counts, level=settings.ci_level, q=info.q)
                ok, verdict = _verdict(key, a, b, d, floor, decimals=settings.time_decimals,
                                       min_prompts=settings.min_prompts)
                pairwise.append(PairRow(key, a, b, d, floor, ok, verdict))
    comp = Comparison(systems, prompt_ids, settings, mixed, estimates, pairwise, floors)
    comp.ranks = ranks(comp)
    comp.chance_se = {s.name: discounted_chance_se(s) for s in systems}
    return comp


def discounted_chance_se(system: SystemResults) -> dict[str, float | None]:
    """The chance standard error of each macro p_chance-discounted rate of ``system``.

    Each event weighs ``1 / (events of its prompt x prompts)`` in the macro rate, and its
    credit's binomial variance is read from its ``p_chance`` and the run's
    ``chance_credit.draws`` (:func:`timingbench.summary.chance_standard_error`).

    Returns
    -------
    se : dict of str to float or None
        ``on_time_rate_discounted`` and ``on_time_rate_discounted_judged`` -> standard error
        (a fraction); None when the folder records no draws or has no events.
    """
    chance = system.summary.get("chance_credit")
    draws = chance.get("draws") if isinstance(chance, dict) and chance.get("enabled") is not False else None
    judged = [e for e in system.events if row_identity_verified(e, system.summary)]
    out: dict[str, float | None] = {}
    for key, rows in (("on_time_rate_discounted", system.events), ("on_time_rate_discounted_judged", judged)):
        per_prompt = Counter(r["prompt_id"] for r in rows)
        weights = [1.0 / (per_prompt[r["prompt_id"]] * len(per_prompt)) for r in rows]
        out[key] = chance_standard_error(rows, draws=draws if isinstance(draws, int) else None, weights=weights)
    return out


def _estimates(series: dict[str, Series], counts: np.ndarray, settings: CompareSettings) -> dict[str, Estimate]:
    return {k: estimate(v, counts, level=settings.ci_level, q=metric_info(k).q) for k, v in series.items()}


def system_estimates(system: SystemResults, *, config: Config) -> dict[str, Estimate]:
    """Every metric of one system with its bootstrap interval, as :func:`compare_systems` computes it.

    Parameters
    ----------
    system : SystemResults
    config : Config
        Configuration with the ``compare`` and ``tempo`` sections.

    Returns
    -------
    estimates : dict of str to Estimate
        Metric key (see :func:`metric_info`) -> estimate, macro-averaged over the
        system's prompts with the configured bootstrap.

    Raises
    ------
    TimingbenchError
        If the folder covers no prompts.
    """
    settings = settings_from_config(config)
    prompt_ids = sorted(system.prompt_ids)
    if not prompt_ids:
        raise TimingbenchError(f"{system.path}: the results folder covers no prompts")
    index = {p: i for i, p in enumerate(prompt_ids)}
    counts = bootstrap_counts(n_prompts=len(prompt_ids), n_boot=settings.n_boot, seed=settings.seed)
    return _estimates(system_series(system, index=index, settings=settings), counts, settings)


def ranks(comp: Comparison) -> dict[str, dict[str, int]]:
    """Rank systems per metric: 1 + the number of systems resolved better than it.

    Systems no resolved difference separates share a rank; metrics with no better
    direction (signed errors) are not ranked.
    """
    out: dict[str, dict[str, int]] = {}
    keys = {p.metric for p in comp.pairwise if metric_info(p.metric).better != 0}
    for key in sorted(keys):
        beaten = {n: 0 for n in comp.names}
        for p in comp.pairwise:
            if p.metric != key or not p.resolved:
                continue
            loser = p.b if p.verdict == f"{p.a} better" else p.a
            beaten[loser] += 1
        out[key] = {n: 1 + beaten[n] for n in comp.names}
    return out

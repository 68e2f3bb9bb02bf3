"""Each gate's measured statistics set against the configuration constants they are judged by.

Detectors record, for every gate of a candidate, the numbers its verdict rests on
(``Candidate.stats[gate]``; a few gates keep theirs at the top level of the
evidence). :data:`RULES` says which constant each statistic is compared with and how, by
the statistic's name, optionally narrowed to a gate, to the direction of the event
(``rise``: entrances, starts, energy increases; ``fall``: exits, endings, pauses) and to
the family-evidence backend. ``{section}`` in a constant name is the detector's own
configuration section (``percussion``, ``stem``, ``tonal``, ``mix``, ``energy``); a
detector without that constant has no threshold for the statistic. Thresholds are read
from ``config.params`` (the values the detectors use). Statistics no rule names are
reported with their value only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from timingbench.config import Config
from timingbench.convert import TIME_DECIMALS
from timingbench.params.bounds import BOUNDS, DESCRIPTIVE, DETECTOR_READS, Bound
from timingbench.params.sets import field_value

#: Configuration section of each detector (``events.jsonl`` ``detector`` field).
DETECTOR_SECTIONS = {d: reads[0] for d, reads in DETECTOR_READS.items()}
#: Event kinds whose change is a rise (everything else is a fall).
RISING_KINDS = ("instrument_entry", "music_start_after_silence", "mix_energy_increase")
#: Evidence fields that describe rather than measure (``backend`` is shown in the header;
#: a ``reason`` is kept only when there is one).
DESCRIPTIVE_KEYS = DESCRIPTIVE
#: Slack of the ``meets`` comparison (values are rounded to at most 4 decimals).
SLACK = 10.0 ** -TIME_DECIMALS


#: How each statistic is judged: the declaration in :mod:`timingbench.params.bounds`.
Rule = Bound
RULES: tuple[Rule, ...] = BOUNDS


@dataclass(frozen=True)
class GateCheck:
    """One measured statistic of one gate, with the threshold it is judged by.

    Attributes
    ----------
    gate : str
        Gate name as in the row's ``gates`` (``absence_before``, ``persistence``, ...).
    verdict : str
        The gate's verdict on the candidate (``pass`` | ``fail`` | ``exempt``).
    statistic : str or None
        Statistic name (None for a gate that recorded none).
    value : float, str or None
        The measured value (None: not measured; a string for a reason or label).
    constant : str or None
        The constant the value is judged by (None: value only).
    op : str or None
        ``<=`` or ``>=``.
    threshold : float or None
        The effective threshold (None when the constant is disabled or unmapped).
    meets : bool or None
        Whether ``value op threshold`` holds (None when either side is missing).
    """

    gate: str
    verdict: str
    statistic: str | None
    value: Any
    constant: str | None = None
    op: str | None = None
    threshold: float | None = None
    meets: bool | None = None


def direction_of(kind: str) -> str:
    """``rise`` for entrances, starts and energy increases; ``fall`` otherwise."""
    return "rise" if kind in RISING_KINDS else "fall"


def _resolve(template: str, section: str | None, config: Config) -> str | None:
    """The dotted constant ``template`` names, or None when no such constant exists.

    ``{section}`` is the detector's own section; a detector without that constant has no
    threshold for the statistic (there are no shared gate defaults: each detector reads its own).
    """
    if "{section}" in template:
        if not section:
            return None
        template = template.replace("{section}", section)
    return template if template in config.constants else None


def find_rule(key: str, *, gate: str, direction: str) -> Rule | None:
    """The first rule of :data:`RULES` that judges statistic ``key`` of ``gate``."""
    for r in RULES:
        if r.key != key or (r.gate is not None and r.gate != gate):
            continue
        if r.direction is not None and r.direction != direction:
            continue
        return r
    return None


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def gate_checks(
    gates: Mapping[str, str], evidence: Mapping[str, Any], *, kind: str, detector: str, config: Config,
) -> list[GateCheck]:
    """Every gate's statistics of one candidate against their thresholds.

    Parameters
    ----------
    gates : mapping of str to str
        The candidate's gate verdicts, in application order.
    evidence : mapping
        The candidate's evidence (``Candidate.stats``).
    kind : str
        formats §1 event kind (sets the direction of the rules).
    detector : str
        ``events.jsonl`` ``detector`` field (sets the ``{section}`` of the rules).
    config : Config
        The configuration the candidate was scored with.

    Returns
    -------
    checks : list of GateCheck
        In gate order; a gate with no recorded statistic gives one row with
        ``statistic=None``. A ``reason`` comes as a value-only row; ``backend`` is left out.
    """
    section = DETECTOR_SECTIONS.get(detector)
    direction = direction_of(kind)
    out: list[GateCheck] = []
    for gate, verdict in gates.items():
        detail = evidence.get(gate)
        stats: dict[str, Any] = dict(detail) if isinstance(detail, Mapping) else {}
        # a gate that keeps its statistic at the top level of the evidence
        for r in RULES:
            if r.gate == gate and r.key in evidence and r.key not in stats:
                stats[r.key] = evidence[r.key]
        if not stats:
            out.append(GateCheck(gate, verdict, None, None))
            continue
        for key, value in stats.items():
            if key in DESCRIPTIVE_KEYS and (key == "backend" or value is None):
                continue
            rule = find_rule(key, gate=gate, direction=direction) \
                if _is_number(value) or value is None else None
            if rule is None:
                out.append(GateCheck(gate, verdict, key, value))
                continue
            const = _resolve(rule.constant, section, config)
            if const is None:
                out.append(GateCheck(gate, verdict, key, value))
                continue
            raw = field_value(config, const)
            thr = None if raw is None else (-float(raw) if rule.negate else float(raw))
            meets = None
            if thr is not None and _is_number(value):
                meets = value <= thr + SLACK if rule.op == "<=" else value >= thr - SLACK
            out.append(GateCheck(gate, verdict, key, value, const, rule.op, thr, meets))
    return out


#: Columns of a gate table, as :func:`check_cells` fills them and :func:`format_checks` prints them.
CHECK_COLUMNS = ("gate", "verdict", "statistic", "value", "threshold", "meets")


def check_cells(c: GateCheck) -> tuple[str, str, str, str, str, str]:
    """One gate-table row as text, one cell per :data:`CHECK_COLUMNS` entry.

    The plain-text table (:func:`format_checks`) and the report's HTML table print these
    same cells, so both show the same numbers.
    """
    value = "-" if c.value is None else (f"{c.value:.4g}" if _is_number(c.value) else str(c.value))
    if c.constant is None:
        rule = "(value only)" if c.statistic is not None else "(no statistic recorded)"
    elif c.threshold is None:
        rule = f"{c.op} disabled ({c.constant})"
    else:
        rule = f"{c.op} {c.threshold:.4g} ({c.constant})"
    meets = "" if c.meets is None else ("yes" if c.meets else "NO")
    return c.gate, c.verdict, c.statistic or "-", value, rule, meets


def format_checks(checks: list[GateCheck]) -> list[str]:
    """Plain-text rows of a gate table: gate, verdict, statistic, value, rule, meets."""
    lines = [f"  {'gate':<24}{'verdict':<9}{'statistic':<20}{'value':>10}  {'threshold':<48}{'meets':>5}"]
    for c in checks:
        gate, verdict, statistic, value, rule, meets = check_cells(c)
        lines.append(f"  {gate:<24}{verdict:<9}{statistic:<20}{value:>10}  {rule:<48}{meets:>5}")
    return lines

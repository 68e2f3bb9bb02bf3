"""What each gate threshold bounds: the statistic, the gate, the direction of the comparison.

This is the one declaration of the decision rules. A gate records the numbers its verdict
rests on (``Candidate.stats[gate]``); each :class:`Bound` says which configuration constant
one of those statistics is compared with, and how: ``value op threshold``, the threshold
being the constant or (``negate``) minus it. ``{section}`` in a constant is the detector's
own section. From it are derived:

- ``timingbench explain``'s gate table (:mod:`timingbench.explain.thresholds`);
- which way a constant tightens a gate (:func:`stricter`), the direction the fitters and
  the YAML's ``loosening`` state (a test holds them to it);
- which detectors read a section (:data:`DETECTOR_READS`, :func:`section_readers`), for the
  sensitivity sweep.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Bound:
    """How one measured statistic is judged.

    Attributes
    ----------
    key : str
        Statistic name in the gate's evidence.
    constant : str
        Dotted constant name; ``{section}`` is the detector's section.
    op : str
        ``<=`` or ``>=``: the statistic passes when ``value op threshold``.
    negate : bool
        The threshold is minus the constant (levels "N dB under" a reference).
    gate : str or None
        Only for this gate (None: any gate).
    direction : str or None
        Only for ``rise`` or ``fall`` events.
    """

    key: str
    constant: str
    op: str
    negate: bool = False
    gate: str | None = None
    direction: str | None = None


BOUNDS: tuple[Bound, ...] = (
    # level gates (timingbench.gates) on a stem or routed envelope, in dB re its own reference
    Bound("strict_db", "{section}.absence_strict_below_ref_db", "<=", negate=True),
    Bound("whole_db", "{section}.absence_whole_below_ref_db", "<=", negate=True),
    Bound("after_db", "{section}.absence_strict_below_ref_db", "<=", negate=True),
    Bound("strict_density_rel", "{section}.absence_density_max_rel", "<="),
    Bound("whole_density_rel", "{section}.absence_density_max_rel", "<="),
    Bound("held_fraction", "{section}.persistence_min_fraction", ">="),
    Bound("change_db", "{section}.level_min_change_db", ">=", direction="rise"),
    Bound("change_db", "{section}.level_min_change_db", "<=", negate=True, direction="fall"),
    # whole-mix detectors
    Bound("quiet_strict", "mix.quiet_min_fraction", ">="),
    Bound("quiet_prefix", "mix.start_prefix_min_fraction", ">="),
    Bound("gone_after_s", "mix.decay_budget_s", "<="),
    Bound("quiet_fraction", "mix.quiet_min_fraction", ">="),
    Bound("sounding_fraction", "energy.min_music_before_fraction", ">="),
    Bound("onset_ratio", "energy.min_density_ratio", ">="),
    Bound("rise_db", "energy.min_rise_db", ">=", gate="level_change"),
    # tonal registers (statistics kept at the top level of the candidate's evidence)
    Bound("register_change_db", "tonal.min_rise_db", ">=", gate="tonal_change", direction="rise"),
    Bound("register_change_db", "tonal.min_fall_db", "<=", negate=True, gate="tonal_change", direction="fall"),
    Bound("whole_rise_db", "tonal.whole_rise_db", ">=", gate="register_absent_before"),
    Bound("after_drop_db", "tonal.absent_after_db", ">=", gate="register_absent_after"),
)

#: Statistics a gate records that describe rather than measure (never bounded).
DESCRIPTIVE = ("backend", "reason")
#: Statistics a gate records for the reader that no constant bounds directly: a presence
#: gate's level (its per-family bound is recorded beside it, as ``bound``) and a sounding
#: side's level.
MEASURED_ONLY = ("sounding", "level")

#: The configuration sections each detector reads (``events.jsonl`` ``detector``), its own first.
DETECTOR_READS: dict[str, tuple[str, ...]] = {
    "percussion": ("percussion",),
    "stem": ("stem",),
    "tonal": ("tonal",),
    "presence": ("presence",),
    "mix.start": ("mix",),
    "mix.stop": ("mix",),
    "energy": ("energy", "mix"),  # energy reads the mix silence line
}


def own_section(detector: str) -> str | None:
    """The detector's own configuration section (``{section}`` of its bounds)."""
    reads = DETECTOR_READS.get(detector)
    return reads[0] if reads else None


def section_readers() -> dict[str, tuple[str, ...]]:
    """Section -> the detectors that read it (in :data:`DETECTOR_READS` order)."""
    out: dict[str, list[str]] = {}
    for detector, sections in DETECTOR_READS.items():
        for s in sections:
            out.setdefault(s, []).append(detector)
    return {s: tuple(d) for s, d in out.items()}


def stricter(constant: str) -> int:
    """+1 when raising ``constant`` tightens the gates it bounds, -1 when lowering it does.

    ``constant`` is dotted (``evidence.entry_min_prob``); a detector's own constant matches
    the bounds written with ``{section}``.

    Raises
    ------
    KeyError
        If no bound names the constant, or its bounds disagree on the direction.
    """
    section, name = constant.split(".", 1)
    signs = {(1 if (b.op == ">=") != b.negate else -1) for b in BOUNDS
             if b.constant == constant or (b.constant == "{section}." + name and section in own_sections())}
    if len(signs) != 1:
        raise KeyError(f"{constant}: {'no bound names it' if not signs else 'its bounds disagree on the direction'}")
    return signs.pop()


def own_sections() -> set[str]:
    """The sections that are some detector's own."""
    return {s for s in map(own_section, DETECTOR_READS) if s is not None}

"""Who was judged: a run's judged families in words, and what their published figures warn of.

The identity-verified headline counts the events of the *judged* families (their instrument
is checked by the family evidence) and whole-mix events. Which families are judged is the
registry's (:func:`timingbench.families.judged_families`, ``families.table``), less those the
run could not judge (``--family-evidence none``, a backend that cannot judge a family). The
summary, the terminal table and the report name them beside the headline, and warn where
a judged family's published validation figures credit negatives (clips in which the event
did not occur): there a credit can come from another layer changing at the instructed time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from timingbench.config import Config
from timingbench.families import judged_families, registry

#: The field of a ``families.table`` row that records the family's published validation
#: figure of negatives: ``[credited, total]`` over the held-out validation corpora.
NEGATIVES_FIELD = "validation_negatives_credited"


def run_judged_families(config: Config, exempt: Mapping[str, str]) -> tuple[str, ...]:
    """The registry's judged families that a run judged, in registry order.

    Parameters
    ----------
    config : Config
        The run's configuration (its family registry).
    exempt : mapping of str to str
        Family -> why the run did not judge it (the summary's ``family_evidence.exempt_families``).

    Returns
    -------
    families : tuple of str
    """
    return tuple(f for f in judged_families(config) if f not in exempt)


def judged_label(families: Sequence[str]) -> str:
    """The judged set in words, as the headline names it: ``judged: strings; + whole mix``.

    Parameters
    ----------
    families : sequence of str
        The judged instrument families (whole-mix events always count).

    Returns
    -------
    label : str
        ``judged: none; whole mix only`` when no instrument family is judged.
    """
    if not families:
        return "judged: none; whole mix only"
    return f"judged: {', '.join(families)}; + whole mix"


def published_credited_negatives(config: Config) -> dict[str, tuple[int, int]]:
    """Family -> (negatives credited, negatives) of its published validation figures.

    Read from the :data:`NEGATIVES_FIELD` of each ``families.table`` row; a row without it
    records no figure (nothing to warn of).

    Parameters
    ----------
    config : Config
        The run's configuration.

    Returns
    -------
    figures : dict of str to (int, int)
    """
    out = {}
    for row in registry(config).table:
        fig: Any = row.get(NEGATIVES_FIELD)
        if isinstance(fig, list | tuple) and len(fig) == 2:
            out[str(row["name"])] = (int(fig[0]), int(fig[1]))
    return out


def credited_negative_warnings(judged: Sequence[str], figures: Mapping[str, tuple[int, int]]) -> list[str]:
    """One warning per judged family whose published validation figures credit negatives.

    Parameters
    ----------
    judged : sequence of str
        The run's judged families.
    figures : mapping of str to (int, int)
        Family -> (negatives credited, negatives) (:func:`published_credited_negatives`).

    Returns
    -------
    warnings : list of str
        In the order of ``judged``.
    """
    out = []
    for fam in judged:
        credited, total = figures.get(fam, (0, 0))
        if credited > 0:
            out.append(f"{fam} is judged, but its published validation figures credit {credited} of {total} "
                       "negatives: an on-time credit of it may be another layer changing at the instructed time")
    return out


def identity_judged(config: Config, exempt: Mapping[str, str], *,
                    by_evidence: Sequence[str] = ()) -> dict[str, Any]:
    """The ``identity_judged`` object of ``summary.json``: who the identity-verified headline judged.

    Parameters
    ----------
    config : Config
        The run's configuration.
    exempt : mapping of str to str
        Family -> why the run did not judge it.
    by_evidence : sequence of str
        Families the registry's ``judged_by`` evidences (a stem's level, the singing presence)
        judged on some of the run's clips.

    Returns
    -------
    judged : dict
        ``families`` (judged instrument families, registry order), ``whole_mix`` (always
        true: whole-mix events count), ``label`` (:func:`judged_label`), ``warnings``
        (:func:`credited_negative_warnings`) and ``quietest_heard`` (family -> evidence -> the
        quietest level band its published dev figures hear, :func:`quietest_heard`).
    """
    extra = set(by_evidence)
    fams = tuple(f for f in registry(config).names if f in extra or f in run_judged_families(config, exempt))
    return {"families": list(fams), "whole_mix": True, "label": judged_label(fams),
            "warnings": credited_negative_warnings(fams, published_credited_negatives(config)),
            "quietest_heard": {f: q for f in fams if (q := quietest_heard(config, f))}}


def quietest_heard(config: Config, family: str) -> dict[str, str | None]:
    """Evidence -> "the quietest entrance it hears" of ``family``: the quietest level band (dB re the
    backing) from which its published dev figures (``figures.<evidence>.dev.quietest_heard`` of its
    registry row) credit 80 % or more on time; empty when the row records none."""
    row = registry(config).family(family)
    figs = {} if row is None else dict(row.figures)
    judging = {"+".join(names) for names in ({} if row is None else row.judged_by).values()}
    return {ev: (f.get("dev") or {}).get("quietest_heard") for ev, f in figs.items()
            if isinstance(f, Mapping) and (not judging or ev in judging)}

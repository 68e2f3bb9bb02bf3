"""Parameter set of the ``families`` section: the instrument family registry.

One row of ``families.table`` per instrument family, in the order of the shipped evidence
network's output rows: its General MIDI programs, AudioSet classes, separation stem, prompt
targets and whether its identity is judged. ``families.floors_s`` holds the published
localization floor of each family (and of the whole mix). :mod:`timingbench.families` is the
module code reads the registry through.

Each field is the constant of the same name in the ``families`` section of
``configs/timingbench-v1.yaml``. The fields' docstring entries (the constant's ``why`` and
provenance) are generated from it by ``tools/params_docs.py --write``;
``tests/test_params_docs.py`` fails when they drift.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from timingbench.errors import ConfigError
from timingbench.params.base import Params, register

#: The whole-mix family: events that concern the whole mix name it; it carries no identity.
MIX = "mix"
#: Keys a row of ``families.table`` may hold.
ROW_KEYS = ("name", "judged", "exempt", "stem", "gm_drum_kits", "gm_programs", "audioset_classes",
            "prompt_targets", "dev_on_time", "dev_negatives_credited", "validation_on_time",
            "validation_negatives_credited", "judged_by", "figures")
#: The evidences that may decide a family's events besides the ``--family-evidence`` backend
#: (:mod:`timingbench.identity.stem_evidence`): its demucs stem's level, and the singing presence.
JUDGING_EVIDENCES = ("stems", "singing")
#: When a row's ``judged_by`` applies: on a clip with demucs stems, and on one without (the mix).
JUDGING_SITUATIONS = ("stems", "mix")
#: Row fields that record a measured figure as ``[count, out of]`` (the judging bar's evidence).
FIGURE_KEYS = ("dev_on_time", "dev_negatives_credited", "validation_on_time", "validation_negatives_credited")
#: Keys every row must hold.
REQUIRED_ROW_KEYS = ("name", "gm_programs", "audioset_classes")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class Family:
    """One instrument family of the registry (a row of ``families.table``).

    Attributes
    ----------
    name : str
        The family's name, as prompts write it (``"bass"``).
    index : int
        Its position in the registry: the output row of the shipped evidence network.
    gm_programs : tuple of int
        General MIDI programs (0-based) that belong to the family: the renderer's
        instruments of these programs are the family's, and the evidence model trains on them.
    gm_drum_kits : tuple of int
        General MIDI drum-kit programs (percussion channel) that belong to the family.
    audioset_classes : tuple of str
        AudioSet display names (``class_labels_indices.csv``) a tagger reads the family from.
    stem : str or None
        The separation stem the family is read from (``drums``, ``bass``, ``guitar``,
        ``piano``, ``vocals``); None when it has none (the tonal detector's families).
    prompt_targets : tuple of str
        Free-text names of the family's instruments that generated prompts use.
    exempt_reason : str or None
        Why the ``--family-evidence`` backend does not judge the family's identity (events are
        timed only unless :attr:`judged_by` names an evidence); None when judged.
    floor_s : float or None
        Published localization floor in seconds (``families.floors_s``); None when not measured.
    judged_by : dict of str to tuple of str
        Situation (``stems``: the clip has demucs stems; ``mix``: it has none) -> the evidences
        (:data:`JUDGING_EVIDENCES`) that decide the family's events there, all of them together;
        a situation absent: those evidences do not judge it there.
    figures : dict
        Evidence (or evidences joined by ``+``, as they decide together) -> split -> the figures that
        judged it (``on_time_by_band``, ``negatives_credited``, ...), as measured (recorded, never read
        by a decision).
    """

    name: str
    index: int
    gm_programs: tuple[int, ...]
    gm_drum_kits: tuple[int, ...]
    audioset_classes: tuple[str, ...]
    stem: str | None
    prompt_targets: tuple[str, ...]
    exempt_reason: str | None
    floor_s: float | None
    judged_by: Mapping[str, tuple[str, ...]] = field(default_factory=dict, hash=False)
    figures: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)

    def judging_evidences(self, *, stems: bool) -> tuple[str, ...]:
        """The evidences that decide the family's events on a clip with (``stems``) or without demucs stems."""
        return tuple(self.judged_by.get("stems" if stems else "mix", ()))

    @property
    def judged(self) -> bool:
        """True when the family's identity is judged (it is not exempt)."""
        return self.exempt_reason is None


def _fail(name: str, what: str) -> ConfigError:
    return ConfigError(f"constant 'families.{name}' field 'value' {what}")


def _int_list(value: Any, where: str) -> tuple[int, ...]:
    if not isinstance(value, list | tuple) or any(
            isinstance(p, bool) or not isinstance(p, int) or not 0 <= p <= 127 for p in value):
        raise _fail("table", f"{where} must be a list of General MIDI programs 0-127, got {value!r:.80}")
    if len(set(value)) != len(value):
        raise _fail("table", f"{where} lists a program twice: {value!r:.80}")
    return tuple(value)


def _str_list(value: Any, where: str, *, empty: bool) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or any(not isinstance(s, str) or not s.strip() for s in value):
        raise _fail("table", f"{where} must be a list of non-empty strings, got {value!r:.80}")
    if not empty and not value:
        raise _fail("table", f"{where} must not be empty")
    return tuple(value)


def _row(i: int, row: Any, floors: Mapping[str, Any]) -> Family:
    """Check one row of the table and build its :class:`Family`."""
    if not isinstance(row, Mapping):
        raise _fail("table", f"row {i} must be a mapping with {list(REQUIRED_ROW_KEYS)}, got {row!r:.80}")
    name = row.get("name")
    if not isinstance(name, str) or not _NAME.match(name) or name == MIX:
        raise _fail("table", f"row {i}: field 'name' must be a lower-case identifier other than "
                    f"{MIX!r} (the whole mix), got {name!r:.40}")
    where = f"row {i} ({name!r}): field"
    unknown = sorted(set(row) - set(ROW_KEYS))
    if unknown:
        raise _fail("table", f"row {i} ({name!r}) has unknown field(s) {unknown}; a row holds {list(ROW_KEYS)}")
    missing = [k for k in REQUIRED_ROW_KEYS if k not in row]
    if missing:
        raise _fail("table", f"row {i} ({name!r}) lacks field(s) {missing}")
    judged, exempt = row.get("judged"), row.get("exempt")
    if (judged is True) == (exempt is not None) or judged not in (True, None):
        raise _fail("table", f"row {i} ({name!r}) must say either 'judged: true' or 'exempt: <reason>'")
    if exempt is not None and (not isinstance(exempt, str) or not _NAME.match(exempt.replace(".", "_"))):
        raise _fail("table", f"{where} 'exempt' must be a reason written as one token "
                    f"(held_out_entrance_auc_below_0.85), got {exempt!r:.60}")
    for key in FIGURE_KEYS:
        fig = row.get(key)
        if fig is not None and not (isinstance(fig, list | tuple) and len(fig) == 2 and all(
                isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in fig) and fig[0] <= fig[1]):
            raise _fail("table", f"{where} '{key}' must be [count, out of] (two whole numbers, count <= out of), "
                        f"got {fig!r:.40}")
    stem = row.get("stem")
    if stem is not None and (not isinstance(stem, str) or not _NAME.match(stem)):
        raise _fail("table", f"{where} 'stem' must be a stem name or null, got {stem!r:.40}")
    judged_by = _judged_by(row.get("judged_by"), where, stem=stem)
    figures = row.get("figures") or {}
    if not isinstance(figures, Mapping) or any(
            not isinstance(k, str) or any(e not in (*JUDGING_EVIDENCES, "tagger") for e in k.split("+"))
            for k in figures):
        raise _fail("table", f"{where} 'figures' must map evidences {[*JUDGING_EVIDENCES, 'tagger']} (or several "
                    f"joined by '+') to their measured figures, got {figures!r:.60}")
    return Family(
        name=name, index=i,
        gm_programs=_int_list(row["gm_programs"], f"{where} 'gm_programs'"),
        gm_drum_kits=_int_list(row.get("gm_drum_kits", []), f"{where} 'gm_drum_kits'"),
        audioset_classes=_str_list(row["audioset_classes"], f"{where} 'audioset_classes'", empty=False),
        stem=stem,
        prompt_targets=_str_list(row.get("prompt_targets", []), f"{where} 'prompt_targets'", empty=True),
        exempt_reason=exempt,
        floor_s=None if floors.get(name) is None else float(floors[name]),
        judged_by=judged_by, figures=dict(figures),
    )


def _judged_by(value: Any, where: str, *, stem: str | None) -> dict[str, tuple[str, ...]]:
    """Check a row's ``judged_by`` (situation -> evidences) and return it with tuples."""
    if value is None:
        return {}
    if not isinstance(value, Mapping) or any(k not in JUDGING_SITUATIONS for k in value):
        raise _fail("table", f"{where} 'judged_by' must map {list(JUDGING_SITUATIONS)} to lists of evidences "
                    f"{list(JUDGING_EVIDENCES)}, got {value!r:.60}")
    out: dict[str, tuple[str, ...]] = {}
    for situation, names in value.items():
        if names is None:
            continue
        if not isinstance(names, list | tuple) or not names or any(n not in JUDGING_EVIDENCES for n in names):
            raise _fail("table", f"{where} 'judged_by.{situation}' must be a non-empty list of "
                        f"{list(JUDGING_EVIDENCES)}, got {names!r:.60}")
        if "stems" in names and (situation != "stems" or stem is None):
            raise _fail("table", f"{where} 'judged_by.{situation}' names 'stems', which needs the family's own "
                        "stem on a clip separated by demucs (judged_by.stems and a 'stem' field)")
        out[str(situation)] = tuple(names)
    return out


@register
@dataclass(frozen=True)
class FamiliesParams(Params):
    """Constants of the ``families`` section: the family registry.

    Other sets embed this one as it is (``evidence.families``), not a copy of their own
    section: ``OWN_SECTION``.

    Attributes
    ----------
    table : list[dict[str, Any]]
        one row per instrument family, in the order of the shipped evidence network's output rows
        (never reorder: the network's rows follow it; a new family goes at the end). name: as
        prompts write it. gm_drum_kits / gm_programs: the General MIDI drum-kit and melodic programs
        (0-based) of the family, each program in one family only; the renderer's instruments and the
        evidence model's training parts belong to a family by their program (GM has no singing
        voice: the choir patches 52 and 53 are the renderer's vocals, and timpani (47) is the
        renderer's percussion; neither is a singing voice or a drum kit, so no rendered choir or
        timpani enters the judging figures below). audioset_classes: AudioSet display names
        (class_labels_indices.csv) a tagger reads the family from. stem: the separation stem it is
        read from (null: none, the tonal detector's families). prompt_targets: how generated prompts
        name its instruments. judged: true, or exempt: <reason> when its identity is not judged
        (timed only, disclosed in every summary). judged_by: the evidences that decide the family on
        a clip with demucs stems (stems) and without (mix), all together (stems: its stem's level re
        the mix's loud level; singing: the singing presence; docs/families.md); they take precedence
        over the --family-evidence backend, whose verdict exempt records. A family is judged by an
        evidence when on real dev material (real recordings and real samples over real backings) its
        entrances and exits at calibration.judge_min_level_db (-12 dB) or louder re the backing are
        on time at calibration.judge_min_on_time (80 %) or more over at least
        calibration.judge_min_events (8), with at most calibration.judge_max_negative_rate (5 %) of
        at least calibration.judge_min_negatives (10) negatives credited (calibration/judging.py;
        tools/stem_figures.py). figures: per evidence, the dev (and, measured only, validation)
        figures by level band, audible, negatives credited, busy decoys none and the quietest band
        heard. dev_on_time / dev_negatives_credited / validation_*: the tagger presence's figures on
        the real corpus (found by the family's presence at the steps timingbench calibrate evidence
        chose; tools/presence_figures.py --split validation), by which no family reaches the bar
        (docs/semantic.md) (convention)
    floors_s : dict[str, Any] | None
        published localization floor per family and for the whole mix: median |detected - true
        onset| in s over the correctly located events (on-time credits and right off-time reports)
        of the rendered validation corpus, dsp separation, trained family evidence
        (validation/reports/validation/floors.json; events: percussion 3, bass 2, guitar 2, vocals
        1, strings 6, brass 6, woodwinds 4, keys 5, plucked 1, synth 1, mix 34); null or unlisted:
        not measured (no correctly located piano event). Reported next to every event, never used in
        a decision (calibrated)
    speech_classes : list[str]
        AudioSet classes of speech (class_labels_indices.csv): negatives of the vocals family, so
        that read speech never credits a vocal entrance (convention)
    animal_classes : list[str]
        AudioSet classes of animal sounds (Animal and its children, without Cowbell, an instrument
        filed under Cattle): negatives of every family (convention)
    """

    SECTION = "families"
    OWN_SECTION = True

    table: list[dict[str, Any]]
    floors_s: dict[str, Any] | None
    speech_classes: list[str]
    animal_classes: list[str]

    def validate(self) -> None:
        """Check the table.

        Raises
        ------
        ConfigError
            Naming ``families.<field>`` (and the row) when a row lacks a field, holds an
            unknown one or one of the wrong shape, says neither or both of ``judged`` and
            ``exempt``, a name or a General MIDI program appears twice, or a floor is not a
            non-negative number or names no family.
        """
        super().validate()
        if not self.table:
            raise _fail("table", "must list at least one family")
        rows = self.rows  # checks every row
        names = [f.name for f in rows]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise _fail("table", f"names a family twice: {dup}")
        for attr in ("gm_programs", "gm_drum_kits"):
            seen: dict[int, str] = {}
            for f in rows:
                for p in getattr(f, attr):
                    if p in seen:
                        raise _fail("table", f"gives {attr[3:].replace('_', ' ')} {p} to both {seen[p]!r} and "
                                    f"{f.name!r}: a program belongs to one family")
                    seen[p] = f.name
        for key, value in (self.floors_s or {}).items():
            if key not in names and key != MIX:
                raise _fail("floors_s", f"names {key!r}, which is no family of 'families.table' nor {MIX!r}")
            if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                                      or not math.isfinite(value) or value < 0):
                raise _fail("floors_s", f"must map families to seconds >= 0 or null, got {key}: {value!r:.40}")
        for attr in ("speech_classes", "animal_classes"):
            if any(not isinstance(s, str) or not s.strip() for s in getattr(self, attr)):
                raise _fail(attr, "must be a list of non-empty strings")

    @cached_property
    def rows(self) -> tuple[Family, ...]:
        """Every family of the table, in registry order."""
        floors = self.floors_s or {}
        return tuple(_row(i, row, floors) for i, row in enumerate(self.table))

    @cached_property
    def names(self) -> tuple[str, ...]:
        """The instrument families' names, in registry order (``mix`` not among them)."""
        return tuple(f.name for f in self.rows)

    def family(self, name: str) -> Family | None:
        """The row of family ``name`` (None when the registry has no such family)."""
        return next((f for f in self.rows if f.name == name), None)

    @property
    def judged(self) -> tuple[str, ...]:
        """The families whose identity is judged, in registry order."""
        return tuple(f.name for f in self.rows if f.judged)

    @property
    def exempt(self) -> dict[str, str]:
        """Family -> why its identity is not judged, in registry order."""
        return {f.name: f.exempt_reason for f in self.rows if f.exempt_reason is not None}

    def floor_of(self, family: str) -> float | None:
        """The published floor of ``family`` (or of ``mix``) in seconds; None when not measured."""
        value = (self.floors_s or {}).get(family)
        return None if value is None else float(value)

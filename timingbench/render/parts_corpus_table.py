"""The parts corpus as data: bass, percussion and vocals parts over real backings, read and checked.

The tables are package data in :data:`DATA_DIR` (``timingbench/data/parts_corpus/``); a line
that starts with ``#`` is a comment (the reader is the real corpus's,
:mod:`timingbench.render.real_corpus_table`).

- ``parts.csv``: the sources that play a family's part (one :class:`PartSource` a row):
  ``key``, ``split``, ``family`` (:data:`PART_FAMILIES`), ``player`` (:data:`PLAYERS`),
  ``instrument`` (a real-corpus recording key, a General MIDI program or a kit name),
  ``sound_set`` (the TiMidity++ configuration or the SF2 of a program) and a free ``note``.
- ``backings.csv``: per family and split, the backings (real-corpus recordings, none holding
  the family) and the decoys of a busy-decoy clip (parts of other families and real-corpus
  loops, none holding the family), space-separated.
- ``design.csv``: per family and split, ``count`` clips of each ``scenario`` and ``kind``,
  with the levels they cycle through.

The clips are not listed: :func:`parts_corpus_specs` draws them from the design with one
seed per clip (:data:`SPLIT_SEEDS` plus the family's offset plus the clip's index), so the
definition is the three tables and this module. Every drawn value (clip length, instructed
time, backing position, off-time displacement) is a pure function of the clip's seed; the
backing, part and decoy are taken in turn from the tables' lists.

Each clip is a :class:`~timingbench.render.real_corpus_table.RealClipSpec` whose layer
sources are real-corpus keys or ``parts.csv`` keys; its scenario is one of
:data:`PART_SCENARIOS` (``never_stops``: the part sounds from the start to the end of the
clip under an exit instruction).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from timingbench.errors import ParameterError
from timingbench.render.real_corpus_table import (
    REAL_SOURCES,
    LayerSpec,
    RealClipSpec,
    RealSource,
    _read,
    _unique,
)

#: The folder of the packaged tables.
DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "parts_corpus"
#: The families the corpus plays.
PART_FAMILIES = ("bass", "percussion", "vocals")
#: How a part source is played.
PLAYERS = ("recording", "timidity", "fluidsynth", "kit")
#: The scenarios of a parts clip.
PART_SCENARIOS = ("on_time", "off_time", "absent", "busy_decoy", "pre_existing", "never_stops")
#: The splits.
SPLITS = ("dev", "validation")
#: The first seed of each split; a family adds :data:`FAMILY_SEED_STEP` times its index in
#: :data:`PART_FAMILIES`, a clip its index in the family's design.
SPLIT_SEEDS = {"dev": 48_000, "validation": 49_000}
#: Seed distance between the families of a split.
FAMILY_SEED_STEP = 100
#: Range of a part's level relative to the backing, in dB.
LEVEL_RANGE_DB = (-18.0, 0.0)
#: Level bands (``[lo, hi)``, the last closed) of the recall tables, in dB.
LEVEL_BANDS_DB = ((-18.0, -12.0), (-12.0, -6.0), (-6.0, 0.0))
#: Clip lengths cycled by the clips' seeds, in seconds.
DURATIONS_S = (20.0, 22.0, 24.0)
#: The instructed time lies this far from the clip's start and end, in seconds.
EDGE_S = (5.0, 7.0)
#: Range of the magnitude of an off-time displacement, in seconds.
OFF_TIME_S = (1.5, 3.0)

_PART_COLUMNS = ("key", "split", "family", "player", "instrument", "sound_set", "note")
_BACKING_COLUMNS = ("family", "split", "backings", "decoys")
_DESIGN_COLUMNS = ("scenario", "kind", "count", "levels_db")
_KINDS = ("instrument_entry", "instrument_exit")


@dataclass(frozen=True)
class PartSource:
    """One source of a family's part.

    Attributes
    ----------
    key : str
        Name the clips use (a real-corpus key for a recording).
    split : str
        ``dev`` | ``validation``.
    family : str
        One of :data:`PART_FAMILIES`.
    player : str
        ``recording`` (decoded), ``timidity`` / ``fluidsynth`` (a seeded bass line on a General
        MIDI program) or ``kit`` (a seeded groove on a real drum kit).
    instrument : str
        The real-corpus key, the program number or the kit name.
    sound_set : str
        The TiMidity++ configuration or SF2 file of a program; empty otherwise.
    """

    key: str
    split: str
    family: str
    player: str
    instrument: str
    sound_set: str = ""

    @property
    def rendered(self) -> bool:
        """True when the part is played from MIDI notes (its truth checked against the first note-on)."""
        return self.player != "recording"

    @property
    def loops(self) -> bool:
        """True when the part covers any clip length (rendered, or a looped recording)."""
        return self.rendered or REAL_SOURCES[self.instrument].loop


@dataclass(frozen=True)
class Casting:
    """The backings and busy-decoy layers of one family in one split."""

    family: str
    split: str
    backings: tuple[str, ...]
    decoys: tuple[str, ...]


@dataclass(frozen=True)
class DesignRow:
    """``count`` clips of one scenario and kind, cycling through ``levels_db``."""

    scenario: str
    kind: str
    count: int
    levels_db: tuple[float, ...]


@dataclass(frozen=True)
class PartsTables:
    """The three tables, read and checked."""

    parts: dict[str, PartSource]
    casting: dict[tuple[str, str], Casting]
    design: tuple[DesignRow, ...]


def _contains(key: str, parts: Mapping[str, PartSource]) -> tuple[str, ...]:
    """Families heard in a layer or backing source (a rendered part holds its own family only)."""
    if key in parts and parts[key].rendered:
        return (parts[key].family,)
    return REAL_SOURCES[key].contains


def _split_of(key: str, parts: Mapping[str, PartSource]) -> str:
    return parts[key].split if key in parts else REAL_SOURCES[key].split


def load_parts(path: Path) -> dict[str, PartSource]:
    """Read ``parts.csv``.

    Raises
    ------
    ParameterError
        Naming the file, line and column: a key twice, an unknown split, family or player, a
        rendered part whose key is a real-corpus key, a recording that is not a real-corpus
        key of the same split and family, a program outside 0-127, a program without its
        sound set.
    """
    out: dict[str, PartSource] = {}
    seen: dict[object, int] = {}
    for row in _read(path, _PART_COLUMNS):
        key = row.text("key")
        _unique(row, "key", key, seen)
        split = row.text("split", SPLITS)
        family = row.text("family", PART_FAMILIES)
        player = row.text("player", PLAYERS)
        instrument = row.text("instrument")
        sound_set = row.cells["sound_set"]
        if player == "recording":
            src = REAL_SOURCES.get(instrument)
            if src is None or instrument != key:
                raise row.error("instrument", f"of a recording must be its key and a real-corpus source, got "
                                              f"{instrument!r}")
            if (src.split, src.family) != (split, family):
                raise row.error("split", f"and family must be the real corpus's ({src.split}, {src.family}) "
                                         f"for {key!r}")
        else:
            if key in REAL_SOURCES:
                raise row.error("key", f"{key!r} names a real-corpus recording; a rendered part needs its own key")
            if player in ("timidity", "fluidsynth"):
                if not instrument.isdigit() or not 0 <= int(instrument) <= 127:
                    raise row.error("instrument", f"must be a General MIDI program 0-127, got {instrument!r}")
                if not sound_set:
                    raise row.error("sound_set", "must name the TiMidity++ configuration or SF2 of the program")
        out[key] = PartSource(key, split, family, player, instrument, sound_set)
    return out


def load_casting(path: Path, parts: Mapping[str, PartSource]) -> dict[tuple[str, str], Casting]:
    """Read ``backings.csv``.

    Raises
    ------
    ParameterError
        Naming the file, line and column: a (family, split) twice or missing, an unknown
        source, a source of the other split, a backing or decoy that holds the family, a
        backing that is not a real-corpus music recording.
    """
    out: dict[tuple[str, str], Casting] = {}
    seen: dict[object, int] = {}
    for row in _read(path, _BACKING_COLUMNS):
        fam = row.text("family", PART_FAMILIES)
        split = row.text("split", SPLITS)
        _unique(row, "family", (fam, split), seen)
        lists = {}
        for col in ("backings", "decoys"):
            keys = tuple(row.text(col).split())
            for k in keys:
                if k not in parts and k not in REAL_SOURCES:
                    raise row.error(col, f"names {k!r}, neither a part nor a real-corpus source")
                if col == "backings" and (k not in REAL_SOURCES or REAL_SOURCES[k].kind != "music"):
                    raise row.error(col, f"{k!r} must be a real-corpus music recording")
                if _split_of(k, parts) != split:
                    raise row.error(col, f"{k!r} belongs to the other split")
                if fam in _contains(k, parts):
                    raise row.error(col, f"{k!r} holds the family {fam!r}")
            lists[col] = keys
        out[(fam, split)] = Casting(fam, split, lists["backings"], lists["decoys"])
    missing = [(f, s) for f in PART_FAMILIES for s in SPLITS if (f, s) not in out]
    if missing:
        raise ParameterError(f"{path}: no row for {missing}")
    return out


def load_design(path: Path) -> tuple[DesignRow, ...]:
    """Read ``design.csv``.

    Raises
    ------
    ParameterError
        Naming the file, line and column: an unknown scenario or kind, a (scenario, kind)
        twice, a negative count, levels outside :data:`LEVEL_RANGE_DB`, levels for a clip
        with nothing laid in or none for one with a part.
    """
    rows = []
    seen: dict[object, int] = {}
    for row in _read(path, _DESIGN_COLUMNS):
        scenario = row.text("scenario", PART_SCENARIOS)
        kind = row.text("kind", _KINDS)
        _unique(row, "scenario", (scenario, kind), seen)
        if scenario == "pre_existing" and kind != "instrument_entry" or (
                scenario == "never_stops" and kind != "instrument_exit"):
            raise row.error("kind", f"{kind!r} does not go with {scenario!r}")
        try:
            levels = tuple(float(x) for x in row.cells["levels_db"].split())
        except ValueError:
            raise row.error("levels_db", f"must be numbers, got {row.cells['levels_db']!r}") from None
        if any(not LEVEL_RANGE_DB[0] <= x <= LEVEL_RANGE_DB[1] for x in levels):
            raise row.error("levels_db", f"{levels} lie outside {LEVEL_RANGE_DB} dB")
        if (scenario == "absent") != (not levels):
            raise row.error("levels_db", "must be empty exactly for an absent clip")
        rows.append(DesignRow(scenario, kind, row.integer("count"), levels))
    return tuple(rows)


def load_parts_tables(folder: Path = DATA_DIR) -> PartsTables:
    """Read and check ``parts.csv``, ``backings.csv`` and ``design.csv`` of ``folder``.

    Raises
    ------
    ParameterError
        If a table is missing or malformed (naming the file, line and column), or a family
        has no part in a split.
    """
    folder = Path(folder)
    parts = load_parts(folder / "parts.csv")
    for fam in PART_FAMILIES:
        for split in SPLITS:
            if not any(p.family == fam and p.split == split for p in parts.values()):
                raise ParameterError(f"{folder / 'parts.csv'}: no {fam} part in the {split} split")
    return PartsTables(parts, load_casting(folder / "backings.csv", parts), load_design(folder / "design.csv"))


# ----------------------------------------------------------------------------- drawing the clips

def level_band(level_db: float | None) -> str | None:
    """The band of :data:`LEVEL_BANDS_DB` holding ``level_db`` (e.g. ``"-12..-6"``), None for None."""
    if level_db is None:
        return None
    for lo, hi in LEVEL_BANDS_DB:
        if lo <= level_db < hi or (hi == LEVEL_BANDS_DB[-1][1] and level_db == hi):
            return f"{lo:g}..{hi:g}"
    raise ParameterError(f"level {level_db!r} dB lies outside the bands {LEVEL_BANDS_DB}")


def clip_rng(seed: int, what: str) -> np.random.Generator:
    """The generator of one drawn quantity ``what`` of the clip with ``seed``."""
    return np.random.default_rng(np.random.SeedSequence([int(seed), zlib.crc32(what.encode())]))


def _uniform(seed: int, what: str, lo: float, hi: float) -> float:
    return round(float(clip_rng(seed, what).uniform(lo, hi)), 2)


def _backing_from(key: str, seed: int, duration_s: float) -> float:
    src: RealSource = REAL_SOURCES[key]
    lo, hi = src.segment_s
    if src.loop:
        return lo
    if hi - lo < duration_s + 0.1:
        raise ParameterError(f"backing {key!r} ({lo:g}-{hi:g} s) is shorter than a {duration_s:g} s clip")
    return _uniform(seed, "backing", lo, hi - duration_s - 0.1)


def _part_layer(part: PartSource, role: str, *, start_s: float, cut_s: float | None, level_db: float,
                duration_s: float) -> LayerSpec:
    """A part laid in from ``start_s`` (cut at ``cut_s``). A recording that does not loop starts early
    enough before a cut to still sound there, and, not cut, may end inside the clip (the instruction
    concerns its entrance only)."""
    if part.rendered:
        return LayerSpec(part.key, role, start_s, 0.0, cut_s, level_db)
    src = REAL_SOURCES[part.key]
    lo, hi = src.segment_s
    if not src.loop and cut_s is not None:
        start_s = round(max(start_s, cut_s - (hi - lo) + 1.5), 2)
    return LayerSpec(part.key, role, start_s, lo, cut_s, level_db)


def _draw(family: str, split: str, index: int, row: DesignRow, k: int, tables: PartsTables,
          pools: dict[str, list[PartSource]], counters: dict[str, int]) -> RealClipSpec:
    seed = SPLIT_SEEDS[split] + FAMILY_SEED_STEP * PART_FAMILIES.index(family) + index
    cast = tables.casting[(family, split)]
    dur = DURATIONS_S[index % len(DURATIONS_S)]
    backing = cast.backings[index % len(cast.backings)]
    if backing == "drum_bass":
        dur = min(dur, 24.0)
    t = _uniform(seed, "time", EDGE_S[0], dur - EDGE_S[1])
    level = row.levels_db[k % len(row.levels_db)] if row.levels_db else 0.0
    whole = row.scenario in ("pre_existing", "never_stops")
    pool = pools["whole" if whole else "any"]

    def next_part() -> PartSource:
        n = counters["whole" if whole else "any"]
        counters["whole" if whole else "any"] = n + 1
        return pool[n % len(pool)]

    layers: list[LayerSpec] = []
    if row.scenario in ("on_time", "off_time"):
        d = 0.0
        if row.scenario == "off_time":
            d = _uniform(seed, "offset", *OFF_TIME_S) * (1.0 if clip_rng(seed, "sign").random() < 0.5 else -1.0)
        part = next_part()
        if row.kind == "instrument_entry":
            layers.append(_part_layer(part, "target", start_s=round(t + d, 2), cut_s=None, level_db=level,
                                      duration_s=dur))
        else:
            layers.append(_part_layer(part, "target", start_s=0.0, cut_s=round(t + d, 2), level_db=level,
                                      duration_s=dur))
    elif row.scenario == "busy_decoy":
        decoy = cast.decoys[counters["decoy"] % len(cast.decoys)]
        counters["decoy"] += 1
        dsrc = tables.parts.get(decoy) or PartSource(decoy, split, "", "recording", decoy)
        if row.kind == "instrument_entry":
            layers.append(_part_layer(dsrc, "other", start_s=t, cut_s=None, level_db=level, duration_s=dur))
        else:
            layers.append(_part_layer(dsrc, "other", start_s=0.0, cut_s=t, level_db=level, duration_s=dur))
    elif whole:
        layers.append(_part_layer(next_part(), "before", start_s=0.0, cut_s=None, level_db=level, duration_s=dur))
    kind_word = "entry" if row.kind == "instrument_entry" else "exit"
    cid = f"parts-{split[:3]}-{family}-{index + 1:02d}-{kind_word}-{row.scenario.replace('_', '-')}"
    return RealClipSpec(cid, row.scenario, row.kind, family, t, dur, backing,
                        _backing_from(backing, seed, dur), tuple(layers), seed)


def parts_corpus_specs(split: str, *, tables: PartsTables | None = None,
                       families: tuple[str, ...] = PART_FAMILIES) -> tuple[RealClipSpec, ...]:
    """The clips of one split: for each family, the design's rows in order.

    Parameters
    ----------
    split : str
        ``dev`` | ``validation``.
    tables : PartsTables, optional
        The tables; the packaged ones (:data:`PARTS_TABLES`) when omitted.
    families : tuple of str
        The families to draw (all by default).

    Returns
    -------
    specs : tuple of RealClipSpec
        Checked by :func:`check_part_spec`.

    Raises
    ------
    ParameterError
        If ``split`` or a family is unknown, or a drawn clip breaks a corpus rule.
    """
    if split not in SPLITS:
        raise ParameterError(f"split must be one of {SPLITS}, got {split!r}")
    tb = tables if tables is not None else PARTS_TABLES
    out: list[RealClipSpec] = []
    for fam in families:
        if fam not in PART_FAMILIES:
            raise ParameterError(f"family must be one of {PART_FAMILIES}, got {fam!r}")
        own = [p for p in tb.parts.values() if p.family == fam and p.split == split]
        pools = {"any": own, "whole": [p for p in own if p.loops]}
        counters = {"any": 0, "whole": 0, "decoy": 0}
        index = 0
        for row in tb.design:
            for k in range(row.count):
                spec = _draw(fam, split, index, row, k, tb, pools, counters)
                check_part_spec(spec, tb.parts)
                out.append(spec)
                index += 1
    return tuple(out)


def check_part_spec(spec: RealClipSpec, parts: Mapping[str, PartSource]) -> None:
    """Check one parts clip against the corpus's rules.

    Raises
    ------
    ParameterError
        If a source is unknown or of another split, the family sounds where the scenario
        forbids it (a delivery whose backing or decoy holds it, a negative where it
        sounds), a delivery or pre-existing clip lacks its one part layer, a level lies
        outside :data:`LEVEL_RANGE_DB` or a time outside the clip.
    """
    where = f"parts clip {spec.clip_id!r}: "
    for k in spec.source_keys:
        if k not in parts and k not in REAL_SOURCES:
            raise ParameterError(f"{where}unknown source {k!r}")
    splits = {_split_of(k, parts) for k in spec.source_keys}
    if len(splits) != 1:
        raise ParameterError(f"{where}sources {list(spec.source_keys)} span the splits {sorted(splits)}")
    if spec.scenario not in PART_SCENARIOS:
        raise ParameterError(f"{where}scenario must be one of {PART_SCENARIOS}, got {spec.scenario!r}")
    if not 0.0 < spec.time_s < spec.duration_s:
        raise ParameterError(f"{where}time_s {spec.time_s!r} lies outside the clip")
    fam = spec.family
    if fam in REAL_SOURCES[spec.backing].contains:
        raise ParameterError(f"{where}the backing {spec.backing!r} holds {fam!r}")
    for ly in spec.layers:
        if not LEVEL_RANGE_DB[0] <= ly.level_db <= LEVEL_RANGE_DB[1]:
            raise ParameterError(f"{where}level {ly.level_db!r} dB outside {LEVEL_RANGE_DB}")
        end = ly.cut_s if ly.cut_s is not None else spec.duration_s
        if not 0.0 <= ly.start_s < end <= spec.duration_s:
            raise ParameterError(f"{where}layer {ly.source!r} lies outside the clip")
        holds = fam in _contains(ly.source, parts)
        if holds != (ly.role in ("target", "before")):
            raise ParameterError(f"{where}layer {ly.source!r} ({ly.role}) "
                                 f"{'holds' if holds else 'lacks'} the family {fam!r}")
    want = {"on_time": "target", "off_time": "target", "pre_existing": "before", "never_stops": "before",
            "busy_decoy": "other"}.get(spec.scenario)
    roles = [ly.role for ly in spec.layers]
    if roles != ([want] if want else []):
        raise ParameterError(f"{where}a {spec.scenario} clip lays in {[want] if want else []}, got {roles}")


PARTS_TABLES: PartsTables = load_parts_tables()
#: The packaged parts corpus by split.
PARTS_CORPUS: dict[str, tuple[RealClipSpec, ...]] = {s: parts_corpus_specs(s) for s in SPLITS}

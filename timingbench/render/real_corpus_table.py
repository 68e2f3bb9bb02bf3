"""The real corpus as data: its recordings and clips, read from CSV tables and checked.

The tables are package data in :data:`DATA_DIR` (``timingbench/data/real_corpus/``). A line
that starts with ``#`` is a comment; every other line is a row under the file's header.

- ``sources.csv``: the recordings of ``shared/realdata`` (one :class:`RealSource` a row):
  ``key``, ``split`` (``dev`` | ``validation``), ``kind`` (:data:`SOURCE_KINDS`), ``family``
  (empty: none), ``contains`` (families, space-separated), ``segment_start_s``,
  ``segment_end_s``, ``loop`` (``true`` | ``false``), ``phrase``, ``path`` (relative to
  ``shared/realdata``) and a free ``note``.
- ``clips.csv``: the clips (one :class:`RealClipSpec` a row, in corpus order): ``id``,
  ``seed``, ``scenario``, ``kind``, ``family``, ``time_s``, ``duration_s``, ``backing``,
  ``backing_from_s``.
- ``layers.csv``: the recordings laid into each clip (one :class:`LayerSpec` a row):
  ``clip``, ``layer`` (1, 2, ...: the order of the mix), ``source``, ``role``, ``start_s``,
  ``from_s``, ``cut_s`` (empty: not cut) and ``level_db``.
- ``families.csv``: for each family of the registry (:mod:`timingbench.families`) the corpus
  uses, how its prompts name it (``target``) and the onset character of an entrance from a
  recording's start (``character``).

Every value that reaches the audio is written in a row; a clip's seed draws only the wording
of its prompt, so the order of the rows changes neither audio nor truth. The levels were
drawn once from :data:`LEVEL_RANGE_DB` and the off-time displacements from 1-3 s; times are
written as Python prints the float (the shortest text that reads back to it), so an off-time
layer may start at ``11.629999999999999`` s, the instructed time plus its displacement.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from timingbench.errors import ParameterError
from timingbench.families import FAMILY_NAMES

#: The folder of the packaged tables.
DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "real_corpus"
#: Range of a laid-in layer's level relative to the backing's active RMS, in dB.
LEVEL_RANGE_DB = (-18.0, 0.0)
#: Scenario names a real clip can carry.
SCENARIOS = ("on_time", "off_time", "busy_decoy", "pre_existing", "absent", "speech_decoy",
             "animal_decoy", "noise_decoy")
#: The event kinds a real clip instructs.
CLIP_KINDS = ("instrument_entry", "instrument_exit")
#: What a recording is.
SOURCE_KINDS = ("music", "speech", "animal", "noise")
#: The splits; every recording belongs to one.
SPLITS = ("dev", "validation")
#: The roles of a layer (see :class:`LayerSpec`).
ROLES = ("target", "before", "other")
#: Onset characters of an entrance.
CHARACTERS = ("hard", "soft")

_SOURCE_COLUMNS = ("key", "split", "kind", "family", "contains", "segment_start_s", "segment_end_s", "loop",
                   "phrase", "path", "note")
_CLIP_COLUMNS = ("id", "seed", "scenario", "kind", "family", "time_s", "duration_s", "backing", "backing_from_s")
_LAYER_COLUMNS = ("clip", "layer", "source", "role", "start_s", "from_s", "cut_s", "level_db")
_FAMILY_COLUMNS = ("family", "target", "character")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True)
class RealSource:
    """One recording of ``shared/realdata`` and what the corpus may do with it.

    Attributes
    ----------
    key : str
        Short name used by the clips.
    path : str
        Path relative to the sources folder.
    split : str
        ``dev`` or ``validation``: the only split whose clips may use the recording.
    kind : str
        ``music``, ``speech``, ``animal`` or ``noise``.
    family : str or None
        The family a layer of this recording brings in (None: backing only, or not music).
    contains : tuple of str
        Every family heard in the usable segment (from RMS envelopes, a percussive / harmonic
        split and the musicnn tagger); checked against every clip's truth.
    segment_s : tuple of float
        The usable stretch ``(start, end)`` of the recording in seconds; a loop tiles it (its
        end clipped to the recording's length).
    loop : bool
        The recording is a loop: a layer or backing tiles ``segment_s`` with that period.
    phrase : str
        Style phrase of a prompt when the recording is the backing.
    """

    key: str
    path: str
    split: str
    kind: str
    family: str | None
    contains: tuple[str, ...]
    segment_s: tuple[float, float]
    loop: bool = False
    phrase: str = ""


@dataclass(frozen=True)
class LayerSpec:
    """One recording laid into a clip.

    Attributes
    ----------
    source : str
        Key of the recording.
    role : str
        ``target`` (the instructed family's delivery), ``before`` (the target family
        already sounding from the clip start) or ``other`` (a different recording: a decoy,
        speech, an animal, or the layer entering over a pre-existing target).
    start_s : float
        Clip time of the layer's first sample, in seconds (rounded to the sample).
    from_s : float
        Nominal source position of its first sample, in seconds (moved forward to the first
        audible sample).
    cut_s : float or None
        Clip time where the layer is cut (moved back to its last audible sample); None: it
        runs to the end of its usable segment or of the clip.
    level_db : float
        Level of its active RMS relative to the backing's, in dB.
    """

    source: str
    role: str
    start_s: float = 0.0
    from_s: float = 0.0
    cut_s: float | None = None
    level_db: float = 0.0


@dataclass(frozen=True)
class RealClipSpec:
    """One clip of the real corpus: a backing, its layers and the instructed event.

    Attributes
    ----------
    clip_id : str
        Clip and prompt id.
    scenario : str
        One of :data:`SCENARIOS`.
    kind : str
        ``instrument_entry`` or ``instrument_exit``.
    family : str
        The family the prompt asks for.
    time_s : float
        Instructed time in seconds.
    duration_s : float
        Clip length in seconds (also the prompt's duration).
    backing : str
        Key of the backing recording.
    backing_from_s : float
        Source position of the backing's first sample, in seconds (moved forward to the
        first audible sample).
    layers : tuple of LayerSpec
        The recordings laid in, in the order of the mix.
    seed : int
        Seed of the prompt's wording.
    """

    clip_id: str
    scenario: str
    kind: str
    family: str
    time_s: float
    duration_s: float
    backing: str
    backing_from_s: float
    layers: tuple[LayerSpec, ...]
    seed: int

    @property
    def split(self) -> str:
        """The split of the backing (every source of a clip shares it)."""
        return REAL_SOURCES[self.backing].split

    @property
    def source_keys(self) -> tuple[str, ...]:
        """Keys of every recording the clip uses, backing first."""
        return (self.backing, *(ly.source for ly in self.layers))

    @property
    def occurred(self) -> bool:
        """Whether the instructed event is delivered (on or off time)."""
        return self.scenario in ("on_time", "off_time")


@dataclass(frozen=True)
class CorpusFamily:
    """How the real corpus names one family.

    Attributes
    ----------
    family : str
        A family of the registry.
    target : str
        The prompts' name for it (an event's ``target``, an observed row's ``source``).
    character : str
        Onset character of an entrance from a recording's start: ``hard`` | ``soft``.
    """

    family: str
    target: str
    character: str


@dataclass(frozen=True)
class RealCorpus:
    """The tables of the real corpus, read and checked.

    Attributes
    ----------
    sources : dict of str to RealSource
        The recordings by key, in file order.
    clips : tuple of RealClipSpec
        The clips in file order.
    families : dict of str to CorpusFamily
        The corpus's naming of each family it uses.
    """

    sources: dict[str, RealSource]
    clips: tuple[RealClipSpec, ...]
    families: dict[str, CorpusFamily]


# ----------------------------------------------------------------------------- reading

@dataclass(frozen=True)
class _Row:
    """One data row of a table, with the file and line its errors name."""

    path: Path
    line: int
    cells: dict[str, str]

    def error(self, column: str, rule: str) -> ParameterError:
        return ParameterError(f"{self.path}:{self.line}: {column} {rule}")

    def text(self, column: str, allowed: tuple[str, ...] | Mapping[str, object] | None = None, *,
             what: str = "") -> str:
        value = self.cells[column]
        if allowed is not None and value not in allowed:
            known = f"{len(allowed)} {what}" if what else list(allowed)
            raise self.error(column, f"must be one of {known}, got {value!r}")
        if allowed is None and not value:
            raise self.error(column, "must not be empty")
        return value

    def number(self, column: str) -> float:
        value = self.cells[column]
        try:
            x = float(value)
        except ValueError:
            raise self.error(column, f"must be a number, got {value!r}") from None
        if x != x or x in (float("inf"), float("-inf")):
            raise self.error(column, f"must be finite, got {value!r}")
        return x

    def integer(self, column: str) -> int:
        value = self.cells[column]
        if not re.fullmatch(r"[0-9]+", value):
            raise self.error(column, f"must be a non-negative integer, got {value!r}")
        return int(value)


def _read(path: Path, columns: tuple[str, ...]) -> list[_Row]:
    """The data rows of a table whose header must be ``columns``."""
    if not path.is_file():
        raise ParameterError(f"{path}: real-corpus table not found")
    numbered = [(n, line) for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
                if line.strip() and not line.startswith("#")]
    parsed = list(csv.reader(line for _, line in numbered))
    if not parsed or tuple(parsed[0]) != columns:
        got = ",".join(parsed[0]) if parsed else "nothing"
        raise ParameterError(f"{path}: the header must be {','.join(columns)}, got {got}")
    rows = []
    for (n, _), cells in zip(numbered[1:], parsed[1:], strict=True):
        if len(cells) != len(columns):
            raise ParameterError(f"{path}:{n}: {len(cells)} fields, the header has {len(columns)}")
        rows.append(_Row(path, n, dict(zip(columns, cells, strict=True))))
    return rows


def _unique(row: _Row, column: str, value: object, seen: dict[object, int]) -> None:
    if value in seen:
        raise row.error(column, f"{value!r} is already on line {seen[value]}")
    seen[value] = row.line


def load_families(path: Path) -> dict[str, CorpusFamily]:
    """Read ``families.csv``: the corpus's naming of each family (see the module docstring).

    Raises
    ------
    ParameterError
        Naming the file, line and column: a family twice or not in the registry, an empty
        target, a character other than ``hard`` or ``soft``.
    """
    out: dict[str, CorpusFamily] = {}
    seen: dict[object, int] = {}
    for row in _read(path, _FAMILY_COLUMNS):
        fam = row.text("family", FAMILY_NAMES)
        _unique(row, "family", fam, seen)
        out[fam] = CorpusFamily(fam, row.text("target"), row.text("character", CHARACTERS))
    return out


def load_sources(path: Path, families: Mapping[str, CorpusFamily]) -> dict[str, RealSource]:
    """Read ``sources.csv``: the recordings (see the module docstring).

    Raises
    ------
    ParameterError
        Naming the file, line and column: a key or path twice, an unknown split, kind or
        family, a family the corpus does not name (``families.csv``), a non-music recording
        with a family, a music recording whose family is not among ``contains``, an empty or
        reversed segment, ``loop`` other than ``true`` or ``false``.
    """
    out: dict[str, RealSource] = {}
    keys: dict[object, int] = {}
    paths: dict[object, int] = {}
    for row in _read(path, _SOURCE_COLUMNS):
        key = row.text("key")
        _unique(row, "key", key, keys)
        kind = row.text("kind", SOURCE_KINDS)
        family = row.text("family", families, what="families of families.csv") if row.cells["family"] else None
        contains = tuple(row.cells["contains"].split())
        for fam in contains:
            if fam not in FAMILY_NAMES:
                raise row.error("contains", f"names {fam!r}, not a family of the registry {list(FAMILY_NAMES)}")
        if kind != "music" and (family or contains):
            raise row.error("family", f"and contains must be empty for a {kind} recording")
        if family is not None and family not in contains:
            raise row.error("contains", f"must hold the recording's own family {family!r}")
        seg = (row.number("segment_start_s"), row.number("segment_end_s"))
        if not 0.0 <= seg[0] < seg[1]:
            raise row.error("segment_end_s", f"must lie after segment_start_s >= 0, got {seg}")
        loop = row.text("loop", ("true", "false")) == "true"
        src_path = row.text("path")
        _unique(row, "path", src_path, paths)
        out[key] = RealSource(key, src_path, row.text("split", SPLITS), kind, family, contains, seg, loop=loop,
                              phrase=row.cells["phrase"])
    return out


def _load_layers(path: Path, clip_rows: Mapping[str, _Row],
                 sources: Mapping[str, RealSource]) -> dict[str, tuple[LayerSpec, ...]]:
    """Read ``layers.csv``: clip id -> its layers in mixing order."""
    numbered: dict[str, dict[int, LayerSpec]] = {}
    seen: dict[object, int] = {}
    for row in _read(path, _LAYER_COLUMNS):
        clip = row.text("clip", clip_rows, what="clips of clips.csv")
        k = row.integer("layer")
        _unique(row, "layer", (clip, k), seen)
        level = row.number("level_db")
        if not LEVEL_RANGE_DB[0] <= level <= LEVEL_RANGE_DB[1]:
            raise row.error("level_db", f"{level:g} lies outside {LEVEL_RANGE_DB} dB")
        cut = row.number("cut_s") if row.cells["cut_s"] else None
        numbered.setdefault(clip, {})[k] = LayerSpec(row.text("source", sources, what="sources of sources.csv"),
                                                     row.text("role", ROLES), row.number("start_s"),
                                                     row.number("from_s"), cut, level)
    out = {}
    for clip, by_k in numbered.items():
        if sorted(by_k) != list(range(1, len(by_k) + 1)):
            raise ParameterError(f"{path}: the layers of clip {clip!r} are numbered {sorted(by_k)}, "
                                 f"not 1 to {len(by_k)}")
        out[clip] = tuple(by_k[k] for k in sorted(by_k))
    return out


def load_clips(clips_path: Path, layers_path: Path, sources: Mapping[str, RealSource],
               families: Mapping[str, CorpusFamily]) -> tuple[RealClipSpec, ...]:
    """Read ``clips.csv`` and ``layers.csv`` and check every clip (:func:`check_spec`).

    Raises
    ------
    ParameterError
        Naming the file, line and column: an id or seed twice, an id unfit for a file name,
        an unknown scenario, kind, family, backing, source or role, a layer of no clip,
        layers not numbered 1, 2, ..., a level outside :data:`LEVEL_RANGE_DB`, a value that
        is not a number, or a clip that breaks a rule of the corpus.
    """
    rows: dict[str, _Row] = {}
    seeds: dict[object, int] = {}
    for row in _read(clips_path, _CLIP_COLUMNS):
        cid = row.text("id")
        if not _ID.fullmatch(cid):
            raise row.error("id", f"must be letters, digits, '.', '_' or '-' (a file name), got {cid!r}")
        if cid in rows:
            raise row.error("id", f"{cid!r} is already on line {rows[cid].line}")
        rows[cid] = row
        _unique(row, "seed", row.integer("seed"), seeds)
    layers = _load_layers(layers_path, rows, sources)
    specs = []
    for cid, row in rows.items():
        spec = RealClipSpec(cid, row.text("scenario", SCENARIOS), row.text("kind", CLIP_KINDS),
                            row.text("family", families, what="families of families.csv"), row.number("time_s"),
                            row.number("duration_s"), row.text("backing", sources, what="sources of sources.csv"),
                            row.number("backing_from_s"), layers.get(cid, ()), row.integer("seed"))
        try:
            check_spec(spec, sources)
        except ParameterError as err:
            raise ParameterError(f"{clips_path}:{row.line}: {err}") from None
        specs.append(spec)
    return tuple(specs)


def load_real_corpus(folder: Path = DATA_DIR) -> RealCorpus:
    """Read and check the four tables of a real corpus.

    Parameters
    ----------
    folder : Path
        The folder of ``families.csv``, ``sources.csv``, ``clips.csv`` and ``layers.csv``.

    Returns
    -------
    corpus : RealCorpus

    Raises
    ------
    ParameterError
        If a table is missing or malformed (naming the file, line and column).
    """
    folder = Path(folder)
    families = load_families(folder / "families.csv")
    sources = load_sources(folder / "sources.csv", families)
    clips = load_clips(folder / "clips.csv", folder / "layers.csv", sources, families)
    return RealCorpus(sources, clips, families)


# ----------------------------------------------------------------------------- corpus rules

def check_spec(spec: RealClipSpec, sources: Mapping[str, RealSource] | None = None) -> None:
    """Check one clip definition against the rules of the corpus.

    Parameters
    ----------
    spec : RealClipSpec
        The clip.
    sources : mapping of str to RealSource, optional
        The recordings; :data:`REAL_SOURCES` when omitted.

    Raises
    ------
    ParameterError
        If a source is unknown, the sources span two splits, a scenario's family rule is
        broken (a positive whose backing already holds the family, a negative where the
        family sounds, a pre-existing target that is not there), a level lies outside
        :data:`LEVEL_RANGE_DB`, the backing's segment is too short or a time lies outside
        the clip.
    """
    known = REAL_SOURCES if sources is None else sources
    where = f"real clip {spec.clip_id!r}: "
    unknown = [k for k in spec.source_keys if k not in known]
    if unknown:
        raise ParameterError(f"{where}unknown source(s) {unknown}; known: {sorted(known)}")
    splits = {known[k].split for k in spec.source_keys}
    if len(splits) != 1:
        raise ParameterError(f"{where}sources {list(spec.source_keys)} span the splits {sorted(splits)}")
    if spec.scenario not in SCENARIOS:
        raise ParameterError(f"{where}scenario must be one of {list(SCENARIOS)}, got {spec.scenario!r}")
    if not 20.0 <= spec.duration_s <= 30.0:
        raise ParameterError(f"{where}duration_s must lie in [20, 30] s, got {spec.duration_s!r}")
    if not 0.0 < spec.time_s < spec.duration_s:
        raise ParameterError(f"{where}time_s {spec.time_s!r} lies outside the clip")
    back = known[spec.backing]
    if not back.loop and spec.backing_from_s + spec.duration_s > back.segment_s[1] + 1e-9:
        raise ParameterError(f"{where}backing {back.key!r} from {spec.backing_from_s:g} s ends before the clip "
                             f"(usable until {back.segment_s[1]:g} s)")
    if spec.backing_from_s < back.segment_s[0]:
        raise ParameterError(f"{where}backing {back.key!r} must start at or after {back.segment_s[0]:g} s")
    for ly in spec.layers:
        if not LEVEL_RANGE_DB[0] <= ly.level_db <= LEVEL_RANGE_DB[1]:
            raise ParameterError(f"{where}level {ly.level_db!r} dB outside {LEVEL_RANGE_DB}")
        if not 0.0 <= ly.start_s < spec.duration_s or (ly.cut_s is not None and not ly.start_s < ly.cut_s
                                                         < spec.duration_s):
            raise ParameterError(f"{where}layer {ly.source!r} lies outside the clip")
    fam = spec.family
    heard = {f for k in spec.source_keys for f in known[k].contains}
    targets = [ly for ly in spec.layers if ly.role == "target"]
    if spec.occurred:
        if len(targets) != 1 or known[targets[0].source].family != fam:
            raise ParameterError(f"{where}a delivery needs exactly one target layer of family {fam!r}")
        if fam in back.contains or any(fam in known[ly.source].contains
                                       for ly in spec.layers if ly.role != "target"):
            raise ParameterError(f"{where}family {fam!r} already sounds outside the target layer")
    elif spec.scenario == "pre_existing":
        before = [ly for ly in spec.layers if ly.role == "before"]
        if fam not in back.contains and not any(fam in known[ly.source].contains for ly in before):
            raise ParameterError(f"{where}pre-existing family {fam!r} is neither in the backing nor a 'before' layer")
        if any(fam in known[ly.source].contains for ly in spec.layers if ly.role == "other"):
            raise ParameterError(f"{where}the layer entering over a pre-existing {fam!r} holds that family")
    elif fam in heard or targets:
        raise ParameterError(f"{where}family {fam!r} must never sound in a {spec.scenario} clip")


_PACKAGED = load_real_corpus()
#: The recordings of the packaged corpus by key, each in exactly one split.
REAL_SOURCES: dict[str, RealSource] = _PACKAGED.sources
#: The packaged real corpus: every clip of both splits, in file order.
REAL_CORPUS: tuple[RealClipSpec, ...] = _PACKAGED.clips
#: The packaged corpus's naming of each family it uses.
FAMILIES: dict[str, CorpusFamily] = _PACKAGED.families

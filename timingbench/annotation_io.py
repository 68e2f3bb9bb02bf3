"""Validation annotations (formats §5): schema, loading, import/export, quarantine.

An annotation file is JSONL with two kinds of rows, told apart by their keys:

- **Layer 1** (prompt adherence), one row per (clip, instructed event, annotator):
  ``clip``, ``event_id``, ``occurred`` (bool), ``onset_s`` (seconds, null when not
  occurred), ``onset_character`` (``hard`` | ``soft`` | ``gradual``), ``salience`` (1-3),
  ``annotator``, ``split``.
- **Layer 2** (observed events, instruction-independent): ``clip``, ``source`` (free
  text, "kick drum"), ``family`` (formats §1 vocabulary), ``onset_s``, ``salience``,
  ``annotator``, ``split``; an optional ``id`` names the row so an editor can change it.

A row with an ``event_id`` is Layer 1, a row with a ``source`` is Layer 2; an optional
``layer`` key (1 or 2) states it explicitly. ``split`` is ``dev`` (may influence
thresholds) or ``validation`` (never may). A row without ``split`` is read as
``validation``: the safe reading, since a quarantined row can only be refused by a fitting
command, never leak into one. ``onset_character`` and ``salience`` may be null when
``occurred`` is false, and ``salience`` may be null when nobody rated it (the reference
renderer's truth rows, ``annotator: "renderer"``). Unknown keys are kept on every row and
written back unchanged.

:func:`load_annotations` returns every valid row and one :class:`AnnotationError` per
malformed row (naming file, line and field); one bad row never stops the others.

Audacity label tracks and Sonic Visualiser CSV exports carry a time and a free-text label
per line. The label grammar used by the importers and by the Audacity exporter is

- Layer 1: ``@<event_id>|<onset_character>|<salience>`` (``@tb1-0042/e1|hard|3``);
- Layer 2: ``<family>|<source>|<salience>`` (``percussion|kick drum|2``), where
  ``<source>`` and ``<salience>`` may be left out (``percussion`` alone means source
  ``percussion``, salience not rated).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from timingbench.errors import AnnotationError
from timingbench.jsonio import atomic_write_text, is_finite_number, load_rows, parse_rows, utf8_problem
from timingbench.prompts import EVENT_FAMILIES

SPLITS = ("dev", "validation")
#: The split a row without a ``split`` key is given (quarantined: the safe reading).
DEFAULT_SPLIT = "validation"
ONSET_CHARACTERS = ("hard", "soft", "gradual")
SALIENCE_LEVELS = (1, 2, 3)
LAYER1_FIELDS = (
    "clip", "event_id", "occurred", "onset_s", "onset_character", "salience", "annotator",
    "split",
)
LAYER2_FIELDS = ("clip", "source", "family", "onset_s", "salience", "annotator", "split")
#: Annotator name the reference renderer writes on its truth rows.
RENDERER_ANNOTATOR = "renderer"
#: Decimals of seconds written by the Audacity exporter (microseconds, as Audacity does).
AUDACITY_DECIMALS = 6


@dataclass(frozen=True)
class Layer1Row:
    """One Layer-1 (prompt adherence) annotation.

    Attributes
    ----------
    clip : str
        File name inside the clips folder, extension included.
    event_id : str
        The instructed event's id (``tb1-0042/e1``).
    occurred : bool
        Whether the instructed event is audible in the clip at all.
    onset_s : float or None
        Onset in seconds from the clip start; None when not occurred.
    onset_character : str or None
        ``hard`` | ``soft`` | ``gradual``; None only when not occurred.
    salience : int or None
        1 (barely audible) to 3 (prominent); None when not rated.
    annotator : str
        Who labelled the row (``renderer`` for synthetic truth).
    split : str
        ``dev`` or ``validation``.
    extra : Mapping[str, Any]
        Unknown keys of the row, preserved on write.
    where : str
        ``file:line`` the row was read from (empty for rows built in memory).
    """

    clip: str
    event_id: str
    occurred: bool
    onset_s: float | None
    onset_character: str | None
    salience: int | None
    annotator: str
    split: str
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    where: str = field(default="", compare=False, repr=False)

    @property
    def layer(self) -> int:
        """Always 1."""
        return 1

    @property
    def key(self) -> tuple[str, str, str]:
        """Identity of the row: ``(annotator, clip, event_id)``."""
        return (self.annotator, self.clip, self.event_id)

    def to_dict(self) -> dict[str, Any]:
        """The documented row (documented keys first, then the preserved unknown keys)."""
        row: dict[str, Any] = {
            "clip": self.clip,
            "event_id": self.event_id,
            "occurred": self.occurred,
            "onset_s": self.onset_s,
            "onset_character": self.onset_character,
            "salience": self.salience,
            "annotator": self.annotator,
            "split": self.split,
        }
        row.update({k: v for k, v in self.extra.items() if k not in row})
        return row


@dataclass(frozen=True)
class Layer2Row:
    """One Layer-2 (observed event) annotation.

    Attributes
    ----------
    clip : str
        File name inside the clips folder, extension included.
    source : str
        Free-text source or instrument ("kick drum", "cello section").
    family : str
        Coarse family, formats §1 vocabulary.
    onset_s : float
        Onset in seconds from the clip start.
    salience : int or None
        1 to 3; None when not rated.
    annotator : str
        Who labelled the row.
    split : str
        ``dev`` or ``validation``.
    id : str or None
        Optional row id (set by the labelling page so that a row can be edited).
    extra : Mapping[str, Any]
        Unknown keys of the row, preserved on write.
    where : str
        ``file:line`` the row was read from.
    """

    clip: str
    source: str
    family: str
    onset_s: float
    salience: int | None
    annotator: str
    split: str
    id: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    where: str = field(default="", compare=False, repr=False)

    @property
    def layer(self) -> int:
        """Always 2."""
        return 2

    def to_dict(self) -> dict[str, Any]:
        """The documented row (documented keys first, then ``id`` if set, then unknown keys)."""
        row: dict[str, Any] = {
            "clip": self.clip,
            "source": self.source,
            "family": self.family,
            "onset_s": self.onset_s,
            "salience": self.salience,
            "annotator": self.annotator,
            "split": self.split,
        }
        if self.id is not None:
            row["id"] = self.id
        row.update({k: v for k, v in self.extra.items() if k not in row})
        return row


AnnotationRow = Layer1Row | Layer2Row


@dataclass
class AnnotationSet:
    """Valid rows of both layers and the errors of the rows that were rejected.

    Attributes
    ----------
    layer1 : list of Layer1Row
    layer2 : list of Layer2Row
    errors : list of AnnotationError
        One per malformed row, in file order.
    source : str
        Where the rows came from (file name or ``<memory>``).
    """

    layer1: list[Layer1Row] = field(default_factory=list)
    layer2: list[Layer2Row] = field(default_factory=list)
    errors: list[AnnotationError] = field(default_factory=list)
    source: str = "<memory>"

    def rows(self) -> list[AnnotationRow]:
        """All valid rows, Layer 1 first."""
        return [*self.layer1, *self.layer2]

    def splits(self) -> set[str]:
        """The splits present among the valid rows."""
        return {r.split for r in self.rows()}

    def only(self, *, split: str) -> AnnotationSet:
        """The rows of one split (errors are kept so they stay visible).

        Raises
        ------
        AnnotationError
            If ``split`` is not ``dev`` or ``validation``.
        """
        if split not in SPLITS:
            raise AnnotationError(f"split must be one of {list(SPLITS)}, got {split!r}")
        return AnnotationSet(
            [r for r in self.layer1 if r.split == split],
            [r for r in self.layer2 if r.split == split],
            list(self.errors),
            self.source,
        )

    def extend(self, other: AnnotationSet) -> None:
        """Append the rows and errors of ``other``."""
        self.layer1.extend(other.layer1)
        self.layer2.extend(other.layer2)
        self.errors.extend(other.errors)


def _err(where: str, fld: str, rule: str) -> AnnotationError:
    return AnnotationError(f"{where}field '{fld}': {rule}")


def _text(row: Mapping[str, Any], key: str, where: str) -> str:
    v = row.get(key)
    if not isinstance(v, str) or not v.strip():
        raise _err(where, key, f"must be a non-empty string, got {v!r}")
    return v


def _clip(row: Mapping[str, Any], where: str) -> str:
    clip = _text(row, "clip", where)
    if "/" in clip or "\\" in clip or clip in (".", ".."):
        raise _err(where, "clip", f"must be a file name inside the clips folder, not a path: {clip!r}")
    return clip


def _onset(value: Any, where: str) -> float:
    if not is_finite_number(value):
        raise _err(where, "onset_s", f"must be a number of seconds, got {value!r}")
    if value < 0:
        raise _err(where, "onset_s", f"must be >= 0 s from the clip start, got {value!r}")
    return float(value)


def _salience(row: Mapping[str, Any], where: str) -> int | None:
    v = row.get("salience")
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float) or v not in SALIENCE_LEVELS:
        raise _err(where, "salience", f"must be 1, 2 or 3 (or null when not rated), got {v!r}")
    return int(v)


def _split(row: Mapping[str, Any], where: str) -> str:
    if "split" not in row:
        return DEFAULT_SPLIT
    v = row["split"]
    if v not in SPLITS:
        raise _err(where, "split", f"must be one of {list(SPLITS)}, got {v!r}")
    return str(v)


def _layer_of(row: Mapping[str, Any], where: str) -> int:
    if "layer" in row:
        layer = row["layer"]
        if isinstance(layer, bool) or layer not in (1, 2):
            raise _err(where, "layer", f"must be 1 or 2 when given, got {layer!r}")
        return int(layer)
    if "event_id" in row:
        return 1
    if "source" in row:
        return 2
    raise _err(
        where, "event_id",
        "missing: a Layer-1 row needs 'event_id', a Layer-2 row needs 'source' and 'family'",
    )


def parse_annotation(row: Any, *, where: str = "") -> AnnotationRow:
    """Validate one annotation row.

    Parameters
    ----------
    row : Any
        The parsed JSON object.
    where : str
        Location prefix for messages (``"file.jsonl:12: "``).

    Returns
    -------
    row : Layer1Row or Layer2Row

    Raises
    ------
    AnnotationError
        Naming the location, the field and the rule broken.
    """
    if not isinstance(row, Mapping):
        raise AnnotationError(f"{where}annotation row must be a JSON object, got {type(row).__name__}")
    loc = where.rstrip(": ")
    layer = _layer_of(row, where)
    clip = _clip(row, where)
    annotator = _text(row, "annotator", where)
    split = _split(row, where)
    salience = _salience(row, where)
    if layer == 1:
        event_id = _text(row, "event_id", where)
        occurred = row.get("occurred")
        if not isinstance(occurred, bool):
            raise _err(where, "occurred", f"must be true or false, got {occurred!r}")
        character = row.get("onset_character")
        onset: float | None
        if occurred:
            if "onset_s" not in row or row["onset_s"] is None:
                raise _err(where, "onset_s", "an event that occurred needs its onset in seconds")
            onset = _onset(row["onset_s"], where)
            if character not in ONSET_CHARACTERS:
                raise _err(where, "onset_character",
                           f"must be one of {list(ONSET_CHARACTERS)}, got {character!r}")
        else:
            if row.get("onset_s") is not None:
                raise _err(where, "onset_s", "must be null when 'occurred' is false")
            onset = None
            if character is not None and character not in ONSET_CHARACTERS:
                raise _err(where, "onset_character",
                           f"must be one of {list(ONSET_CHARACTERS)} or null, got {character!r}")
        extra = {k: v for k, v in row.items() if k not in LAYER1_FIELDS}
        return Layer1Row(clip, event_id, occurred, onset, character, salience, annotator, split,
                         extra, loc)
    source = _text(row, "source", where)
    family = row.get("family")
    if family not in EVENT_FAMILIES:
        raise _err(where, "family", f"must be one of {list(EVENT_FAMILIES)}, got {family!r}")
    onset2 = _onset(row.get("onset_s"), where)
    rid = row.get("id")
    if rid is not None and (not isinstance(rid, str) or not rid):
        raise _err(where, "id", f"must be a non-empty string when given, got {rid!r}")
    extra = {k: v for k, v in row.items() if k not in LAYER2_FIELDS and k != "id"}
    return Layer2Row(clip, source, str(family), onset2, salience, annotator, split, rid, extra, loc)


def validate_annotation_rows(
    rows: Iterable[tuple[int, Any]], *, source: str, errors: list[AnnotationError] | None = None
) -> AnnotationSet:
    """Validate ``(line_number, row)`` pairs; see :func:`load_annotations`.

    A second Layer-1 row with the same ``(annotator, clip, event_id)``, or a second
    Layer-2 row with the same ``(annotator, clip, id)``, is an error (the first is kept).
    ``errors``, when given, becomes the set's error list, so that errors the row source
    reports while it is read stay in file order among the others.
    """
    out = AnnotationSet(source=source, errors=[] if errors is None else errors)
    seen1: set[tuple[str, str, str]] = set()
    seen2: set[tuple[str, str, str]] = set()
    for where, parsed in parse_rows(rows, source=source, parse=parse_annotation, error=AnnotationError,
                                    errors=out.errors):
        if isinstance(parsed, Layer1Row):
            if parsed.key in seen1:
                out.errors.append(_err(where, "event_id", (
                    f"duplicate row for annotator {parsed.annotator!r}, clip {parsed.clip!r}, "
                    f"event {parsed.event_id!r} (first occurrence kept)")))
                continue
            seen1.add(parsed.key)
            out.layer1.append(parsed)
        else:
            if parsed.id is not None:
                k2 = (parsed.annotator, parsed.clip, parsed.id)
                if k2 in seen2:
                    out.errors.append(_err(where, "id", f"duplicate Layer-2 id {parsed.id!r} "
                                                        "(first occurrence kept)"))
                    continue
                seen2.add(k2)
            out.layer2.append(parsed)
    return out


def load_annotations(path: str | Path) -> AnnotationSet:
    """Load and validate an annotation JSONL file (formats §5).

    Parameters
    ----------
    path : str or Path
        The annotation file.

    Returns
    -------
    annotations : AnnotationSet
        Valid Layer-1 and Layer-2 rows, and one :class:`AnnotationError` per malformed row
        naming the file, the line and the field.

    Raises
    ------
    AnnotationError
        If the file does not exist or cannot be read.
    """
    return load_rows(path, what="annotation file", error=AnnotationError, validate=validate_annotation_rows)


def require_dev_only(annotations: AnnotationSet | Iterable[AnnotationRow], *, command: str) -> None:
    """Refuse ``validation`` rows in a command that tunes or fits anything.

    Parameters
    ----------
    annotations : AnnotationSet or iterable of rows
        The annotations the command is about to use.
    command : str
        The command's name, for the message.

    Raises
    ------
    AnnotationError
        If any row has ``split == "validation"``, naming how many and where the first is.
    """
    rows = annotations.rows() if isinstance(annotations, AnnotationSet) else list(annotations)
    bad = [r for r in rows if r.split != "dev"]
    if bad:
        first = bad[0]
        loc = f" (first: {first.where})" if first.where else f" (first: clip {first.clip!r})"
        raise AnnotationError(
            f"{command}: refuses {len(bad)} 'validation' annotation row(s){loc}: validation "
            "data may never influence a threshold; pass only rows with split 'dev' "
            "(rows without a 'split' key count as 'validation')"
        )


# --------------------------------------------------------------------------- label text


def format_label(row: AnnotationRow) -> str:
    """The label text of a row in the importers' grammar (see module docstring).

    A ``|`` inside a source would split the label, so it is written as ``/``.
    """
    sal = "" if row.salience is None else str(row.salience)
    if isinstance(row, Layer1Row):
        return f"@{row.event_id}|{row.onset_character or ''}|{sal}".rstrip("|")
    source = row.source.replace("|", "/")
    return f"{row.family}|{source}|{sal}".rstrip("|")


def _row_from_label(
    label: str, onset_s: float, *, clip: str, annotator: str, split: str, where: str
) -> AnnotationRow:
    text = label.strip()
    if not text:
        raise _err(where, "label", "is empty; write 'family|source|salience' or '@event_id|character|salience'")
    parts = [p.strip() for p in text.split("|")]
    if len(parts) > 3:
        raise _err(where, "label", f"has more than three '|'-separated fields: {text!r}")
    sal: Any = None
    if len(parts) == 3 and parts[2]:
        if parts[2] not in ("1", "2", "3"):
            raise _err(where, "salience", f"must be 1, 2 or 3, got {parts[2]!r:.40}")
        sal = int(parts[2])
    row: dict[str, Any] = {"clip": clip, "annotator": annotator, "split": split, "salience": sal,
                           "onset_s": onset_s}
    if parts[0].startswith("@"):
        row.update(event_id=parts[0][1:], occurred=True,
                   onset_character=parts[1] if len(parts) > 1 and parts[1] else None)
    else:
        family = parts[0]
        source = parts[1] if len(parts) > 1 and parts[1] else family
        row.update(family=family, source=source)
    return parse_annotation(row, where=where)


def _check_import_args(clip: str, annotator: str, split: str) -> None:
    if not clip or "/" in clip or "\\" in clip:
        raise AnnotationError(f"clip must be a file name inside the clips folder, got {clip!r}")
    if not annotator.strip():
        raise AnnotationError("annotator must be a non-empty name")
    if split not in SPLITS:
        raise AnnotationError(f"split must be one of {list(SPLITS)}, got {split!r}")


def _parse_time(text: str, where: str, fld: str) -> float:
    try:
        t = float(text.strip().replace(",", "."))
    except ValueError:
        raise _err(where, fld, f"must be a number of seconds, got {text.strip()!r}") from None
    if not math.isfinite(t) or t < 0:
        raise _err(where, fld, f"must be a finite number of seconds >= 0, got {text.strip()!r}")
    return t


def _read_text(path: Path) -> str:
    """The file's text: a leading BOM dropped, line ends untouched, bad UTF-8 kept as surrogates.

    Undecodable bytes are kept (``surrogateescape``) so that only the lines holding them are
    rejected (:func:`_label_lines`), not the whole file.
    """
    if not path.is_file():
        raise AnnotationError(f"{path}: file not found")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise AnnotationError(f"{path}: cannot read ({exc.strerror})") from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", errors="surrogateescape")


def _physical_lines(text: str) -> list[str]:
    """Lines as an editor numbers them: split at ``\n`` only, a trailing ``\r`` dropped."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def _label_lines(
    text: str, source: str, rows: list[tuple[int, Any]], *, skip: Callable[[str], bool] | None = None
) -> Iterator[tuple[int, str, str]]:
    """Yield ``(line_number, where, line)`` for the physical lines of a label file.

    Lines for which ``skip`` is true are passed over. A line that is not UTF-8 is appended to
    ``rows`` as ``(line_number, AnnotationError)`` instead of being yielded, so that its error
    stands in file order among the rows the caller appends.
    """
    for i, line in enumerate(_physical_lines(text), start=1):
        if skip is not None and skip(line):
            continue
        where = f"{source}:{i}: "
        bad = utf8_problem(line)
        if bad is None:
            yield i, where, line
        else:
            rows.append((i, AnnotationError(where + bad)))


def _audacity_skipped(line: str) -> bool:
    """Blank lines and Audacity's spectral-selection lines (they begin with a backslash)."""
    return not line.strip() or line.startswith("\\")


def import_audacity_labels(
    path: str | Path, *, clip: str, annotator: str, split: str
) -> AnnotationSet:
    """Read an Audacity label track export (``File > Export > Export Labels``).

    Each line is ``start<TAB>end<TAB>label`` in seconds; the start is the onset. Lines that
    begin with a backslash (Audacity's spectral-selection lines) are skipped. The label
    follows the grammar of the module docstring.

    Parameters
    ----------
    path : str or Path
        The ``.txt`` label file.
    clip : str
        The clip the labels belong to (file name inside the clips folder).
    annotator : str
        Name written on every row.
    split : str
        ``dev`` or ``validation``.

    Returns
    -------
    annotations : AnnotationSet
        One row per valid label; one :class:`AnnotationError` per bad line naming the file,
        the line and the field.

    Raises
    ------
    AnnotationError
        If the file cannot be read or an argument is invalid.
    """
    p = Path(path)
    return audacity_labels_from_text(_read_text(p), source=str(p), clip=clip,
                                     annotator=annotator, split=split)


def audacity_labels_from_text(
    text: str, *, source: str, clip: str, annotator: str, split: str
) -> AnnotationSet:
    """Parse the text of an Audacity label track; see :func:`import_audacity_labels`.

    Parameters
    ----------
    text : str
        The label file's content.
    source : str
        Name used in error messages (a file name).
    clip, annotator, split : str
        As for :func:`import_audacity_labels`.

    Returns
    -------
    annotations : AnnotationSet

    Raises
    ------
    AnnotationError
        If an argument is invalid.
    """
    _check_import_args(clip, annotator, split)
    rows: list[tuple[int, Any]] = []
    for i, where, line in _label_lines(text, source, rows, skip=_audacity_skipped):
        cells = line.split("\t")
        if len(cells) < 2:
            rows.append((i, _err(where, "start", "expected 'start<TAB>end<TAB>label'")))
            continue
        try:
            onset = _parse_time(cells[0], where, "start")
            _parse_time(cells[1], where, "end")
            label = "\t".join(cells[2:]) if len(cells) > 2 else ""
            rows.append((i, _row_from_label(label, onset, clip=clip, annotator=annotator,
                                            split=split, where=where).to_dict()))
        except AnnotationError as exc:
            rows.append((i, exc))
    return validate_annotation_rows(rows, source=source)


def import_sonic_visualiser_csv(
    path: str | Path, *, clip: str, annotator: str, split: str
) -> AnnotationSet:
    """Read a Sonic Visualiser layer exported as CSV (``File > Export Annotation Layer``).

    Each line is one record (a quoted label cannot span lines, so an unbalanced quote
    damages only its own line). The first column is the time in seconds and the last
    non-numeric column is the label
    (time-instant layers export ``time,label``; time-value layers ``time,value,label``;
    region layers ``time,value,duration,label``). A first line whose time is not a number
    is taken as a header and skipped.

    Parameters
    ----------
    path : str or Path
        The ``.csv`` file (comma separated; quoted labels may contain commas).
    clip, annotator, split : str
        As for :func:`import_audacity_labels`.

    Returns
    -------
    annotations : AnnotationSet
        One row per valid line, and one :class:`AnnotationError` per bad line.

    Raises
    ------
    AnnotationError
        If the file cannot be read or an argument is invalid.
    """
    p = Path(path)
    _check_import_args(clip, annotator, split)
    rows: list[tuple[int, Any]] = []
    # one record per physical line: an unbalanced quote damages its own line, not the rest
    for i, where, line in _label_lines(_read_text(p), str(p), rows):
        try:
            cells = next(csv.reader([line]), [])
        except csv.Error as exc:  # an over-long field, a bare carriage return
            rows.append((i, _err(where, "time", f"line is not valid CSV ({exc})")))
            continue
        if not cells or not any(c.strip() for c in cells):
            continue
        first = cells[0].strip()
        try:
            float(first)
        except ValueError:
            if i == 1:
                continue  # header line
        try:
            onset = _parse_time(first, where, "time")
            label = ""
            for cell in reversed(cells[1:]):
                try:
                    float(cell)
                except ValueError:
                    label = cell
                    break
            rows.append((i, _row_from_label(label, onset, clip=clip, annotator=annotator,
                                            split=split, where=where).to_dict()))
        except AnnotationError as exc:
            rows.append((i, exc))
    return validate_annotation_rows(rows, source=str(p))


def audacity_labels_text(rows: Iterable[AnnotationRow]) -> str:
    """Audacity label-track text for rows that have an onset (point labels).

    Layer-1 rows whose event did not occur have no time and are left out.
    """
    lines = []
    for r in sorted((r for r in rows if r.onset_s is not None),
                    key=lambda r: (r.onset_s or 0.0, r.layer)):
        t = f"{r.onset_s:.{AUDACITY_DECIMALS}f}"
        lines.append(f"{t}\t{t}\t{format_label(r)}\n")
    return "".join(lines)


def export_audacity_labels(path: str | Path, rows: Iterable[AnnotationRow]) -> int:
    """Write rows as an Audacity label track (import with ``File > Import > Labels``).

    Parameters
    ----------
    path : str or Path
        The ``.txt`` file to write (atomically).
    rows : iterable of Layer1Row or Layer2Row
        Rows of one clip.

    Returns
    -------
    n : int
        Number of labels written.

    Raises
    ------
    AnnotationError
        If the rows belong to more than one clip (a label track describes one file).
    """
    rows = list(rows)
    clips = {r.clip for r in rows}
    if len(clips) > 1:
        raise AnnotationError(
            f"{path}: an Audacity label track describes one clip, got rows of {sorted(clips)}"
        )
    text = audacity_labels_text(rows)
    atomic_write_text(path, text)
    return text.count("\n")

"""The typed results of the public API: one scored event, one scored clip, one scored folder.

The result types are frozen dataclasses; :meth:`EventResult.to_dict` and
:meth:`ClipResult.to_dict` give the formats §3 rows, keys in the order the runner
writes them (keys a row has beyond the documented ones, such as a per-gate ``evidence`` object, are kept
in :attr:`EventResult.extra` and written back in place).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast

from timingbench.errors import ParameterError
from timingbench.verdicts import Outcome


def _freeze(obj: Any) -> Any:
    """A read-only copy of a JSON-like value (dicts become mapping proxies, lists tuples)."""
    if isinstance(obj, Mapping):
        return MappingProxyType({k: _freeze(v) for k, v in obj.items()})
    if isinstance(obj, list | tuple):
        return tuple(_freeze(v) for v in obj)
    return obj


def _thaw(obj: Any) -> Any:
    """The plain ``dict``/``list`` form of a value made by :func:`_freeze`."""
    if isinstance(obj, Mapping):
        return {k: _thaw(v) for k, v in obj.items()}
    if isinstance(obj, tuple | list):
        return [_thaw(v) for v in obj]
    return obj


def _row_fields(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls) if f.metadata.get("row", True))


def _from_row(cls: type, row: Mapping[str, Any], **more: Any) -> Any:
    """Build a result dataclass from a row: known keys to fields, the rest to ``extra``."""
    names = _row_fields(cls)
    known = {k: _freeze(v) for k, v in row.items() if k in names}
    extra = {k: v for k, v in row.items() if k not in names}
    return cls(**known, extra=_freeze(extra), key_order=tuple(row), **more)


def _to_row(obj: Any) -> dict[str, Any]:
    names = set(_row_fields(type(obj)))
    order = obj.key_order or (tuple(n for n in _row_fields(type(obj))) + tuple(obj.extra))
    out: dict[str, Any] = {}
    for k in order:
        if k in names:
            out[k] = _thaw(getattr(obj, k))
        elif k in obj.extra:
            out[k] = _thaw(obj.extra[k])
    return out


def _internal(**kw: Any) -> Any:
    """A dataclass field that is not a key of the documented row."""
    return field(metadata={"row": False}, **kw)


@dataclass(frozen=True)
class EventResult:
    """One instructed event scored on one clip: a row of ``events.jsonl`` (formats §3).

    Attributes
    ----------
    clip : str
        The clip's name (file name with extension, or the name given to :func:`score_audio`).
    prompt_id : str
    sample : int
        Sample index ``k`` of ``<prompt_id>__<k>``; 0 without a suffix.
    event_id, kind, family : str
        The instructed event's id, kind and target family.
    instructed_s : float
        Instructed time, seconds.
    tolerance_s : float
        On-time tolerance, seconds.
    outcome : {"on_time", "off_time", "none"}
    detected_s : float or None
        Detected time, seconds (None when ``outcome == "none"``).
    error_s : float or None
        ``detected_s - instructed_s``, seconds.
    gates : Mapping[str, str]
        Gate name -> ``pass`` | ``fail`` | ``exempt``.
    rejected_by : str or None
        The first failing gate.
    detector : str
    p_chance : float or None
        Fraction of the chance-credit re-scorings that were credited.
    floor_s : float or None
        The family's published measurement floor, seconds.
    extra : Mapping[str, Any]
        Keys of the row beyond those above (kept, never dropped; formats §3).
    """

    clip: str
    prompt_id: str
    sample: int
    event_id: str
    kind: str
    family: str
    instructed_s: float
    tolerance_s: float
    outcome: Outcome
    detected_s: float | None
    error_s: float | None
    gates: Mapping[str, str]
    rejected_by: str | None
    detector: str
    p_chance: float | None
    floor_s: float | None
    extra: Mapping[str, Any] = _internal(default_factory=lambda: MappingProxyType({}))
    key_order: tuple[str, ...] = _internal(default=(), repr=False, compare=False)

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> EventResult:
        """Build from an ``events.jsonl`` row.

        Raises
        ------
        ParameterError
            If a documented key is missing (names it).
        """
        missing = [k for k in _row_fields(cls) if k not in row]
        if missing:
            raise ParameterError(f"events row {row.get('event_id')!r}: missing key(s) {missing}")
        return cast(EventResult, _from_row(cls, row))

    def to_dict(self) -> dict[str, Any]:
        """The ``events.jsonl`` row, keys in the order ``timingbench score`` writes them."""
        return _to_row(self)

    @property
    def on_time(self) -> bool:
        """True when the event was detected within its tolerance."""
        return self.outcome == "on_time"


@dataclass(frozen=True)
class ClipResult:
    """One scored clip: its ``clips.jsonl`` row (formats §3) and its events.

    Attributes
    ----------
    clip, prompt_id : str
    sample : int
    duration_s : float or None
        Length of the whole clip, seconds (None when the clip could not be scored).
    duration_ok : bool or None
        Whether ``duration_s`` is within ``duration.tolerance_s`` of the instructed duration.
    tempo : Mapping or None
        ``estimate_bpm``, ``target_bpm``, ``within_pct``, ... (prompts with a tempo target).
    timbre_match : tuple of Mapping, or None
        Family evidence per tonal-layer / stem entry event.
    error : str or None
        Why the clip could not be scored (then ``events`` is empty).
    separation : str or None
        The separation backend actually used.
    family_evidence : str or None
        The family-evidence backend actually used.
    events : tuple of EventResult
        One per instructed event, in prompt order.
    notes : tuple of str
        Run notes (e.g. why the separation backend differs from the one asked for).
    exempt : Mapping[str, str]
        Families the evidence backend could not judge, with the reason.
    config_version, config_hash : str or None
        The configuration the clip was scored with.
    extra : Mapping[str, Any]
        Keys of the row beyond those above.
    """

    clip: str
    prompt_id: str
    sample: int
    duration_s: float | None
    duration_ok: bool | None
    tempo: Mapping[str, Any] | None
    timbre_match: tuple[Mapping[str, Any], ...] | None
    error: str | None
    separation: str | None = None
    family_evidence: str | None = None
    events: tuple[EventResult, ...] = _internal(default=())
    notes: tuple[str, ...] = _internal(default=())
    exempt: Mapping[str, str] = _internal(default_factory=lambda: MappingProxyType({}))
    config_version: str | None = _internal(default=None)
    config_hash: str | None = _internal(default=None)
    extra: Mapping[str, Any] = _internal(default_factory=lambda: MappingProxyType({}))
    key_order: tuple[str, ...] = _internal(default=(), repr=False, compare=False)

    @classmethod
    def from_dict(cls, row: Mapping[str, Any], events: Sequence[Mapping[str, Any]] = (), *,
                  notes: Sequence[str] = (), exempt: Mapping[str, str] | None = None,
                  config_version: str | None = None, config_hash: str | None = None) -> ClipResult:
        """Build from a ``clips.jsonl`` row and that clip's ``events.jsonl`` rows.

        Raises
        ------
        ParameterError
            If a documented key is missing, or an event row belongs to another clip.
        """
        missing = [k for k in ("clip", "prompt_id", "sample", "duration_s", "duration_ok", "tempo",
                               "timbre_match", "error") if k not in row]
        if missing:
            raise ParameterError(f"clips row {row.get('clip')!r}: missing key(s) {missing}")
        evs = tuple(EventResult.from_dict(e) for e in events)
        stray = [e.event_id for e in evs if e.clip != row["clip"]]
        if stray:
            raise ParameterError(f"clips row {row['clip']!r}: event rows of another clip: {stray}")
        return cast(ClipResult, _from_row(
            cls, row, events=evs, notes=tuple(notes), exempt=MappingProxyType(dict(exempt or {})),
            config_version=config_version, config_hash=config_hash))

    def to_dict(self) -> dict[str, Any]:
        """The ``clips.jsonl`` row, keys in the order ``timingbench score`` writes them."""
        return _to_row(self)

    def event_rows(self) -> list[dict[str, Any]]:
        """The clip's ``events.jsonl`` rows."""
        return [e.to_dict() for e in self.events]

    def event(self, event_id: str) -> EventResult:
        """The result of one instructed event.

        Raises
        ------
        KeyError
            If the prompt has no such event.
        """
        for e in self.events:
            if e.event_id == event_id:
                return e
        raise KeyError(f"clip {self.clip!r} has no event {event_id!r} "
                       f"(events: {[e.event_id for e in self.events]})")

    @property
    def ok(self) -> bool:
        """True when the clip was scored (no ``error``)."""
        return self.error is None


@dataclass(frozen=True)
class FolderResult:
    """A scored folder: every clip, and the ``summary.json`` object.

    Attributes
    ----------
    clips : tuple of ClipResult
        Sorted by (prompt id, sample, clip), as ``clips.jsonl``.
    summary : Mapping[str, Any]
        Headline rates, counts, ``unmatched``, ``missing``, ``errors`` (formats §3).
    out_dir : Path or None
        The results folder, when one was written.
    """

    clips: tuple[ClipResult, ...]
    summary: Mapping[str, Any]
    out_dir: Path | None = None

    @property
    def events(self) -> tuple[EventResult, ...]:
        """Every event of every clip, in ``events.jsonl`` order."""
        return tuple(e for c in self.clips for e in c.events)

    def event_rows(self) -> list[dict[str, Any]]:
        """The ``events.jsonl`` rows."""
        return [e.to_dict() for e in self.events]

    def clip_rows(self) -> list[dict[str, Any]]:
        """The ``clips.jsonl`` rows."""
        return [c.to_dict() for c in self.clips]

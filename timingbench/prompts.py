"""The prompt-set schema (formats §1) and clip <-> prompt matching (formats §2).

A prompt file is JSONL, one prompt per line. :func:`load_prompts` validates every row and
returns the valid prompts together with one :class:`PromptError` per invalid row, so one
bad prompt never stops the others. Rows are kept as the dicts they were read as: unknown
keys survive a round trip.
"""

from __future__ import annotations

import dataclasses
import os
import re
import warnings
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import timingbench.families as _families
from timingbench.audio import AUDIO_EXTENSIONS
from timingbench.errors import PromptError
from timingbench.jsonio import is_finite_number, load_rows, parse_rows

#: ``controls``: a prompt with neither a timed event nor a tempo, only time-varying controls
#: (a rhythm, melody or chord request); valid only with a ``controls`` object.
PROMPT_FAMILIES = ("single_event", "event_sequence", "tempo", "controls")
EVENT_KINDS = (
    "instrument_entry",
    "instrument_exit",
    "music_start_after_silence",
    "music_end",
    "music_pause",
    "mix_energy_increase",
)
#: The families an event may name (the family registry's, then ``mix``; :mod:`timingbench.families`),
#: and those read from a separation stem of their own or not.
EVENT_FAMILIES = _families.EVENT_FAMILIES
STEM_FAMILIES = _families.STEM_FAMILIES
TONAL_FAMILIES = _families.TONAL_FAMILIES
#: Kinds that concern one instrument family: an instrument's identity is judged on these.
INSTRUMENT_KINDS = ("instrument_entry", "instrument_exit")
#: Kinds that concern the whole mix; their family must be ``mix``.
MIX_KINDS = ("music_start_after_silence", "music_end", "music_pause", "mix_energy_increase")

_SAMPLE_RE = re.compile(r"^(?P<id>.+?)__(?P<k>\d+)$")
#: The warnings module's registry of the subfolder warnings already shown.
_SUBFOLDER_WARNINGS: dict[Any, Any] = {}


@dataclass(frozen=True)
class Event:
    """One instructed event of a prompt (times in seconds)."""

    id: str
    kind: str
    target: str
    family: str
    time_s: float
    tolerance_s: float | None
    raw: Mapping[str, Any] = field(compare=False, repr=False)


@dataclass(frozen=True)
class Prompt:
    """One validated prompt."""

    id: str
    family: str
    text: str
    style: str
    duration_s: float
    events: tuple[Event, ...]
    tempo_bpm: float | None
    tempo_tolerance_pct: float | None
    raw: Mapping[str, Any] = field(compare=False, repr=False)
    #: The validated ``controls`` object (:class:`timingbench.controls.Controls`), or None.
    controls: Any = field(default=None, compare=False, repr=False)


def _fail(pid: str, fld: str, rule: str, where: str) -> PromptError:
    return PromptError(f"{where}prompt {pid!r}: field '{fld}': {rule}")


def _get(m: Mapping[str, Any], key: str, default: Any = None) -> Any:
    return m[key] if key in m else default


def parse_prompt(row: Any, *, where: str = "", base_dir: Path | None = None) -> Prompt:
    """Validate one prompt row.

    Parameters
    ----------
    row : Any
        The parsed JSON object.
    where : str
        Location prefix for messages (``"file.jsonl:12: "``).
    base_dir : Path, optional
        Folder that relative paths inside ``controls`` are resolved against.

    Returns
    -------
    prompt : Prompt

    Raises
    ------
    PromptError
        Naming the prompt id, the field and the rule broken.
    """
    if not isinstance(row, Mapping):
        raise PromptError(f"{where}prompt row must be a JSON object")
    pid = _get(row, "id")
    if not isinstance(pid, str) or not pid.strip():
        raise _fail(str(pid), "id", "must be a non-empty string", where)
    if "__" in pid or "/" in pid:
        raise _fail(pid, "id", "must not contain '__' or '/' (they separate samples and events)", where)
    fam = _get(row, "family")
    if fam not in PROMPT_FAMILIES:
        raise _fail(pid, "family", f"must be one of {list(PROMPT_FAMILIES)}, got {fam!r}", where)
    text = _get(row, "text")
    if not isinstance(text, str) or not text.strip():
        raise _fail(pid, "text", "must be a non-empty string", where)
    style = _get(row, "style", "")
    if not isinstance(style, str):
        raise _fail(pid, "style", "must be a string", where)
    dur = _get(row, "duration_s")
    if not is_finite_number(dur) or dur <= 0:
        raise _fail(pid, "duration_s", f"must be a positive number of seconds, got {dur!r}", where)
    raw_events = _get(row, "events", [])
    if not isinstance(raw_events, list):
        raise _fail(pid, "events", "must be a list", where)
    events: list[Event] = []
    seen: set[str] = set()
    for i, ev in enumerate(raw_events):
        f = f"events[{i}]"
        if not isinstance(ev, Mapping):
            raise _fail(pid, f, "must be an object", where)
        eid = _get(ev, "id")
        if not isinstance(eid, str) or not eid:
            raise _fail(pid, f + ".id", "must be a non-empty string", where)
        if eid in seen:
            raise _fail(pid, f + ".id", f"duplicate event id {eid!r}", where)
        seen.add(eid)
        kind = _get(ev, "kind")
        if kind not in EVENT_KINDS:
            raise _fail(pid, f + ".kind", f"must be one of {list(EVENT_KINDS)}, got {kind!r}", where)
        efam = _get(ev, "family")
        if efam not in EVENT_FAMILIES:
            raise _fail(pid, f + ".family", f"must be one of {list(EVENT_FAMILIES)}, got {efam!r}", where)
        if kind in MIX_KINDS and efam != "mix":
            raise _fail(pid, f + ".family", f"kind {kind!r} concerns the whole mix: family must be 'mix'", where)
        if kind not in MIX_KINDS and efam == "mix":
            raise _fail(pid, f + ".family", f"kind {kind!r} needs an instrument family, not 'mix'", where)
        target = _get(ev, "target", "")
        if not isinstance(target, str):
            raise _fail(pid, f + ".target", "must be a string", where)
        t = _get(ev, "time_s")
        if not is_finite_number(t):
            raise _fail(pid, f + ".time_s", f"must be a number of seconds, got {t!r}", where)
        if not 0.0 <= t <= dur:
            raise _fail(pid, f + ".time_s", f"{t} s lies outside [0, duration_s={dur}]", where)
        tol = _get(ev, "tolerance_s")
        if tol is not None and (not is_finite_number(tol) or tol < 0):
            raise _fail(pid, f + ".tolerance_s", f"must be a non-negative number or null, got {tol!r}", where)
        if events and t < events[-1].time_s:
            raise _fail(pid, f + ".time_s", "events must be ordered by time", where)
        events.append(Event(eid, kind, target, efam, float(t), None if tol is None else float(tol), ev))
    tempo = _get(row, "tempo")
    bpm: float | None = None
    tpct: float | None = None
    if tempo is not None:
        if not isinstance(tempo, Mapping):
            raise _fail(pid, "tempo", "must be null or an object {bpm, tolerance_pct}", where)
        bpm_v = _get(tempo, "bpm")
        if not is_finite_number(bpm_v) or bpm_v <= 0:
            raise _fail(pid, "tempo.bpm", f"must be a positive number, got {bpm_v!r}", where)
        tp = _get(tempo, "tolerance_pct", 3.0)
        if not is_finite_number(tp) or tp <= 0:
            raise _fail(pid, "tempo.tolerance_pct", f"must be a positive number, got {tp!r}", where)
        bpm, tpct = float(bpm_v), float(tp)
    if fam == "tempo" and bpm is None:
        raise _fail(pid, "tempo", "a 'tempo' prompt needs a tempo target", where)
    if fam == "single_event" and len(events) != 1:
        raise _fail(pid, "events", f"a 'single_event' prompt has exactly one event, got {len(events)}", where)
    if fam == "event_sequence" and len(events) < 2:
        raise _fail(pid, "events", f"an 'event_sequence' prompt has two or more events, got {len(events)}", where)
    if fam == "controls":
        if events:
            raise _fail(pid, "events", f"a 'controls' prompt has no timed event, got {len(events)} (use "
                        "'single_event' or 'event_sequence' for timed events beside controls)", where)
        if bpm is not None:
            raise _fail(pid, "tempo", "a 'controls' prompt has no tempo target (use family 'tempo' for a tempo "
                        "beside controls)", where)
        if _get(row, "controls") is None:
            raise _fail(pid, "controls", "a 'controls' prompt needs a 'controls' object (docs/prompts.md)", where)
    controls = None
    if _get(row, "controls") is not None:
        from timingbench.controls.schema import parse_controls

        controls = parse_controls(row["controls"], pid=pid, duration_s=float(dur), where=where, base_dir=base_dir)
        if fam == "controls" and all(v is None for v in vars(controls).values()):
            raise _fail(pid, "controls", "a 'controls' prompt requests at least one control (beats_s, downbeats_s, "
                        "dynamics, melody, chords or drums_s)", where)
    return Prompt(pid, fam, text, style, float(dur), tuple(events), bpm, tpct, row, controls)


@dataclass
class PromptSet:
    """Valid prompts by id, and the errors of the rows that were rejected."""

    prompts: dict[str, Prompt]
    errors: list[PromptError]
    source: str = "<memory>"


def validate_prompt_rows(
    rows: Iterable[tuple[int, Any]], *, source: str, errors: list[PromptError] | None = None
) -> PromptSet:
    """Validate ``(line_number, row)`` pairs; see :func:`load_prompts` (relative control
    audio paths are resolved against the folder of ``source``). ``errors``, when given,
    becomes the set's error list, so that errors the row source reports while it is read
    stay in file order among the others."""
    base_dir = Path(source).parent
    prompts: dict[str, Prompt] = {}
    errors = [] if errors is None else errors
    event_ids: set[str] = set()
    parse = partial(parse_prompt, base_dir=base_dir)
    for where, p in parse_rows(rows, source=source, parse=parse, error=PromptError, errors=errors):
        if p.id in prompts:
            errors.append(_fail(p.id, "id", "duplicate prompt id (first occurrence kept)", where))
            continue
        dup = [e.id for e in p.events if e.id in event_ids]
        if dup:
            errors.append(_fail(p.id, "events.id", f"event id {dup[0]!r} already used by another prompt", where))
            continue
        event_ids.update(e.id for e in p.events)
        prompts[p.id] = p
    return PromptSet(prompts, errors, source)


def load_prompts(path: str | Path, *, require_jsonl: bool = False) -> PromptSet:
    """Load and validate a prompt JSONL file.

    Parameters
    ----------
    path : str or Path
        The prompt file.
    require_jsonl : bool
        Refuse, as one error, a file none of whose lines is a JSON object (an audio file, a
        YAML file, an empty file) instead of returning one rejected row per line. A file
        with at least one JSON-object line is read as without it.

    Returns
    -------
    prompt_set : PromptSet
        Valid prompts (by id) and one error per rejected row.

    Raises
    ------
    PromptError
        If the file cannot be read at all, or (``require_jsonl``) is not JSONL at all
        (:func:`not_jsonl_error`).
    """
    objects = 0

    def counted(rows: Iterable[tuple[int, Any]], **kw: Any) -> PromptSet:
        def each() -> Iterable[tuple[int, Any]]:
            nonlocal objects
            for row in rows:
                objects += 1
                yield row
        return validate_prompt_rows(each(), **kw)

    ps = load_rows(path, what="prompt file", error=PromptError, validate=counted)
    if require_jsonl and objects == 0:
        raise not_jsonl_error(Path(path))
    return ps


def not_jsonl_error(path: Path) -> PromptError:
    """The one error for a prompt file none of whose lines is a JSON object.

    It names the file once, absolute, says what it holds instead (nothing, binary data or
    text of other lines) and what ``--prompts`` takes.
    """
    data = path.read_bytes()
    lines = sum(1 for line in data.splitlines() if line.strip())
    try:
        data.decode("utf-8-sig")
        binary = b"\0" in data
    except UnicodeDecodeError:
        binary = True
    why = ("it is empty" if lines == 0 else "binary data, not UTF-8 text" if binary
           else f"none of its {lines} lines is a JSON object")
    return PromptError(f"{os.path.abspath(path)}: not a prompt file ({why}); --prompts takes a JSONL file, "
                       "one prompt object per line (docs/formats.md §1)")


@dataclass(frozen=True)
class ClipRef:
    """A clip file matched to a prompt."""

    clip: str
    path: Path
    prompt_id: str
    sample: int
    #: Why the file is not scored although it names a prompt: another file of the folder claims
    #: the same (prompt, sample). None for a clip to score. Such a clip counts as not delivered.
    conflict: str | None = None


@dataclass
class ClipMatch:
    """The result of matching a clips folder to a prompt set (formats §2)."""

    clips: list[ClipRef]
    unmatched: list[str]
    missing: list[str]
    #: Subfolders of the clips folder that hold audio files: not searched, so never scored.
    subfolders: list[str] = field(default_factory=list)


def parse_clip_name(name: str) -> tuple[str, int]:
    """Split ``<prompt_id>[__<k>].<ext>`` into ``(prompt_id, sample)`` (sample 0 when absent)."""
    stem = Path(name).stem
    m = _SAMPLE_RE.match(stem)
    if m:
        return m.group("id"), int(m.group("k"))
    return stem, 0


def match_clips(clips_dir: str | Path, prompt_ids: Iterable[str]) -> ClipMatch:
    """Match the audio files of a folder to prompt ids.

    Parameters
    ----------
    clips_dir : str or Path
        Folder of audio files (not searched recursively).
    prompt_ids : iterable of str
        Ids of the valid prompts.

    Returns
    -------
    match : ClipMatch
        Matched clips sorted by (prompt id, sample, name); file names that match no prompt
        (``unmatched``); prompt ids with no clip (``missing``); subfolders that hold audio
        (``subfolders``). Two or more files that claim one (prompt, sample)
        (``x.wav``, ``x.WAV``, ``x__0.flac``) are all kept with a ``conflict`` naming the
        others (:func:`claim_conflicts`): none is scored, each counts as not delivered.

    Raises
    ------
    PromptError
        If ``clips_dir`` is not a folder.

    Warns
    -----
    UserWarning
        Naming the subfolders that hold audio (they are not scored).
    """
    d = Path(clips_dir)
    if not d.is_dir():
        raise PromptError(f"{d}: clips folder not found")
    ids = set(prompt_ids)
    clips: list[ClipRef] = []
    unmatched: list[str] = []
    for f in sorted(d.iterdir()):
        if not f.is_file() or f.name.startswith("."):
            continue
        if f.suffix.lower() not in AUDIO_EXTENSIONS:
            unmatched.append(f.name)
            continue
        pid, k = parse_clip_name(f.name)
        if pid not in ids and f.stem in ids:
            pid, k = f.stem, 0
        if pid in ids:
            clips.append(ClipRef(f.name, f, pid, k))
        else:
            unmatched.append(f.name)
    clips = claim_conflicts(clips)
    clips.sort(key=lambda c: (c.prompt_id, c.sample, c.clip))
    have = {c.prompt_id for c in clips}
    missing = sorted(ids - have)
    subfolders = audio_subfolders(d)
    if subfolders:  # named after the folder, once per process and folder (the runner matches twice)
        warnings.warn_explicit("subfolders holding audio are not searched and not scored: "
                               + ", ".join(f"{n}/" for n in subfolders) + " (put the clips in the folder itself)",
                               UserWarning, filename=str(d), lineno=0, registry=_SUBFOLDER_WARNINGS)
    return ClipMatch(clips, unmatched, missing, subfolders)


def claim_conflicts(clips: Iterable[ClipRef]) -> list[ClipRef]:
    """``clips`` with a ``conflict`` on every clip that shares its (prompt, sample) with another.

    Which of two files claiming one sample is the output cannot be known, so neither is
    scored; both stay in the run and count as not delivered, with a reason naming both.
    """
    by_sample: dict[tuple[str, int], list[ClipRef]] = defaultdict(list)
    for c in clips:
        by_sample[(c.prompt_id, c.sample)].append(c)
    out: list[ClipRef] = []
    for (pid, k), group in by_sample.items():
        if len(group) == 1:
            out.extend(group)
            continue
        names = sorted(c.clip for c in group)
        for c in group:
            others = [n for n in names if n != c.clip]
            why = (f"sample {k} of prompt {pid!r} is also claimed by {' and '.join(others)}: none of them is "
                   f"scored (each counts as not delivered); keep one, or rename the others {pid}__<k>.<ext> "
                   "with an unused k")
            out.append(dataclasses.replace(c, conflict=why))
    return out


def audio_subfolders(clips_dir: Path) -> list[str]:
    """Names of the (non-hidden) subfolders of ``clips_dir`` that hold an audio file at any depth."""
    def holds_audio(folder: Path) -> bool:
        return any(f.suffix.lower() in AUDIO_EXTENSIONS and f.is_file() for f in folder.rglob("*"))

    return [f.name for f in sorted(clips_dir.iterdir())
            if f.is_dir() and not f.name.startswith(".") and holds_audio(f)]

"""The public Python API: score audio in memory or a folder of clips, with typed results.

::

    import timingbench

    res = timingbench.score_audio(samples, 44100, prompt_row)   # no files are written
    res.events[0].outcome                                       # "on_time" | "off_time" | "none"
    res.to_dict(), [e.to_dict() for e in res.events]           # the clips.jsonl / events.jsonl rows

:func:`score_audio` runs the pipeline of ``timingbench score`` (decode -> feature bank ->
detectors -> gates -> scoring) on an array: the same rows, byte for byte once dumped as the
runner dumps them, as the command writes for a file holding that array. It writes nothing:
no ``.parts/``, no feature cache (unless ``cache_dir`` is given). :func:`score_folder`
scores a folder, in memory or, with ``out``, exactly as ``timingbench score`` does.

The result types are frozen dataclasses; :meth:`EventResult.to_dict` and
:meth:`ClipResult.to_dict` give the formats §3 rows, keys in the order the runner
writes them (keys a row has beyond the documented ones, such as a per-gate ``evidence`` object, are kept
in :attr:`EventResult.extra` and written back in place).
"""

from __future__ import annotations

import functools
import hashlib
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt

from timingbench.audio import Clip, check_duration, clip_from_frames, head_length
from timingbench.choices import DEFAULT_FAMILY_EVIDENCE, FAMILY_EVIDENCE_CHOICES, SEPARATIONS
from timingbench.config import DEFAULT_CONFIG_PATH, Config
from timingbench.config import load_config as _load_config_file
from timingbench.errors import ClipError, ParameterError, PromptError
from timingbench.packaged import DEFAULT_PROMPTS_PATH
from timingbench.prompts import (
    ClipRef,
    Prompt,
    PromptSet,
    match_clips,
    parse_clip_name,
    parse_prompt,
)
from timingbench.prompts import load_prompts as _load_prompts_file
from timingbench.verdicts import Outcome

if TYPE_CHECKING:  # the runner is imported on first use, so that ``import timingbench.api`` stays fast
    from timingbench.runner import ScoreOptions

__all__ = [
    "ClipResult",
    "EventResult",
    "FolderResult",
    "Outcome",
    "load_config",
    "load_prompts",
    "score_audio",
    "score_folder",
]



#: Channels a 2-D ``samples`` array may have; more means the axes are probably swapped.
MAX_CHANNELS = 64


# ----------------------------------------------------------------------------- results


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


# ----------------------------------------------------------------------------- loading


@functools.lru_cache(maxsize=2)
def _packaged_config(mtime_ns: int) -> Config:
    return _load_config_file(DEFAULT_CONFIG_PATH)


def load_config(path: str | Path | None = None) -> Config:
    """Load and validate a configuration (the packaged ``timingbench-v1.yaml`` by default).

    Parameters
    ----------
    path : str or Path, optional
        A configuration YAML (formats §4).

    Returns
    -------
    config : Config

    Raises
    ------
    ConfigError
        If the file is missing, not YAML, or breaks the schema (names the key).
    """
    if path is None:
        return _packaged_config(DEFAULT_CONFIG_PATH.stat().st_mtime_ns)
    return _load_config_file(path)


def load_prompts(path: str | Path | None = None) -> PromptSet:
    """Load and validate a prompt set (the packaged v1 set, 250 prompts, by default).

    Parameters
    ----------
    path : str or Path, optional
        A prompt JSONL file (formats §1).

    Returns
    -------
    prompt_set : PromptSet
        ``prompts`` (valid prompts by id) and ``errors`` (one per rejected row).

    Raises
    ------
    PromptError
        If the file cannot be read at all.
    """
    return _load_prompts_file(DEFAULT_PROMPTS_PATH if path is None else path)


def _config(config: Config | str | Path | None) -> Config:
    if isinstance(config, Config):
        return config
    if config is None or isinstance(config, str | Path):
        return load_config(config)
    raise ParameterError(f"config: expected a Config, a YAML path or None, got {type(config).__name__}")


def _prompt(prompt: Prompt | Mapping[str, Any] | str) -> Prompt:
    if isinstance(prompt, Prompt):
        return prompt
    if isinstance(prompt, Mapping):
        return parse_prompt(dict(prompt))
    if isinstance(prompt, str):
        ps = load_prompts()
        if prompt not in ps.prompts:
            raise PromptError(f"prompt: {prompt!r} is not an id of the packaged prompt set "
                              f"({DEFAULT_PROMPTS_PATH.name}); pass the prompt row instead")
        return ps.prompts[prompt]
    raise PromptError(f"prompt: expected a prompt row (dict), a Prompt or a prompt id, "
                      f"got {type(prompt).__name__}")


def _choice(name: str, value: str, allowed: Sequence[str]) -> None:
    if value not in allowed:
        raise ParameterError(f"{name}: expected one of {list(allowed)}, got {value!r}")


# ----------------------------------------------------------------------------- in memory


def clip_from_array(samples: npt.ArrayLike, sr: int, *, config: Config, name: str = "<memory>") -> Clip:
    """Turn an array into the :class:`~timingbench.audio.Clip` that decoding a file of it gives.

    Checks the array as :func:`timingbench.audio.load_clip` checks a file, then hands its
    leading frames (as float32, what decoding gives) to the same
    :func:`timingbench.audio.clip_from_frames`, so that the array read back from a file
    scores exactly as the file does.

    Parameters
    ----------
    samples : array_like of float, shape (n,) or (n, channels)
        Audio in [-1, 1] full scale; 2-D arrays are frame-major, as ``soundfile.read``
        returns them (transpose a librosa-style ``(channels, n)`` array).
    sr : int
        Sample rate of ``samples`` in Hz.
    config : Config
        Reads the ``audio`` section.
    name : str
        Shown in error messages and used as the clip's path.

    Returns
    -------
    clip : Clip

    Raises
    ------
    ParameterError
        ``samples`` is not a 1-D or 2-D real array, or ``sr`` is not a whole number of Hz
        at or above ``audio.min_sample_rate_hz``.
    ClipError
        ``samples`` is empty, shorter than ``audio.min_duration_s`` or holds NaN or inf
        (silence is a clip: it is scored, nothing delivered).
    """

    ap = config.params.audio
    if isinstance(sr, bool) or not isinstance(sr, numbers.Integral | float) or isinstance(sr, float) and (
            not math.isfinite(sr) or sr != int(sr)):
        raise ParameterError(f"sr: expected a whole number of Hz, got {sr!r}")
    rate = int(sr)
    if rate < ap.min_sample_rate_hz:
        raise ParameterError(f"sr: {rate} Hz is below audio.min_sample_rate_hz ({ap.min_sample_rate_hz} Hz); "
                             "did you pass the rate in kHz?")
    try:
        arr = np.asarray(samples)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"samples: not an array of numbers ({exc})") from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise ParameterError(f"samples: expected real numbers, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.integer):
        raise ParameterError(f"samples: expected floats in [-1, 1], got integer dtype {arr.dtype}; "
                             "divide by the full-scale value (e.g. 32768 for int16) first")
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ParameterError(f"samples: expected shape (n,) or (n, channels), got {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ClipError(f"samples: empty array (shape {arr.shape}); nothing to score")
    if arr.shape[1] > MAX_CHANNELS and arr.shape[1] > arr.shape[0]:
        raise ParameterError(f"samples: shape {arr.shape} looks like (channels, n); pass samples.T "
                             "(the layout is (n, channels), as soundfile.read returns)")
    n_frames, channels = arr.shape
    check_duration(n_frames, rate, ap, label="samples")
    finite = np.isfinite(arr)
    if not finite.all():
        bad = int(np.count_nonzero(~finite))
        first = int(np.argmin(finite.all(axis=1)))
        raise ClipError(f"samples: {bad} non-finite values (NaN or inf), the first at frame {first} "
                        f"({first / rate:.3f} s)")
    head = np.asarray(arr[:head_length(rate, ap)], dtype=np.float32)
    digest = hashlib.sha256(np.ascontiguousarray(head).tobytes())
    digest.update(f"{rate}:{channels}:{n_frames}".encode())
    return clip_from_frames(head, rate, n_frames=n_frames, path=Path(name), content_hash=digest.hexdigest()[:16],
                            audio=ap, label="samples", allow_silent=True)


def _options(separation: str, family_evidence: str, chance: bool, demucs_repo: str | Path | None,
             clap_dir: str | Path | None, cache_dir: str | Path | None, *, use_cache: bool) -> ScoreOptions:
    """The runner's options of one API call (checks the choices)."""
    from timingbench.runner import ScoreOptions

    _choice("separation", separation, SEPARATIONS)
    _choice("family_evidence", family_evidence, FAMILY_EVIDENCE_CHOICES)
    return ScoreOptions(separation=separation, family_evidence=family_evidence, chance=bool(chance),
                        demucs_repo=None if demucs_repo is None else str(demucs_repo),
                        clap_dir=None if clap_dir is None else str(clap_dir),
                        cache_dir=None if cache_dir is None else str(cache_dir), use_cache=use_cache)


def _json_form(obj: Any) -> Any:
    """Rows as ``timingbench score`` writes them (non-finite floats to null, numpy to lists)."""
    import json

    from timingbench.jsonio import dumps_row

    return json.loads(dumps_row(obj))


def _result(part: Mapping[str, Any], config: Config) -> ClipResult:
    clip_row = _json_form(part["clip"])
    events = [_json_form(e) for e in part["events"]]
    return ClipResult.from_dict(clip_row, events, notes=part.get("notes", ()),
                                exempt=(part.get("family_evidence") or {}).get("exempt") or {},
                                config_version=config.version, config_hash=config.content_hash)


def score_audio(
    samples: npt.ArrayLike, sr: int, prompt: Prompt | Mapping[str, Any] | str, *,
    config: Config | str | Path | None = None, separation: str = "dsp",
    family_evidence: str = DEFAULT_FAMILY_EVIDENCE, clip: str | None = None, sample: int | None = None,
    chance: bool = True, demucs_repo: str | Path | None = None, clap_dir: str | Path | None = None,
    cache_dir: str | Path | None = None,
) -> ClipResult:
    """Score one clip held in memory against one prompt; writes no file.

    Parameters
    ----------
    samples : array_like of float, shape (n,) or (n, channels)
        The clip, full scale [-1, 1], any rate; 2-D arrays are frame-major (as
        ``soundfile.read`` returns them).
    sr : int
        Sample rate of ``samples``, Hz (resampled to ``audio.sample_rate_hz``).
    prompt : dict, Prompt or str
        A prompt row (formats §1), a parsed :class:`~timingbench.prompts.Prompt`, or
        the id of a prompt of the packaged v1 set.
    config : Config, str or Path, optional
        The configuration (default: the packaged one).
    separation : {"dsp", "auto", "demucs", "none"}
        Source separation backend (default ``dsp``: deterministic, no model weights).
    family_evidence : {"tagger", "trained", "musicnn", "clap", "none"}
        Instrument-family evidence backend (default: the embedded trained model).
    clip : str, optional
        The name the rows carry in ``clip`` (default: the prompt id). Pass the file name
        to get the rows ``timingbench score`` writes for that file.
    sample : int, optional
        Sample index ``k`` (default: from a ``<prompt_id>__<k>`` name, else 0).
    chance : bool
        Compute ``p_chance`` by the chance-credit re-scoring (as the command does by default).
    demucs_repo, clap_dir : str or Path, optional
        Local model folders (``separation="demucs"``, ``family_evidence="clap"``).
    cache_dir : str or Path, optional
        Feature-cache folder; without it the feature bank lives in memory only.

    Returns
    -------
    result : ClipResult
        ``result.events`` holds one :class:`EventResult` per instructed event.

    Raises
    ------
    ParameterError
        Bad ``samples`` shape or dtype, ``sr``, ``separation``, ``family_evidence`` or ``config``.
    ClipError
        Empty, too short or non-finite ``samples`` (silent ones are scored: every event
        ``none``, as ``timingbench score`` scores a silent file).
    PromptError
        A malformed prompt row (names the field) or an unknown prompt id.
    ConfigError
        A configuration that cannot be loaded.
    ModelUnavailableError
        ``separation="demucs"`` without local weights.

    Examples
    --------
    >>> res = score_audio(samples, 44100, row)        # doctest: +SKIP
    >>> res.events[0].outcome, res.events[0].error_s  # doctest: +SKIP
    ('on_time', 0.012)
    """
    opts = _options(separation, family_evidence, chance, demucs_repo, clap_dir, cache_dir,
                    use_cache=cache_dir is not None)
    cfg = _config(config)
    p = _prompt(prompt)
    name = clip if clip is not None else p.id
    if not isinstance(name, str) or not name:
        raise ParameterError(f"clip: expected a non-empty name, got {clip!r}")
    k = parse_clip_name(name)[1] if sample is None else sample
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ParameterError(f"sample: expected a whole number >= 0, got {sample!r}")
    from timingbench.runner import score_decoded

    decoded = clip_from_array(samples, sr, config=cfg, name=name)
    ref = ClipRef(name, Path(name), p.id, k)
    return _result(score_decoded(decoded, ref, p, cfg, opts), cfg)


# ----------------------------------------------------------------------------- folders


def score_folder(
    clips_dir: str | Path, prompts: str | Path | PromptSet | None = None, out: str | Path | None = None, *,
    config: Config | str | Path | None = None, jobs: int = 1, separation: str = "dsp",
    family_evidence: str = DEFAULT_FAMILY_EVIDENCE, chance: bool = True, demucs_repo: str | Path | None = None,
    clap_dir: str | Path | None = None, cache_dir: str | Path | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> FolderResult:
    """Score every clip of a folder (``<prompt_id>[__<k>].<ext>``) against a prompt set.

    Parameters
    ----------
    clips_dir : str or Path
        Folder of clips (formats §2).
    prompts : str, Path or PromptSet, optional
        The prompt set (default: the packaged v1 set).
    out : str or Path, optional
        Results folder. When given, the run is exactly ``timingbench score``: it writes
        ``events.jsonl``, ``clips.jsonl``, ``summary.json`` and the resumable ``.parts/``,
        and uses the feature cache (``cache_dir``, default ``~/.cache/timingbench``).
        Without it nothing is written (and no cache unless ``cache_dir`` is given).
    config : Config, str or Path, optional
        The configuration (default: the packaged one).
    jobs : int
        Worker processes, >= 1 (results are identical for any value).
    separation, family_evidence, chance, demucs_repo, clap_dir, cache_dir
        As :func:`score_audio`.
    progress : callable, optional
        Called as ``progress(done, total, clip)`` after each clip.

    Returns
    -------
    result : FolderResult

    Raises
    ------
    ParameterError
        Bad ``jobs``, ``separation``, ``family_evidence`` or ``config``, or a
        :class:`PromptSet` given together with ``out`` (pass its file).
    PromptError
        The prompt file cannot be read or ``clips_dir`` is not a folder.
    """
    opts = _options(separation, family_evidence, chance, demucs_repo, clap_dir, cache_dir,
                    use_cache=out is not None or cache_dir is not None)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ParameterError(f"jobs: expected a whole number >= 1, got {jobs!r}")
    from timingbench.executors import LocalExecutor
    from timingbench.runner import assemble, score_refs
    from timingbench.runner import score_folder as run_folder

    cfg = _config(config)
    if out is not None:
        if isinstance(prompts, PromptSet):
            raise ParameterError("prompts: with out=, pass the prompt file's path (summary.json records it)")
        res = run_folder(clips_dir, DEFAULT_PROMPTS_PATH if prompts is None else prompts, out, cfg,
                         opts=opts, jobs=jobs, progress=progress)
        by_clip: dict[str, list[dict[str, Any]]] = {}
        for e in res.events:
            by_clip.setdefault(e["clip"], []).append(e)
        clips = tuple(ClipResult.from_dict(_json_form(c), [_json_form(e) for e in by_clip.get(c["clip"], [])],
                                           config_version=cfg.version, config_hash=cfg.content_hash)
                      for c in res.clips)
        return FolderResult(clips, MappingProxyType(res.summary), res.out_dir)

    ps = prompts if isinstance(prompts, PromptSet) else load_prompts(prompts)
    match = match_clips(clips_dir, ps.prompts)
    items = [(ref, ps.prompts[ref.prompt_id]) for ref in match.clips]
    parts: list[dict[str, Any]] = [{}] * len(items)
    if progress:
        progress(0, len(items), "")
    for done, (i, part, _) in enumerate(score_refs(items, cfg, opts, LocalExecutor(jobs)), start=1):
        parts[i] = part
        if progress:
            progress(done, len(items), items[i][0].clip)
    _, _, summary = assemble(parts, match, ps, cfg, opts, prompts_path=ps.source, clips_dir=str(clips_dir))
    return FolderResult(tuple(_result(p, cfg) for p in parts), MappingProxyType(_json_form(summary)), None)

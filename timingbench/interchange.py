"""Results in other tools' formats: JAMS files, and arrays in seconds for mir_eval.

JAMS (one file per clip, :func:`export_jams`; ``timingbench export jams RESULTS --out DIR``):

- namespace ``onset``, annotator ``prompt``: the instructed events, one observation per
  event at ``instructed_s`` (duration 0); the value holds ``event_id``, ``kind``,
  ``family`` and ``tolerance_s``.
- namespace ``onset``, annotator ``timingbench``: the detections, one observation per
  event with a ``detected_s`` (on time or off time) at that instant; the value holds the
  event's ``event_id``, ``kind``, ``family``, ``outcome``, ``error_s``, ``gates``,
  ``rejected_by``, ``detector`` and ``p_chance``. Events not found have no observation.
- namespace ``tempo`` (when the prompt has a tempo target): the instructed tempo
  (annotator ``prompt``) and the estimate (annotator ``timingbench``, when there is one),
  spanning the clip; JAMS requires a confidence, which is 1.0 and means nothing here.

Why ``onset``: an instructed event and its detection are each an instant at which
something starts or stops, which is what the ``onset`` namespace marks; its value may be
any JSON, so the event's identity and verdict travel with the time, and the two
annotations are the reference and estimate that ``jams.eval.onset`` (mir_eval's
``onset.f_measure``) compares. ``tag_open`` would need the fields packed into a string,
and ``segment_open`` would pretend that events have extent. The config version and
content hash, the package version and the clip's ``clips.jsonl`` row are in the file's
sandbox (``sandbox.timingbench``), the prompt id and sample in ``file_metadata.identifiers``.

mir_eval: :func:`detections_for_mir_eval` gives ``(reference_onsets, estimated_onsets)``
for ``mir_eval.onset.f_measure``; :func:`beats_for_mir_eval` gives the beat times the
tempo detector tracked in a clip, for ``mir_eval.beat``.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from timingbench.errors import ParameterError, TimingbenchError
from timingbench.jsonio import atomic_write_text, iter_jsonl, read_json
from timingbench.result_types import ClipResult, EventResult, FolderResult

if TYPE_CHECKING:
    from timingbench.config import Config

#: The ``annotator.name`` of the two sides of every comparison.
INSTRUCTED = "prompt"
DETECTED = "timingbench"


def read_results(results_dir: str | Path) -> FolderResult:
    """Read a results folder written by ``timingbench score``.

    Parameters
    ----------
    results_dir : str or Path
        Folder holding ``events.jsonl``, ``clips.jsonl`` and ``summary.json``.

    Returns
    -------
    results : FolderResult
        Every clip with its events; ``config_version``/``config_hash`` from the summary.

    Raises
    ------
    TimingbenchError
        If a file is missing or a line is not JSON (names the file and line).
    """
    d = Path(results_dir)
    for name in ("events.jsonl", "clips.jsonl", "summary.json"):
        if not (d / name).is_file():
            raise TimingbenchError(f"{d}: not a results folder (no {name}); run `timingbench score` first")
    summary = read_json(d / "summary.json")
    cfg = summary.get("config") or {}

    def rows(name: str) -> list[dict[str, Any]]:
        out = []
        for _, row in iter_jsonl(d / name):
            if isinstance(row, Exception):
                raise TimingbenchError(str(row))
            out.append(row)
        return out

    by_clip: dict[str, list[dict[str, Any]]] = {}
    for e in rows("events.jsonl"):
        by_clip.setdefault(e["clip"], []).append(e)
    clips = tuple(ClipResult.from_dict(c, by_clip.get(c["clip"], []), config_version=cfg.get("version"),
                                       config_hash=cfg.get("hash")) for c in rows("clips.jsonl"))
    return FolderResult(clips, summary, d)


def _jams() -> Any:
    try:
        import jams
    except ImportError:
        raise TimingbenchError("JAMS export needs the `jams` package (a dependency: run `make setup` "
                               "or `pip install jams`)") from None
    return jams


def _annotation(jams: Any, namespace: str, annotator: str, *, duration_s: float, version: str | None,
                source: str, sandbox: Mapping[str, Any]) -> Any:
    meta = jams.AnnotationMetadata(annotator={"name": annotator}, version=version or "",
                                   annotation_tools="timingbench", data_source=source)
    return jams.Annotation(namespace=namespace, time=0.0, duration=duration_s, annotation_metadata=meta,
                           sandbox=jams.Sandbox(**sandbox))


def to_jams(clip: ClipResult, *, package_version: str | None = None) -> Any:
    """One clip's results as a validated :class:`jams.JAMS` object (see the module notes).

    Parameters
    ----------
    clip : ClipResult
        A scored clip (``clip.error`` is None).
    package_version : str, optional
        The timingbench version that scored it (``summary.json``'s ``timingbench_version``).

    Returns
    -------
    jam : jams.JAMS

    Raises
    ------
    ParameterError
        If the clip could not be scored (it has no duration and no events).
    TimingbenchError
        If the ``jams`` package is missing.
    """
    jams = _jams()
    if not clip.ok or clip.duration_s is None:
        raise ParameterError(f"clip {clip.clip!r} was not scored ({clip.error}); it has nothing to export")
    dur = float(clip.duration_s)
    jam = jams.JAMS()
    jam.file_metadata.duration = dur
    jam.file_metadata.title = clip.prompt_id
    jam.file_metadata.identifiers = jams.Sandbox(clip=clip.clip, prompt_id=clip.prompt_id, sample=clip.sample)
    jam.sandbox.timingbench = {
        "package_version": package_version, "config_version": clip.config_version,
        "config_hash": clip.config_hash, "clip": clip.to_dict(),
    }
    version = clip.config_version
    inst = _annotation(jams, "onset", INSTRUCTED, duration_s=dur, version=version,
                       source="prompt set: instructed events", sandbox={"role": "instructed"})
    det = _annotation(jams, "onset", DETECTED, duration_s=dur, version=version,
                      source="timingbench score: detections",
                      sandbox={"role": "detected", "config_hash": clip.config_hash})
    for e in clip.events:
        inst.append(time=float(e.instructed_s), duration=0.0, confidence=None,
                    value={"event_id": e.event_id, "kind": e.kind, "family": e.family,
                           "tolerance_s": e.tolerance_s})
        if e.detected_s is not None:
            det.append(time=float(e.detected_s), duration=0.0, confidence=None,
                       value={"event_id": e.event_id, "kind": e.kind, "family": e.family,
                              "outcome": e.outcome, "error_s": e.error_s, "gates": dict(e.gates),
                              "rejected_by": e.rejected_by, "detector": e.detector, "p_chance": e.p_chance})
    jam.annotations.extend([inst, det])
    tempo = clip.tempo
    if tempo:
        for annotator, bpm in ((INSTRUCTED, tempo.get("target_bpm")), (DETECTED, tempo.get("estimate_bpm"))):
            if bpm is None:
                continue
            ann = _annotation(jams, "tempo", annotator, duration_s=dur, version=version,
                              source="prompt set: tempo target" if annotator == INSTRUCTED
                              else "timingbench score: tempo estimate",
                              sandbox={"role": "instructed" if annotator == INSTRUCTED else "detected"})
            ann.append(time=0.0, duration=dur, value=float(bpm), confidence=1.0)
            jam.annotations.append(ann)
    jam.validate()
    return jam


def _file_names(clips: Iterable[ClipResult]) -> dict[str, str]:
    """``<stem>.jams`` per clip; clips whose stems collide keep their extension."""
    names = [c.clip for c in clips]
    stems = [Path(n).stem for n in names]
    return {n: (f"{s}.jams" if stems.count(s) == 1 else f"{n}.jams") for n, s in zip(names, stems, strict=True)}


def export_jams(results: str | Path | FolderResult, out_dir: str | Path) -> list[Path]:
    """Write one JAMS file per scored clip of a results folder.

    Parameters
    ----------
    results : str, Path or FolderResult
        A folder written by ``timingbench score`` (or its :func:`read_results`).
    out_dir : str or Path
        Output folder (created); files are ``<clip stem>.jams``.

    Returns
    -------
    written : list of Path
        In ``clips.jsonl`` order; clips that could not be scored are skipped.

    Raises
    ------
    TimingbenchError
        If the results cannot be read or the ``jams`` package is missing.
    """
    res = results if isinstance(results, FolderResult) else read_results(results)
    version = (res.summary or {}).get("timingbench_version")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    scored = [c for c in res.clips if c.ok]
    names = _file_names(scored)
    written = []
    for c in scored:
        jam = to_jams(c, package_version=version)
        path = out / names[c.clip]
        atomic_write_text(path, json.dumps(jam.__json__, indent=2, ensure_ascii=False) + "\n")
        written.append(path)
    return written


# ----------------------------------------------------------------------------- mir_eval


def _events_of(results: str | Path | FolderResult | ClipResult | Iterable[EventResult | Mapping[str, Any]],
               clip: str | None) -> list[EventResult]:
    if isinstance(results, str | Path):
        results = read_results(results)
    if isinstance(results, ClipResult):
        if clip is not None and clip != results.clip:
            raise ParameterError(f"clip: {clip!r} is not the given result's clip {results.clip!r}")
        return list(results.events)
    if isinstance(results, FolderResult):
        if clip is None:
            raise ParameterError("clip: name the clip whose events to compare (a folder holds many)")
        match = [c for c in results.clips if c.clip == clip]
        if not match:
            raise ParameterError(f"clip: no clip {clip!r} in the results")
        return list(match[0].events)
    events = [e if isinstance(e, EventResult) else EventResult.from_dict(e) for e in results]
    clips = {e.clip for e in events}
    if clip is None and len(clips) > 1:
        raise ParameterError(f"clip: the rows hold {len(clips)} clips; name one")
    return [e for e in events if clip is None or e.clip == clip]


def detections_for_mir_eval(
    results: str | Path | FolderResult | ClipResult | Iterable[EventResult | Mapping[str, Any]],
    clip: str | None = None, *, kinds: Collection[str] | None = None,
    families: Collection[str] | None = None,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Instructed and detected event times of one clip, for ``mir_eval.onset``.

    Parameters
    ----------
    results : str, Path, FolderResult, ClipResult or iterable of event rows
        A results folder, its :func:`read_results`, one :class:`ClipResult`, or
        ``events.jsonl`` rows / :class:`EventResult` objects.
    clip : str, optional
        The clip (required for a folder, or rows of several clips).
    kinds, families : collection of str, optional
        Keep only events of these kinds / families.

    Returns
    -------
    reference_onsets : np.ndarray of float64, shape (n,)
        Instructed times in seconds, sorted.
    estimated_onsets : np.ndarray of float64, shape (m,)
        Detected times in seconds (on-time and off-time detections), sorted; ``m <= n``.

    Raises
    ------
    ParameterError
        If the clip is not named where it must be, or is not in the results.

    Notes
    -----
    ``mir_eval.onset.f_measure(reference, estimated, window=w)`` matches times one to one
    within ``w`` seconds regardless of which instruction a detection answered; timingbench
    matches each event only to its own detection and with the event's own
    ``tolerance_s``. Use ``window=`` the common tolerance (0.5 s in the v1 prompt set) to
    compare, and expect equal counts only when events are further apart than ``2 w``.
    """
    events = _events_of(results, clip)
    keep = [e for e in events if (kinds is None or e.kind in kinds) and (families is None or e.family in families)]
    ref = np.sort(np.array([e.instructed_s for e in keep], dtype=np.float64))
    est = np.sort(np.array([e.detected_s for e in keep if e.detected_s is not None], dtype=np.float64))
    return ref, est


def beats_for_mir_eval(
    samples: npt.ArrayLike, sr: int, *, config: Config | str | Path | None = None,
) -> npt.NDArray[np.float64]:
    """The beat times the tempo detector tracks in a clip, for ``mir_eval.beat``.

    ``clips.jsonl`` keeps the tempo, not the beats, so the beats are tracked again on the
    audio (the same decoding as :func:`timingbench.score_audio` and the same tracker as
    the ``tempo`` field).

    Parameters
    ----------
    samples : array_like of float, shape (n,) or (n, channels)
        The clip (as :func:`timingbench.score_audio` takes it).
    sr : int
        Its sample rate, Hz.
    config : Config, str or Path, optional
        The configuration (default: the packaged one).

    Returns
    -------
    estimated_beats : np.ndarray of float64, shape (b,)
        Beat times in seconds, increasing (empty when the clip has no pulse). Pass them
        with your reference beats to ``mir_eval.beat.f_measure(reference, estimated)``.

    Raises
    ------
    ParameterError, ClipError
        As :func:`timingbench.score_audio` for bad ``samples`` or ``sr``.
    """
    from timingbench.api import _config
    from timingbench.audio import clip_from_array
    from timingbench.detectors.tempo import estimate_tempo

    cfg = _config(config)
    clip = clip_from_array(samples, sr, config=cfg)
    est = estimate_tempo(clip.samples, sr=clip.sr, tempo=cfg.params.tempo, audio=cfg.params.audio)
    return np.sort(np.asarray(est.beats_s, dtype=np.float64))

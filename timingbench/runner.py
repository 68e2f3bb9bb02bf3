"""Score a folder of clips against a prompt set (formats §3).

Each clip is scored on its own (decode -> feature bank -> detectors -> gates -> scoring)
and its rows are written atomically to ``RESULTS_DIR/.parts/<clip>.json`` as soon as it is
done, so a killed run restarted with the same command skips finished clips and loses
nothing. When every clip is done the parts are assembled, sorted by (prompt id, sample,
clip), into ``events.jsonl`` and ``clips.jsonl``, and ``summary.json`` is written. The
rows do not depend on ``--jobs``, the executor (local pool or Ray, see
:mod:`timingbench.executors`) or the order in which clips finish.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from timingbench.audio import Clip, file_hash, is_silent, load_clip
from timingbench.choices import CHANGE_BACKENDS, DEFAULT_FAMILY_EVIDENCE
from timingbench.config import Config, digest
from timingbench.errors import TimingbenchError
from timingbench.executors import Executor, LocalExecutor, TaskFailure
from timingbench.families import STEM_FAMILIES, TONAL_FAMILIES, floor_s, registry
from timingbench.identity.decide import judged_by_presence, judging
from timingbench.jsonio import atomic_write_text, read_json, remove_stale_temps, write_json, write_jsonl
from timingbench.prompts import (
    INSTRUMENT_KINDS,
    ClipMatch,
    ClipRef,
    Event,
    Prompt,
    PromptSet,
    load_prompts,
    match_clips,
)
from timingbench.runlock import RunLock
from timingbench.scoring import (
    audio_content_key,
    detector_name,
    detector_used,
    event_tolerance,
    needs_family_evidence,
    score_event,
)
from timingbench.summary import RESULTS_FORMAT, identity_exempt_families, is_identity_verified
from timingbench.version import __version__

if TYPE_CHECKING:
    from timingbench.features.bank import FeatureBank
    from timingbench.identity.evidence import FamilyEvidence

PARTS = ".parts"
ROUND = 6
#: Decimals of the numbers in an event's ``gate_stats`` object (levels in dB, fractions, seconds).
GATE_STATS_DECIMALS = 4


@dataclass(frozen=True)
class ScoreOptions:
    """Options of one scoring run (everything that changes results is in the part key)."""

    separation: str = "auto"
    demucs_repo: str | None = None
    cache_dir: str | None = None
    family_evidence: str = DEFAULT_FAMILY_EVIDENCE
    clap_dir: str | None = None
    chance: bool = True
    disabled_gates: tuple[str, ...] = ()
    #: Read and write the feature cache (``cache_dir``, default ``~/.cache/timingbench``);
    #: False keeps the bank in memory and writes nothing (results are the same).
    use_cache: bool = True


@dataclass
class RunResult:
    """What a scoring run produced."""

    events: list[dict[str, Any]]
    clips: list[dict[str, Any]]
    summary: dict[str, Any]
    out_dir: Path | None = None
    notes: list[str] = field(default_factory=list)
    #: Clips whose finished part a resumed run found and reused (not scored again).
    reused: int = 0
    #: One part per clip (what :func:`score_clip` made), in the order of ``clips``.
    parts: list[dict[str, Any]] = field(default_factory=list)


def _r(x: float | None) -> float | None:
    return None if x is None else round(float(x), ROUND)


def floor_of(family: str, config: Config) -> float | None:
    """The family's published localization floor in seconds (``families.floors_s``; None when not measured)."""
    return floor_s(family, config)


def gate_stats(gates: dict[str, str], stats: dict[str, Any]) -> dict[str, Any]:
    """The ``gate_stats`` object of an ``events.jsonl`` row: gate name -> the values it measured.

    Every gate that recorded statistics contributes them (numbers rounded to
    :data:`GATE_STATS_DECIMALS`; a non-finite number is written as null, JSON has no infinity).
    Gates without statistics (``detection``) are left out.
    """
    return {g: _json_numbers(stats[g]) for g in gates if isinstance(stats.get(g), dict)}


def _json_numbers(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _json_numbers(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_json_numbers(v) for v in x]
    if isinstance(x, bool) or x is None or isinstance(x, str):
        return x
    if isinstance(x, int | float | np.floating | np.integer):
        v = float(x)
        if not math.isfinite(v):
            return None
        return int(x) if isinstance(x, int | np.integer) else round(v, GATE_STATS_DECIMALS)
    return str(x)


def family_evidence_for(bank: FeatureBank, prompt: Prompt, config: Config,
                        opts: ScoreOptions) -> tuple[Any, dict[str, Any]]:
    """Family evidence of the clip (None when the prompt needs none or no backend runs).

    The evidences that judge the prompt's families on this clip (the registry's
    ``judged_by``: a demucs stem's level, the singing presence;
    :func:`timingbench.identity.stem_evidence.judging_evidence`) ride on it
    (:attr:`FamilyEvidence.judges`), computed when an event reads them; with
    ``--family-evidence none`` nothing is judged. The disclosure's ``judged_by`` names them per
    family.
    """
    if opts.family_evidence == "none":
        return None, {"backend": None}
    from timingbench.identity.stem_evidence import judging_evidence

    judges = judging_evidence(bank, config, (e.family for e in prompt.events
                                             if e.kind in INSTRUMENT_KINDS))
    low_route = config.params.percussion.route_low_hz is not None
    if not needs_family_evidence(prompt, opts.family_evidence, percussion_low_route=low_route):
        if not judges:
            return None, {"backend": None}
        from timingbench.identity.evidence import FamilyEvidence

        ev = FamilyEvidence(times=np.zeros(0), curves={}, backend="none", exempt={}, window_s=0.0,
                            note="no event needs the family-evidence backend")
        return dataclasses.replace(ev, judges=judges), {"backend": None, "judged_by": judged_by_info(judges)}
    from timingbench.identity.providers import family_evidence

    ev = family_evidence(bank, sr=bank.sr, semantic=config.params.semantic,
                         evidence_params=config.params.evidence, audio=config.params.audio,
                         backend=opts.family_evidence, clap_dir=Path(opts.clap_dir) if opts.clap_dir else None,
                         tagger=config.params.tagger)
    info = ev.disclosure()
    if judges:
        ev = dataclasses.replace(ev, judges=judges)
        info["judged_by"] = judged_by_info(judges)
    return ev, info


def row_evidence(event: Event, family_evidence: FamilyEvidence | None) -> list[dict[str, Any]]:
    """An ``events.jsonl`` row's ``evidence``: what decided the event (formats §3, results format 5).

    The evidences that judge its family on the clip (``stems``, ``singing``), or the
    family-evidence backend whose presence found it, each with its ``model`` and the model's
    ``licence``; otherwise one ``{"source": "signal"}``: the detector's signal gates alone
    decided (the event's identity, if any, was not judged).
    """
    if event.kind in INSTRUMENT_KINDS:
        judges = judging(family_evidence, event.family)
        if judges:
            return [evidence_source(e) for e in judges]
        if judged_by_presence(family_evidence, event.family):
            return [evidence_source(family_evidence)]
    return [{"source": "signal", "model": None, "licence": None}]


def judged_by_info(judges: dict[str, tuple[FamilyEvidence, ...]]) -> dict[str, list[dict[str, Any]]]:
    """Family -> the evidences that decide it on the clip (``source``, ``model``, ``licence``): what a
    row's ``evidence`` field and ``summary.json`` name."""
    return {f: [evidence_source(e) for e in evs] for f, evs in sorted(judges.items())}


def evidence_source(ev: FamilyEvidence) -> dict[str, Any]:
    """One evidence as a row names it: its ``source`` (backend), ``model`` and the model's ``licence``."""
    return {"source": ev.backend, "model": ev.weights or None, "licence": ev.licence}


def score_bank(
    bank: FeatureBank, prompt: Prompt, ref: ClipRef, config: Config, opts: ScoreOptions, *,
    family_evidence: FamilyEvidence | None = None, evidence_info: dict[str, Any] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Score every instructed event of ``prompt`` on one clip's bank.

    Returns
    -------
    events : list of dict
        ``events.jsonl`` rows.
    clip : dict
        The ``clips.jsonl`` row (without ``tempo``; see :func:`score_clip`).
    """
    rows: list[dict[str, Any]] = []
    timbre: list[dict[str, Any]] = []
    exempt = unverified_families(config, opts, evidence_info)
    for i, ev in enumerate(prompt.events):
        verdict, p_chance = score_event(
            bank, prompt, i, config, family_evidence=family_evidence,
            disabled_gates=opts.disabled_gates, clip=ref.clip, with_chance=opts.chance,
        )
        rows.append({
            "clip": ref.clip, "prompt_id": prompt.id, "sample": ref.sample, "event_id": ev.id,
            "kind": ev.kind, "family": ev.family, "instructed_s": _r(ev.time_s),
            "tolerance_s": _r(event_tolerance(ev, config)), "outcome": verdict.outcome,
            "detected_s": _r(verdict.detected_s), "error_s": _r(verdict.error_s),
            "gates": verdict.gates, "rejected_by": verdict.rejected_by,
            "detector": detector_used(ev, family_evidence), "p_chance": _r(p_chance),
            "floor_s": floor_of(ev.family, config),
            "gate_stats": gate_stats(verdict.gates, verdict.stats), "error": None,
            "identity_verified": (ev.kind in INSTRUMENT_KINDS and bool(judging(family_evidence, ev.family)))
            or is_identity_verified(ev.family, exempt),
            "evidence": row_evidence(ev, family_evidence),
        })
        if ev.kind == "instrument_entry" and (ev.family in TONAL_FAMILIES or (
                ev.family in STEM_FAMILIES and (evidence_info or {}).get("backend") in CHANGE_BACKENDS)):
            timbre.append(_timbre(family_evidence, ev.id, ev.family,
                                  verdict.detected_s if verdict.detected_s is not None else ev.time_s, config))
    tol = config.params.duration.tolerance_s
    return rows, clip_row(
        ref, prompt, duration_s=_r(bank.clip_duration_s),
        duration_ok=bool(abs(bank.clip_duration_s - prompt.duration_s) <= tol + 1e-9),
        timbre_match=timbre or None, separation=bank.separation_backend,
        family_evidence=(evidence_info or {}).get("backend"))


def clip_row(ref: ClipRef, prompt: Prompt, *, duration_s: float | None = None, duration_ok: bool | None = None,
             tempo: dict[str, Any] | None = None, timbre_match: list[dict[str, Any]] | None = None,
             error: str | None = None, separation: str | None = None,
             family_evidence: str | None = None, controls: dict[str, Any] | None = None,
             silent: bool = False) -> dict[str, Any]:
    """A ``clips.jsonl`` row: every key in the order the runner writes it, scored or not.

    A clip that could not be scored gets the same keys, with ``error`` set, ``duration_ok``
    false and the rest null. ``silent`` marks silent audio (scored: nothing delivered).
    """
    return {"clip": ref.clip, "prompt_id": prompt.id, "sample": ref.sample, "duration_s": duration_s,
            "duration_ok": duration_ok, "tempo": tempo, "timbre_match": timbre_match, "error": error,
            "separation": separation, "family_evidence": family_evidence, "controls": controls, "silent": silent}


def _timbre(evidence: FamilyEvidence | None, event_id: str, family: str, after_s: float,
            config: Config) -> dict[str, Any]:
    if evidence is None:
        return {"event_id": event_id, "family": family, "match": None, "reason": "model_unavailable"}
    from timingbench.identity.rules import timbre_match

    res = dict(timbre_match(evidence, family, after_s=after_s, semantic=config.params.semantic,
                            evidence_params=config.params.evidence))
    return {"event_id": event_id, "family": family, **res}


def score_clip(ref: ClipRef, prompt: Prompt, config: Config, opts: ScoreOptions) -> dict[str, Any]:
    """Decode, analyse and score one clip; never raises for a bad clip.

    Returns
    -------
    part : dict
        ``{"key": ..., "events": [...], "clip": {...}, "notes": [...]}``; on failure the
        clip row carries ``error`` and ``events`` is empty.
    """
    key = part_key(ref, prompt, config, opts)
    if ref.conflict is not None:  # another file claims the same sample: neither is scored
        return error_part(ref, prompt, config, opts, clip_error_message(ref.path, ref.conflict))
    try:
        clip = load_clip(ref.path, config, allow_silent=True)
        return {"key": key, **score_decoded(clip, ref, prompt, config, opts)}
    except TimingbenchError as exc:
        return error_part(ref, prompt, config, opts, clip_error_message(ref.path, exc))


def clip_error_message(path: Path, reason: object) -> str:
    """``/absolute/path: reason``: why a clip could not be scored, naming its file once.

    The decoders name the file as it was given (and ffmpeg names it again inside its own
    reason); errors raised past decoding do not name it. Every such mention is dropped from
    ``reason`` and the absolute path leads.
    """
    shown = os.path.abspath(path)
    text = str(reason)
    for form in sorted({shown, str(path)}, key=len, reverse=True):  # the longer first: it contains the other
        text = text.replace(f"{form}: ", "")
    return f"{shown}: {text}"


def score_decoded(clip: Clip, ref: ClipRef, prompt: Prompt, config: Config, opts: ScoreOptions) -> dict[str, Any]:
    """Analyse and score one decoded clip: the part :func:`score_clip` makes, without its key.

    Parameters
    ----------
    clip : Clip
        The decoded clip (:func:`timingbench.audio.load_clip` or an in-memory array).
    ref, prompt, config, opts
        As for :func:`score_clip`.

    Returns
    -------
    part : dict
        ``{"events": [...], "clip": {...}, "notes": [...], "family_evidence": {...}}``.

    Raises
    ------
    TimingbenchError
        For audio the analysis cannot use.
    """
    if is_silent(clip.samples, config.params.audio):
        return score_silent(clip, ref, prompt, config, opts)
    from timingbench.features import compute_bank, get_bank

    if opts.use_cache:
        bank = get_bank(clip, config, separation=opts.separation, demucs_repo=opts.demucs_repo,
                        cache_dir=opts.cache_dir)
    else:
        bank = compute_bank(clip, config, separation=opts.separation, demucs_repo=opts.demucs_repo)
    evidence, info = family_evidence_for(bank, prompt, config, opts)
    events, clip_row = score_bank(bank, prompt, ref, config, opts, family_evidence=evidence, evidence_info=info)
    if prompt.tempo_bpm is not None:
        from timingbench.detectors.tempo import estimate_tempo, score_tempo

        est = estimate_tempo(bank.samples, sr=bank.sr, tempo=config.params.tempo, audio=config.params.audio)
        clip_row["tempo"] = score_tempo(est, target_bpm=prompt.tempo_bpm,
                                        tolerance_pct=(prompt.tempo_tolerance_pct
                                                       if prompt.tempo_tolerance_pct is not None
                                                       else config.params.tempo.tolerance_pct),
                                        tempo=config.params.tempo)
    if prompt.controls is not None:
        from timingbench.controls.score import ControlSections, score_controls

        clip_row["controls"] = score_controls(
            bank, prompt.controls, ControlSections.of(config), span_s=prompt.duration_s,
            key=audio_content_key(bank.samples, sr=bank.sr),
            instructed_bpm=prompt.tempo_bpm, with_chance=opts.chance,
            control_bank=lambda path: compute_bank(load_clip(path, config), config, separation="dsp"))
    notes = [n for n in (bank.separation_note, bank.separation_disclosure) if n]
    vocals = None
    if opts.family_evidence != "none":  # its disclosure in the summary; cached for explain and the report
        from timingbench.identity.singing import prompt_presence

        vocals = prompt_presence(bank, (e.family for e in prompt.events), config)
    return {"events": events, "clip": clip_row, "notes": notes, "family_evidence": info,
            "vocals_presence": vocals, "separation_source": bank.separation_source}


def unverified_families(config: Config, opts: ScoreOptions, evidence_info: dict[str, Any] | None) -> dict[str, str]:
    """Families whose identity is not verified on one clip: the run's exempt families
    (:func:`timingbench.summary.identity_exempt_families`) and those its backend could not judge."""
    exempt = identity_exempt_families(config, opts.family_evidence)
    exempt.update((evidence_info or {}).get("exempt") or {})
    return exempt


def undelivered_rows(ref: ClipRef, prompt: Prompt, config: Config, opts: ScoreOptions, *,
                     error: str | None) -> list[dict[str, Any]]:
    """``events.jsonl`` rows of a clip in which nothing was delivered: every event ``none``.

    Used for a clip that could not be scored (``error`` set: the row's reason) and for
    silent audio (``error`` None: the clip was scored, and silence
    delivers no event). Either way the events stay in every rate's denominator.

    Parameters
    ----------
    ref : ClipRef
    prompt : Prompt
    config : Config
        Reads the tolerances and floors.
    opts : ScoreOptions
        The family-evidence backend decides ``identity_verified``.
    error : str or None
        Why the clip could not be scored.

    Returns
    -------
    rows : list of dict
        One row per instructed event, with every key of a scored row.
    """
    exempt = unverified_families(config, opts, None)
    return [{
        "clip": ref.clip, "prompt_id": prompt.id, "sample": ref.sample, "event_id": ev.id,
        "kind": ev.kind, "family": ev.family, "instructed_s": _r(ev.time_s),
        "tolerance_s": _r(event_tolerance(ev, config)), "outcome": "none", "detected_s": None, "error_s": None,
        "gates": {}, "rejected_by": None, "detector": detector_name(ev),
        "p_chance": None, "floor_s": floor_of(ev.family, config), "gate_stats": {}, "error": error,
        "identity_verified": is_identity_verified(ev.family, exempt),
    } for ev in prompt.events]


def undelivered_tempo(prompt: Prompt, config: Config, *, reason: str) -> dict[str, Any] | None:
    """The ``tempo`` object of a clip that delivered no tempo (None when none was instructed)."""
    if prompt.tempo_bpm is None:
        return None
    from timingbench.detectors.tempo import TempoEstimate, score_tempo

    est = TempoEstimate(None, np.empty(0, dtype=np.float64), reason, {"has_pulse": False, "steady": False})
    return score_tempo(est, target_bpm=prompt.tempo_bpm, tempo=config.params.tempo,
                       tolerance_pct=(prompt.tempo_tolerance_pct if prompt.tempo_tolerance_pct is not None
                                      else config.params.tempo.tolerance_pct))


def score_silent(clip: Clip, ref: ClipRef, prompt: Prompt, config: Config, opts: ScoreOptions) -> dict[str, Any]:
    """Score silent audio: a valid output in which nothing was delivered.

    Every event is ``none`` (:func:`undelivered_rows`); duration, tempo and controls are
    judged as for any clip (the tempo estimator finds no beat in silence and says so).

    Returns
    -------
    part : dict
        As :func:`score_decoded`; the clip row's ``silent`` is true.
    """
    from timingbench.detectors.tempo import estimate_tempo, score_tempo

    tol = config.params.duration.tolerance_s
    row = clip_row(ref, prompt, duration_s=_r(clip.duration_s),
                   duration_ok=bool(abs(clip.duration_s - prompt.duration_s) <= tol + 1e-9), silent=True)
    if prompt.tempo_bpm is not None:
        est = estimate_tempo(clip.samples, sr=clip.sr, tempo=config.params.tempo, audio=config.params.audio)
        row["tempo"] = score_tempo(est, target_bpm=prompt.tempo_bpm, tempo=config.params.tempo,
                                   tolerance_pct=(prompt.tempo_tolerance_pct if prompt.tempo_tolerance_pct is not None
                                                  else config.params.tempo.tolerance_pct))
    if prompt.controls is not None:
        from timingbench.controls.score import ControlSections, score_controls
        from timingbench.features import compute_bank

        bank = compute_bank(clip, config, separation="dsp")  # the drum control reads the drums stem
        row["controls"] = score_controls(bank, prompt.controls, ControlSections.of(config), span_s=prompt.duration_s,
                                         key=audio_content_key(bank.samples, sr=bank.sr),
                                         instructed_bpm=prompt.tempo_bpm, with_chance=opts.chance)
    return {"events": undelivered_rows(ref, prompt, config, opts, error=None), "clip": row,
            "notes": [], "family_evidence": {}}


#: Control name of a prompt (:meth:`Controls.names`) -> its object in a ``controls`` row and the
#: metrics a clip that delivered nothing scores (0: none of the request was followed).
UNDELIVERED_CONTROLS = {
    "beats_s": ("beats", {"f_measure": 0.0, "cmlt": 0.0, "amlt": 0.0}),
    "downbeats_s": ("downbeats", {"f_measure": 0.0}),
    "dynamics": ("dynamics", {"pearson_r": 0.0}),
    "melody": ("melody", {"accuracy": 0.0}),
    "chords": ("chords", {"accuracy": 0.0}),
    "drums_s": ("drums", {"f_measure": 0.0}),
}


def undelivered_controls(prompt: Prompt, *, reason: str) -> dict[str, Any] | None:
    """The ``controls`` object of a clip that could not be scored: every requested control
    scores 0 (None when the prompt requests none), so failing never raises an adherence mean."""
    if prompt.controls is None:
        return None
    return {UNDELIVERED_CONTROLS[n][0]: {**UNDELIVERED_CONTROLS[n][1], "chance": None, "reason": reason}
            for n in prompt.controls.names()}


def error_part(ref: ClipRef, prompt: Prompt, config: Config, opts: ScoreOptions, msg: str) -> dict[str, Any]:
    """The part of a clip that could not be scored.

    Its events are rows with outcome ``none`` (:func:`undelivered_rows`), its clip row
    carries ``error``, ``duration_ok`` false, for a tempo prompt a tempo object with no
    estimate and for a prompt with controls a score of 0 for each
    (:func:`undelivered_controls`): failing never takes a clip out of a rate.
    """
    row = clip_row(ref, prompt, error=msg, duration_ok=False,
                   tempo=undelivered_tempo(prompt, config, reason="error"),
                   controls=undelivered_controls(prompt, reason="error"))
    return {"key": part_key(ref, prompt, config, opts), "clip": row, "notes": [], "family_evidence": {},
            "events": undelivered_rows(ref, prompt, config, opts, error=msg)}


def score_refs(
    items: Sequence[tuple[ClipRef, Prompt]], config: Config, opts: ScoreOptions, executor: Executor,
) -> Iterator[tuple[int, dict[str, Any], bool]]:
    """Score clips on an executor, yielding each part as it finishes.

    Yields
    ------
    index : int
        Position of the clip in ``items``.
    part : dict
        What :func:`score_clip` returned, or the :func:`error_part` of a clip whose worker
        died on every attempt.
    finished : bool
        False for such a failed clip (its part is not to be kept: a later run tries again).
    """
    work = [(ref, prompt, config, opts) for ref, prompt in items]
    for i, part in executor.imap(_work, work, label=lambda w: w[0].clip):
        if isinstance(part, TaskFailure):
            ref, prompt = items[i]
            why = f"failed on {part.attempts} attempts ({part.error})"
            yield i, error_part(ref, prompt, config, opts, clip_error_message(ref.path, why)), False
        else:
            yield i, part, True


def assemble(
    parts: Sequence[dict[str, Any]], match: ClipMatch, prompt_set: PromptSet, config: Config, opts: ScoreOptions,
    *, prompts_path: str, clips_dir: str, out_dir: str | Path | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """The ``events.jsonl`` and ``clips.jsonl`` rows and the ``summary.json`` of a run's parts.

    Parameters
    ----------
    parts : sequence of dict
        One part per clip of ``match.clips``, in that order.
    match : ClipMatch
        The folder's clips matched to the prompt set.
    prompt_set : PromptSet
    config : Config
    opts : ScoreOptions
    prompts_path, clips_dir : str
        Recorded in the summary (absolute).
    out_dir : str or Path, optional
        The results folder: the summary records the clips folder relative to it.

    """
    from timingbench.summary import build_summary

    events = [row for p in parts for row in p["events"]]
    clips = [p["clip"] for p in parts]
    summary = build_summary(
        events, clips, config=config, opts=opts, unmatched=match.unmatched, missing=match.missing,
        subfolders=match.subfolders,
        prompt_errors=[str(e) for e in prompt_set.errors], parts=list(parts), prompts_path=prompts_path,
        clips_dir=clips_dir, out_dir=out_dir,
    )
    return events, clips, summary


def part_key(ref: ClipRef, prompt: Prompt, config: Config, opts: ScoreOptions) -> str:
    """Identity of a finished part: audio bytes, prompt row, config, options and package version."""
    payload = {
        "audio": file_hash(ref.path) if ref.path.is_file() else None,
        "prompt": digest(dict(prompt.raw)),
        "config": config.content_hash, "version": __version__, "format": RESULTS_FORMAT,
        "opts": [opts.separation, opts.family_evidence, opts.chance, sorted(opts.disabled_gates),
                 opts.demucs_repo, opts.clap_dir],
        **({"conflict": ref.conflict} if ref.conflict is not None else {}),
    }
    return json.dumps(payload, sort_keys=True)


def _work(args: tuple[ClipRef, Prompt, Config, ScoreOptions]) -> dict[str, Any]:
    ref, prompt, config, opts = args
    return score_clip(ref, prompt, config, opts)


def score_folder(
    clips_dir: str | Path, prompts_path: str | Path, out_dir: str | Path, config: Config, *,
    opts: ScoreOptions | None = None, jobs: int = 1,
    progress: Callable[[int, int, str], None] | None = None, executor: Executor | None = None,
) -> RunResult:
    """Score every clip of a folder and write ``events.jsonl``, ``clips.jsonl``, ``summary.json``.

    Parameters
    ----------
    clips_dir : str or Path
        Folder of clips named ``<prompt_id>[__<k>].<ext>``.
    prompts_path : str or Path
        Prompt set (JSONL, formats §1).
    out_dir : str or Path
        Results folder (created; finished clips found there are not scored again).
    config : Config
    opts : ScoreOptions, optional
    jobs : int
        Worker processes (results are identical for any value).
    progress : callable, optional
        Called as ``progress(done, total, clip)`` after each clip.
    executor : Executor, optional
        Where clips run (default: a :class:`~timingbench.executors.LocalExecutor` of
        ``jobs`` processes). A clip the executor reports failed (its worker died on every
        attempt) gets an error row and no part, so a later run tries it again.

    Returns
    -------
    result : RunResult

    Raises
    ------
    timingbench.runlock.RunLockedError
        At once, when another live run is using ``out_dir`` (see :mod:`timingbench.runlock`).
    ConfigError
        At once, when ``config`` lists other instrument families than the installation's
        (:func:`timingbench.families.registry`).
    PromptError
        If the prompt file cannot be read or is not JSONL at all (no line is a JSON object),
        or ``clips_dir`` is not a folder; nothing is written then (``out_dir`` is not created).
    """
    ps = load_prompts(prompts_path, require_jsonl=True)
    match = match_clips(clips_dir, ps.prompts)  # both raise before anything is written
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with RunLock(out) as lock:
        result = _score_folder_locked(clips_dir, prompts_path, out, config, ps, match, opts=opts, jobs=jobs,
                                      progress=progress, executor=executor)
    if lock.stale is not None:
        result.notes.append(f"took over the lock of a run that is no longer alive "
                            f"(pid {lock.stale.get('pid')!r} on host {lock.stale.get('host')!r})")
    return result


def _score_folder_locked(
    clips_dir: str | Path, prompts_path: str | Path, out_dir: str | Path, config: Config, ps: PromptSet,
    match: ClipMatch, *, opts: ScoreOptions | None, jobs: int, progress: Callable[[int, int, str], None] | None,
    executor: Executor | None = None,
) -> RunResult:
    """:func:`score_folder` once the results folder is locked."""
    registry(config)  # a configuration that changes the family list is refused before any clip
    out = Path(out_dir)
    for folder in (out, out / PARTS):  # writes a killed run left unfinished (the folder is locked)
        remove_stale_temps(folder)
    result = score_matched(clips_dir, ps, config, opts=opts, executor=executor or LocalExecutor(jobs),
                           progress=progress, parts_dir=out / PARTS, prompts_path=str(prompts_path), out_dir=out)
    write_jsonl(out / "events.jsonl", result.events)
    write_jsonl(out / "clips.jsonl", result.clips)
    write_json(out / "summary.json", result.summary)
    result.out_dir = out
    return result


def score_matched(
    clips_dir: str | Path, prompt_set: PromptSet, config: Config, *, opts: ScoreOptions | None,
    executor: Executor, progress: Callable[[int, int, str], None] | None = None, parts_dir: Path | None = None,
    prompts_path: str | None = None, out_dir: Path | None = None,
) -> RunResult:
    """The folder loop: match the folder's clips to the prompts, score each, assemble the rows.

    Parameters
    ----------
    clips_dir : str or Path
        Folder of clips.
    prompt_set : PromptSet
    config : Config
    opts : ScoreOptions, optional
    executor : Executor
        Where clips run.
    progress : callable, optional
        Called as ``progress(done, total, clip)`` after each clip.
    parts_dir : Path, optional
        Resumable per-clip parts: a part there whose key still matches is reused, and each
        finished part is written there. Without it nothing is read or written.
    prompts_path : str, optional
        Recorded in the summary (default: the prompt set's source).
    out_dir : Path, optional
        The results folder the rows will be written to: the summary records the clips folder
        relative to it.

    Returns
    -------
    result : RunResult
        The rows, the summary and the parts (one per matched clip, in row order); no
        ``out_dir``.
    """
    opts = opts or ScoreOptions()
    ps = prompt_set
    match = match_clips(clips_dir, ps.prompts)
    parts: dict[str, dict[str, Any]] = {}
    todo: list[ClipRef] = []
    for ref in match.clips:
        pp = None if parts_dir is None else parts_dir / f"{ref.clip}.json"
        if pp is not None and pp.is_file():
            try:
                part = read_json(pp)
                if part.get("key") == part_key(ref, ps.prompts[ref.prompt_id], config, opts):
                    parts[ref.clip] = part
                    continue
            except TimingbenchError:
                pass  # a damaged part is simply redone
        todo.append(ref)
    total, done = len(match.clips), len(parts)
    reused = done
    if progress:
        progress(done, total, "")
    items = [(ref, ps.prompts[ref.prompt_id]) for ref in todo]
    if parts_dir is not None:
        parts_dir.mkdir(parents=True, exist_ok=True)
    for i, part, finished in score_refs(items, config, opts, executor):
        ref = todo[i]
        if finished and parts_dir is not None:
            atomic_write_text(parts_dir / f"{ref.clip}.json", json.dumps(part))
        parts[ref.clip] = part
        done += 1
        if progress:
            progress(done, total, ref.clip)
    ordered = [parts[r.clip] for r in match.clips]
    events, clips, summary = assemble(ordered, match, ps, config, opts,
                                      prompts_path=ps.source if prompts_path is None else prompts_path,
                                      clips_dir=str(clips_dir), out_dir=out_dir)
    return RunResult(events, clips, summary, None, parts=ordered, reused=reused)


"""Score a folder of clips against a prompt set (SPEC section 3).

Each clip is scored on its own (decode -> feature bank -> detectors -> gates -> scoring)
and its rows are written atomically to ``RESULTS_DIR/.parts/<clip>.json`` as soon as it is
done, so a killed run restarted with the same command skips finished clips and loses
nothing. When every clip is done the parts are assembled, sorted by (prompt id, sample,
clip), into ``events.jsonl`` and ``clips.jsonl``, and ``summary.json`` is written. The
rows do not depend on ``--jobs``, the executor (local pool or Ray, see
:mod:`timingbench.executors`) or the order in which clips finish.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from timingbench.audio import Clip, file_hash, load_clip
from timingbench.config import Config, digest
from timingbench.errors import TimingbenchError
from timingbench.executors import Executor, LocalExecutor, TaskFailure
from timingbench.jsonio import atomic_write_text, read_json, write_json, write_jsonl
from timingbench.prompts import (
    STEM_FAMILIES,
    TONAL_FAMILIES,
    ClipMatch,
    ClipRef,
    Prompt,
    PromptSet,
    load_prompts,
    match_clips,
)
from timingbench.runlock import RunLock
from timingbench.scoring import detector_name, event_tolerance, needs_family_evidence, score_event
from timingbench.summary import RESULTS_FORMAT
from timingbench.version import __version__

if TYPE_CHECKING:
    from timingbench.family_evidence import FamilyEvidence
    from timingbench.features.bank import FeatureBank

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
    family_evidence: str = "trained"
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
    #: One part per clip (what :func:`score_clip` made), in the order of ``clips``.
    parts: list[dict[str, Any]] = field(default_factory=list)


def _r(x: float | None) -> float | None:
    return None if x is None else round(float(x), ROUND)


def floor_of(family: str, config: Config) -> float | None:
    """The family's published localization floor in seconds (``floors.<family>_s``; None when unlisted)."""
    return config.params.floors.of(family)


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
    """Family evidence of the clip (None when the prompt needs none or no backend runs)."""
    low_route = config.params.percussion.route_low_hz is not None
    if opts.family_evidence == "none" or not needs_family_evidence(prompt, opts.family_evidence,
                                                                    percussion_low_route=low_route):
        return None, {"backend": None}
    from timingbench.features.semantic import family_evidence

    ev = family_evidence(bank, sr=bank.sr, semantic=config.params.semantic,
                         evidence_params=config.params.evidence, audio=config.params.audio,
                         backend=opts.family_evidence, clap_dir=Path(opts.clap_dir) if opts.clap_dir else None)
    return ev, {"backend": ev.backend, "exempt": dict(ev.exempt)}


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
            "detector": detector_name(ev), "p_chance": _r(p_chance),
            "floor_s": floor_of(ev.family, config),
            "gate_stats": gate_stats(verdict.gates, verdict.stats),
        })
        if ev.kind == "instrument_entry" and (ev.family in TONAL_FAMILIES or (
                ev.family in STEM_FAMILIES and (evidence_info or {}).get("backend") == "trained")):
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
             family_evidence: str | None = None, controls: dict[str, Any] | None = None) -> dict[str, Any]:
    """A ``clips.jsonl`` row: every key in the order the runner writes it, scored or not.

    A clip that could not be scored gets the same keys, with ``error`` set and the rest null.
    """
    return {"clip": ref.clip, "prompt_id": prompt.id, "sample": ref.sample, "duration_s": duration_s,
            "duration_ok": duration_ok, "tempo": tempo, "timbre_match": timbre_match, "error": error,
            "separation": separation, "family_evidence": family_evidence, "controls": controls}


def _timbre(evidence: FamilyEvidence | None, event_id: str, family: str, after_s: float,
            config: Config) -> dict[str, Any]:
    if evidence is None:
        return {"event_id": event_id, "family": family, "match": None, "reason": "model_unavailable"}
    from timingbench.identity import timbre_match

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
    try:
        return {"key": key, **score_decoded(load_clip(ref.path, config), ref, prompt, config, opts)}
    except TimingbenchError as exc:
        msg = str(exc)
        if str(ref.path) not in msg:  # errors raised past decoding do not know the file
            msg = f"{ref.path}: {msg}"
        return error_part(ref, prompt, config, opts, msg)


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
            bank, prompt.controls, ControlSections.of(config), span_s=prompt.duration_s, key=ref.clip,
            instructed_bpm=prompt.tempo_bpm, with_chance=opts.chance,
            control_bank=lambda path: compute_bank(load_clip(path, config), config, separation="dsp"))
    notes = [n for n in (bank.separation_note,) if n]
    return {"events": events, "clip": clip_row, "notes": notes, "family_evidence": info}


def error_part(ref: ClipRef, prompt: Prompt, config: Config, opts: ScoreOptions, msg: str) -> dict[str, Any]:
    """The part of a clip that could not be scored: no events, a clip row carrying ``error``."""
    return {"key": part_key(ref, prompt, config, opts), "events": [], "clip": clip_row(ref, prompt, error=msg),
            "notes": [], "family_evidence": {}}


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
            yield i, error_part(ref, prompt, config, opts,
                                f"{ref.path}: failed on {part.attempts} attempts ({part.error})"), False
        else:
            yield i, part, True


def assemble(
    parts: Sequence[dict[str, Any]], match: ClipMatch, prompt_set: PromptSet, config: Config, opts: ScoreOptions,
    *, prompts_path: str, clips_dir: str,
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
        Recorded in the summary.
    """
    from timingbench.summary import build_summary

    events = [row for p in parts for row in p["events"]]
    clips = [p["clip"] for p in parts]
    summary = build_summary(
        events, clips, config=config, opts=opts, unmatched=match.unmatched, missing=match.missing,
        prompt_errors=[str(e) for e in prompt_set.errors], parts=list(parts), prompts_path=prompts_path,
        clips_dir=clips_dir,
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
        Prompt set (JSONL, SPEC section 1).
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
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with RunLock(out) as lock:
        result = _score_folder_locked(clips_dir, prompts_path, out, config, opts=opts, jobs=jobs,
                                      progress=progress, executor=executor)
    if lock.stale is not None:
        result.notes.append(f"took over the lock of a run that is no longer alive "
                            f"(pid {lock.stale.get('pid')!r} on host {lock.stale.get('host')!r})")
    return result


def _score_folder_locked(
    clips_dir: str | Path, prompts_path: str | Path, out_dir: str | Path, config: Config, *,
    opts: ScoreOptions | None, jobs: int, progress: Callable[[int, int, str], None] | None,
    executor: Executor | None = None,
) -> RunResult:
    """:func:`score_folder` once the results folder is locked."""
    out = Path(out_dir)
    result = score_matched(clips_dir, load_prompts(prompts_path), config, opts=opts,
                           executor=executor or LocalExecutor(jobs), progress=progress, parts_dir=out / PARTS,
                           prompts_path=str(prompts_path))
    write_jsonl(out / "events.jsonl", result.events)
    write_jsonl(out / "clips.jsonl", result.clips)
    write_json(out / "summary.json", result.summary)
    result.out_dir = out
    return result


def score_matched(
    clips_dir: str | Path, prompt_set: PromptSet, config: Config, *, opts: ScoreOptions | None,
    executor: Executor, progress: Callable[[int, int, str], None] | None = None, parts_dir: Path | None = None,
    prompts_path: str | None = None,
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
                                      clips_dir=str(clips_dir))
    return RunResult(events, clips, summary, None, parts=ordered)


"""Re-derive one scored event from a results folder: its inputs, candidates, gates and evidence.

The clip's feature bank is rebuilt (from the feature cache when present) with the options
the run recorded in ``summary.json``, the event's detector is run again on its search
window, and every candidate is returned with its gate verdicts and the statistics they
rest on (:mod:`timingbench.explain.thresholds`). The verdict is re-decided the way
``timingbench score`` decides it and compared with the row in ``events.jsonl``.

Silent audio is explained as the scorer scores it: nothing was delivered, so no detector
runs, no family evidence is read and no stem is separated (the row's empty gates, no
rejecting gate, no separation backend). A clip that ends before an event's instructed
time minus the search half-width has no search window, and the account says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from timingbench.audio import is_silent
from timingbench.choices import DEFAULT_FAMILY_EVIDENCE
from timingbench.config import Config, load_config
from timingbench.convert import round_time
from timingbench.errors import TimingbenchError
from timingbench.explain.results import ResultsFolder, recorded_path
from timingbench.explain.thresholds import GateCheck, gate_checks
from timingbench.models.tagger import with_tagger_weights
from timingbench.prompts import Prompt, load_prompts, match_clips
from timingbench.runner import ScoreOptions, family_evidence_for
from timingbench.scoring import DetectorParams, run_detector, score_event, search_window
from timingbench.verdicts import Candidate, EventContext, EventVerdict

if TYPE_CHECKING:
    from timingbench.features.bank import FeatureBank
    from timingbench.identity.evidence import FamilyEvidence

#: Separation of a silent clip's bank: the scorer separates nothing in silence.
SILENT_SEPARATION = "none"
#: What an account says of silent audio (the scorer's verdict on it).
SILENT_NOTE = "silent audio: nothing delivered"


@dataclass(frozen=True)
class Inputs:
    """Where a results folder's clip came from and how it was scored.

    Attributes
    ----------
    audio : Path
        The clip's audio file.
    prompt : Prompt
        The clip's prompt.
    config : Config
        The configuration to re-score with.
    options : ScoreOptions
        Separation, family-evidence backend and disabled gates of the run.
    notes : list of str
        Differences from the recorded run (another configuration, another prompt file).
    """

    audio: Path
    prompt: Prompt
    config: Config
    options: ScoreOptions
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ExplainedCandidate:
    """One candidate of the re-run detector."""

    candidate: Candidate
    checks: list[GateCheck]
    chosen: bool
    passed: bool


@dataclass(frozen=True)
class ExplainedEvent:
    """Everything a verdict rests on, for one event of one clip.

    Attributes
    ----------
    row : dict
        The event's ``events.jsonl`` row.
    prompt : Prompt
    index : int
        Index of the event in the prompt.
    window : tuple of float
        The search window in seconds.
    candidates : list of ExplainedCandidate
        Inside the search window, in time order.
    verdict : EventVerdict
        The re-decided verdict.
    bank : FeatureBank
        The clip's feature bank.
    family_evidence : FamilyEvidence or None
        The clip's family evidence (None when the event's prompt needs none or the
        backend is ``none``).
    inputs : Inputs
    notes : list of str
        Where the re-derivation differs from the recorded row.
    silent : bool
        The clip is silent audio: scored as delivering nothing, without detector, family
        evidence or separation (``bank`` is built without separation, for the plot).
    """

    row: dict[str, Any]
    prompt: Prompt
    index: int
    window: tuple[float, float]
    candidates: list[ExplainedCandidate]
    verdict: EventVerdict
    bank: FeatureBank
    family_evidence: FamilyEvidence | None
    inputs: Inputs
    notes: list[str]
    silent: bool = False

    @property
    def has_window(self) -> bool:
        """False when the clip ends before the search window opens (the window would be inverted)."""
        return float(round_time(self.window[0])) <= float(round_time(self.window[1]))

    @property
    def chosen(self) -> ExplainedCandidate | None:
        """The detected candidate, or the nearest one when the event was not credited."""
        return next((c for c in self.candidates if c.chosen), None)


def _options(results: ResultsFolder, clip: str, overrides: dict[str, Any]) -> ScoreOptions:
    s = results.summary or {}
    row = results.clips.get(clip, {})
    sep = overrides.get("separation") or row.get("separation") or (s.get("separation") or {}).get("requested") \
        or "auto"
    fe = (overrides.get("family_evidence") or (s.get("family_evidence") or {}).get("requested")
          or DEFAULT_FAMILY_EVIDENCE)
    return ScoreOptions(separation=str(sep), demucs_repo=overrides.get("demucs_repo"),
                        cache_dir=overrides.get("cache_dir"), family_evidence=str(fe),
                        clap_dir=overrides.get("clap_dir"), chance=False,
                        disabled_gates=tuple(s.get("disabled_gates") or ()))


@dataclass(frozen=True)
class RunInputs:
    """What every clip of a results folder was scored with: prompts, audio files, configuration.

    Attributes
    ----------
    prompts : dict of str to Prompt
        The valid prompts of the prompt file, by id.
    audio : dict of str to Path
        Clip file name -> its audio file in the clips folder.
    prompts_path : str
        The prompt file.
    clips_dir : str
        The clips folder.
    config : Config
    notes : list of str
        Differences from the recorded run (another configuration).
    """

    prompts: dict[str, Prompt]
    audio: dict[str, Path]
    prompts_path: str
    clips_dir: str
    config: Config
    notes: list[str]


def resolve_run(
    results: ResultsFolder, *, clips_dir: str | Path | None = None, prompts_path: str | Path | None = None,
    config_path: str | Path | None = None, tagger_weights: str | Path | None = None,
) -> RunInputs:
    """The prompt file, clips folder and configuration a results folder was scored with.

    Parameters
    ----------
    results : ResultsFolder
    clips_dir, prompts_path, config_path : str or Path, optional
        Override what ``summary.json`` records.
    tagger_weights : str or Path, optional
        The AudioSet tagger's weights (``--tagger-weights``; config ``tagger.weights``).

    Raises
    ------
    TimingbenchError
        If the clips folder or prompt file is neither recorded nor given, or either (or
        the configuration) cannot be found.
    """
    s = results.summary or {}
    notes: list[str] = []
    cdir = clips_dir if clips_dir is not None else recorded_path(results, "clips_dir")
    if cdir is None:
        raise TimingbenchError(f"{results.path}: summary.json does not record the clips folder; pass --clips DIR")
    ppath = prompts_path if prompts_path is not None else recorded_path(results, "prompts")
    if ppath is None:
        raise TimingbenchError(f"{results.path}: summary.json does not record the prompt file; pass --prompts FILE")
    if not Path(cdir).is_dir():
        raise TimingbenchError(f"{cdir}: clips folder not found; pass --clips DIR")
    ps = load_prompts(ppath)
    audio = {r.clip: r.path for r in match_clips(cdir, ps.prompts).clips}
    recorded_cfg = s.get("config") or {}
    cpath = config_path
    if cpath is None and recorded_cfg.get("source") and Path(str(recorded_cfg["source"])).is_file():
        cpath = str(recorded_cfg["source"])
    config = load_config(cpath)
    if recorded_cfg.get("hash") and recorded_cfg["hash"] != config.content_hash:
        notes.append(f"configuration {config.source} (hash {config.content_hash}) is not the one of the run "
                     f"(hash {recorded_cfg['hash']}): re-scored gates may differ from events.jsonl")
    config = with_tagger_weights(config, tagger_weights)
    return RunInputs(ps.prompts, audio, str(ppath), str(cdir), config, notes)


def clip_inputs(run: RunInputs, results: ResultsFolder, clip: str, prompt_id: str, *,
                overrides: dict[str, Any] | None = None) -> Inputs:
    """The inputs of one clip of a run (see :func:`resolve_inputs`).

    Raises
    ------
    TimingbenchError
        If the clip's prompt or audio file is not in the run's prompt file or clips folder.
    """
    prompt = run.prompts.get(prompt_id)
    if prompt is None:
        raise TimingbenchError(f"{run.prompts_path}: no prompt {prompt_id!r} (the prompt of clip {clip!r}); "
                               "pass --prompts FILE")
    if clip not in run.audio:
        raise TimingbenchError(f"{run.clips_dir}: no audio file {clip!r}; pass --clips DIR (the folder that was "
                               "scored)")
    return Inputs(run.audio[clip], prompt, run.config, _options(results, clip, overrides or {}), list(run.notes))


def resolve_inputs(
    results: ResultsFolder, clip: str, prompt_id: str, *, clips_dir: str | Path | None = None,
    prompts_path: str | Path | None = None, config_path: str | Path | None = None,
    tagger_weights: str | Path | None = None, overrides: dict[str, Any] | None = None,
) -> Inputs:
    """The audio, prompt, configuration and options a results folder's clip was scored with.

    Parameters
    ----------
    results : ResultsFolder
    clip : str
        Clip file name (formats §2).
    prompt_id : str
        The clip's prompt id (from its event row).
    clips_dir, prompts_path, config_path : str or Path, optional
        Override what ``summary.json`` records.
    tagger_weights : str or Path, optional
        The AudioSet tagger's weights (``--tagger-weights``).
    overrides : dict, optional
        ``separation``, ``family_evidence``, ``cache_dir``, ``demucs_repo``, ``clap_dir``.

    Raises
    ------
    TimingbenchError
        If the clips folder or prompt file is neither recorded nor given, or the clip,
        its prompt or the configuration cannot be found.
    """
    run = resolve_run(results, clips_dir=clips_dir, prompts_path=prompts_path, config_path=config_path,
                      tagger_weights=tagger_weights)
    return clip_inputs(run, results, clip, prompt_id, overrides=overrides)


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return float(round_time(a)) == float(round_time(b))


def clip_bank(inp: Inputs) -> FeatureBank:
    """The clip's feature bank, built as the run built it (from the feature cache when present).

    Silent audio is decoded (the scorer scores it: nothing delivered) and its bank is built
    without separation, as the scorer separates nothing in silence.

    Raises
    ------
    TimingbenchError
        If the clip cannot be decoded.
    """
    from timingbench.audio import load_clip
    from timingbench.features import get_bank

    cfg, opts = inp.config, inp.options
    clip = load_clip(inp.audio, cfg, allow_silent=True)
    separation = SILENT_SEPARATION if is_silent(clip.samples, cfg.params.audio) else opts.separation
    return get_bank(clip, cfg, separation=separation, demucs_repo=opts.demucs_repo, cache_dir=opts.cache_dir)


def _silent_event(row: dict[str, Any], prompt: Prompt, index: int, window: tuple[float, float],
                  bank: FeatureBank, inp: Inputs) -> ExplainedEvent:
    """An event of silent audio, as the scorer scores it: ``none``, no gate, no candidate."""
    verdict = EventVerdict("none", None, None, {}, None, {})
    notes = list(inp.notes)
    if row.get("outcome") != "none" or row.get("rejected_by") is not None or row.get("gates"):
        notes.append(f"the clip is silent audio, scored as delivering nothing, but events.jsonl records "
                     f"{row.get('outcome')} (rejected by {row.get('rejected_by') or '-'}): the audio changed")
    return ExplainedEvent(row, prompt, index, window, [], verdict, bank, None, inp, notes, silent=True)


def explain_event(results: ResultsFolder, clip: str, event_id: str, inputs: Inputs | None = None,
                  *, bank: FeatureBank | None = None, **resolve: Any) -> ExplainedEvent:
    """Re-derive the verdict of ``(clip, event_id)`` of a results folder.

    Parameters
    ----------
    results : ResultsFolder
    clip : str
        Clip file name.
    event_id : str
        Instructed event id.
    inputs : Inputs, optional
        Already resolved inputs; else :func:`resolve_inputs` with ``**resolve``.
    bank : FeatureBank, optional
        The clip's feature bank, already built from ``inputs`` with their options (one
        bank serves every event of a clip); else it is built here.

    Returns
    -------
    explained : ExplainedEvent

    Raises
    ------
    TimingbenchError
        If the row or an input is missing, or the clip cannot be decoded.
    """
    row = results.row(clip, event_id)
    inp = inputs if inputs is not None else resolve_inputs(results, clip, str(row.get("prompt_id")), **resolve)
    prompt, cfg, opts = inp.prompt, inp.config, inp.options
    index = next((i for i, e in enumerate(prompt.events) if e.id == event_id), None)
    if index is None:
        raise TimingbenchError(f"prompt {prompt.id!r} has no event {event_id!r} (the prompt file changed?)")
    if bank is None:
        bank = clip_bank(inp)
    lo, hi = search_window(prompt.events, index, params=cfg.params.search, analysed_s=float(bank.duration_s))
    if is_silent(bank.samples, cfg.params.audio):
        return _silent_event(row, prompt, index, (lo, hi), bank, inp)
    evidence, _ = family_evidence_for(bank, prompt, cfg, opts)
    ev = prompt.events[index]
    verdict, _ = score_event(bank, prompt, index, cfg, family_evidence=evidence,
                             disabled_gates=opts.disabled_gates, clip=clip, with_chance=False)
    ctx = EventContext(ev.kind, ev.family, ev.target, ev.time_s, lo, hi)
    cands = sorted((c for c in run_detector(bank, ctx, DetectorParams.of(cfg), family_evidence=evidence)
                    if round_time(lo) <= round_time(c.time_s) <= round_time(hi)), key=lambda c: c.time_s)
    pick = verdict.detected_s if verdict.detected_s is not None else verdict.stats.get("nearest_candidate_s")
    detector = str(row.get("detector") or "")
    out: list[ExplainedCandidate] = []
    taken = False
    for c in cands:
        chosen = not taken and pick is not None and _same(c.time_s, pick)
        taken |= chosen
        gates = {k: ("exempt" if k in opts.disabled_gates and v == "fail" else v) for k, v in c.gates.items()}
        out.append(ExplainedCandidate(c, gate_checks(gates, c.stats, kind=ev.kind, detector=detector, config=cfg),
                                      chosen, "fail" not in gates.values()))
    notes = list(inp.notes)
    if verdict.outcome != row.get("outcome") or not _same(verdict.detected_s, row.get("detected_s")):
        det = "-" if verdict.detected_s is None else f"{verdict.detected_s:.3f} s"
        notes.append(f"re-scored verdict {verdict.outcome} (detected {det}) differs from events.jsonl "
                     f"({row.get('outcome')}, detected {row.get('detected_s')}): the inputs or options changed")
    return ExplainedEvent(row, prompt, index, (lo, hi), out, verdict, bank, evidence, inp, notes)


def window_text(x: ExplainedEvent) -> str:
    """The search window of an explained event, or why it has none (the clip ends before it opens)."""
    lo, hi = x.window
    t = x.prompt.events[x.index].time_s
    end = float(x.bank.duration_s)
    ends = f"the clip ends at {end:.3f} s, before the instructed time {t:.3f} s"
    if not x.has_window:
        return f"no search window: {ends}"
    return f"search window [{lo:.3f}, {hi:.3f}] s" + (f" ({ends})" if end < t else "")


def explanation_header(x: ExplainedEvent) -> list[str]:
    """The lines of an account above its candidates: the instruction, the row, the re-scored verdict, inputs."""
    r, ev = x.row, x.prompt.events[x.index]
    tol = r.get("tolerance_s")
    v = x.verdict
    rescored = f"re-scored:    {v.outcome}, detected {_t(v.detected_s)}, rejected by {v.rejected_by or '-'}"
    lines = [
        f"{r['clip']}  {ev.id}  {ev.kind}/{ev.family} ({ev.target or '-'})  detector {r.get('detector')}",
        f"instructed {ev.time_s:.3f} s, tolerance ±{tol} s, {window_text(x)}",
        f"events.jsonl: {r.get('outcome')}, detected {_t(r.get('detected_s'))}, error {_t(r.get('error_s'))}, "
        f"rejected by {r.get('rejected_by') or '-'}",
        rescored + (f" ({SILENT_NOTE})" if x.silent else ""),
        "separation -; family evidence - (silent audio is scored without detector, family evidence or "
        "separation)" if x.silent
        else f"separation {x.bank.separation_backend}; family evidence {_evidence_line(x)}",
    ]
    if x.inputs.options.disabled_gates:
        lines.append(f"disabled gates: {', '.join(x.inputs.options.disabled_gates)}")
    lines += [f"note: {n}" for n in x.notes]
    if x.silent:
        lines.append("candidates: none (silent audio: the detector is not run)")
    elif not x.has_window:
        lines.append("candidates: none (no search window)")
    else:
        lines.append(f"candidates in the window: {len(x.candidates)}")
    return lines


def ordered_candidates(x: ExplainedEvent) -> list[ExplainedCandidate]:
    """The candidates as an account lists them: the chosen one first, then by distance from the instruction."""
    t = x.prompt.events[x.index].time_s
    return sorted(x.candidates, key=lambda c: (not c.chosen, abs(c.candidate.time_s - t)))


def candidate_heading(x: ExplainedEvent, c: ExplainedCandidate) -> str:
    """One candidate's line above its gate table: time, offset, whether chosen, verdict, other statistics."""
    t = x.prompt.events[x.index].time_s
    tag = " (detected)" if c.chosen and x.verdict.detected_s is not None else \
        " (nearest, not credited)" if c.chosen else ""
    shown = {k.statistic for k in c.checks}  # top-level statistics already in the gate table
    info = ", ".join(f"{k} {v}" for k, v in c.candidate.stats.items()
                     if k not in c.candidate.gates and k not in shown and not isinstance(v, dict))
    return (f"candidate {c.candidate.time_s:.3f} s ({c.candidate.time_s - t:+.3f} s vs instructed)"
            f"{tag}: {'passes every gate' if c.passed else 'rejected by ' + str(c.candidate.rejected_by)}"
            + (f"  [{info}]" if info else ""))


def format_explanation(x: ExplainedEvent) -> str:
    """The plain-text account of an explained event (header, candidates, gate tables)."""
    from timingbench.explain.thresholds import format_checks

    lines = explanation_header(x)
    for c in ordered_candidates(x):
        lines.append("")
        lines.append(candidate_heading(x, c))
        lines += format_checks(c.checks)
    return "\n".join(lines)


def _t(v: Any) -> str:
    return "-" if v is None else f"{float(v):.3f} s"


def _evidence_line(x: ExplainedEvent) -> str:
    fe = x.family_evidence
    req = x.inputs.options.family_evidence
    if fe is None:
        return f"not used (requested {req})"
    fam = x.prompt.events[x.index].family
    if fam == "mix":
        return f"{fe.backend} (not consulted by whole-mix events)"
    state = "judged" if fam in fe.curves else f"exempt: {fe.exempt.get(fam, 'not_in_vocabulary')}"
    note = f"; {fe.note}" if fe.note else ""
    return f"{fe.backend} ({fam} {state}{note})"

"""Score an annotated corpus and classify every verdict against its annotation.

The feature banks of an annotated corpus are built once (:func:`load_corpus`) and kept
in memory; every re-scoring (sweep variants, gate ablations) re-runs only the detectors
and gates on them (:func:`score_corpus`).

Outcome classes (paper Table II), per Layer-1 annotated event with tolerance ``tol``:

========================  =====================================================
``correct_credit``        annotated on time (``|onset - instructed| <= tol``), verdict ``on_time``
``correct_none``          annotated absent, verdict ``none``
``false_credit``          verdict ``on_time`` but annotated absent or off time
``false_positive``        verdict ``off_time`` but annotated absent
``missed``                annotated present, verdict ``none``
``off_time``              annotated present, verdict ``off_time``
========================  =====================================================

``off_time`` rows also say whether the report was right (annotated off time and the
detected onset within ``calibration.offset_match_s`` of the annotated one).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from timingbench.annotation_io import AnnotationSet, Layer1Row, load_annotations
from timingbench.audio import load_clip
from timingbench.config import Config
from timingbench.errors import TimingbenchError
from timingbench.executors import Executor, LocalExecutor, TaskFailure
from timingbench.params.base import record_reads
from timingbench.prompts import ClipRef, Event, Prompt, load_prompts, match_clips
from timingbench.runner import ScoreOptions, family_evidence_for
from timingbench.scoring import (
    DetectorParams,
    decide,
    detector_name,
    event_candidates,
    event_tolerance,
    score_event,
)
from timingbench.verdicts import Candidate, EventVerdict

CLASSES = ("correct_credit", "correct_none", "false_credit", "false_positive", "missed", "off_time")


@dataclass
class Corpus:
    """An annotated corpus with its feature banks built once."""

    prompts: dict[str, Prompt]
    refs: list[ClipRef]
    banks: dict[str, Any]
    evidence: dict[str, Any]
    truth: dict[tuple[str, str], Layer1Row]
    errors: list[str] = field(default_factory=list)


def default_prompts_path(clips_dir: str | Path, annotations_path: str | Path) -> Path:
    """Prompt file of a corpus: ``prompts.jsonl`` beside the clips folder or the annotations."""
    for cand in (Path(clips_dir).parent / "prompts.jsonl", Path(annotations_path).parent / "prompts.jsonl"):
        if cand.is_file():
            return cand
    raise TimingbenchError(
        f"no prompts.jsonl beside {clips_dir} or {annotations_path}; pass --prompts FILE"
    )


def corpus_item(item: tuple[ClipRef, Prompt, Config, ScoreOptions]) -> tuple[Any, Any] | str:
    """Decode and analyse one annotated clip (an executor task).

    Every event of the prompt is scored once, so the stems and derived features the
    detectors ask for are computed here (on the worker) and travel in the bank's memo.

    Returns
    -------
    result : (bank, family evidence) or str
        The error message when the clip cannot be analysed.
    """
    from timingbench.features import get_bank

    ref, prompt, config, opts = item
    try:
        clip = load_clip(ref.path, config)
        bank = get_bank(clip, config, separation=opts.separation, demucs_repo=opts.demucs_repo,
                        cache_dir=opts.cache_dir)
        evidence, _ = family_evidence_for(bank, prompt, config, opts)
    except TimingbenchError as exc:
        return str(exc)
    for i in range(len(prompt.events)):
        try:
            score_event(bank, prompt, i, config, family_evidence=evidence, clip=ref.clip, with_chance=False)
        except TimingbenchError:
            pass  # raised again, and reported, when the corpus is scored
    return bank, evidence


def load_corpus(
    clips_dir: str | Path, prompts_path: str | Path, annotations: AnnotationSet | str | Path,
    config: Config, opts: ScoreOptions, *, progress: Callable[[int, int, str], None] | None = None,
    executor: Executor | None = None,
) -> Corpus:
    """Decode and analyse every annotated clip once.

    Only clips with at least one Layer-1 annotation are loaded. Clips that cannot be
    decoded are reported in ``errors`` and skipped. ``executor`` (default: this process)
    says where the clips are analysed; the corpus is the same for any executor.
    """
    ann = annotations if isinstance(annotations, AnnotationSet) else load_annotations(annotations)
    ps = load_prompts(prompts_path)
    truth = {(r.clip, r.event_id): r for r in ann.layer1}
    wanted = {c for c, _ in truth}
    match = match_clips(clips_dir, ps.prompts)
    refs = [r for r in match.clips if r.clip in wanted]
    banks: dict[str, Any] = {}
    evidence: dict[str, Any] = {}
    failed: dict[str, str] = {}
    work = [(ref, ps.prompts[ref.prompt_id], config, opts) for ref in refs]
    for done, (i, res) in enumerate((executor or LocalExecutor(1)).imap(corpus_item, work,
                                                                        label=lambda w: w[0].clip), 1):
        ref = refs[i]
        if isinstance(res, TaskFailure):
            failed[ref.clip] = f"{ref.path}: failed on {res.attempts} attempts ({res.error})"
        elif isinstance(res, str):
            failed[ref.clip] = res
        else:
            banks[ref.clip], evidence[ref.clip] = res
        if progress:
            progress(done, len(refs), ref.clip)
    errors = [str(e) for e in ann.errors] + [str(e) for e in ps.errors]
    errors += [failed[r.clip] for r in refs if r.clip in failed]
    return Corpus(ps.prompts, [r for r in refs if r.clip in banks], banks, evidence, truth, errors)


def classify(outcome: str, truth: Layer1Row, *, instructed_s: float, tolerance_s: float) -> str:
    """The outcome class of one verdict against its annotation (see module docstring)."""
    present = bool(truth.occurred) and truth.onset_s is not None
    on_time_truth = present and abs(float(truth.onset_s) - instructed_s) <= tolerance_s + 1e-9  # type: ignore[arg-type]
    if outcome == "on_time":
        return "correct_credit" if on_time_truth else "false_credit"
    if outcome == "off_time":
        return "off_time" if present else "false_positive"
    return "missed" if present else "correct_none"


@dataclass(frozen=True)
class EventCandidates:
    """One annotated event's candidates (before any gate is disabled), for re-deciding without the detectors."""

    clip: str
    event: Event
    truth: Layer1Row
    candidates: list[Candidate]
    tolerance_s: float
    #: ``section.name`` of every parameter the event's detector run read.
    reads: frozenset[str] = frozenset()


def corpus_candidates(
    corpus: Corpus, config: Config, *, detectors: Collection[str] | None = None,
) -> list[EventCandidates]:
    """Run the detectors once over every annotated event (``detectors``: only the events they score).

    :func:`rows_from_candidates` turns the result into :func:`score_corpus` rows for any set
    of disabled gates, so an ablation never re-runs a detector.
    """
    params = DetectorParams.of(config)
    out: list[EventCandidates] = []
    for ref in corpus.refs:
        prompt = corpus.prompts[ref.prompt_id]
        bank = corpus.banks[ref.clip]
        for i, ev in enumerate(prompt.events):
            tr = corpus.truth.get((ref.clip, ev.id))
            if tr is None or (detectors is not None and detector_name(ev) not in detectors):
                continue
            with record_reads() as reads:
                cands, tol = event_candidates(bank, prompt, i, params, family_evidence=corpus.evidence.get(ref.clip))
            out.append(EventCandidates(ref.clip, ev, tr, cands, tol, frozenset(reads)))
    return out


def rows_from_candidates(
    items: list[EventCandidates], *, disabled_gates: Collection[str] = (), offset_match_s: float | None = None,
) -> list[dict[str, Any]]:
    """:func:`score_corpus` rows (no chance credit) decided from stored candidates."""
    rows: list[dict[str, Any]] = []
    for it in items:
        verdict = decide(it.candidates, instructed_s=it.event.time_s, tolerance_s=it.tolerance_s,
                         disabled_gates=disabled_gates)
        rows.append(_row(it.clip, it.event, it.truth, verdict, None, it.tolerance_s, offset_match_s))
    return rows


def score_corpus(
    corpus: Corpus, config: Config, *, disabled_gates: Collection[str] = (), chance: bool = False,
    offset_match_s: float | None = None, detectors: Collection[str] | None = None,
    events: Collection[tuple[str, str]] | None = None,
) -> list[dict[str, Any]]:
    """Score every annotated event of the corpus with ``config`` on the cached banks.

    Returns
    -------
    rows : list of dict
        One per annotated event: clip, event_id, kind, family, detector, instructed_s,
        tolerance_s, outcome, detected_s, rejected_by, p_chance, truth_occurred,
        truth_onset_s, onset_character, class, abs_error_to_truth_s, offset_correct.
        With ``detectors``, only the events those detectors score; with ``events``, only
        those ``(clip, event_id)`` pairs.
    """
    rows: list[dict[str, Any]] = []
    for ref in corpus.refs:
        prompt = corpus.prompts[ref.prompt_id]
        bank = corpus.banks[ref.clip]
        for i, ev in enumerate(prompt.events):
            tr = corpus.truth.get((ref.clip, ev.id))
            if tr is None or (detectors is not None and detector_name(ev) not in detectors) \
                    or (events is not None and (ref.clip, ev.id) not in events):
                continue
            verdict, p = score_event(bank, prompt, i, config, family_evidence=corpus.evidence.get(ref.clip),
                                     disabled_gates=disabled_gates, clip=ref.clip, with_chance=chance)
            rows.append(_row(ref.clip, ev, tr, verdict, p, event_tolerance(ev, config), offset_match_s))
    return rows


def _row(clip: str, ev: Event, tr: Layer1Row, verdict: EventVerdict, p: float | None, tol: float,
         offset_match_s: float | None) -> dict[str, Any]:
    cls = classify(verdict.outcome, tr, instructed_s=ev.time_s, tolerance_s=tol)
    err = None
    if verdict.detected_s is not None and tr.occurred and tr.onset_s is not None:
        err = round(abs(verdict.detected_s - tr.onset_s), 6)
    offset_ok = None
    if verdict.outcome == "off_time" and err is not None and offset_match_s is not None:
        offset_ok = err <= offset_match_s
    return {
        "clip": clip, "event_id": ev.id, "kind": ev.kind, "family": ev.family,
        "detector": detector_name(ev), "instructed_s": ev.time_s, "tolerance_s": tol,
        "outcome": verdict.outcome, "detected_s": verdict.detected_s,
        "rejected_by": verdict.rejected_by, "p_chance": p,
        "truth_occurred": bool(tr.occurred), "truth_onset_s": tr.onset_s,
        "onset_character": tr.onset_character, "class": cls,
        "abs_error_to_truth_s": err, "offset_correct": offset_ok,
        "scenario": (tr.extra or {}).get("scenario"),
    }

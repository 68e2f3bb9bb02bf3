"""MGBench scoring of a whole response file: grounding and understanding, per subset."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from timingbench.errors import ParameterError
from timingbench.suites.mgbench.grounding import aggregate_grounding, score_grounding_question
from timingbench.suites.mgbench.io import SUBSETS, MgQuestion, MgResponse
from timingbench.suites.mgbench.spans import NO_SPANS, SpanExtractor, SpanParse
from timingbench.suites.mgbench.understanding import (
    UnderstandingJudge,
    UnderstandingVerdict,
    aggregate_understanding,
    concept_group,
)

__all__ = ["score_mgbench"]


def _map(fn: Callable[[Any], Any], items: Sequence[Any], workers: int) -> list[Any]:
    if workers <= 1 or len(items) < 2:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, items))


def score_mgbench(
    questions: Mapping[str, MgQuestion],
    responses: Mapping[str, MgResponse],
    *,
    extractor: SpanExtractor,
    judge: UnderstandingJudge,
    iou_thresholds: Sequence[float],
    concept_groups: Sequence[str],
    workers: int = 1,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Score every question; a question without a response does not follow the instruction.

    Parameters
    ----------
    questions : mapping of id to MgQuestion
    responses : mapping of id to MgResponse
    extractor : SpanExtractor
        Regex or LLM span extractor (used when a response has no ``intervals``).
    judge : UnderstandingJudge
        Offline or LLM judge for understanding questions.
    iou_thresholds : sequence of float
        Config ``mgbench.iou_thresholds``.
    concept_groups : sequence of str
        Config ``mgbench.concept_groups``.
    workers : int
        Concurrent extractor/judge requests.

    Returns
    -------
    rows : list of dict
        One row per question in ground-truth order, with the evidence.
    summary : dict
        ``grounding``: per subset (``3N``, ``2B``) the metrics of
        :func:`aggregate_grounding` plus ``per_category``; ``understanding``: per subset
        the metrics of :func:`aggregate_understanding`; ``missing``: question ids without
        a response.

    Raises
    ------
    ParameterError
        If a threshold is outside (0, 1] or ``workers`` < 1.
    """
    if int(workers) != workers or workers < 1:
        raise ParameterError(f"workers must be a whole number >= 1, got {workers!r}")
    qs = sorted(questions.values(), key=lambda q: q.line)
    missing = [q.id for q in qs if q.id not in responses]

    def ground(q: MgQuestion) -> SpanParse:
        r = responses.get(q.id)
        if r is None:
            return SpanParse("invalid", NO_SPANS, "no response row")
        if r.intervals is not None:
            return SpanParse("spans" if len(r.intervals) else "empty", r.intervals)
        return extractor.extract(r.response)

    def understand(q: MgQuestion) -> UnderstandingVerdict:
        r = responses.get(q.id)
        if r is None:
            return UnderstandingVerdict(False, False, "no response row")
        return judge.judge(question=q, answer=r.response)

    gq = [q for q in qs if q.task == "grounding"]
    uq = [q for q in qs if q.task == "understanding"]
    parses = dict(zip([q.id for q in gq], _map(ground, gq, int(workers)), strict=True))
    verdicts = dict(zip([q.id for q in uq], _map(understand, uq, int(workers)), strict=True))

    rows: list[dict[str, Any]] = []
    evid: dict[str, dict[str, Any]] = {}
    for q in qs:
        base: dict[str, Any] = {"id": q.id, "subset": q.subset, "task": q.task, "category": q.category}
        resp = responses.get(q.id)
        base["response"] = resp.response if resp is not None else None
        if q.task == "grounding":
            ref = q.intervals if q.intervals is not None else NO_SPANS
            parse = parses[q.id]
            ev = score_grounding_question(ref, parse, iou_thresholds=iou_thresholds)
            evid[q.id] = ev
            base.update(
                {
                    "reference": ref.tolist(),
                    "parse_status": parse.status,
                    "predicted": parse.spans.tolist(),
                    "parse_note": parse.note,
                    **ev,
                }
            )
        else:
            v = verdicts[q.id]
            base.update(
                {
                    "concept": concept_group(q.category, groups=concept_groups),
                    "reference": q.answer,
                    "follows": v.follows,
                    "correct": v.correct,
                    "judge_note": v.note,
                }
            )
        rows.append(base)

    grounding: dict[str, Any] = {}
    understanding: dict[str, Any] = {}
    for subset in SUBSETS:
        g = [q for q in gq if q.subset == subset]
        if g:
            block = aggregate_grounding([evid[q.id] for q in g], iou_thresholds=iou_thresholds)
            block["per_category"] = {
                c: aggregate_grounding([evid[q.id] for q in g if q.category == c], iou_thresholds=iou_thresholds)
                for c in sorted({q.category for q in g})
            }
            grounding[subset] = block
        u = [q for q in uq if q.subset == subset]
        if u:
            understanding[subset] = aggregate_understanding(
                [(concept_group(q.category, groups=concept_groups), verdicts[q.id]) for q in u],
                groups=concept_groups,
            )
    summary = {
        "n_questions": len(qs),
        "n_grounding": len(gq),
        "n_understanding": len(uq),
        "grounding": grounding,
        "understanding": understanding,
        "missing": missing,
    }
    return rows, summary

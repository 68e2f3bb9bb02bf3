"""MGBench (MusicGroundingBench) scoring: temporal music grounding and understanding.

Modules: :mod:`~timingbench.suites.mgbench.io` (rows), :mod:`~timingbench.suites.mgbench.spans`
(span extraction on the shared time-span core), :mod:`~timingbench.suites.mgbench.grounding`
(Table 2 metrics), :mod:`~timingbench.suites.mgbench.understanding` (judges, Table 3) and
:mod:`~timingbench.suites.mgbench.evaluate` (a whole file).

Ground truth rows (formats §7): ``id``, ``subset`` (``3N`` | ``2B``), ``task``
(``grounding`` | ``understanding``), ``category``, ``question``, and ``intervals``
(grounding, ``[[start, end], ...]`` in seconds, possibly empty) or ``answer``
(understanding, text). Response rows: ``id`` and ``response`` (free text) or
``intervals`` (already extracted spans).

Grounding (paper Sec. 4.1), per subset and per category: IFR, MergedIoU, span P/R/F1 at
each IoU threshold, onset/offset MAE and the empty-answer counts, as defined in
:mod:`~timingbench.suites.mgbench.grounding`.

Understanding (paper Sec. 4.2): a judge first decides whether the response answers the
question (IFR), then its binary correctness. Global and per-concept accuracy are correct
answers over *instruction-following* answers, as in the paper's Table 3.
"""

from timingbench.suites.mgbench.evaluate import score_mgbench
from timingbench.suites.mgbench.grounding import aggregate_grounding, score_grounding_question
from timingbench.suites.mgbench.io import (
    SUBSETS,
    TASKS,
    Loaded,
    MgQuestion,
    MgResponse,
    load_ground_truth,
    load_responses,
)
from timingbench.suites.mgbench.spans import (
    LlmSpanExtractor,
    ParseStatus,
    RegexSpanExtractor,
    SpanExtractor,
    SpanParse,
    extract_spans,
)
from timingbench.suites.mgbench.understanding import (
    LlmUnderstandingJudge,
    OfflineUnderstandingJudge,
    UnderstandingJudge,
    UnderstandingVerdict,
    aggregate_understanding,
    concept_group,
)

__all__ = [
    "SUBSETS", "TASKS", "Loaded", "MgQuestion", "MgResponse", "load_ground_truth", "load_responses",
    "ParseStatus", "SpanParse", "SpanExtractor", "RegexSpanExtractor", "LlmSpanExtractor", "extract_spans",
    "score_grounding_question", "aggregate_grounding",
    "UnderstandingVerdict", "UnderstandingJudge", "OfflineUnderstandingJudge", "LlmUnderstandingJudge",
    "concept_group", "aggregate_understanding", "score_mgbench",
]

"""Parameter sets of the TAG-Bench, MGBench and AudioRAG scorers and their judge.

Generated field by field from ``configs/timingbench-v1.yaml``: each field is the constant
of the same name in the class's section; its docstring line is the constant's ``why``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from timingbench.params.base import Params, register


@register
@dataclass(frozen=True)
class JudgeParams(Params):
    """Constants of the ``judge`` section.

    Attributes
    ----------
    timeout_s : float
        one chat completion of a 7B-30B judge on a local server finishes well within a minute;
        longer means the server is stuck (convention)
    max_retries : int
        transient failures (5xx, 429, timeouts, malformed bodies) are retried three times before
        the item is reported unjudged (convention)
    backoff_s : float
        first retry delay in seconds, doubled on each further retry (convention)
    temperature : float
        greedy decoding so the same answers get the same judgement (convention)
    max_tokens : int
        enough for a verdict line or a list of extracted spans (convention)
    workers : int
        concurrent judge requests; a local vLLM server batches them (convention)
    verdict_true_words : list[str]
        words a judge uses for a positive binary verdict (lower-cased first word of the reply
        line) (convention)
    verdict_false_words : list[str]
        words a judge uses for a negative binary verdict (convention)
    offline_polarity_words : list[str]
        offline judge: a yes/no reference is matched by the leading polarity word of the answer
        (convention)
    """

    SECTION = "judge"

    timeout_s: float
    max_retries: int
    backoff_s: float
    temperature: float
    max_tokens: int
    workers: int
    verdict_true_words: list[str]
    verdict_false_words: list[str]
    offline_polarity_words: list[str]


@register
@dataclass(frozen=True)
class MgbenchParams(Params):
    """Constants of the ``mgbench`` section.

    Attributes
    ----------
    concept_groups : list[str]
        MGBench Sec. 4.2 / Table 3: the seven concept groups of per-concept accuracy
        (convention)
    iou_thresholds : list[float]
        MGBench Sec. 4.1: greedy one-to-one matching at IoU 0.5 and the stricter 0.7
        (convention)
    strip_reasoning : bool
        spans are read from the final answer only (reasoning blocks removed, text after the last
        final-answer marker), as for TAG-Bench (convention)
    empty_answer_patterns : list[str]
        MGBench Sec. 3.2.2: 15 % of questions have an empty answer; these phrasings state an
        empty answer explicitly (convention)
    """

    SECTION = "mgbench"

    concept_groups: list[str]
    iou_thresholds: list[float]
    strip_reasoning: bool
    empty_answer_patterns: list[str]


@register
@dataclass(frozen=True)
class AudioragParams(Params):
    """Constants of the ``audiorag`` section.

    Attributes
    ----------
    audio_subdir : str
        the public release keeps audio under data/ beside metadata/, and audio_path is relative
        to it (convention)
    fallback_subdirs : list[str]
        release MusicNet rows name MusicNet/<id>.wav while the files sit in
        MusicNet/audios_cropped/ (convention)
    error_types : dict[str, Any]
        AudioRAG Sec. 4.4 / Appendix B: the four error types a-d (convention)
    """

    SECTION = "audiorag"

    audio_subdir: str
    fallback_subdirs: list[str]
    error_types: dict[str, Any]


@register
@dataclass(frozen=True)
class TagParams(Params):
    """Constants of the ``tag`` section.

    Attributes
    ----------
    recall_iou_thresholds : list[float]
        TAG-Bench Sec. 4.2 / Table 2: recall at union-IoU >= 0.3, 0.5, 0.7 (convention)
    one_to_many_min_intervals : int
        TAG-Bench Sec. 3.2: a one-to-many query carries at least 2 ground-truth intervals
        (convention)
    strip_reasoning : bool
        TAG-Bench Sec. 4.2 allows deterministic normalisation of recurring output conventions:
        only the final answer is parsed (reasoning blocks removed, text after the last final-
        answer marker) (convention)
    """

    SECTION = "tag"

    recall_iou_thresholds: list[float]
    one_to_many_min_intervals: int
    strip_reasoning: bool

"""Parameter sets of the TAG-Bench, MGBench and AudioRAG scorers and their judge.

(Fields and their generated docstrings: :mod:`timingbench.params`.)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from timingbench.errors import ConfigError
from timingbench.params.base import Params, register


def _fail(params: Params, name: str, why: str) -> ConfigError:
    return ConfigError(f"constant '{params.SECTION}.{name}' {why}")


def _check_thresholds(params: Params, name: str, values: Sequence[float]) -> None:
    if not values or any(not 0.0 < t <= 1.0 for t in values):
        raise _fail(params, name, f"must be a non-empty list of IoU thresholds in (0, 1], got {list(values)!r}")


def _check_words(params: Params, name: str, words: Sequence[str]) -> None:
    if not words or any(not isinstance(w, str) or not w or w != w.lower() for w in words):
        raise _fail(params, name, f"must be a non-empty list of non-empty lower-case words, got {list(words)!r:.80}")


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
        transient failures (5xx, 429, timeouts, malformed bodies) are retried three times before the
        item is reported unjudged (convention)
    backoff_s : float
        first retry delay in seconds, doubled on each further retry (convention)
    temperature : float
        greedy decoding so the same answers get the same judgement (convention)
    max_tokens : int
        enough for a verdict line or a list of extracted spans (convention)
    workers : int
        concurrent judge requests; a local vLLM server batches them (convention)
    verdict_true_words : list[str]
        words a judge uses for a positive binary verdict (lower-cased first word of the reply line)
        (convention)
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

    def validate(self) -> None:
        """Check ranges and word lists.

        Raises
        ------
        ConfigError
            Naming ``judge.<field>``: a timeout or temperature that is not positive /
            non-negative, a negative retry count or back-off, fewer than one token or
            worker, an empty word list, or a word that is both a true and a false verdict.
        """
        super().validate()
        if not self.timeout_s > 0:
            raise _fail(self, "timeout_s", f"must be a positive number of seconds, got {self.timeout_s!r}")
        if self.max_retries < 0:
            raise _fail(self, "max_retries", f"must be >= 0, got {self.max_retries!r}")
        if self.backoff_s < 0:
            raise _fail(self, "backoff_s", f"must be >= 0 s, got {self.backoff_s!r}")
        if self.temperature < 0:
            raise _fail(self, "temperature", f"must be >= 0, got {self.temperature!r}")
        if self.max_tokens < 1:
            raise _fail(self, "max_tokens", f"must be >= 1, got {self.max_tokens!r}")
        if self.workers < 1:
            raise _fail(self, "workers", f"must be >= 1, got {self.workers!r}")
        for name in ("verdict_true_words", "verdict_false_words", "offline_polarity_words"):
            _check_words(self, name, getattr(self, name))
        both = sorted(set(self.verdict_true_words) & set(self.verdict_false_words))
        if both:
            raise _fail(self, "verdict_false_words", f"shares {both} with judge.verdict_true_words")


@register
@dataclass(frozen=True)
class MgbenchParams(Params):
    """Constants of the ``mgbench`` section.

    Attributes
    ----------
    concept_groups : list[str]
        MGBench Sec. 4.2 / Table 3: the seven concept groups of per-concept accuracy (convention)
    iou_thresholds : list[float]
        MGBench Sec. 4.1: greedy one-to-one matching at IoU 0.5 and the stricter 0.7 (convention)
    strip_reasoning : bool
        spans are read from the final answer only (reasoning blocks removed, text after the last
        final-answer marker), as for TAG-Bench (convention)
    empty_answer_patterns : list[str]
        MGBench Sec. 3.2.2: 15 % of questions have an empty answer; these phrasings state an empty
        answer explicitly (convention)
    """

    SECTION = "mgbench"

    concept_groups: list[str]
    iou_thresholds: list[float]
    strip_reasoning: bool
    empty_answer_patterns: list[str]

    def validate(self) -> None:
        """Check the thresholds, groups and patterns.

        Raises
        ------
        ConfigError
            Naming ``mgbench.<field>``: an IoU threshold outside (0, 1], an empty or
            repeated concept group, or an empty-answer pattern that is not a regular
            expression.
        """
        super().validate()
        _check_thresholds(self, "iou_thresholds", self.iou_thresholds)
        groups = self.concept_groups
        if not groups or any(not isinstance(g, str) or not g for g in groups) or len(set(groups)) != len(groups):
            raise _fail(self, "concept_groups", f"must be a non-empty list of distinct names, got {groups!r:.80}")
        for pat in self.empty_answer_patterns:
            try:
                re.compile(pat)
            except (re.error, TypeError) as exc:
                raise _fail(self, "empty_answer_patterns", f"holds {pat!r}, not a regular expression ({exc})") from None


@register
@dataclass(frozen=True)
class AudioragParams(Params):
    """Constants of the ``audiorag`` section.

    Attributes
    ----------
    audio_subdir : str
        the public release keeps audio under data/ beside metadata/, and audio_path is relative to
        it (convention)
    fallback_subdirs : list[str]
        release MusicNet rows name MusicNet/<id>.wav while the files sit in MusicNet/audios_cropped/
        (convention)
    error_types : dict[str, str]
        AudioRAG Sec. 4.4 / Appendix B: the four error types a-d (convention)
    """

    SECTION = "audiorag"

    audio_subdir: str
    fallback_subdirs: list[str]
    error_types: dict[str, str]

    def validate(self) -> None:
        """Check the folder names and error types.

        Raises
        ------
        ConfigError
            Naming ``audiorag.<field>``: an empty folder name, or an error type whose key
            is not one lower-case letter or whose name is not a non-empty string.
        """
        super().validate()
        if not self.audio_subdir:
            raise _fail(self, "audio_subdir", "must name a folder")
        if any(not isinstance(d, str) or not d for d in self.fallback_subdirs):
            raise _fail(self, "fallback_subdirs", f"must be folder names, got {self.fallback_subdirs!r:.80}")
        bad = [k for k, v in self.error_types.items()
               if not (isinstance(k, str) and re.fullmatch(r"[a-z]", k) and isinstance(v, str) and v)]
        if not self.error_types or bad:
            raise _fail(self, "error_types",
                        f"must map single lower-case letters to names, got {self.error_types!r:.80}")


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
        TAG-Bench Sec. 4.2 allows deterministic normalisation of recurring output conventions: only
        the final answer is parsed (reasoning blocks removed, text after the last final-answer
        marker) (convention)
    """

    SECTION = "tag"

    recall_iou_thresholds: list[float]
    one_to_many_min_intervals: int
    strip_reasoning: bool

    def validate(self) -> None:
        """Check the thresholds and the one-to-many count.

        Raises
        ------
        ConfigError
            Naming ``tag.<field>``: a recall threshold outside (0, 1], or a one-to-many
            count below 2.
        """
        super().validate()
        _check_thresholds(self, "recall_iou_thresholds", self.recall_iou_thresholds)
        if self.one_to_many_min_intervals < 2:
            raise _fail(self, "one_to_many_min_intervals", f"must be >= 2, got {self.one_to_many_min_intervals!r}")

"""MGBench understanding (paper Sec. 4.2, Table 3): judges and per-concept accuracy.

A judge first decides whether the response answers the question (IFR), then its binary
correctness. Global and per-concept accuracy are correct answers over
*instruction-following* answers, as in the paper's Table 3.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from timingbench.suites.judge import (
    MGBENCH_UNDERSTANDING_PROMPT,
    OFFLINE_LABEL,
    ChatClient,
    JudgeError,
    normalise_answer,
    offline_match,
    parse_follow_correct,
)
from timingbench.suites.mgbench.io import MgQuestion

__all__ = ["UnderstandingVerdict", "UnderstandingJudge", "OfflineUnderstandingJudge", "LlmUnderstandingJudge",
           "concept_group", "aggregate_understanding"]


@dataclass(frozen=True)
class UnderstandingVerdict:
    """Judge verdict on one understanding answer (None: unjudged)."""

    follows: bool | None
    correct: bool | None
    note: str | None = None


class UnderstandingJudge(Protocol):
    """What :func:`score_mgbench` needs of an understanding judge."""

    label: str
    kind: str

    def judge(self, *, question: MgQuestion, answer: str | None) -> UnderstandingVerdict:
        """Judge ``answer`` to ``question``."""
        ...


class OfflineUnderstandingJudge:
    """Offline stand-in: follows = a non-empty answer; correct = :func:`offline_match`."""

    kind = "offline"
    label = OFFLINE_LABEL

    def __init__(self, *, polarity_words: Sequence[str]) -> None:
        self.polarity_words = [str(w) for w in polarity_words]

    def judge(self, *, question: MgQuestion, answer: str | None) -> UnderstandingVerdict:
        """Judge ``answer`` offline."""
        if answer is None or not normalise_answer(answer):
            return UnderstandingVerdict(False, False)
        ok = offline_match(answer=answer, reference=question.answer or "", polarity_words=self.polarity_words)
        return UnderstandingVerdict(True, ok)


class LlmUnderstandingJudge:
    """The paper's two-step judgement (follows, then correct) through one LLM request.

    A reply without readable ``FOLLOWS``/``CORRECT`` lines is asked again up to the
    client's retry count; after that the answer is unjudged.

    Parameters
    ----------
    client : ChatClient
    true_words, false_words : sequence of str
        Config ``judge.verdict_*_words``.
    """

    kind = "llm"

    def __init__(self, *, client: ChatClient, true_words: Sequence[str], false_words: Sequence[str]) -> None:
        self.client = client
        self.true_words = list(true_words)
        self.false_words = list(false_words)
        self.label = client.label

    def judge(self, *, question: MgQuestion, answer: str | None) -> UnderstandingVerdict:
        """Judge ``answer``; an empty answer does not follow the instruction (no request)."""
        if answer is None or not answer.strip():
            return UnderstandingVerdict(False, False, "empty answer")
        prompt = MGBENCH_UNDERSTANDING_PROMPT.format(
            question=question.question, gt_answer=question.answer, model_answer=answer
        )
        last = ""
        for _ in range(self.client.max_retries + 1):
            try:
                reply = self.client.ask(prompt)
            except JudgeError as exc:
                return UnderstandingVerdict(None, None, str(exc))
            follows, correct = parse_follow_correct(
                reply.content, true_words=self.true_words, false_words=self.false_words
            )
            if follows is not None and correct is not None:
                return UnderstandingVerdict(follows, correct)
            last = reply.content
        return UnderstandingVerdict(None, None, f"malformed judge reply: {last[:120]!r}")


def concept_group(category: str, *, groups: Sequence[str]) -> str:
    """Map a category label onto one of the concept groups (spelling-insensitive).

    ``"Bar comparison"``, ``"BarComparison"`` and ``"bar_comparison"`` all map to
    ``bar_comparison``; a label matching no group is returned unchanged.
    """

    def key(s: str) -> str:
        return re.sub(r"[^0-9a-z]", "", s.casefold())

    for g in groups:
        if key(g) == key(category):
            return g
    return category


def aggregate_understanding(
    verdicts: Sequence[tuple[str, UnderstandingVerdict]], *, groups: Sequence[str]
) -> dict[str, Any]:
    """Table 3 metrics from (concept group, verdict) pairs.

    Returns
    -------
    metrics : dict
        ``n`` (judged), ``unjudged``, ``ifr`` with ``n_following``, ``accuracy`` (correct
        over following, with ``n_correct``), ``accuracy_over_all`` (correct over judged),
        and ``per_concept``: for each group ``n``, ``n_following``, ``n_correct``,
        ``accuracy`` (over following; null if none follow).
    """
    judged = [(g, v) for g, v in verdicts if v.follows is not None and v.correct is not None]
    fol = [(g, v) for g, v in judged if v.follows]
    ok = [(g, v) for g, v in fol if v.correct]
    per: dict[str, Any] = {}
    names = list(groups) + sorted({g for g, _ in verdicts} - set(groups))
    for g in names:
        n_g = sum(1 for x, _ in judged if x == g)
        f_g = sum(1 for x, _ in fol if x == g)
        c_g = sum(1 for x, _ in ok if x == g)
        if n_g or g in groups:
            per[g] = {"n": n_g, "n_following": f_g, "n_correct": c_g, "accuracy": c_g / f_g if f_g else None}
    return {
        "n": len(judged),
        "unjudged": len(verdicts) - len(judged),
        "n_following": len(fol),
        "ifr": len(fol) / len(judged) if judged else None,
        "n_correct": len(ok),
        "accuracy": len(ok) / len(fol) if fol else None,
        "accuracy_over_all": len(ok) / len(judged) if judged else None,
        "per_concept": per,
    }

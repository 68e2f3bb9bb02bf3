"""AudioRAG judges (paper Sec. 4.3-4.4, Appendix B): correctness, then the error type a-d."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from timingbench.suites.audiorag.io import RagItem
from timingbench.suites.judge import (
    AUDIORAG_CORRECTNESS_PROMPT,
    AUDIORAG_ERROR_TYPE_PROMPT,
    OFFLINE_LABEL,
    ChatClient,
    JudgeError,
    format_attributes,
    offline_match,
    parse_error_type,
    parse_verdict,
)

__all__ = ["Judgement", "RagJudge", "OfflineRagJudge", "LlmRagJudge"]


@dataclass(frozen=True)
class Judgement:
    """The verdict on one answer.

    Attributes
    ----------
    correct : bool or None
        None when the judge gave no usable verdict (the answer is then *unjudged*).
    error_type : str or None
        ``a``..``d`` for a wrong answer when known.
    note : str or None
        Why a value is missing (judge failure, malformed reply, offline judge).
    """

    correct: bool | None
    error_type: str | None
    note: str | None = None


class RagJudge(Protocol):
    """What :func:`score_audiorag` needs of a judge."""

    label: str
    kind: str

    def judge(self, *, item: RagItem, answer: str) -> Judgement:
        """Judge ``answer`` to ``item``."""
        ...


class OfflineRagJudge:
    """Normalised exact/containment match (:func:`offline_match`); error types a-c unknown.

    Parameters
    ----------
    polarity_words : sequence of str
        Config ``judge.offline_polarity_words``.
    """

    kind = "offline"
    label = OFFLINE_LABEL

    def __init__(self, *, polarity_words: Sequence[str]) -> None:
        self.polarity_words = [str(w) for w in polarity_words]

    def judge(self, *, item: RagItem, answer: str) -> Judgement:
        """Judge ``answer``; a wrong non-empty answer has no error type offline."""
        if offline_match(answer=answer, reference=item.answer, polarity_words=self.polarity_words):
            return Judgement(correct=True, error_type=None)
        return Judgement(correct=False, error_type=None, note="offline judge does not classify errors")


class LlmRagJudge:
    """The paper's protocol through an OpenAI-compatible judge.

    One request decides correctness; for a wrong answer a second request assigns the
    error type (a-d). A reply that cannot be read is asked again up to the client's
    retry count; after that the answer is unjudged (correctness) or unclassified
    (error type), with the reply quoted in the note.

    Parameters
    ----------
    client : ChatClient
    true_words, false_words : sequence of str
        Config ``judge.verdict_*_words``.
    letters : sequence of str
        The error-type letters (keys of config ``audiorag.error_types``).
    """

    kind = "llm"

    def __init__(
        self,
        *,
        client: ChatClient,
        true_words: Sequence[str],
        false_words: Sequence[str],
        letters: Sequence[str],
    ) -> None:
        self.client = client
        self.true_words = list(true_words)
        self.false_words = list(false_words)
        self.letters = list(letters)
        self.label = client.label

    def _ask_parsed(self, prompt: str, parse: Callable[[str], Any]) -> tuple[Any, str | None]:
        last = ""
        for _ in range(self.client.max_retries + 1):
            try:
                reply = self.client.ask(prompt)
            except JudgeError as exc:
                return None, str(exc)
            value = parse(reply.content)
            if value is not None:
                return value, None
            last = reply.content
        return None, f"malformed judge reply: {last[:120]!r}"

    def judge(self, *, item: RagItem, answer: str) -> Judgement:
        """Judge ``answer`` (two requests at most, each retried as described)."""
        fields = {
            "question": item.question,
            "audio_attr": format_attributes(item.attributes),
            "gt_answer": item.answer,
            "model_answer": answer,
        }
        verdict, note = self._ask_parsed(
            AUDIORAG_CORRECTNESS_PROMPT.format(**fields),
            lambda t: parse_verdict(t, true_words=self.true_words, false_words=self.false_words),
        )
        if verdict is None:
            return Judgement(correct=None, error_type=None, note=note)
        if verdict:
            return Judgement(correct=True, error_type=None)
        letter, note = self._ask_parsed(
            AUDIORAG_ERROR_TYPE_PROMPT.format(**fields),
            lambda t: parse_error_type(t, letters=self.letters),
        )
        return Judgement(correct=False, error_type=letter, note=note)

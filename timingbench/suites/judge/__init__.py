"""Answer judges for the question-answering benchmarks (AudioRAG, MGBench understanding).

Two kinds of judge sit behind the same small interface:

- :class:`ChatClient` talks to an OpenAI-compatible ``/v1/chat/completions`` endpoint
  (a local vLLM or llama.cpp server, or a hosted API). It retries transient failures
  (connection errors, timeouts, HTTP 408/429/5xx, bodies that are not a chat completion)
  with exponential back-off and raises :class:`JudgeError` once the retries are spent.
- The *offline* judge is a deterministic normalised exact / containment match
  (:func:`offline_match`). It needs no model and is the embedded default; every output
  that uses it says so, because it is not the LLM judge the papers used.

Modules: :mod:`~timingbench.suites.judge.client` (the HTTP client),
:mod:`~timingbench.suites.judge.prompts` (templates) and :mod:`~timingbench.suites.judge.replies`
(the offline judge and the parsers of judge replies: :func:`parse_verdict`,
:func:`parse_error_type`, :func:`parse_follow_correct`). The
benchmark modules build prompts and decide what a verdict means for their metrics.
"""

from timingbench.suites.judge.client import (
    API_KEY_ENV,
    ChatClient,
    ChatReply,
    JudgeError,
    chat_endpoint,
    judge_client,
    opener_for,
    served_model,
)
from timingbench.suites.judge.prompts import (
    AUDIORAG_CORRECTNESS_PROMPT,
    AUDIORAG_ERROR_TYPE_PROMPT,
    MGBENCH_SPAN_PROMPT,
    MGBENCH_UNDERSTANDING_PROMPT,
)
from timingbench.suites.judge.replies import (
    OFFLINE_LABEL,
    format_attributes,
    normalise_answer,
    offline_match,
    parse_error_type,
    parse_follow_correct,
    parse_verdict,
    verdict_words,
)

__all__ = [
    "API_KEY_ENV", "ChatClient", "ChatReply", "JudgeError", "chat_endpoint", "judge_client", "opener_for",
    "served_model", "AUDIORAG_CORRECTNESS_PROMPT", "AUDIORAG_ERROR_TYPE_PROMPT", "MGBENCH_SPAN_PROMPT",
    "MGBENCH_UNDERSTANDING_PROMPT", "OFFLINE_LABEL", "format_attributes", "normalise_answer", "offline_match",
    "parse_error_type", "parse_follow_correct", "parse_verdict", "verdict_words",
]

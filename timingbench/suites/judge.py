"""Answer judges for the question-answering benchmarks (AudioRAG, MGBench understanding).

Two kinds of judge sit behind the same small interface:

- :class:`ChatClient` talks to an OpenAI-compatible ``/v1/chat/completions`` endpoint
  (a local vLLM or llama.cpp server, or a hosted API). It retries transient failures
  (connection errors, timeouts, HTTP 408/429/5xx, bodies that are not a chat completion)
  with exponential back-off and raises :class:`JudgeError` once the retries are spent.
- The *offline* judge is a deterministic normalised exact / containment match
  (:func:`offline_match`). It needs no model and is the embedded default; every output
  that uses it says so, because it is not the LLM judge the papers used.

This module also holds the prompt templates and the parsers of judge replies
(:func:`parse_verdict`, :func:`parse_error_type`, :func:`parse_follow_correct`). The
benchmark modules build prompts and decide what a verdict means for their metrics.
"""

from __future__ import annotations

import json
import os
import re
import time
import unicodedata
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from timingbench.errors import ParameterError, TimingbenchError
from timingbench.params.benchmarks import JudgeParams

#: The label written into every output scored by the offline judge.
OFFLINE_LABEL = "offline (normalised exact/containment match; not an LLM judge)"

#: HTTP status codes worth retrying: request timeout, rate limit, server-side failures.
_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})

#: AudioRAG correctness prompt. Inputs: question, audio attribute, reference, answer.
AUDIORAG_CORRECTNESS_PROMPT = """\
You are grading an answer to a question about an audio clip.
You see the question, an attribute of the audio (what the audio contains), the ground-truth
answer and the model's answer. The model's answer is correct when it reaches the same
final answer as the ground truth; paraphrases, extra explanation and equivalent names are
fine, a different or missing final answer is not.

Question:
{question}

Audio attribute:
{audio_attr}

Ground truth:
{gt_answer}

Model answer:
{model_answer}

Reply with exactly one word: yes if the model answer is correct, no if it is not."""

#: AudioRAG error-type prompt (paper Appendix B, categories a-d), asked for wrong answers.
AUDIORAG_ERROR_TYPE_PROMPT = """\
You see a question about an audio clip, an attribute of the audio, the ground-truth answer
and a model answer that is wrong. Put the mistake into exactly one category:

a) Reasoning Error: the model misunderstood the question or reasoned incorrectly towards
   the answer; the mistake does not come from mishearing the audio or from missing
   external knowledge. A misread question is a reasoning error.
b) Audio Processing Error: the question needs the attribute of the audio to be recognised
   and the model recognised it wrongly.
c) Knowledge Error: the question needs knowledge beyond the audio and the model answered
   wrongly because that knowledge was missing or wrong.
d) Invalid Answer: the model gave no answer, or a nonsensical or unfinished one.

Question:
{question}

Audio attribute:
{audio_attr}

Ground truth:
{gt_answer}

Model answer:
{model_answer}

Reply with the letter of the category only (a, b, c or d)."""

#: MGBench understanding prompt: instruction following first, then semantic correctness.
MGBENCH_UNDERSTANDING_PROMPT = """\
You are grading an answer to a question about a short piano excerpt.

Question:
{question}

Reference answer:
{gt_answer}

Model answer:
{model_answer}

First decide whether the model answer actually answers the question (a refusal, an
unrelated text or an empty reply does not). Then, only if it does, decide whether it is
semantically the same as the reference answer; paraphrases and musically equivalent
labels (for example "3/4" and "triple meter", "C minor" and "c minor") count as correct.

Reply with exactly two lines:
FOLLOWS: yes or no
CORRECT: yes or no"""

#: MGBench span extraction prompt: the auxiliary LLM only extracts spans, it does not judge.
MGBENCH_SPAN_PROMPT = """\
Below is a model's reply to a question asking for the time spans of musical events in an
audio clip. Extract every time span the reply gives, in seconds.

Reply:
{response}

Output a JSON list of [start, end] pairs in seconds, for example [[0.22, 1.34], [1.90, 2.47]].
Output [] if the reply says that there is no such event.
Output INVALID if the reply gives no time spans and does not say that there are none.
Output nothing else."""


class JudgeError(TimingbenchError):
    """The judge endpoint could not give a usable reply (after all retries)."""


@dataclass(frozen=True)
class ChatReply:
    """One chat completion.

    Attributes
    ----------
    content : str
        The assistant message text.
    attempts : int
        HTTP requests made to obtain it (1 when the first succeeded).
    """

    content: str
    attempts: int


def chat_endpoint(url: str) -> str:
    """Return the ``/chat/completions`` URL for a server base URL.

    ``http://host:8000``, ``http://host:8000/v1`` and the full endpoint are all accepted.

    Raises
    ------
    ParameterError
        If ``url`` is not an http(s) URL.
    """
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ParameterError(
            f"--judge must be 'offline' or an http(s) URL of an OpenAI-compatible server, got {url!r}"
        )
    base = url.rstrip("/")
    if base.endswith("/chat/completions"):
        return base
    if base.endswith("/v1"):
        return base + "/chat/completions"
    return base + "/v1/chat/completions"


#: Environment variable holding an optional bearer token for a hosted judge.
API_KEY_ENV = "TIMINGBENCH_JUDGE_API_KEY"


def opener_for(url: str) -> urllib.request.OpenerDirector:
    """A URL opener for ``url``; a loopback server is never reached through an HTTP proxy
    from the environment."""
    host = urllib.parse.urlparse(url).hostname or ""
    handlers: list[urllib.request.BaseHandler] = []
    if host in ("127.0.0.1", "localhost", "::1"):
        handlers.append(urllib.request.ProxyHandler({}))
    return urllib.request.build_opener(*handlers)


def served_model(url: str, *, timeout_s: float) -> str:
    """The one model an OpenAI-compatible server lists at ``/v1/models``.

    Used when ``--judge URL`` comes without ``--judge-model`` (SPEC section 7 needs only the
    URL): a server that serves exactly one model is unambiguous.

    Raises
    ------
    ParameterError
        If ``url`` is not an http(s) URL, the server cannot be reached or does not list
        its models, or it serves more or fewer than one model (the message lists them).
    """
    endpoint = chat_endpoint(url)
    models_url = endpoint[: -len("/chat/completions")] + "/models"
    try:
        with opener_for(models_url).open(models_url, timeout=timeout_s) as resp:
            doc = json.loads(resp.read().decode("utf-8"))
        ids = [str(m["id"]) for m in doc["data"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ParameterError(f"--judge {url}: could not list the served models at {models_url} ({exc}); "
                             f"name one with --judge-model") from None
    if len(ids) != 1:
        raise ParameterError(f"--judge {url} serves {len(ids)} models ({', '.join(ids) or 'none'}); "
                             f"choose one with --judge-model")
    return ids[0]


class ChatClient:
    """Client of an OpenAI-compatible chat-completions endpoint (standard library only).

    Parameters
    ----------
    url : str
        Server base URL or full ``/chat/completions`` endpoint.
    model : str
        Model name sent in each request.
    timeout_s : float
        Socket timeout of one request, in seconds.
    max_retries : int
        Retries after the first attempt for transient failures.
    backoff_s : float
        Delay before the first retry in seconds; doubled for each further retry.
    temperature : float
        Sampling temperature sent with each request.
    max_tokens : int
        Completion length limit sent with each request.
    api_key : str or None
        Sent as a bearer token when given.

    Raises
    ------
    ParameterError
        If the URL is malformed or a numeric setting is out of range.
    """

    def __init__(
        self,
        *,
        url: str,
        model: str,
        timeout_s: float,
        max_retries: int,
        backoff_s: float,
        temperature: float,
        max_tokens: int,
        api_key: str | None = None,
    ) -> None:
        self.endpoint = chat_endpoint(url)
        if not model:
            raise ParameterError("--judge-model must name the model served at the judge URL")
        if not timeout_s > 0:
            raise ParameterError(f"judge timeout must be positive seconds, got {timeout_s!r}")
        if int(max_retries) != max_retries or max_retries < 0:
            raise ParameterError(f"judge max_retries must be a whole number >= 0, got {max_retries!r}")
        if backoff_s < 0:
            raise ParameterError(f"judge backoff must be >= 0 s, got {backoff_s!r}")
        self.model = model
        self.timeout_s = float(timeout_s)
        self.max_retries = int(max_retries)
        self.backoff_s = float(backoff_s)
        self.temperature = float(temperature)
        self.max_tokens = int(max_tokens)
        self._api_key = api_key
        self._opener = opener_for(self.endpoint)

    @classmethod
    def from_params(
        cls,
        params: JudgeParams,
        *,
        url: str,
        model: str,
        timeout_s: float | None = None,
        max_retries: int | None = None,
        api_key: str | None = None,
    ) -> ChatClient:
        """Build a client with the settings of config section ``judge`` (explicit values win).

        Raises
        ------
        ParameterError
            As :class:`ChatClient`.
        """
        return cls(
            url=url,
            model=model,
            timeout_s=params.timeout_s if timeout_s is None else float(timeout_s),
            max_retries=params.max_retries if max_retries is None else int(max_retries),
            backoff_s=params.backoff_s,
            temperature=params.temperature,
            max_tokens=params.max_tokens,
            api_key=api_key,
        )

    @property
    def label(self) -> str:
        """Human-readable description for result files."""
        return f"llm {self.model} @ {self.endpoint}"

    def _request_once(self, body: bytes) -> str:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        req = urllib.request.Request(self.endpoint, data=body, headers=headers, method="POST")
        with self._opener.open(req, timeout=self.timeout_s) as resp:
            raw = resp.read()
        try:
            doc = json.loads(raw.decode("utf-8"))
            content = doc["choices"][0]["message"]["content"]
        except (UnicodeDecodeError, json.JSONDecodeError, KeyError, IndexError, TypeError):
            raise _Transient(f"reply is not a chat completion: {raw[:120]!r}") from None
        if not isinstance(content, str):
            raise _Transient(f"reply message content is not text: {content!r:.120}")
        return content

    def chat(self, *, messages: Sequence[dict[str, str]]) -> ChatReply:
        """Send one chat request, retrying transient failures.

        Parameters
        ----------
        messages : sequence of dict
            OpenAI chat messages (``{"role": ..., "content": ...}``).

        Returns
        -------
        reply : ChatReply

        Raises
        ------
        JudgeError
            When the server refuses the request (HTTP 4xx other than 408/409/425/429), or
            when every attempt failed; the message names the endpoint and the last cause.
        """
        body = json.dumps(
            {
                "model": self.model,
                "messages": list(messages),
                "temperature": self.temperature,
                "max_tokens": self.max_tokens,
            }
        ).encode("utf-8")
        last = "no attempt made"
        for attempt in range(1, self.max_retries + 2):
            try:
                return ChatReply(content=self._request_once(body), attempts=attempt)
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code} {exc.reason}"
                if exc.code not in _RETRY_STATUS:
                    raise JudgeError(f"{self.endpoint}: judge refused the request ({last})") from None
            except _Transient as exc:
                last = str(exc)
            except (TimeoutError, urllib.error.URLError, ConnectionError, OSError) as exc:
                reason = getattr(exc, "reason", exc)
                last = f"{type(exc).__name__}: {reason}"
            if attempt <= self.max_retries:
                time.sleep(self.backoff_s * (2 ** (attempt - 1)))
        raise JudgeError(
            f"{self.endpoint}: no usable judge reply after {self.max_retries + 1} attempts ({last})"
        )

    def ask(self, prompt: str) -> ChatReply:
        """Send ``prompt`` as a single user message (see :meth:`chat`)."""
        return self.chat(messages=[{"role": "user", "content": prompt}])


def judge_client(
    params: JudgeParams, *, url: str, model: str | None, timeout_s: float | None, max_retries: int | None,
) -> ChatClient:
    """The LLM judge client of a ``--judge URL`` command line.

    Without ``model`` the one model the server lists is used (:func:`served_model`); the
    bearer token comes from :data:`API_KEY_ENV` when set.
    """
    if not model:
        wait = params.timeout_s if timeout_s is None else float(timeout_s)
        model = served_model(url, timeout_s=wait)
    return ChatClient.from_params(params, url=url, model=model, timeout_s=timeout_s, max_retries=max_retries,
                                  api_key=os.environ.get(API_KEY_ENV) or None)


class _Transient(Exception):
    """A reply that arrived but is unusable; retried like a network failure."""


_WS = re.compile(r"\s+")
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")


def normalise_answer(text: str) -> str:
    """Normalise a short answer for matching.

    NFKC, case folding, punctuation to spaces (letters and digits of every script kept),
    English articles dropped, whitespace collapsed.

    Parameters
    ----------
    text : str
        An answer or reference.

    Returns
    -------
    normalised : str
    """
    t = unicodedata.normalize("NFKC", text).casefold()
    t = "".join(ch if (ch.isalnum() or ch.isspace()) else " " for ch in t)
    t = _ARTICLES.sub(" ", t)
    return _WS.sub(" ", t).strip()


def offline_match(*, answer: str, reference: str, polarity_words: Sequence[str]) -> bool:
    """Deterministic correctness of ``answer`` against ``reference``.

    Correct when, after :func:`normalise_answer`, the answer equals the reference, or
    the reference occurs in the answer as a whole-word phrase, or the reference starts
    with a polarity word (``yes``/``no``) and the answer starts with the same one.

    Parameters
    ----------
    answer : str
        The model answer.
    reference : str
        The ground-truth answer.
    polarity_words : sequence of str
        Leading words that decide a yes/no question (config ``judge.offline_polarity_words``).

    Returns
    -------
    correct : bool
        Always False for an empty answer or an empty reference.
    """
    a = normalise_answer(answer)
    r = normalise_answer(reference)
    if not a or not r:
        return False
    if a == r or f" {r} " in f" {a} ":
        return True
    r_first = r.split(" ", 1)[0]
    a_first = a.split(" ", 1)[0]
    return r_first in polarity_words and a_first == r_first


def _first_word(line: str) -> str:
    m = re.search(r"[^\W_]+", line.casefold())
    return m.group(0) if m else ""


def parse_verdict(
    text: str, *, true_words: Sequence[str], false_words: Sequence[str]
) -> bool | None:
    """Read a binary verdict from a judge reply.

    The first non-empty line is used (a ``Verdict:``-style label is skipped); ``None``
    means the reply is malformed.

    Parameters
    ----------
    text : str
        The judge reply.
    true_words, false_words : sequence of str
        Lower-case words meaning yes / no (config ``judge.verdict_*_words``).

    Returns
    -------
    verdict : bool or None
    """
    for line in text.strip().splitlines():
        if not _first_word(line):
            continue
        for candidate in (line, re.sub(r"^\s*[\w ]{0,20}:\s*", "", line)):
            word = _first_word(candidate)
            if word in true_words:
                return True
            if word in false_words:
                return False
        return None
    return None


def parse_error_type(text: str, *, letters: Sequence[str]) -> str | None:
    """Read the error-type letter (``a``..``d``) from a judge reply.

    Accepts ``b``, ``B)``, ``(c)``, ``Answer: d``, ``a) Reasoning Error``; returns
    ``None`` for anything else (including a reply naming two letters).

    Parameters
    ----------
    text : str
        The judge reply.
    letters : sequence of str
        Allowed lower-case letters.

    Returns
    -------
    letter : str or None
    """
    t = text.strip().casefold()
    t = re.sub(r"^(?:error type|answer|category|type)\s*[:\-]\s*", "", t)
    found = {x for x in re.findall(r"(?<![a-z])([a-z])\)", t) if x in letters}
    if len(found) > 1:
        return None
    m = re.match(r"^[\(\[]?([a-z])[\)\]\.:]?(?:\s|$)", t)
    if m and m.group(1) in letters:
        return m.group(1)
    return found.pop() if found else None


def parse_follow_correct(
    text: str, *, true_words: Sequence[str], false_words: Sequence[str]
) -> tuple[bool | None, bool | None]:
    """Read the ``FOLLOWS:`` and ``CORRECT:`` lines of an MGBench understanding reply.

    Parameters
    ----------
    text : str
        The judge reply.
    true_words, false_words : sequence of str
        As :func:`parse_verdict`.

    Returns
    -------
    follows, correct : bool or None
        ``None`` where the line is missing or unreadable. ``correct`` is forced to
        ``False`` when ``follows`` is ``False``.
    """
    found: dict[str, bool | None] = {}
    for line in text.splitlines():
        m = re.match(r"^\W*(follows|correct)\W*:\s*(.*)$", line.strip(), flags=re.IGNORECASE)
        if m:
            key = m.group(1).casefold()
            if key not in found:
                found[key] = parse_verdict(m.group(2), true_words=true_words, false_words=false_words)
    follows = found.get("follows")
    correct = found.get("correct")
    if follows is False:
        correct = False
    return follows, correct


def verdict_words(params: JudgeParams) -> dict[str, list[str]]:
    """The ``true_words``/``false_words`` keyword arguments of config section ``judge``."""
    return {"true_words": list(params.verdict_true_words), "false_words": list(params.verdict_false_words)}


def format_attributes(attributes: Any) -> str:
    """Render a metadata ``attributes`` object as ``key: value`` lines for a prompt."""
    if isinstance(attributes, dict):
        return "\n".join(f"{k}: {_text(v)}" for k, v in attributes.items()) or "(none)"
    return _text(attributes)


def _text(v: Any) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "(unknown)"
    return str(v)

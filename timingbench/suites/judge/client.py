"""Client of an OpenAI-compatible chat-completions endpoint (standard library only).

:class:`ChatClient` retries transient failures (connection errors, timeouts, HTTP
408/429/5xx, bodies that are not a chat completion) with exponential back-off and raises
:class:`JudgeError` once the retries are spent.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass

from timingbench.errors import ParameterError, TimingbenchError
from timingbench.params.benchmarks import JudgeParams

__all__ = ["API_KEY_ENV", "ChatClient", "ChatReply", "JudgeError", "chat_endpoint", "judge_client", "opener_for",
           "served_model"]

#: HTTP status codes worth retrying: request timeout, rate limit, server-side failures.
_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


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

    Used when ``--judge URL`` comes without ``--judge-model`` (formats §7 needs only the
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

"""Judge client and reply parsers, against a scripted OpenAI-compatible server on loopback."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest
from judge_stub_server import running_stub, stub_stats

from timingbench.errors import ConfigError, ParameterError
from timingbench.suites.judge import (
    ChatClient,
    JudgeError,
    chat_endpoint,
    normalise_answer,
    offline_match,
    parse_error_type,
    parse_follow_correct,
    parse_verdict,
    verdict_words,
)

LETTERS = ["a", "b", "c", "d"]


def _client(url: str, *, timeout_s: float = 2.0, max_retries: int = 2) -> ChatClient:
    return ChatClient(
        url=url, model="stub-judge", timeout_s=timeout_s, max_retries=max_retries,
        backoff_s=0.01, temperature=0.0, max_tokens=16,
    )


@pytest.mark.parametrize(
    ("url", "endpoint"),
    [
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000/v1/chat/completions"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1/chat/completions"),
        ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1/chat/completions"),
        ("https://h/v1/chat/completions", "https://h/v1/chat/completions"),
    ],
)
def test_chat_endpoint(url: str, endpoint: str) -> None:
    assert chat_endpoint(url) == endpoint


@pytest.mark.parametrize("url", ["offline", "ftp://h/v1", "127.0.0.1:8000", ""])
def test_chat_endpoint_rejects(url: str) -> None:
    with pytest.raises(ParameterError, match="--judge"):
        chat_endpoint(url)


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("yes", True), ("Yes.", True), ("YES - the answer matches", True), ("Correct", True),
        ("Verdict: no", False), ("no", False), ("Incorrect.", False), ("\n\n  false\n", False),
        ("1", True), ("0", False), ("maybe", None), ("", None), ("The answer is yes", None),
    ],
)
def test_parse_verdict(reply: str, verdict: bool | None, config) -> None:
    assert parse_verdict(reply, **verdict_words(config.params.judge)) is verdict


@pytest.mark.parametrize(
    ("reply", "letter"),
    [
        ("a", "a"), ("B", "b"), ("c)", "c"), ("(d)", "d"), ("b) Audio Processing Error", "b"),
        ("Error type: c", "c"), ("Answer: D.", "d"), ("The category is b) because ...", "b"),
        ("e", None), ("a) or b)", None), ("reasoning", None), ("", None),
    ],
)
def test_parse_error_type(reply: str, letter: str | None) -> None:
    assert parse_error_type(reply, letters=LETTERS) == letter


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("FOLLOWS: yes\nCORRECT: yes", (True, True)),
        ("Follows: yes\nCorrect: no", (True, False)),
        ("FOLLOWS: no\nCORRECT: yes", (False, False)),
        ("**FOLLOWS**: yes\n**CORRECT**: no", (True, False)),
        ("FOLLOWS: yes", (True, None)),
        ("yes yes", (None, None)),
    ],
)
def test_parse_follow_correct(reply: str, expected: tuple, config) -> None:
    assert parse_follow_correct(reply, **verdict_words(config.params.judge)) == expected


@pytest.mark.parametrize(
    ("answer", "reference", "ok"),
    [
        ("Newport Folk Festival", "Newport Folk Festival  ", True),
        ("It is the newport folk festival.", "Newport Folk Festival", True),
        ("yes", "Yes, the genre is pop and Taylor Swift is known for this genre.", True),
        ("No.", "Yes", False),
        ("Detroitish", "Detroit", False),
        ("Bob Dylan", "Bob Dylan", True),
        ("", "Yes", False),
        ("和平精英", "和平精英", True),
        ("G,A,B,C,D,E,F#", "G,A,B,C,D,E,F#", True),
    ],
)
def test_offline_match(answer: str, reference: str, ok: bool) -> None:
    assert offline_match(answer=answer, reference=reference, polarity_words=["yes", "no"]) is ok


def test_normalise_answer_is_idempotent() -> None:
    for t in ["The  Beatles!", "Ünïcode—dash", "  A, an & THE  "]:
        assert normalise_answer(normalise_answer(t)) == normalise_answer(t)


def test_client_success_and_retries(tmp_path) -> None:
    script = {
        "rules": [
            {"name": "ok", "match": "plain", "replies": [{"content": "yes"}]},
            {"name": "flaky", "match": "flaky", "replies": [{"status": 503}, {"status": 500}, {"content": "no"}]},
            {"name": "garbled", "match": "garbled",
             "replies": [{"raw": "<html>oops"}, {"raw": '{"choices": []}'}, {"content": "b"}]},
            {"name": "refused", "match": "refused", "replies": [{"status": 400}]},
            {"name": "down", "match": "down", "replies": [{"status": 502}]},
        ]
    }
    with running_stub(script, tmp_path) as url:
        c = _client(url)
        r = c.ask("plain question")
        assert (r.content, r.attempts) == ("yes", 1)
        r = c.ask("flaky question")
        assert (r.content, r.attempts) == ("no", 3)
        r = c.ask("garbled question")
        assert (r.content, r.attempts) == ("b", 3)
        with pytest.raises(JudgeError, match="refused the request .*HTTP 400"):
            c.ask("refused question")
        with pytest.raises(JudgeError, match=r"after 3 attempts .*HTTP 502"):
            c.ask("down question")
        hits = stub_stats(url)
    assert hits["refused"] == 1  # a client error is not retried
    assert hits["down"] == 3  # 1 attempt + 2 retries


def test_client_timeout_then_success(tmp_path) -> None:
    script = {"rules": [{"name": "slow", "match": "slow",
                         "replies": [{"delay_s": 1.5, "content": "yes"}, {"content": "no"}]}]}
    with running_stub(script, tmp_path) as url:
        c = _client(url, timeout_s=0.3, max_retries=1)
        t0 = time.monotonic()
        r = c.ask("slow question")
        elapsed = time.monotonic() - t0
    assert (r.content, r.attempts) == ("no", 2)
    assert elapsed < 1.5  # the slow reply was abandoned, not waited for


def test_client_unreachable_server_raises(tmp_path) -> None:
    with running_stub({"rules": []}, tmp_path) as url:
        pass  # the stub is stopped: its port is closed now
    c = _client(url, timeout_s=0.5, max_retries=1)
    with pytest.raises(JudgeError, match="no usable judge reply after 2 attempts"):
        c.ask("anything")


@pytest.mark.parametrize(
    ("kw", "match"),
    [({"model": ""}, "judge-model"), ({"timeout_s": 0.0}, "timeout"), ({"max_retries": -1}, "max_retries")],
)
def test_client_rejects_bad_settings(kw: dict, match: str) -> None:
    args = {"url": "http://127.0.0.1:9/v1", "model": "m", "timeout_s": 1.0, "max_retries": 0,
            "backoff_s": 0.0, "temperature": 0.0, "max_tokens": 8}
    args.update(kw)
    with pytest.raises(ParameterError, match=match):
        ChatClient(**args)


def test_client_from_params_reads_judge_section(config) -> None:
    jp = replace(config.params.judge, timeout_s=17.0, max_retries=5, backoff_s=0.25, temperature=0.5, max_tokens=99)
    c = ChatClient.from_params(jp, url="http://127.0.0.1:9", model="m")
    assert (c.timeout_s, c.max_retries, c.backoff_s, c.temperature, c.max_tokens) == (17.0, 5, 0.25, 0.5, 99)
    c2 = ChatClient.from_params(jp, url="http://127.0.0.1:9", model="m", timeout_s=3.0, max_retries=0)
    assert (c2.timeout_s, c2.max_retries) == (3.0, 0)


@pytest.mark.parametrize(
    ("key", "value"),
    [("judge.timeout_s", 0.0), ("judge.max_retries", -1), ("judge.backoff_s", -0.5), ("judge.temperature", -1.0),
     ("judge.max_tokens", 0), ("judge.workers", 0), ("judge.verdict_true_words", []),
     ("judge.offline_polarity_words", ["Yes"]), ("judge.verdict_false_words", ["no", "yes"])],
)
def test_invalid_judge_constant_is_a_config_error_naming_it(config, key: str, value: object) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        config.with_value(key, value).params.judge  # noqa: B018

"""The offline judge and the readers of judge replies.

The *offline* judge is a deterministic normalised exact / containment match
(:func:`offline_match`). It needs no model and is the embedded default; every output
that uses it says so (:data:`OFFLINE_LABEL`), because it is not the LLM judge the papers
used. The readers (:func:`parse_verdict`, :func:`parse_error_type`,
:func:`parse_follow_correct`) turn an LLM judge's reply into a verdict, or None when the
reply is malformed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from timingbench.params.benchmarks import JudgeParams

__all__ = ["OFFLINE_LABEL", "normalise_answer", "offline_match", "parse_verdict", "parse_error_type",
           "parse_follow_correct", "verdict_words", "format_attributes"]

#: The label written into every output scored by the offline judge.
OFFLINE_LABEL = "offline (normalised exact/containment match; not an LLM judge)"


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

"""The part of a model's answer that states the final answer.

Reasoning models write their deliberation before the answer, and the deliberation often
names candidate intervals that the answer then rejects. Two output conventions are read
here, as deterministic normalisations of recurring surface forms (no interpretation of
content):

1. **Reasoning blocks** are removed: ``<think>…</think>``, ``<thinking>…</thinking>``
   and ``<reasoning>…</reasoning>`` (any case). A block that is never closed runs to the
   end of the text. A closing tag with no opening tag before it (chat templates that put
   the opening tag in the prompt) ends a block that began at the start of the text.
2. **Final-answer markers**: when the remaining text holds an explicit marker
   (``Answer:``, ``Final answer:``, ``**Answer**``, a ``# Answer`` heading, an
   ``<answer>`` tag), only the text after the last marker is kept (up to ``</answer>``
   for the tag).

Every pattern here is linear in the length of the text (bounded repetitions or
lookbehind-anchored runs), so arbitrarily long answers cannot make it backtrack.
"""

from __future__ import annotations

import re

__all__ = ["final_answer", "strip_reasoning_blocks", "after_final_marker"]

_TAG = re.compile(r"<[ \t]{0,3}(/?)[ \t]{0,3}(think|thinking|reasoning)[ \t]{0,3}>", re.IGNORECASE)
_MARKER = re.compile(
    r"(?<![\w\"'])(?:\*\*|__)?(?:final[ \t]{1,3})?answer[ \t]{0,3}(?:\*\*|__)?[ \t]{0,3}[:\uff1a]"
    r"|\*\*[ \t]{0,3}(?:final[ \t]{1,3})?answer[ \t]{0,3}\*\*"
    r"|^[ \t]{0,3}#{1,6}[ \t]{0,3}(?:final[ \t]{1,3})?answer\b"
    r"|<answer>",
    re.IGNORECASE | re.MULTILINE,
)
_ANSWER_CLOSE = re.compile(r"</answer>", re.IGNORECASE)


def strip_reasoning_blocks(text: str) -> str:
    """Remove reasoning blocks (see the module docstring).

    Parameters
    ----------
    text : str
        A model answer.

    Returns
    -------
    text : str
        The answer without its reasoning blocks; empty when the whole text was reasoning.
    """
    if "<" not in text:
        return text
    kept: list[str] = []
    pos = 0
    inside = False
    for m in _TAG.finditer(text):
        closing = m.group(1) == "/"
        if not inside and not closing:
            kept.append(text[pos:m.start()])
            inside = True
        elif inside and closing:
            inside = False
            pos = m.end()
        elif not inside and closing:
            # a block whose opening tag is not in the text: everything so far was reasoning
            kept = []
            pos = m.end()
    if not inside:
        kept.append(text[pos:])
    return "".join(kept)


def after_final_marker(text: str) -> str:
    """The text after the last final-answer marker, or the whole text without one.

    Parameters
    ----------
    text : str
        A model answer (reasoning blocks already removed).

    Returns
    -------
    text : str
    """
    if "nswer" not in text and "NSWER" not in text:
        return text
    last = None
    for m in _MARKER.finditer(text):
        last = m
    if last is None:
        return text
    rest = text[last.end():]
    if last.group().lower() == "<answer>":
        close = _ANSWER_CLOSE.search(rest)
        if close is not None:
            rest = rest[:close.start()]
    return rest


def final_answer(text: str) -> str:
    """The final answer of ``text``: reasoning blocks removed, then the last marked span.

    Parameters
    ----------
    text : str
        A model answer.

    Returns
    -------
    text : str
        The part to parse; empty (or blank) when nothing but reasoning was written.
    """
    return after_final_marker(strip_reasoning_blocks(text))

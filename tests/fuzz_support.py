"""Shared pieces of the loader fuzz suites (``tests/test_fuzz_*.py``).

A fuzzed file is a list of lines, each made from a valid row or from a mutated one:

- a *field* mutation changes one field of a valid row (deleted, wrong type, NaN/inf/huge
  number, negative, control and non-ASCII characters, very long text) and records the
  field's name;
- a *line* mutation damages the line itself (truncated JSON, raw control bytes, invalid
  UTF-8, a bare value instead of an object, a very long line).

The file as a whole may carry a UTF-8 BOM and CRLF line ends. Each test then checks the
three properties of the hardening issue: the loader raises nothing but the project's own
errors, every valid row beside the bad ones is kept, and an error names the file, the line
and (for a field mutation) the field. :func:`bounded` turns a hang into a test failure.
"""

from __future__ import annotations

import json
import math
import random
import signal
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

#: Wall-clock bound of one fuzzed input in seconds (a hang fails the test).
INPUT_TIME_BOUND_S = 10.0

#: Seeds of the fuzzed inputs: each example draws one and builds its file from a
#: ``random.Random`` seeded with it (much faster to draw than nested strategies, so the long
#: profile reaches 10^5 files per parser; a failure names its seed, which rebuilds the file).
SEEDS = st.integers(min_value=0, max_value=2**64 - 1)

_JUNK_FIXED: tuple[Any, ...] = (
    None, True, False, 0, -1, 1, 2, 3, 4, 10**400, -(10**400), 2**63, -(2**63) - 1, 10**30,
    math.nan, math.inf, -math.inf, 1e308, -1e308, 5e-324, -0.0, -1e-9, 0.5,
    "", " ", "\x00", "\u202e", "\ufeff", "nan", "inf", "-1", "1e999", "\u00b2", "\u0661",
    "\r", "\t|\t", "a" * 5000, "0", "12", [], [1, 2], [[1, 2]], [[2, 1]], {}, {"a": 1},
    [None], [[math.nan, 1]], [[-1, 1]], "dev", "validation", "mix", "percussion",
)
_ODD_CHARS = ("\x00", "\x01", "\x1b", "\x7f", "\x0b", "\x0c", "\x1c", "\x85", "\u2028",
              "\u202e", "\ufeff", "\ud7ff", "\ue000", "\U0001f3b5", "\u00e9", "\u4e50", "|",
              "\t", ",", '"', "\\", "@", "/", "_", " ")


def junk(rng: random.Random) -> Any:
    """A value of the wrong kind for almost any field (or, now and then, a right one)."""
    k = rng.random()
    if k < 0.55:
        return rng.choice(_JUNK_FIXED)
    if k < 0.7:
        return rng.uniform(-1e6, 1e6)
    if k < 0.8:
        return rng.randint(-(10**6), 10**6)
    return wild_text(rng, 0, 12)


def wild_text(rng: random.Random, lo: int = 1, hi: int = 12) -> str:
    """Text with ASCII, non-ASCII and control characters (no lone surrogates)."""
    n = rng.randint(lo, hi)
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.6:
            out.append(chr(rng.randint(0x20, 0x7E)))
        elif r < 0.85:
            out.append(rng.choice(_ODD_CHARS))
        else:
            c = rng.randint(0xA0, 0x10FFFF)
            out.append(chr(c) if not 0xD800 <= c <= 0xDFFF else "x")
    return "".join(out)


def field_mutation(rng: random.Random, row: dict[str, Any], fields: Sequence[str]) -> tuple[dict[str, Any], str]:
    """Change one field of ``row``: delete it, or give it a junk value."""
    out = dict(row)
    name = rng.choice(list(fields))
    if rng.random() < 0.3 and name in out:
        del out[name]
    else:
        out[name] = junk(rng)
    return out, name


def line_damage(rng: random.Random, text: str) -> str:
    """Damage a JSON line so that it is (usually) no longer a valid row."""
    kind = rng.choice(["truncate", "control", "bytes", "scalar", "long", "nest", "garbage"])
    if kind == "truncate":
        return text[:rng.randint(1, max(1, len(text) - 1))]
    if kind == "control":
        pos = rng.randint(1, max(1, len(text) - 1))
        ch = rng.choice(["\x00", "\x01", "\x1b", "\x7f", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\r"])
        return text[:pos] + ch + "\x00" + text[pos:]
    if kind == "bytes":
        return text[:1] + "\udcff\udcfe" + text[1:]  # surrogateescape: written as raw bytes
    if kind == "scalar":
        return rng.choice(["1", "null", "true", '"row"', "[1, 2]", "NaN", "-Infinity", "1" * 5000])
    if kind == "long":
        return text[:-1] + ', "pad": "' + "x" * rng.choice([10_000, 200_000]) + '"}'
    if kind == "nest":
        depth = rng.choice([50, 5000, 100_000])
        return "[" * depth + "]" * rng.choice([0, depth])
    return wild_text(rng, 1, 40).replace("\n", " ")


@dataclass(frozen=True)
class Line:
    """One line of a fuzzed file.

    Attributes
    ----------
    text : str
        The line without its line end.
    valid : bool
        True when the line is a valid row that must load.
    field : str or None
        Name of the field a field mutation changed (None for valid rows and line damage).
    key : Any
        What identifies the loaded row (an id), for valid rows.
    """

    text: str
    valid: bool
    field: str | None = None
    key: Any = None


def dumps(row: Any) -> str:
    """One JSONL line (non-ASCII kept, NaN written as the ``NaN`` token Python reads back)."""
    return json.dumps(row, ensure_ascii=False)


def write_lines(path: Path, lines: Sequence[str], *, bom: bool, crlf: bool) -> None:
    """Write lines as a file (UTF-8; lone surrogates become the raw bytes they stand for)."""
    end = "\r\n" if crlf else "\n"
    text = ("\ufeff" if bom else "") + "".join(line + end for line in lines)
    path.write_bytes(text.encode("utf-8", errors="surrogateescape"))


@contextmanager
def bounded(seconds: float = INPUT_TIME_BOUND_S) -> Iterator[None]:
    """Fail with ``TimeoutError`` when the block runs longer than ``seconds``."""

    def _alarm(signum: int, frame: Any) -> None:
        raise TimeoutError(f"input took longer than {seconds} s")

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def line_of(message: str, path: Path) -> int | None:
    """The line number an error message gives after ``path:`` (None when it gives none)."""
    prefix = f"{path}:"
    at = message.find(prefix)
    if at < 0:
        return None
    digits = ""
    for ch in message[at + len(prefix):]:
        if not ch.isdigit():
            break
        digits += ch
    return int(digits) if digits else None


def check_errors(errors: Sequence[str], lines: Sequence[Line], path: Path,
                 *, field_names: Sequence[str], first_line: int = 1) -> None:
    """Every error names the file and a line that holds a non-valid row; field mutations name a field.

    Parameters
    ----------
    errors : sequence of str
        The loader's per-row error messages.
    lines : sequence of Line
        The rows as written, line ``first_line`` first.
    path : Path
        The file.
    field_names : sequence of str
        Names that count as naming a field (the schema's fields).
    first_line : int
        Line number of ``lines[0]`` (2 when a header line comes first).
    """
    for msg in errors:
        n = line_of(msg, path)
        assert n is not None, f"error does not name {path}:<line>: {msg!r}"
        k = n - first_line
        assert 0 <= k < len(lines), f"error names line {n}, outside the file: {msg!r}"
        ln = lines[k]
        assert not ln.valid, f"valid line {n} was reported: {msg!r}\nline: {ln.text[:200]!r}"
        if ln.field is not None:
            assert any(f"'{f}" in msg or f"{f}'" in msg or f"({f}" in msg or f" {f} " in msg
                       for f in field_names), f"error names no field: {msg!r}"

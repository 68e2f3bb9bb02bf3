"""Tables in model answers rewritten as one range line per row.

Models often answer with a table whose start and end times sit in separate columns
(``| 1 | 00:03.0 | 00:13.4 |`` under ``| # | Start | End |``). Such a table states one
interval per row, but no range operator joins the two times, so the text cascade of
:mod:`timingbench.suites.span_parse` cannot pair them. This module finds the tables and
rewrites each data row as ``<start> s to <end> s`` (seconds, 6 decimals) in place.

A table is a header line whose cells name a start column (``start``, ``begin``,
``onset``, ``from``) and an end column (``end``, ``stop``, ``offset``, ``to``, ``until``,
``finish``), each optionally followed by ``time``/``timestamp`` and a unit (``Start (s)``,
``onset_ms``, ``End time [min]``), then the lines below it split the same way. Cells are
split on ``|`` (markdown and ASCII-art tables), on tabs, on commas (CSV) or on runs of
two or more spaces (plain-text columns); separator lines (``|---|:---:|``, ``+----+``)
are skipped and the table ends at the first line that does not have the header's cell
count (a blank line, a sentence). A bare number in a cell takes the header's unit
(seconds without one); other cells are read as one time expression (``00:03.0``,
``3.2 s``, ``3200 ms``). A row whose start or end cell is not a time is left as written.

A line that is nothing but two times separated by a comma (``3.2, 4.8``: CSV
``start,end`` rows without a header) is rewritten the same way.

Tables with one range per cell (``| 1 | 3.0-5.2 s |``) need no rewriting: the range
operator is in the cell.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["rewrite_tables"]

_NAME_TAIL = (
    r"(?: (?:time|times|timestamp|point|position|sec|secs|seconds|s|ms|min|mins|minutes|h|hours"
    r"|mm:ss|m:ss|hh:mm:ss|h:mm:ss))*"
)
_START_NAME = re.compile(r"(?:start|starts|starting|begin|begins|beginning|onset|from)" + _NAME_TAIL)
_END_NAME = re.compile(r"(?:end|ends|ending|stop|stops|offset|to|until|finish|finishes)" + _NAME_TAIL)
_UNIT_FACTOR = {
    "ms": 0.001, "msec": 0.001, "millisecond": 0.001, "milliseconds": 0.001,
    "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0,
    "min": 60.0, "mins": 60.0, "minute": 60.0, "minutes": 60.0,
    "h": 3600.0, "hr": 3600.0, "hrs": 3600.0, "hour": 3600.0, "hours": 3600.0,
}
_CAMEL = re.compile(r"([a-z])([A-Z])")
_NON_WORD = re.compile(r"[^a-z0-9:]+")
_SEPARATOR_CHARS = frozenset(" \t|:+-=")
_SPACES = re.compile(r" {2,}|\t")
_BARE = re.compile(r"\d+(?:\.\d+)?")
_DIGIT = re.compile(r"\d")
_CELL_JUNK = re.compile(r"[*`_~\u2248]|\bapprox\w*\.?|\b(?:about|around|ca)\b", re.IGNORECASE)
_HINT = re.compile(r"start|begin|onset|from", re.IGNORECASE)
_T = r"(?:\d{1,3}:\d{2}(?::\d{2})?(?:\.\d{1,6})?|\d{1,9}(?:\.\d{1,9})?(?:[ \t]?(?:ms|s|sec))?)"
_CSV_PAIR = re.compile(r"^[ \t]*(" + _T + r")[ \t]*,[ \t]*(" + _T + r")[ \t]*$", re.MULTILINE)
_MAX_HEADER_CELL = 40
#: A table ends after this many consecutive lines without an interval (separators, rows
#: whose start or end cell is not a time), so each header scans a bounded stretch.
_MAX_GAP_LINES = 3
_CLOCK_NO_FRACTION = re.compile(r"\d{1,3}:\d{2}(?::\d{2})?")
_THREE_DIGITS = re.compile(r"\d{3}")


def _name_key(cell: str) -> str:
    """A header cell as lower-case words: ``"**Start (s)**"`` -> ``"start s"``."""
    c = _CAMEL.sub(r"\1 \2", cell[:_MAX_HEADER_CELL + 1])
    return " ".join(_NON_WORD.sub(" ", c.lower()).split())


def _column(key: str, name: re.Pattern[str]) -> float | None:
    """The unit factor of a header cell naming the column, else None."""
    if len(key) > _MAX_HEADER_CELL or name.fullmatch(key) is None:
        return None
    words = key.split()
    for w in words[1:]:
        if w in _UNIT_FACTOR:
            return _UNIT_FACTOR[w]
    return 1.0


def _splitter(line: str) -> Callable[[str], list[str]] | None:
    if "|" in line:
        return lambda s: [c.strip() for c in s.strip().strip("|").split("|")]
    if "\t" in line:
        return lambda s: [c.strip() for c in s.strip().split("\t")]
    if "," in line:
        return lambda s: [c.strip() for c in s.strip().split(",")]
    if "  " in line:
        return lambda s: [c.strip() for c in _SPACES.split(s.strip())]
    return None


def _header(line: str) -> tuple[Callable[[str], list[str]], int, int, float, float, int] | None:
    split = _splitter(line)
    if split is None:
        return None
    cells = split(line)
    if len(cells) < 2 or len(cells) > 32:
        return None
    keys = [_name_key(c) for c in cells]
    si = next((k for k, c in enumerate(keys) if _column(c, _START_NAME) is not None), None)
    ei = next((k for k, c in enumerate(keys) if k != si and _column(c, _END_NAME) is not None), None)
    if si is None or ei is None:
        return None
    return split, si, ei, _column(keys[si], _START_NAME) or 1.0, _column(keys[ei], _END_NAME) or 1.0, len(cells)


def _cell_seconds(cell: str, factor: float, parse_time: Callable[[str], float | None]) -> float | None:
    if len(cell) > 64 or _DIGIT.search(cell) is None:
        return None
    c = _CELL_JUNK.sub(" ", cell).strip()
    if _BARE.fullmatch(c):
        return float(c) * factor
    return parse_time(c)


def _range_line(s: float, e: float) -> str:
    return f"{s:.6f} s to {e:.6f} s"


def rewrite_tables(text: str, parse_time: Callable[[str], float | None]) -> str:
    """Rewrite start/end tables and ``start,end`` lines of ``text`` as range lines.

    Parameters
    ----------
    text : str
        A model answer.
    parse_time : callable
        Reads one time expression in seconds (None when the cell is not one), e.g.
        :func:`timingbench.suites.span_parse.parse_time`.

    Returns
    -------
    text : str
        The answer with each table row that holds a start and an end time replaced by
        ``"<start> s to <end> s"``; unchanged when there is no such table.
    """
    if "\n" in text and _HINT.search(text):
        text = _rewrite_header_tables(text, parse_time)
    if "," in text:
        text = _CSV_PAIR.sub(_csv_line, text)
    return text


def _is_separator(line: str) -> bool:
    return ("-" in line or "=" in line) and set(line) <= _SEPARATOR_CHARS


def _csv_line(m: re.Match[str]) -> str:
    a, b = m.group(1), m.group(2)
    if _CLOCK_NO_FRACTION.fullmatch(a) and _THREE_DIGITS.fullmatch(b):
        return m.group()  # "00:00:03,200": a clock with a decimal comma (SRT), not a pair
    return f"{a} to {b}"


def _rewrite_header_tables(text: str, parse_time: Callable[[str], float | None]) -> str:
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    n = len(lines)
    changed = False
    while i < n:
        line = lines[i]
        head = _header(line) if _HINT.search(line) else None
        if head is None:
            out.append(line)
            i += 1
            continue
        split, si, ei, sf, ef, width = head
        j = i + 1
        body: list[str] = []
        rows = 0
        gap = 0
        end = j  # one past the last line that held an interval
        while j < n and gap <= _MAX_GAP_LINES:
            row = lines[j]
            if _is_separator(row):
                body.append("")
                j += 1
                gap += 1
                continue
            cells = split(row)
            if len(cells) != width:
                break
            s = _cell_seconds(cells[si], sf, parse_time)
            e = _cell_seconds(cells[ei], ef, parse_time)
            j += 1
            if s is None or e is None:
                body.append(row)
                gap += 1
            else:
                body.append(_range_line(s, e))
                rows += 1
                gap = 0
                end = j
        body = body[:end - i - 1]
        if rows == 0:
            out.append(line)
            i += 1
            continue
        out.append("")
        out.extend(body)
        changed = True
        i = end
    return "\n".join(out) if changed else text

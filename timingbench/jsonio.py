"""JSON and JSONL reading and atomic writing.

Rows are plain dicts; unknown keys are preserved on read and write (docs/formats.md). Writes go to a
temporary file in the same folder followed by ``os.replace`` so that a killed process
never leaves a half-written file behind.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeGuard, TypeVar

from timingbench.errors import TimingbenchError


def _default(obj: Any) -> Any:
    # numpy scalars and arrays without importing numpy at module import time
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"cannot serialise {type(obj).__name__}")


def _clean(obj: Any) -> Any:
    """Replace non-finite floats by None so that the output is strict JSON."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_clean(v) for v in obj]
    if hasattr(obj, "tolist"):
        return _clean(obj.tolist())
    return obj


def json_values(obj: Any) -> Any:
    """``obj`` as reading back its JSON line gives it, without writing and parsing one.

    Non-finite floats become None, numpy values plain numbers and lists, tuples lists,
    paths strings and dict keys strings (bool, int and float keys as ``json`` writes them).

    Parameters
    ----------
    obj : JSON-like value
        A row or summary as the runner builds it.

    Returns
    -------
    value : JSON-like value
        Fresh containers; leaves are shared.
    """
    if isinstance(obj, bool) or obj is None or isinstance(obj, str | int):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {_json_key(k): json_values(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_values(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "tolist"):
        return json_values(obj.tolist())
    raise TypeError(f"cannot serialise {type(obj).__name__}")


def _json_key(k: Any) -> str:
    if isinstance(k, str):
        return k
    return json.dumps(k) if isinstance(k, bool | int | float) or k is None else str(k)


def dumps_row(row: dict[str, Any]) -> str:
    """One strict-JSON line (no trailing newline), keys in insertion order."""
    return json.dumps(_clean(row), ensure_ascii=False, allow_nan=False, default=_default)


def is_finite_number(value: Any) -> TypeGuard[int | float]:
    """Whether a JSON value is a finite number.

    Parameters
    ----------
    value : Any
        A parsed JSON value.

    Returns
    -------
    ok : bool
        True for an int or float that is finite; False for a bool, for anything else and
        for an integer beyond the float range (where ``math.isfinite`` would raise
        ``OverflowError``).
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer beyond the float range
        return False


def utf8_problem(line: str) -> str | None:
    """What makes a line that was decoded with ``errors="surrogateescape"`` invalid UTF-8.

    Parameters
    ----------
    line : str
        One line of a file, its undecodable bytes kept as surrogates.

    Returns
    -------
    problem : str or None
        ``not valid UTF-8 (byte 0x.. at column N)``, naming the first undecodable byte and
        its 1-based column; None when the line is valid UTF-8.
    """
    try:
        line.encode("utf-8")
    except UnicodeEncodeError as exc:
        byte = ord(line[exc.start]) & 0xFF
        return f"not valid UTF-8 (byte 0x{byte:02x} at column {exc.start + 1})"
    return None


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, parsed)`` for each non-blank line of a JSONL file.

    Lines end at ``\n`` only (a ``\r`` before it is stripped; a lone ``\r``, form feed
    or Unicode line separator inside a line does not start a new one), so line numbers
    are those an editor shows. A UTF-8 byte-order mark at the start of the file is
    skipped. A line that is not UTF-8 or not JSON yields ``(line_number,
    TimingbenchError)`` instead of raising, so a caller can report the line and carry on
    with the rest.
    """
    p = Path(path)
    with open(p, "rb") as fh:
        for i, raw in enumerate(fh, start=1):
            if i == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            # surrogateescape keeps undecodable bytes so that only their own line is rejected
            line = raw.decode("utf-8", errors="surrogateescape")
            if not line.strip():
                continue
            bad = utf8_problem(line)
            if bad is not None:
                yield i, TimingbenchError(f"{p}:{i}: {bad}")
                continue
            try:
                yield i, json.loads(line)
            except json.JSONDecodeError as exc:
                yield i, TimingbenchError(f"{p}:{i}: not valid JSON ({exc.msg})")
            except (ValueError, RecursionError) as exc:  # over-long integer literal, absurd nesting
                yield i, TimingbenchError(f"{p}:{i}: not valid JSON ({type(exc).__name__}: {str(exc)[:80]})")


E = TypeVar("E", bound=TimingbenchError)
R = TypeVar("R")


def field_error(where: str, field: str, rule: str, *, error: type[E]) -> E:
    """The error for one bad field of one row: ``file:line: field 'name': rule``.

    Parameters
    ----------
    where : str
        ``file:line`` (optionally followed by an id), without a trailing colon.
    field : str
        The field's name (dotted for a nested one).
    rule : str
        What the value must be, and what it was.
    error : type
        The :class:`TimingbenchError` subclass to build.
    """
    return error(f"{where}: field '{field}': {rule}")


def read_rows(
    path: str | Path,
    *,
    what: str,
    error: type[E],
    on_error: Callable[[E], object] | None = None,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, row)`` for each JSON-object row of a JSONL file.

    This is the one reading loop of every JSONL reader: a line that is not UTF-8, not
    JSON or not a JSON object gives one ``file:line: ...`` error; with ``on_error`` it is
    passed there (as an ``error`` instance) and the other rows still come, without it the
    first one is raised.

    Parameters
    ----------
    path : str or Path
        The JSONL file.
    what : str
        What the file holds, for the message when it cannot be read ("ground truth").
    on_error : callable, optional
        Called with each bad line's error (``errors.append``); ``None`` raises the first.
    error : type
        The :class:`TimingbenchError` subclass of the errors built.

    Yields
    ------
    line_number : int
        1-based, as an editor shows it.
    row : dict
        The parsed object.

    Raises
    ------
    TimingbenchError
        ``error``: if the file cannot be read, or (without ``on_error``) on the first bad line.
    """
    p = Path(path)
    try:
        rows = list(iter_jsonl(p))
    except OSError as exc:
        raise error(f"{p}: cannot read {what} ({exc.strerror})") from None
    for line, row in rows:
        bad: E | None = None
        if isinstance(row, TimingbenchError):
            bad = row if isinstance(row, error) else error(str(row))
        elif not isinstance(row, dict):
            bad = error(f"{p}:{line}: row must be a JSON object, got {type(row).__name__}")
        if bad is None:
            yield line, row
        elif on_error is None:
            raise bad
        else:
            on_error(bad)


def parse_rows(
    rows: Iterable[tuple[int, Any]],
    *,
    source: str,
    parse: Callable[..., R],
    error: type[E],
    errors: list[E],
) -> Iterator[tuple[str, R]]:
    """Parse ``(line_number, row)`` pairs one at a time, keeping the errors in file order.

    The validating half of a reader: each row is handed to ``parse(row, where=where)``;
    a row that is itself an exception (a bad line the row source reported) and a row whose
    ``parse`` raises ``error`` are appended to ``errors`` (as ``error`` instances) and
    skipped. What spans rows (duplicate ids) is the caller's to check on the rows yielded.

    Parameters
    ----------
    rows : iterable of (int, object)
        1-based line numbers and parsed JSON values (or exceptions), as :func:`read_rows`
        or an importer gives them.
    source : str
        The file name the ``where`` prefixes start with.
    parse : callable
        Validates one row; called with the row and the keyword ``where``.
    error : type
        The :class:`TimingbenchError` subclass that ``parse`` raises for a bad row.
    errors : list
        Where the errors go.

    Yields
    ------
    where : str
        ``"file:line: "``, the prefix of the row's error messages.
    parsed : object
        What ``parse`` returned.
    """
    for line, row in rows:
        where = f"{source}:{line}: "
        if isinstance(row, Exception):
            errors.append(error(str(row)))
            continue
        try:
            parsed = parse(row, where=where)
        except error as exc:
            errors.append(exc)
            continue
        yield where, parsed


def load_rows(path: str | Path, *, what: str, error: type[E], validate: Callable[..., R]) -> R:
    """Read a JSONL file through :func:`read_rows` and hand its rows to a validator.

    ``validate(rows, source=str(path), errors=errors)`` receives the ``(line, row)`` pairs
    lazily and the list that bad lines are appended to while it reads, so that its own
    errors and those of the reading stay in file order.

    Raises
    ------
    TimingbenchError
        ``error``: if the file does not exist (``<path>: <what> not found``) or cannot be read.
    """
    p = Path(path)
    if not p.is_file():
        raise error(f"{p}: {what} not found")
    errors: list[E] = []
    return validate(read_rows(p, what=what, error=error, on_error=errors.append), source=str(p), errors=errors)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (temp file + rename in the same folder)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; results are ordinary files
        os.replace(tmp, p)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def remove_stale_temps(folder: str | Path) -> int:
    """Remove the temporary files a killed :func:`atomic_write_text` left in ``folder``.

    Only call it while no other process writes there (a locked results folder): a temp file
    is a write that never finished, its target file is either absent or the previous version.

    Returns
    -------
    removed : int
        How many files were removed (0 when the folder does not exist).
    """
    p = Path(folder)
    if not p.is_dir():
        return 0
    stale = [f for f in p.iterdir() if f.is_file() and f.name.startswith(".") and f.name.endswith(".tmp")]
    for f in stale:
        f.unlink(missing_ok=True)
    return len(stale)


def write_json(path: str | Path, obj: Any, *, indent: int | None = 2) -> None:
    """Write strict JSON atomically (sorted keys are not imposed)."""
    atomic_write_text(
        path, json.dumps(_clean(obj), ensure_ascii=False, allow_nan=False, indent=indent,
                         default=_default) + "\n"
    )


def write_jsonl(path: str | Path, rows: Iterable[dict[str, Any]]) -> None:
    """Write rows as JSONL atomically."""
    atomic_write_text(path, "".join(dumps_row(r) + "\n" for r in rows))


def read_json(path: str | Path) -> Any:
    """Read a JSON file, raising :class:`TimingbenchError` naming the file on failure."""
    p = Path(path)
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TimingbenchError(f"{p}: cannot read ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise TimingbenchError(f"{p}:{exc.lineno}: not valid JSON ({exc.msg})") from None

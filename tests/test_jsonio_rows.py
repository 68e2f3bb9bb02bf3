"""The one JSONL reading loop (jsonio.read_rows) and the readers built on it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from timingbench.errors import ParameterError, PromptError, TimingbenchError
from timingbench.jsonio import field_error, is_finite_number, parse_rows, read_rows, utf8_problem

PKG = Path(__file__).resolve().parents[1] / "timingbench"


def _write(tmp_path: Path, text: bytes) -> Path:
    p = tmp_path / "rows.jsonl"
    p.write_bytes(text)
    return p


def test_read_rows_yields_objects_and_reports_bad_lines_in_order(tmp_path: Path) -> None:
    p = _write(tmp_path, b'{"a": 1}\n\n[1, 2]\nnot json\n\xff\n{"b": 2}\n')
    seen: list[tuple[str, object]] = []
    for line, row in read_rows(p, what="rows", error=ParameterError,
                               on_error=lambda e: seen.append(("error", e))):
        seen.append(("row", (line, row)))
    kinds = [k for k, _ in seen]
    assert kinds == ["row", "error", "error", "error", "row"]
    assert seen[0][1] == (1, {"a": 1}) and seen[-1][1] == (6, {"b": 2})
    errors = [e for k, e in seen if k == "error"]
    assert all(isinstance(e, ParameterError) for e in errors)
    assert [str(e).split(": ")[0] for e in errors] == [f"{p}:3", f"{p}:4", f"{p}:5"]
    assert "row must be a JSON object, got list" in str(errors[0])


def test_read_rows_without_handler_raises_first_bad_line(tmp_path: Path) -> None:
    p = _write(tmp_path, b'{"a": 1}\n"text"\n')
    it = read_rows(p, what="rows", error=PromptError)
    assert next(it) == (1, {"a": 1})
    with pytest.raises(PromptError, match=r"rows.jsonl:2: row must be a JSON object, got str"):
        next(it)


def test_read_rows_unreadable_file_names_what(tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match=r"missing.jsonl: cannot read answers"):
        list(read_rows(tmp_path / "missing.jsonl", what="answers", error=ParameterError))


def test_field_error_format() -> None:
    err = field_error("f.jsonl:3", "onset_s", "must be >= 0", error=TimingbenchError)
    assert str(err) == "f.jsonl:3: field 'onset_s': must be >= 0"


def test_parse_rows_yields_parsed_rows_and_collects_errors_in_order() -> None:
    def parse(row: dict[str, int], *, where: str) -> int:
        if row["n"] < 0:
            raise PromptError(f"{where}field 'n': must be >= 0")
        return row["n"]

    errors: list[PromptError] = []
    rows = [(1, {"n": 1}), (2, TimingbenchError("f.jsonl:2: not valid JSON (x)")), (3, {"n": -1}), (5, {"n": 2})]
    got = list(parse_rows(rows, source="f.jsonl", parse=parse, error=PromptError, errors=errors))
    assert got == [("f.jsonl:1: ", 1), ("f.jsonl:5: ", 2)]
    assert all(type(e) is PromptError for e in errors)
    assert [str(e) for e in errors] == ["f.jsonl:2: not valid JSON (x)", "f.jsonl:3: field 'n': must be >= 0"]


@pytest.mark.parametrize(("value", "ok"), [(1, True), (0.5, True), (True, False), (None, False), ("1", False),
                                          (float("nan"), False), (float("inf"), False), (10**400, False)])
def test_is_finite_number(value: object, ok: bool) -> None:
    assert is_finite_number(value) is ok


def test_utf8_problem_names_byte_and_column() -> None:
    assert utf8_problem("plain") is None
    assert utf8_problem(b"ab\xff".decode("utf-8", errors="surrogateescape")) == (
        "not valid UTF-8 (byte 0xff at column 3)")


def test_readers_order_read_and_field_errors_by_line(tmp_path: Path) -> None:
    from timingbench.prompts import load_prompts

    p = tmp_path / "prompts.jsonl"
    p.write_text('{"id": "x"}\nnot json\n{"id": "y"}\n', encoding="utf-8")
    errs = [str(e) for e in load_prompts(p).errors]
    assert [e.split(": ")[0] for e in errs] == [f"{p}:1", f"{p}:2", f"{p}:3"]


def test_iter_jsonl_is_read_only_through_read_rows_in_readers() -> None:
    """The nine row readers iterate JSONL files through read_rows, not their own loop."""
    readers = ["suites/tag/io.py", "suites/audiorag/io.py", "suites/mgbench/io.py",
               "annotation_io.py", "prompts.py", "compare/results.py"]
    for rel in readers:
        tree = ast.parse((PKG / rel).read_text(encoding="utf-8"))
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        assert "iter_jsonl" not in names, rel
        assert names & {"read_rows", "load_rows"}, rel

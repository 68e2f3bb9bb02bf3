"""docs/api.md: its Python examples run as written and print what they say."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

#: jams validates with a call that jsonschema deprecates (not ours to fix).
pytestmark = pytest.mark.filterwarnings("ignore:Passing a schema to Validator:DeprecationWarning")

DOC = Path(__file__).resolve().parent.parent / "docs" / "api.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_the_examples_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    blocks = _blocks()
    assert len(blocks) == 4
    namespace: dict = {}
    for code in blocks:
        exec(compile(code, str(DOC), "exec"), namespace)  # noqa: S102 (our own documentation)
    out = capsys.readouterr().out.splitlines()
    outcome, detected_s, error_s, rejected_by = out[0].split()
    assert outcome == "on_time" and abs(float(error_s)) < 0.05 and rejected_by == "None"
    assert f"# {out[0]}" in DOC.read_text(encoding="utf-8")
    assert [line.split()[0] for line in out[2:5]] == ["ClipError", "ParameterError", "PromptError"]
    assert "non-finite" in out[2] and "sr:" in out[3] and "duration_s" in out[4]
    assert out[-5] == "(1.0, 1.0, 1.0)" and out[-4] == "['demo-1.jams']"
    assert out[-3:] == ["3.0", "2.0 True", "None"]

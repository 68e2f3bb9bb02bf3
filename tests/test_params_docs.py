"""The parameter sets' docstrings say what the YAML says (``tools/params_docs.py``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

TOOL = Path(__file__).resolve().parent.parent / "tools" / "params_docs.py"


def _tool():
    spec = importlib.util.spec_from_file_location("params_docs", TOOL)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_every_field_description_is_the_yaml_why():
    drifts = _tool().check()
    assert not drifts, "run tools/params_docs.py --write:\n" + "\n".join(
        f"{d.cls}.{d.field}: doc {d.have!r} != yaml {d.want!r}" for d in drifts)


def test_a_drifted_description_is_caught(tmp_path):
    tool = _tool()
    src = (tool.PARAMS_DIR / "detectors.py").read_text(encoding="utf-8")
    planted = tmp_path / "detectors.py"
    planted.write_text(src.replace("paper Sec. IV-A: search window of +-5 s", "a search window", 1), encoding="utf-8")
    _, drifts = tool.generate(planted, tool._constants())
    assert [(d.cls, d.field) for d in drifts] == [("SearchParams", "window_s")]

"""Every top-level definition of the package is used by the package itself (or is public API).

A function or class that only tests call tests nothing a user can reach; a test helper
belongs in ``tests/``. Names are counted as words in the package's source files (Python,
HTML and JavaScript assets), in ``tools/``, ``benchmarks/`` and the Makefile.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "timingbench"

#: Reached by users without the package naming them again: the public API (docs/, and the
#: result types' row methods), HTTP handler methods the standard library calls, the module ``__dir__``, and
#: the slow reference kernels the oracle tests compare the fast ones with.
ENTRY_POINTS = {"__dir__", "do_GET", "do_HEAD", "do_POST", "log_message", "import_sonic_visualiser_csv",
                "export_audacity_labels", "require_dev_only", "separation_run_count", "clip_rows"}
REFERENCE_MODULES = {"kernels_reference.py"}
#: The check of generated MGBench annotations against the audio (reads the calibrated
#: ``mgbench_gen.onset_check_frames``), run by the generator's tests.
DATA_CHECKS = {"check_split"}
#: Reached through a file the user passes: the tagger's architecture for any width, what a
#: --tagger-weights file of another width is checked against (the tests build random-weight
#: files of other widths with it).
ELSEWHERE = {"tagger_model.py": {"for_width"}}


def _definitions() -> list[tuple[str, Path]]:
    out = []
    for p in PKG.rglob("*.py"):
        if p.name in REFERENCE_MODULES:
            continue
        for node in ast.parse(p.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                out.append((node.name, p))
            if isinstance(node, ast.ClassDef):
                out.extend((s.name, p) for s in node.body
                           if isinstance(s, ast.FunctionDef) and not s.name.startswith("__"))
    return out


def _corpus() -> str:
    files = [*PKG.rglob("*.py"), *PKG.rglob("*.js"), *PKG.rglob("*.html"), *(ROOT / "tools").rglob("*.py"),
             *(ROOT / "benchmarks").rglob("*.py"), ROOT / "Makefile", ROOT / "pyproject.toml"]
    return "\n".join(f.read_text(encoding="utf-8", errors="replace") for f in files if f.is_file())


def test_no_definition_is_used_by_tests_only() -> None:
    text = _corpus()
    unused = []
    for name, path in _definitions():
        if name in ENTRY_POINTS or name in DATA_CHECKS or name in ELSEWHERE.get(path.name, set()):
            continue
        if len(re.findall(r"\b" + re.escape(name) + r"\b", text)) <= 1:
            unused.append(f"{path.relative_to(ROOT)}: {name}")
    assert not unused, unused

"""The package's layers import only downward: verdicts -> curves -> gates -> detectors -> scoring -> runner -> commands."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "timingbench"

#: Rank of each layer; a module may import only modules of a lower or equal rank.
LAYERS = {
    "timingbench.verdicts": 0,
    "timingbench.curves": 1,
    "timingbench.gates": 2,
    "timingbench.identity": 2,
    "timingbench.detectors": 3,
    "timingbench.scoring": 4,
    "timingbench.runner": 5,
    "timingbench.commands": 6,
    "timingbench.cli": 6,
}


def _rank(module: str) -> int | None:
    for name, rank in LAYERS.items():
        if module == name or module.startswith(name + "."):
            return rank
    return None


def _module(path: Path) -> str:
    parts = path.relative_to(PKG.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module imported anywhere in the file (function-level imports included)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return {m for m in out if m.startswith("timingbench")}


def test_layers_import_only_downward():
    upward = []
    for path in PKG.rglob("*.py"):
        mod = _module(path)
        own = _rank(mod)
        if own is None:
            continue
        for imp in _imports(path):
            r = _rank(imp)
            if r is not None and r > own:
                upward.append(f"{mod} imports {imp}")
    assert not upward, upward


@pytest.mark.parametrize("low,high", [("timingbench.label", "timingbench.calibration"),
                                      ("timingbench.params", "timingbench.detectors"),
                                      ("timingbench.params", "timingbench.features")])
def test_lower_packages_do_not_import_higher_ones(low, high):
    hits = [f"{_module(p)} imports {imp}" for p in PKG.rglob("*.py") if _module(p).startswith(low)
            for imp in _imports(p) if imp.startswith(high)]
    assert not hits, hits


def test_detectors_do_not_build_family_evidence():
    # the runner computes the clip's family evidence once and hands it in
    builders = ("family_evidence_for", "clip_evidence", "compute_evidence", "run_network", "taggram")
    hits = [f"{p.name}: {name}" for p in (PKG / "detectors").glob("*.py")
            for name in builders if name in p.read_text(encoding="utf-8")]
    assert not hits, hits

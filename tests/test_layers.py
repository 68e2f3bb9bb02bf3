"""The package's layers import only downward (every module ranked), and no modules import each other."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "timingbench"

#: Rank of every module of the package, by the longest matching name; a module may import
#: only modules of a lower or equal rank. Every module must have one (see the test below).
LAYERS = {
    # leaves
    "timingbench.verdicts": 0, "timingbench.errors": 0, "timingbench.version": 0,
    "timingbench.choices": 0, "timingbench.packaged": 0, "timingbench.convert": 0, "timingbench.text": 0,
    # typed constants and plain helpers
    "timingbench.params": 1, "timingbench.jsonio": 1, "timingbench.curves": 1, "timingbench.result_types": 1,
    "timingbench.runlock": 1, "timingbench.executors": 1, "timingbench.intervals": 1, "timingbench.memo": 1,
    "timingbench.config": 2, "timingbench.families": 2,  # the configuration and its family registry
    "timingbench.judged": 3,
    "timingbench.audio": 3,
    "timingbench.prompts": 4, "timingbench.annotation_io": 4, "timingbench.promptset": 4,
    "timingbench.identity.evidence": 4, "timingbench.identity.presence_curves": 4, "timingbench.identity.window": 1,
    # identity rules and the family evidence network at run time
    "timingbench.identity": 5, "timingbench.identity.providers": 6, "timingbench.identity.tagger": 6,
    "timingbench.identity.singing": 6, "timingbench.identity.stem_evidence": 6, "timingbench.models": 5,
    "timingbench.identity.decide": 7,
    "timingbench.gates": 6, "timingbench.features": 6,
    "timingbench.detectors": 7, "timingbench.render": 7, "timingbench.summary": 7,
    # time-varying controls: the schema and plain metrics low, the measurements on the bank above it
    "timingbench.controls.schema": 1, "timingbench.controls.dynamics": 1, "timingbench.controls.melody": 1,
    "timingbench.controls.chance": 1, "timingbench.controls.salience": 1,
    "timingbench.controls.report": 2,
    "timingbench.controls.beats": 3, "timingbench.controls.chords": 3,
    "timingbench.controls.frames": 6, "timingbench.controls.drums": 7,
    "timingbench.controls": 8,
    "timingbench.scoring": 8, "timingbench.model_registry": 8, "timingbench.mgbench_gen": 8,
    "timingbench.suites": 8,
    "timingbench.runner": 9, "timingbench.compare": 9,
    # built on the runner: the API, explanations, calibration and the network's training
    "timingbench.api": 10, "timingbench.explain": 10, "timingbench.calibration": 10,
    "timingbench.identity.training": 10, "timingbench.interchange": 10,
    "timingbench.label": 11, "timingbench.report": 11,
    "timingbench.commands": 12, "timingbench.cli": 12, "timingbench.__main__": 12, "timingbench": 12,
}


def _rank(module: str) -> int | None:
    best = None
    for name, rank in LAYERS.items():
        if (module == name or module.startswith(name + ".")) and (best is None or len(name) > len(best[0])):
            best = (name, rank)
    return None if best is None else best[1]


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


def _modules() -> dict[str, Path]:
    return {_module(p): p for p in PKG.rglob("*.py")}


def test_every_module_has_a_rank():
    assert not [m for m in _modules() if m != "timingbench" and _rank(m) in (None, 12)
                and not m.startswith(("timingbench.commands", "timingbench.cli", "timingbench.__main__"))]


def test_layers_import_only_downward():
    upward = []
    for mod, path in _modules().items():
        own = _rank(mod)
        assert own is not None, mod
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


def test_no_import_cycles():
    # module level, function-level imports included: a cycle ties modules of one rank too
    mods = _modules()
    # ``from pkg import sub`` depends on ``pkg.sub``; the package itself counts only for names it defines
    graph = {m: {i for i in _imports(p) if i in mods and i != m
                 and not any(j.startswith(i + ".") for j in _imports(p) if j in mods)} for m, p in mods.items()}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(m: str, stack: list[str]) -> None:
        state[m] = 1
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                cycles.append(stack[stack.index(n):] + [n])
            elif n not in state:
                visit(n, [*stack, n])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert not cycles, cycles


def test_detectors_do_not_build_family_evidence():
    # the runner computes the clip's family evidence once and hands it in
    builders = ("family_evidence_for", "clip_evidence", "compute_evidence", "run_network", "taggram")
    hits = [f"{p.name}: {name}" for p in (PKG / "detectors").glob("*.py")
            for name in builders if name in p.read_text(encoding="utf-8")]
    assert not hits, hits

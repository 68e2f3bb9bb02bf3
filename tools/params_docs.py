"""Generate the ``Attributes`` sections of the parameter-set docstrings from the YAML.

Each field of a registered parameter set (a class of ``timingbench/params/*.py`` with a
``SECTION``) is the constant of the same name in that section of
``configs/timingbench-v1.yaml``; its docstring entry is ``name : annotation`` followed by the
constant's ``why`` and its provenance in parentheses. Fields that hold a nested parameter
set keep their hand-written line. ``tests/test_params_docs.py`` fails when a docstring has
drifted from the YAML; this script rewrites them.

Usage::

    .venv/bin/python tools/params_docs.py          # list the drifted fields
    .venv/bin/python tools/params_docs.py --write  # rewrite the docstrings
"""

from __future__ import annotations

import argparse
import ast
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARAMS_DIR = ROOT / "timingbench" / "params"
#: Width of a generated docstring line (the project's line length).
WIDTH = 100
FIELD_INDENT = " " * 4
TEXT_INDENT = " " * 8


@dataclass(frozen=True)
class Drift:
    """One field whose docstring entry differs from what the YAML gives."""

    path: Path
    cls: str
    field: str
    have: str
    want: str


def _constants() -> dict[str, tuple[str, str]]:
    """``section.name`` -> (why, provenance) of the packaged configuration."""
    sys.path.insert(0, str(ROOT))
    from timingbench.config import load_config

    cfg = load_config(ROOT / "configs" / "timingbench-v1.yaml")
    return {k: (c.why, c.provenance) for k, c in cfg.constants.items()}


def _entry(name: str, annotation: str, text: str) -> str:
    body = textwrap.fill(text, width=WIDTH, initial_indent=TEXT_INDENT, subsequent_indent=TEXT_INDENT,
                         break_long_words=False, break_on_hyphens=False)
    return f"{FIELD_INDENT}{name} : {annotation}\n{body}\n"


def _existing(doc: str) -> dict[str, str]:
    """Field name -> its description (joined to one line) in a docstring's Attributes section."""
    out: dict[str, str] = {}
    if "Attributes\n" not in doc:
        return out
    block = doc.split("Attributes\n", 1)[1].split("\n", 1)[1]  # past the dashes
    name = None
    for line in block.splitlines():
        if line.startswith(FIELD_INDENT) and not line.startswith(TEXT_INDENT) and " : " in line:
            name = line.strip().split(" : ", 1)[0]
            out[name] = ""
        elif name is not None and line.strip():
            out[name] = (out[name] + " " + line.strip()).strip()
    return out


def _classes(path: Path) -> list[tuple[ast.ClassDef, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for stmt in node.body:
            if (isinstance(stmt, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == "SECTION" for t in stmt.targets)
                    and isinstance(stmt.value, ast.Constant)):
                out.append((node, str(stmt.value.value)))
    return out


def _fields(cls: ast.ClassDef) -> list[tuple[str, str]]:
    return [(s.target.id, ast.unparse(s.annotation)) for s in cls.body
            if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
            and not ast.unparse(s.annotation).startswith("ClassVar")]


def _is_params(annotation: str) -> bool:
    return annotation.endswith("Params") and " " not in annotation


def generate(path: Path, constants: dict[str, tuple[str, str]]) -> tuple[str, list[Drift]]:
    """The module's text with every Attributes section generated, and the fields that drifted."""
    text = path.read_text(encoding="utf-8")
    drifts: list[Drift] = []
    for cls, section in _classes(path):
        doc = ast.get_docstring(cls, clean=False) or ""
        have = _existing(doc)
        entries = []
        for name, annotation in _fields(cls):
            if _is_params(annotation) or f"{section}.{name}" not in constants:
                entries.append(_entry(name, annotation, have.get(name, "")))
                continue
            why, provenance = constants[f"{section}.{name}"]
            want = f"{why} ({provenance})"
            if " ".join(have.get(name, "").split()) != " ".join(want.split()):
                drifts.append(Drift(path, cls.name, name, have.get(name, ""), want))
            entries.append(_entry(name, annotation, want))
        if "Attributes\n" not in doc:
            continue
        head, rest = doc.split("Attributes\n", 1)
        new_doc = head + "Attributes\n" + rest.split("\n", 1)[0] + "\n" + "".join(entries) + FIELD_INDENT
        text = text.replace(doc, new_doc, 1)
    return text, drifts


def check() -> list[Drift]:
    """Every drifted field of every parameter module."""
    constants = _constants()
    return [d for p in sorted(PARAMS_DIR.glob("*.py")) for d in generate(p, constants)[1]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="rewrite the docstrings")
    args = ap.parse_args(argv)
    constants = _constants()
    total = 0
    for p in sorted(PARAMS_DIR.glob("*.py")):
        text, drifts = generate(p, constants)
        total += len(drifts)
        for d in drifts:
            print(f"{p.relative_to(ROOT)}: {d.cls}.{d.field}\n  doc:  {d.have}\n  yaml: {d.want}")
        if args.write and text != p.read_text(encoding="utf-8"):
            p.write_text(text, encoding="utf-8")
    print(f"{total} drifted field(s)" + (" rewritten" if args.write and total else ""))
    return 1 if total and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())

"""Write the family tables and lists of the README and docs from the family registry.

Every place in ``README.md`` and ``docs/*.md`` that lists the instrument families holds a
generated fragment between ``<!-- families:KIND -->`` and ``<!-- /families -->``; this script
rewrites the fragments from the ``families`` section of ``configs/timingbench-v1.yaml`` (read
through :mod:`timingbench.families`). ``tests/test_families.py`` fails when a fragment differs
from the registry. Kinds:

- ``table``: the registry as a table (one row per family: identity, stem and detector, General
  MIDI programs, AudioSet classes, floor);
- ``judged`` / ``exempt``: the judged / exempt families, comma-separated;
- ``exempt_reasons``: the exempt families grouped by reason (``a, b (`reason`)``);
- ``detector:NAME``: the families the detector NAME (``percussion``, ``stem``, ``tonal``) scores;
- ``catalogue``: each family with the reference renderer's instruments of it.

Usage::

    .venv/bin/python tools/families_docs.py          # list the drifted fragments
    .venv/bin/python tools/families_docs.py --write  # rewrite them
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from timingbench.params.families import FamiliesParams

ROOT = Path(__file__).resolve().parent.parent
#: The files whose fragments are generated.
FILES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
#: A fragment: the opening marker with its kind, the generated text, the closing marker.
FRAGMENT = re.compile(r"(<!-- families:(?P<kind>[a-z_:]+) -->)(?P<body>.*?)(<!-- /families -->)", re.S)


@dataclass(frozen=True)
class Drift:
    """One fragment whose text differs from what the registry gives."""

    path: Path
    kind: str
    have: str
    want: str


def _registry() -> FamiliesParams:
    sys.path.insert(0, str(ROOT))  # the checkout's package, when run as a script
    from timingbench.families import registry

    return registry()


def _detectors() -> dict[str, str]:
    """Family -> the detector that scores its entrances and exits."""
    from timingbench.scoring import detector_for

    return {f: detector_for("instrument_entry", f) for f in _registry().names}


def _programs(programs: tuple[int, ...]) -> str:
    """``0-3, 8, 10-12``: runs of consecutive programs joined, in the registry's order."""
    runs: list[list[int]] = []
    for p in programs:
        if runs and runs[-1][-1] == p - 1:
            runs[-1].append(p)
        else:
            runs.append([p])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)


def table() -> str:
    """The registry as a markdown table."""
    det = _detectors()
    lines = ["| # | family | identity | stem (detector) | GM programs | AudioSet classes (`;`-separated) | floor |",
             "|---|---|---|---|---|---|---|"]
    for f in _registry().rows:
        ident = "judged" if f.judged else f"exempt (`{f.exempt_reason}`)"
        judged_by = []
        for situation, names in f.judged_by.items():
            quietest = [((f.figures.get(ev) or {}).get("dev") or {}).get("quietest_heard")
                        for ev in (["+".join(names)] if "+".join(names) in f.figures else names)]
            hears = "; ".join(f"hears {q} dB" for q in quietest if q)
            where = "with demucs stems" if situation == "stems" else "without stems"
            judged_by.append(f"judged by {' + '.join(names)} {where}" + (f" ({hears})" if hears else ""))
        if judged_by:
            ident += " by the family evidence; " + "; ".join(judged_by)
        kits = f"kits {_programs(f.gm_drum_kits)}; " if f.gm_drum_kits else ""
        floor = "not measured" if f.floor_s is None else f"{1000 * f.floor_s:.0f} ms"
        lines.append(f"| {f.index} | {f.name} | {ident} | {f.stem or '—'} ({det[f.name]}) | "
                     f"{kits}{_programs(f.gm_programs) or '—'} | {'; '.join(f.audioset_classes)} | {floor} |")
    mix = _registry().floor_of("mix")
    lines.append(f"| | mix (whole mix) | no identity | — (mix, energy) | — | — | "
                 f"{'not measured' if mix is None else f'{1000 * mix:.0f} ms'} |")
    return "\n" + "\n".join(lines) + "\n"


def exempt_reasons() -> str:
    """The exempt families grouped by reason: ``a, b (`reason`); c (`other`)``."""
    by: dict[str, list[str]] = {}
    for fam, why in _registry().exempt.items():
        by.setdefault(why, []).append(fam)
    return "; ".join(f"{', '.join(fams)} (`{why}`)" for why, fams in by.items()) or "none"


def catalogue() -> str:
    """Each family with the renderer's instruments of it: ``piano (piano, bright piano), ...``."""
    from timingbench.render.instruments import INSTRUMENTS

    parts = []
    for fam in _registry().names:
        names = list(dict.fromkeys(s.target for s in INSTRUMENTS.values() if s.family == fam and s.role != "click"))
        parts.append(f"{fam} ({', '.join(names)})" if names else f"{fam} (no instrument)")
    return ", ".join(parts)


def fragment(kind: str) -> str:
    """The generated text of a fragment of ``kind``.

    Raises
    ------
    KeyError
        If ``kind`` is unknown.
    """
    if kind.startswith("detector:"):
        name = kind.split(":", 1)[1]
        return ", ".join(f for f, d in _detectors().items() if d == name)
    makers: dict[str, Callable[[], str]] = {
        "table": table,
        "judged": lambda: ", ".join(_registry().judged) or "none",
        "exempt": lambda: ", ".join(_registry().exempt),
        "exempt_reasons": exempt_reasons,
        "catalogue": catalogue,
    }
    return makers[kind]()


def generate(path: Path) -> tuple[str, list[Drift]]:
    """The file's text with every fragment generated, and the fragments that drifted."""
    text = path.read_text(encoding="utf-8")
    drifts: list[Drift] = []

    def sub(m: re.Match[str]) -> str:
        want = fragment(m["kind"])
        if m["body"] != want:
            drifts.append(Drift(path, m["kind"], m["body"], want))
        return m.group(1) + want + m.group(4)

    return FRAGMENT.sub(sub, text), drifts


def kinds(path: Path) -> list[str]:
    """The kinds of the fragments in ``path``, in order."""
    return [m["kind"] for m in FRAGMENT.finditer(path.read_text(encoding="utf-8"))]


def check() -> list[Drift]:
    """Every drifted fragment of every file."""
    return [d for p in FILES for d in generate(p)[1]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="rewrite the fragments")
    args = ap.parse_args(argv)
    total = 0
    for p in FILES:
        text, drifts = generate(p)
        total += len(drifts)
        for d in drifts:
            print(f"{p.relative_to(ROOT)}: families:{d.kind}\n  doc:      {d.have!r:.200}\n  registry: {d.want!r:.200}")
        if args.write and drifts:
            p.write_text(text, encoding="utf-8")
    print(f"{total} drifted fragment(s)" + (" rewritten" if args.write and total else ""))
    return 1 if total and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())

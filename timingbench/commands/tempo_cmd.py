"""``timingbench tempo-check``: the tempo estimator's own error on exact-tempo references.

The command parses its arguments and calls :mod:`timingbench.calibration.tempo_check`
(references, check, table) and :mod:`timingbench.render.reference_signals` (synthesis).

Renders references whose tempo is exact by construction (click tracks and drum patterns
over the configured 50-174 BPM grid, plus half-time and double-time renderings), runs
:func:`timingbench.detectors.tempo.estimate_tempo` on each and reports, per reference,
the error of the paper's estimator (``estimate_bpm``) and of the beat-line estimator
reported beside it (``precise_bpm``), and their maxima against their bounds
(``tempo.reference_max_error_pct``, the paper's figure, and
``tempo.reference_max_precise_error_pct``).

References come from the reference renderer (:mod:`timingbench.render`) when it is
installed (``--source render``; the default ``auto`` prefers it) or from numpy synthesis
with sample-accurate beat positions (``--source synth``). Either way the table says which.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np

from timingbench.calibration.tempo_check import (
    KINDS,
    check_references,
    make_reference,
    print_table,
    reference_plan,
    renderer_available,
)
from timingbench.config import load_config
from timingbench.errors import ParameterError
from timingbench.jsonio import write_json


def _plain(doc: str) -> str:
    """A docstring without reStructuredText markup, for ``--help``."""
    doc = re.sub(r":(?:func|mod|class|data):`~?([^`]+)`", r"\1", doc)
    return doc.replace("``", "")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``tempo-check`` subcommand."""
    p = sub.add_parser(
        "tempo-check",
        help="measure the tempo estimator's error on exact-tempo references",
        description=_plain(__doc__ or ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--out", default="tempo-check-out", help="output folder (default: tempo-check-out)")
    p.add_argument("--config", default=None, help="configuration YAML (default: packaged v1)")
    p.add_argument(
        "--source", choices=("auto", "render", "synth"), default="auto",
        help="reference audio: the FluidSynth renderer, numpy synthesis, or auto (renderer if present)",
    )
    p.add_argument(
        "--tempi", default=None,
        help="comma-separated target BPMs for click/drums (default: tempo.reference_tempi_bpm)",
    )
    p.add_argument(
        "--kinds", default=",".join(KINDS),
        help=f"comma-separated reference kinds among {', '.join(KINDS)} (default: all)",
    )
    p.add_argument("--duration-s", type=float, default=30.0, help="reference length in seconds (default 30)")
    p.add_argument("--seed", type=int, default=0, help="renderer seed (default 0)")
    p.add_argument(
        "--soundfont", default=None,
        help="General MIDI .sf2/.sf3 for --source render (default: render.soundfont_path)",
    )
    p.set_defaults(func=run_tempo_check)


def _parse_tempi(text: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ParameterError(f"--tempi must be comma-separated numbers of BPM, got {text!r}") from None
    if not values or any(not (np.isfinite(v) and v > 0) for v in values):
        raise ParameterError(f"--tempi must list positive BPM values, got {text!r}")
    return values


def run_tempo_check(args: argparse.Namespace) -> int:
    """Run the check; exit status 0 when every criterion holds, 1 otherwise."""
    cfg = load_config(args.config)
    kinds = [k.strip() for k in str(args.kinds).split(",") if k.strip()]
    source = args.source
    if source == "auto":
        source = "render" if renderer_available() else "synth"
    elif source == "render" and not renderer_available():
        raise ParameterError("--source render: timingbench.render is not available; use --source synth")
    if args.soundfont and source != "render":
        raise ParameterError("--soundfont applies to rendered references only (--source render)")
    plan = reference_plan(kinds, tempi=_parse_tempi(args.tempi) if args.tempi else None,
                          params=cfg.params.tempo)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    refs = [
        make_reference(kind, target_bpm=bpm, duration_s=float(args.duration_s), seed=int(args.seed),
                       source=source, out_dir=out, config=cfg,
                       soundfont=Path(args.soundfont) if args.soundfont else None)
        for kind, bpm in plan
    ]
    rows, summary = check_references(refs, config=cfg)
    summary.update({"source": source, "duration_s": float(args.duration_s),
                    "config_version": cfg.version, "config_hash": cfg.content_hash})
    write_json(out / "tempo-check.json", {"summary": summary, "references": rows})
    print_table(rows, summary, config=cfg)
    print(f"wrote {out / 'tempo-check.json'}")
    return 0 if summary["passed"] else 1

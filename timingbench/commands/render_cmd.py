"""``timingbench render``: reference audio with exact truth (FluidSynth).

::

    timingbench render --recipe NAME|all --n N --seed S --out DIR [--duration S] [--gain-db DB]
                       [--param KEY=VALUE ...] [--gain-variants]
    timingbench render --corpus dev|validation|demo|tempo --out DIR [--jobs N] [--stems]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, cast

from timingbench.config import load_config
from timingbench.errors import ParameterError
from timingbench.params.generation import RenderParams
from timingbench.render.corpus import CORPORA, ClipSpec, ProgressBar, render_specs
from timingbench.render.scenarios import RECIPES


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``render`` subcommand."""
    p = sub.add_parser(
        "render",
        help="render reference clips with exact truth (FluidSynth)",
        description="Render seeded MIDI arrangements with FluidSynth and write clips, MIDI, "
                    "prompts.jsonl (SPEC 1), truth.jsonl (SPEC 5) and manifest.jsonl.",
    )
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--recipe", help=f"recipe name or 'all' ({', '.join(RECIPES)})")
    what.add_argument("--corpus", choices=sorted(CORPORA), help="a fixed corpus definition")
    p.add_argument("--n", type=int, default=1, help="clips per recipe (with --recipe; default 1)")
    p.add_argument("--seed", type=int, default=0, help="first seed (with --recipe; default 0)")
    p.add_argument("--out", required=True, type=Path, help="output folder")
    p.add_argument("--duration", type=float, default=30.0, help="clip length in seconds (default 30)")
    p.add_argument("--gain-db", type=float, default=0.0, help="gain variant in dB, e.g. -12 or -20")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="recipe parameter (repeatable), value parsed as JSON when it can be: "
                        "--param family=strings --param time_s=6 --param offset_s=-1.5")
    p.add_argument("--gain-variants", action="store_true",
                   help="render every clip at each gain of render.gain_variants_db (0, -12, -20 dB)")
    p.add_argument("--split", choices=("dev", "validation"), default="dev",
                   help="split written into the truth rows (with --recipe)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="worker processes (default: all cores)")
    p.add_argument("--stems", action="store_true", help="also write one WAV per instrument part")
    p.add_argument("--soundfont", type=Path, default=None, help="General MIDI .sf2/.sf3 to use")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run_render)


def _parse_params(items: list[str]) -> dict[str, Any]:
    """``["family=strings", "time_s=6"]`` -> ``{"family": "strings", "time_s": 6}``.

    Raises
    ------
    ParameterError
        If an item has no ``=``.
    """
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ParameterError(f"--param {item!r}: write KEY=VALUE, e.g. --param family=strings")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


def run_render(args: argparse.Namespace) -> int:
    """Render what ``args`` asks for; prints the rendering rate (clips/s)."""
    if args.corpus is not None:
        corpus = CORPORA[args.corpus]
        specs = list(corpus.specs)
        split = corpus.split
        label = f"render {args.corpus}"
    else:
        names = list(RECIPES) if args.recipe == "all" else [args.recipe]
        for nm in names:
            if nm not in RECIPES:
                raise ParameterError(f"--recipe {nm!r} is not a recipe; choose one of "
                                     f"{', '.join(RECIPES)} or 'all'")
        if args.n < 1:
            raise ParameterError(f"--n must be a positive number of clips, got {args.n}")
        params = _parse_params(args.param)
        gains = ([float(g) for g in cast(RenderParams, load_config().params.render).gain_variants_db]
                 if args.gain_variants else [args.gain_db])
        specs = [ClipSpec(nm, args.seed + k, params=params, duration_s=args.duration, gain_db=g)
                 for nm in names for k in range(args.n) for g in gains]
        split = args.split
        label = f"render {args.recipe}"
    bar = ProgressBar(len(specs), label, enabled=not args.no_progress)
    with bar as advance:
        clips = render_specs(specs, out_dir=args.out, split=split, jobs=args.jobs, stems=args.stems,
                             soundfont=args.soundfont, on_done=advance)
    elapsed = bar.elapsed_s
    n_rows = sum(len(c.truth) for c in clips)
    print(f"{len(clips)} clips, {n_rows} truth rows in {elapsed:.1f} s "
          f"({len(clips) / max(elapsed, 1e-9):.2f} clips/s, jobs={args.jobs}) -> {args.out}",
          file=sys.stdout)
    return 0

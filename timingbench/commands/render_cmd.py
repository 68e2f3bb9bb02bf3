"""``timingbench render``: reference audio with exact truth (FluidSynth, or real recordings).

::

    timingbench render --recipe NAME|all --n N --seed S --out DIR [--duration S] [--gain-db DB]
                       [--param KEY=VALUE ...] [--gain-variants]
    timingbench render --corpus dev|validation|demo|tempo --out DIR [--jobs N] [--stems] [--controls]
    timingbench render --corpus real --sources DIR --out DIR [--jobs N] [--stems]
    timingbench render --corpus parts --sources DIR --out DIR [--split dev|validation] [--jobs N] [--stems]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, cast

from timingbench.commands.executor_options import add_jobs_option, resolve_jobs
from timingbench.config import load_config
from timingbench.errors import ParameterError
from timingbench.render.corpus import CORPORA, ClipSpec, ProgressBar, render_specs
from timingbench.render.pipeline import RenderedClip
from timingbench.render.real_corpus import REAL_CORPUS, RealClip, render_real_corpus
from timingbench.render.scenarios import RECIPES


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``render`` subcommand."""
    p = sub.add_parser(
        "render",
        help="render reference clips with exact truth (FluidSynth, or real recordings)",
        description="Render seeded MIDI arrangements with FluidSynth, or lay real recordings over "
                    "real recordings at exact sample offsets (--corpus real), and write clips, "
                    "prompts.jsonl (docs/formats.md §1), truth.jsonl (docs/formats.md §5) and manifest.jsonl.",
    )
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--recipe", help=f"recipe name or 'all' ({', '.join(RECIPES)})")
    what.add_argument("--corpus", choices=sorted([*CORPORA, "real", "parts"]),
                      help="a fixed corpus definition; 'real' mixes the recordings of --sources, 'parts' lays "
                           "bass, percussion and vocals parts (real recordings, sampled basses, real kits) "
                           "over them")
    p.add_argument("--sources", type=Path, default=None, metavar="DIR",
                   help="with --corpus real or parts (required there): the shared/realdata folder holding "
                        "librosa-data/, vocadito/ and beatnet/")
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
    p.add_argument("--split", choices=("dev", "validation"), default=None,
                   help="split written into the truth rows (with --recipe; default dev); with --corpus parts, "
                        "the one split to render (default both)")
    add_jobs_option(p)
    p.add_argument("--stems", action="store_true", help="also write one WAV per instrument part")
    p.add_argument("--controls", action="store_true",
                   help="write each clip's exact time-varying controls (beats, downbeats, level curve, "
                        "melody, chords, drums) into its prompt row")
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
    resolve_jobs(args, load_config())
    if args.corpus == "real":
        return _run_real(args)
    if args.corpus == "parts":
        return _run_parts(args)
    if args.sources is not None:
        raise ParameterError("--sources is read only with --corpus real or parts")
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
        gains = ([float(g) for g in load_config().params.render.gain_variants_db]
                 if args.gain_variants else [args.gain_db])
        specs = [ClipSpec(nm, args.seed + k, params=params, duration_s=args.duration, gain_db=g)
                 for nm in names for k in range(args.n) for g in gains]
        split = args.split or "dev"
        label = f"render {args.recipe}"
    bar = ProgressBar(len(specs), label, enabled=not args.no_progress)
    with bar as advance:
        clips = render_specs(specs, out_dir=args.out, split=split, jobs=args.jobs, stems=args.stems,
                             soundfont=args.soundfont, on_done=advance, controls=args.controls)
    _print_rate(len(clips), sum(len(c.truth) for c in clips), bar.elapsed_s, args)
    return 0


def _run_real(args: argparse.Namespace) -> int:
    """``--corpus real``: mix the recordings of ``--sources``; prints the rendering rate."""
    if args.sources is None:
        raise ParameterError("--corpus real needs --sources DIR: the shared/realdata folder holding "
                             "librosa-data/, vocadito/ and beatnet/")
    bar = ProgressBar(len(REAL_CORPUS), "render real", enabled=not args.no_progress)
    with bar as advance:
        def counted(clip: RealClip) -> None:
            advance(cast(RenderedClip, clip))  # the bar only counts finished clips

        clips = render_real_corpus(out_dir=args.out, sources_dir=args.sources, specs=REAL_CORPUS,
                                   jobs=args.jobs, stems=args.stems, on_done=counted)
    _print_rate(len(clips), sum(len(c.truth) for c in clips), bar.elapsed_s, args)
    return 0


def _run_parts(args: argparse.Namespace) -> int:
    """``--corpus parts``: lay the parts over the recordings of ``--sources``; prints the rendering rate."""
    from timingbench.render.parts_corpus import render_parts_corpus
    from timingbench.render.parts_corpus_table import PARTS_CORPUS, SPLITS

    if args.sources is None:
        raise ParameterError("--corpus parts needs --sources DIR: the shared/realdata folder holding "
                             "librosa-data/, vocadito/, beatnet/ and sms-tools/")
    splits = (args.split,) if args.split else SPLITS
    bar = ProgressBar(sum(len(PARTS_CORPUS[s]) for s in splits), "render parts", enabled=not args.no_progress)
    with bar as advance:
        def counted(clip: dict[str, Any]) -> None:
            advance(cast(RenderedClip, clip))  # the bar only counts finished clips

        clips = render_parts_corpus(out_dir=args.out, sources_dir=args.sources, splits=splits, jobs=args.jobs,
                                    stems=args.stems, on_done=counted)
    _print_rate(len(clips), sum(len(c["truth"]) for c in clips), bar.elapsed_s, args)
    return 0


def _print_rate(n_clips: int, n_rows: int, elapsed_s: float, args: argparse.Namespace) -> None:
    """The last line of every render: clips, truth rows, seconds and clips/s."""
    print(f"{n_clips} clips, {n_rows} truth rows in {elapsed_s:.1f} s "
          f"({n_clips / max(elapsed_s, 1e-9):.2f} clips/s, jobs={args.jobs}) -> {args.out}",
          file=sys.stdout)

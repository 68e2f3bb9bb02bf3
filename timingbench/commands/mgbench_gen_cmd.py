"""``timingbench mgbench generate | stats | baseline``: build MGBench splits and answer them."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from timingbench.commands.executor_options import add_jobs_option, resolve_jobs
from timingbench.config import load_config
from timingbench.errors import ParameterError
from timingbench.jsonio import iter_jsonl, write_jsonl
from timingbench.mgbench_gen.baseline import run_baseline
from timingbench.mgbench_gen.dataset import SPLITS, generate_split, make_request
from timingbench.mgbench_gen.stats import composition, format_composition


def register_actions(acts: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``generate``, ``stats`` and ``baseline`` actions to ``timingbench mgbench``."""
    g = acts.add_parser(
        "generate", help="generate an MGBench-3N or -2B split (FluidSynth piano, exact note truth)",
        description="Write audio, MIDI, note annotations, structural labels and questions in the format "
                    "`mgbench score --gt` reads. The same seed and soundfont give byte-identical files.")
    g.add_argument("--subset", required=True, choices=("3n", "2b"), type=str.lower)
    g.add_argument("--split", required=True, choices=SPLITS)
    g.add_argument("--out", required=True, help="output folder")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--soundfont", default=None, help="General MIDI .sf2/.sf3 (default: render.soundfont_path)")
    g.add_argument("--clips", type=int, default=None,
                   help="number of clips (default: the paper's split size, mgbench_gen.split_sizes_*)")
    add_jobs_option(g, what="rendering processes")
    g.add_argument("--no-audio", action="store_true",
                   help="write MIDI, annotations and questions only (no rendering)")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    g.add_argument("--config", default=None)
    g.set_defaults(func=run_generate)

    s = acts.add_parser("stats", help="print the composition table (MGBench paper Table 1) of generated splits")
    s.add_argument("dir", help="a generated split folder, or a folder holding several")
    s.set_defaults(func=run_stats)

    b = acts.add_parser(
        "baseline", help="answer the grounding questions of a generated split by transcription (no LLM)",
        description="Onsets from the onset curve, offsets from the level, pitch from pyin; rule-based answers. "
                    "Writes response rows for `mgbench score --pred`.")
    b.add_argument("dir", help="a generated split folder (mgbench.jsonl + audio/)")
    b.add_argument("--out", required=True, help="answers JSONL")
    b.add_argument("--no-progress", action="store_true")
    b.add_argument("--config", default=None)
    b.set_defaults(func=run_baseline_cmd)


def run_generate(args: argparse.Namespace) -> int:
    """Generate one split and print its composition; returns 0."""
    from timingbench.render.corpus import ProgressBar

    cfg = load_config(args.config)
    resolve_jobs(args, cfg)
    req = make_request(args.subset, args.split, seed=args.seed, n_clips=args.clips, soundfont=args.soundfont,
                       params=cfg.params.mgbench_gen,
                       render=cfg.params.render)
    label = f"render MGBench-{req.subset} {req.split}"
    with ProgressBar(req.n_clips, label, enabled=not (args.no_progress or args.no_audio)) as advance:
        def on_done(k: int) -> None:
            for _ in range(k):
                advance(None)  # type: ignore[arg-type]

        man = generate_split(req, args.out, cfg, jobs=args.jobs, audio=not args.no_audio, on_done=on_done)
    if args.no_audio:
        print(f"{man['n_clips']} clips ({man['audio_s']:.0f} s of music): MIDI and questions only, no audio")
    else:
        print(f"{man['n_clips']} clips ({man['audio_s']:.0f} s of audio) rendered in {man['render_s']:.1f} s "
              f"({man['render_s'] / man['n_clips']:.3f} s/clip, soundfont {man['soundfont']}, jobs {args.jobs})")
    if man["dropped_draws"]:
        print("dropped draws: " + ", ".join(f"{k} {v}" for k, v in man["dropped_draws"].items()))
    print(format_composition(composition(args.out)))
    return 0


def run_stats(args: argparse.Namespace) -> int:
    """Print the composition of the splits under ``args.dir``; returns 0."""
    print(format_composition(composition(args.dir)))
    return 0


def run_baseline_cmd(args: argparse.Namespace) -> int:
    """Transcribe every clip of a split and write answers; returns 0."""
    from timingbench.render.corpus import ProgressBar

    cfg = load_config(args.config)
    base = Path(args.dir)
    gt = base / "mgbench.jsonl"
    if not gt.is_file():
        raise ParameterError(f"{base}: no mgbench.jsonl; give a folder written by `timingbench mgbench generate`")
    rows: list[dict[str, Any]] = []
    for line, row in iter_jsonl(gt):
        if not isinstance(row, dict) or "audio_path" not in row or "question" not in row:
            print(f"error: {gt}:{line}: row needs 'audio_path' and 'question'; skipped", file=sys.stderr)
            continue
        rows.append(row)
    n_clips = len({r["audio_path"] for r in rows})
    with ProgressBar(n_clips, "transcribe", enabled=not args.no_progress) as advance:
        answers, counts = run_baseline(rows, base, cfg, on_clip=lambda: advance(None))  # type: ignore[arg-type]
    write_jsonl(args.out, answers)
    print(f"answered {counts['answered']} grounding questions; {counts['unsupported']} unsupported "
          f"(no answer written); {counts['understanding']} understanding questions skipped -> {args.out}")
    return 0

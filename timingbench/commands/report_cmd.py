"""``timingbench report RESULTS [--compare RESULTS2 ...] --out DIR``: a static HTML report of a run."""

from __future__ import annotations

import argparse
import sys

from timingbench.commands.executor_options import add_jobs_option, resolve_jobs
from timingbench.commands.results_options import add_comparison_options, add_rederive_options, add_results_argument


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``report`` subcommand."""
    p = sub.add_parser(
        "report", help="write a self-contained HTML report of a scored run (overview, families, clips)",
        description=("Write a static HTML report of a results folder: headline rates with bootstrap "
                     "intervals, per-family and per-kind outcome shares and signed errors against the "
                     "measurement floors, a sortable and filterable clip table, and one page per clip "
                     "(log-mel with the instructed times, tolerances, search windows and detections, an "
                     "audio player, the gate tables and explain plots). With --compare, the systems side "
                     "by side with the floor-aware differences of `timingbench compare`. The report makes "
                     "no network requests: open OUT/index.html from disk or serve the folder."))
    add_results_argument(p)
    p.add_argument("--compare", nargs="+", default=[], metavar="RESULTS2",
                   help="other systems' results folders (same prompt set), shown side by side")
    p.add_argument("--names", default=None,
                   help="comma-separated display names, RESULTS first (default: folder names)")
    p.add_argument("--out", required=True, help="report folder (index.html, clips/, img/, audio/)")
    p.add_argument("--audio", choices=["none", "copy", "mp3"], default="mp3",
                   help="put the clips' audio in the report: mp3 (default, ffmpeg), copy, or none "
                        "(pages without audio and log-mel)")
    p.add_argument("--allow-missing-audio", action="store_true",
                   help="write the pages of clips whose audio is gone without audio and log-mel "
                        "(default: missing audio is an error)")
    p.add_argument("--no-clip-pages", action="store_true",
                   help="write index.html alone (overview, families, table): seconds for any run size")
    add_jobs_option(p, what="worker processes for the clip pages")
    add_comparison_options(p, mixed_shown="on the page")
    add_rederive_options(p)
    p.set_defaults(func=run_report)


def run_report(args: argparse.Namespace) -> int:
    """Run ``timingbench report``."""
    from timingbench.commands.score_cmd import progress_bar
    from timingbench.config import load_config
    from timingbench.report import build_report

    cfg = load_config(args.config)
    resolve_jobs(args, cfg)
    names = None if args.names is None else args.names.split(",")
    with progress_bar() as bar:
        task = bar.add_task("report", total=None, clip="")

        def tick(done: int, total: int, clip: str) -> None:
            bar.update(task, completed=done, total=total, clip=clip, description="clip pages")

        res = build_report(args.results, args.out, config=cfg, compare=args.compare,
                           names=names, audio=args.audio, jobs=args.jobs, allow_mixed=args.allow_mixed,
                           resolve={"clips_dir": args.clips, "prompts_path": args.prompts},
                           overrides={"cache_dir": args.cache}, progress=tick,
                           clip_pages=not args.no_clip_pages, allow_missing_audio=args.allow_missing_audio)
    for clip, why in res.not_derived:
        print(f"timingbench: warning: {clip}: page without spectrogram and gate tables: {why}", file=sys.stderr)
    print(f"wrote {res.index}" + (f" and {res.pages} clip pages" if res.pages else ""))
    return 0

"""``timingbench export``: results in other tools' formats (see :mod:`timingbench.interchange`)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``export`` subcommand and its formats."""
    p = sub.add_parser("export", help="write scoring results in other tools' formats",
                       description="Write the results of `timingbench score` in other tools' formats.")
    fmt = p.add_subparsers(dest="format", metavar="FORMAT", required=True)
    j = fmt.add_parser("jams", help="one JAMS file per clip (instructed events and detections)",
                       description="One JAMS file per scored clip: the instructed events and the "
                                   "detections as `onset` annotations (tempo as `tempo`), the config "
                                   "version and hash in the sandbox (docs/api.md).")
    j.add_argument("results", help="results folder written by `timingbench score`")
    j.add_argument("--out", required=True, help="output folder for the .jams files")
    j.set_defaults(func=run_jams)


def run_jams(args: argparse.Namespace) -> int:
    """Run ``timingbench export jams``."""
    from timingbench.interchange import export_jams, read_results

    res = read_results(args.results)
    written = export_jams(res, args.out)
    skipped = [c.clip for c in res.clips if not c.ok]
    print(f"wrote {len(written)} JAMS file(s) to {args.out}")
    if skipped:
        print(f"skipped {len(skipped)} clip(s) that could not be scored: {', '.join(skipped)}")
    return 0

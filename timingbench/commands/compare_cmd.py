"""``timingbench compare RESULTS_A RESULTS_B [...] --names A,B --out DIR``."""

from __future__ import annotations

import argparse
from pathlib import Path

from timingbench.commands.results_options import add_comparison_options
from timingbench.compare import (
    compare_systems,
    format_text,
    load_results,
    write_plots,
    write_report,
)
from timingbench.config import load_config
from timingbench.errors import ParameterError


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``compare`` subcommand."""
    p = sub.add_parser(
        "compare",
        help="compare scored systems with bootstrap intervals and floor-aware differences",
        description="Compare two or more results folders written by `timingbench score`: rates "
        "per system, kind and family with bootstrap intervals over prompts, pairwise "
        "differences (not resolved when the interval includes 0 or a timing difference is "
        "below the family's measurement floor), tables (stdout, JSON, CSV) and PNG plots.",
    )
    p.add_argument("results", nargs="+", help="results folders, one per system")
    p.add_argument("--names", default=None,
                   help="comma-separated system names, one per folder (default: folder names)")
    p.add_argument("--out", required=True, help="output folder for tables and plots")
    add_comparison_options(p, mixed_shown="on every table")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.set_defaults(func=run_compare)


def run_compare(args: argparse.Namespace) -> int:
    """Run the comparison; returns 0."""
    folders = [Path(r) for r in args.results]
    if len(folders) < 2:
        raise ParameterError("compare needs at least two results folders")
    if args.names is None:
        names = [f.resolve().name for f in folders]
    else:
        names = [n.strip() for n in args.names.split(",")]
        if len(names) != len(folders) or not all(names):
            raise ParameterError(f"--names gives {len(names)} names for {len(folders)} results folders")
    systems = [load_results(f, name=n) for f, n in zip(folders, names, strict=True)]
    comp = compare_systems(systems, config=load_config(args.config), allow_mixed=args.allow_mixed)
    print(format_text(comp), end="")
    written = write_report(comp, args.out)
    if not args.no_plots:
        written += write_plots(comp, args.out)
    print(f"\nwrote {', '.join(p.name for p in written)} to {args.out}")
    return 0

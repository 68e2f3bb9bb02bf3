"""``timingbench tag score``: score TAG-Bench answers (SPEC section 7)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from timingbench.commands.scorer_command import add_scorer_command, write_scored
from timingbench.config import load_config
from timingbench.suites.tag import evaluate, format_table


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``tag`` command with its ``score`` subcommand."""
    s, _ = add_scorer_command(
        sub, "tag", help="TAG-Bench temporal audio grounding: score model answers",
        description="TAG-Bench (temporal audio grounding) commands.",
        score_help="score responses against TAG-Bench ground truth",
        score_description=(
            "Parse free-form answers (or read the constrained-JSON 'intervals' field), "
            "score union-IoU, R@t, gIoU, midpoint MAE with coverage, failure rate and "
            "count diagnostics; write queries.jsonl and summary.json to --out and print "
            "a table."
        ),
        gt_help="ground-truth JSONL",
        pred_help="responses JSONL",
        out_help="results folder",
    )
    s.add_argument(
        "--jobs", type=int, default=1,
        help="worker processes for parsing free-form answers (results do not depend on it)",
    )
    s.set_defaults(func=run_score)


def run_score(args: argparse.Namespace) -> int:
    """Score ``args.pred`` against ``args.gt``; exit 1 when any row had an error."""
    config = load_config(args.config)
    if args.jobs < 1:
        print(f"error: --jobs must be >= 1, got {args.jobs}", file=sys.stderr)
        return 2
    report = evaluate(args.gt, args.pred, params=config.params.tag, jobs=args.jobs,
                      provenance={"config_version": config.version, "config_hash": config.content_hash})
    out: Path = args.out
    write_scored(out, "queries.jsonl", report.rows, report.summary, report.summary["errors"])
    print(format_table(report.summary))
    print(f"wrote {out / 'queries.jsonl'} and {out / 'summary.json'}")
    return 1 if report.summary["errors"] else 0

"""``timingbench tag score``: score TAG-Bench answers (docs/formats.md §7)."""

from __future__ import annotations

import argparse
from pathlib import Path

from timingbench.commands.executor_options import add_jobs_option, resolve_jobs
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
    add_jobs_option(s, what="worker processes for parsing free-form answers")
    s.set_defaults(func=run_score)


def run_score(args: argparse.Namespace) -> int:
    """Score ``args.pred`` against ``args.gt``; exit 1 when any row had an error."""
    config = load_config(args.config)
    resolve_jobs(args, config)
    report = evaluate(args.gt, args.pred, params=config.params.tag, jobs=args.jobs,
                      provenance={"config_version": config.version, "config_hash": config.content_hash})
    out: Path = args.out
    write_scored(out, "queries.jsonl", report.rows, report.summary, report.summary["errors"])
    print(format_table(report.summary))
    print(f"wrote {out / 'queries.jsonl'} and {out / 'summary.json'}")
    return 1 if report.summary["errors"] else 0

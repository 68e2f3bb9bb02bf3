"""``timingbench tag score``: score TAG-Bench answers (docs/formats.md §7)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from timingbench.commands.executor_options import add_jobs_option, resolve_jobs
from timingbench.config import load_config
from timingbench.jsonio import write_json, write_jsonl
from timingbench.suites.tag import evaluate, format_table


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``tag`` command with its ``score`` subcommand."""
    p = sub.add_parser(
        "tag",
        help="TAG-Bench temporal audio grounding: score model answers",
        description="TAG-Bench (temporal audio grounding) commands.",
    )
    tag_sub = p.add_subparsers(dest="tag_command", metavar="SUBCOMMAND")
    s = tag_sub.add_parser(
        "score",
        help="score responses against TAG-Bench ground truth",
        description=(
            "Parse free-form answers (or read the constrained-JSON 'intervals' field), "
            "score union-IoU, R@t, gIoU, midpoint MAE with coverage, failure rate and "
            "count diagnostics; write queries.jsonl and summary.json to --out and print "
            "a table."
        ),
    )
    s.add_argument("--gt", required=True, type=Path, help="ground-truth JSONL")
    s.add_argument("--pred", required=True, type=Path, help="responses JSONL")
    s.add_argument("--out", required=True, type=Path, help="results folder")
    s.add_argument("--config", type=Path, default=None, help="configuration YAML")
    add_jobs_option(s, what="worker processes for parsing free-form answers")
    s.set_defaults(func=run_score)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def run_score(args: argparse.Namespace) -> int:
    """Score ``args.pred`` against ``args.gt``; exit 1 when any row had an error."""
    config = load_config(args.config)
    resolve_jobs(args, config)
    report = evaluate(args.gt, args.pred, params=config.params.tag, jobs=args.jobs,
                      provenance={"config_version": config.version, "config_hash": config.content_hash})
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / "queries.jsonl", report.rows)
    write_json(out / "summary.json", report.summary)
    for err in report.summary["errors"]:
        print(f"error: {err}", file=sys.stderr)
    print(format_table(report.summary))
    print(f"wrote {out / 'queries.jsonl'} and {out / 'summary.json'}")
    return 1 if report.summary["errors"] else 0

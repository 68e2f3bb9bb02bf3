"""Command-line options of the commands that can ask an LLM judge (``mgbench``, ``audiorag``)."""

from __future__ import annotations

import argparse

from timingbench.params.benchmarks import JudgeParams
from timingbench.suites.judge import ChatClient, judge_client


def add_judge_options(p: argparse.ArgumentParser, *, judge_help: str) -> None:
    """Add ``--judge``, ``--judge-model``, ``--judge-timeout``, ``--judge-retries``, ``--judge-workers``."""
    p.add_argument("--judge", default="offline", help=judge_help)
    p.add_argument("--judge-model", default=None,
                   help="model name served at --judge URL (default: the one model the server lists)")
    p.add_argument("--judge-timeout", type=float, default=None,
                   help="seconds per judge request (config judge.timeout_s)")
    p.add_argument("--judge-retries", type=int, default=None,
                   help="retries per judge request (config judge.max_retries)")
    p.add_argument("--judge-workers", type=int, default=None, help="concurrent judge requests (config judge.workers)")


def client_from_args(args: argparse.Namespace, params: JudgeParams) -> ChatClient | None:
    """The LLM judge client named by ``--judge`` (None for ``offline``)."""
    if args.judge == "offline":
        return None
    return judge_client(params, url=args.judge, model=args.judge_model, timeout_s=args.judge_timeout,
                        max_retries=args.judge_retries)


def judge_workers(args: argparse.Namespace, params: JudgeParams) -> int:
    """Concurrent judge requests: ``--judge-workers``, else config ``judge.workers``."""
    return args.judge_workers if args.judge_workers is not None else params.workers

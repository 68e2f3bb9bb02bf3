"""What the three benchmark scorers (``tag``, ``mgbench``, ``audiorag``) share on the command line.

Each is ``timingbench NAME score --gt FILE --pred FILE --out DIR [--config YAML]``, writes one
row file and ``summary.json`` to ``--out``, prints its row errors to stderr, and ``timingbench
NAME`` without an action prints the help and exits with status 2.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from timingbench.config import Config
from timingbench.jsonio import write_json, write_jsonl
from timingbench.version import __version__


def add_scorer_command(
    sub: argparse._SubParsersAction,  # type: ignore[type-arg]
    name: str,
    *,
    help: str,
    score_help: str,
    score_description: str,
    gt_help: str,
    pred_help: str,
    out_help: str,
    description: str | None = None,
) -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:  # type: ignore[type-arg]
    """Add ``NAME`` with its ``score`` action and the options every scorer takes.

    Parameters
    ----------
    sub : argparse subparsers
        The top-level subcommands.
    name : str
        The command (``tag``).
    help, description : str
        The command's one-line help and its description.
    score_help, score_description : str
        The same for ``score``.
    gt_help, pred_help, out_help : str
        Help of ``--gt``, ``--pred`` and ``--out`` (all required paths).

    Returns
    -------
    score : argparse.ArgumentParser
        The ``score`` action, for the scorer's own options and ``set_defaults(func=...)``.
    actions : argparse subparsers
        The command's actions, for more of them.
    """
    p = sub.add_parser(name, help=help, description=description)
    acts = p.add_subparsers(dest=f"{name}_action", metavar="ACTION")
    s = acts.add_parser("score", help=score_help, description=score_description)
    s.add_argument("--gt", required=True, type=Path, help=gt_help)
    s.add_argument("--pred", required=True, type=Path, help=pred_help)
    s.add_argument("--out", required=True, type=Path, help=out_help)
    s.add_argument("--config", type=Path, default=None,
                   help="configuration YAML (default: packaged timingbench-v1)")
    p.set_defaults(func=functools.partial(_print_help, p))
    return s, acts


def _print_help(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``timingbench NAME`` without an action: show the help, exit status 2."""
    parser.print_help()
    return 2


def provenance(cfg: Config) -> dict[str, Any]:
    """The config version and hash and the package version a summary records."""
    return {"config_version": cfg.version, "config_hash": cfg.content_hash, "timingbench_version": __version__}


def write_scored(out: Path, rows_file: str, rows: Iterable[dict[str, Any]], summary: dict[str, Any],
                 errors: Iterable[object]) -> None:
    """Write ``out/rows_file`` (JSONL) and ``out/summary.json``; print each row error to stderr.

    Parameters
    ----------
    out : Path
        The results folder (made when missing).
    rows_file : str
        File name of the per-row results.
    rows : iterable of dict
        The per-row results.
    summary : dict
        The summary.
    errors : iterable
        Row errors, one ``error: ...`` line each.
    """
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / rows_file, rows)
    write_json(out / "summary.json", summary)
    for e in errors:
        print(f"error: {e}", file=sys.stderr)

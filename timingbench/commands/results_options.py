"""Command-line options of the commands that read results folders (``explain``, ``report``, ``compare``)."""

from __future__ import annotations

import argparse


def add_results_argument(p: argparse.ArgumentParser) -> None:
    """Add the positional ``RESULTS``: a results folder written by ``timingbench score --out``."""
    p.add_argument("results", metavar="RESULTS", help="results folder written by `timingbench score --out`")


def add_rederive_options(p: argparse.ArgumentParser) -> None:
    """Where a results folder's events are re-derived from: ``--clips``, ``--prompts``, ``--cache``
    (each defaulting to what the run recorded in ``summary.json``)."""
    p.add_argument("--clips", default=None, help="clips folder (default: the one recorded in summary.json)")
    p.add_argument("--prompts", default=None, help="prompt set (default: the one recorded in summary.json)")
    p.add_argument("--cache", default=None, help="feature cache folder (default ~/.cache/timingbench)")


def add_comparison_options(p: argparse.ArgumentParser, *, mixed_shown: str) -> None:
    """Add ``--config`` (the comparison constants) and ``--allow-mixed``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The command.
    mixed_shown : str
        Where the command says that a comparison is mixed (``on every table``).
    """
    p.add_argument("--config", default=None,
                   help="configuration YAML for the comparison constants (default: the packaged v1)")
    p.add_argument("--allow-mixed", action="store_true",
                   help=f"compare folders scored with different configs or prompt sets (said {mixed_shown})")

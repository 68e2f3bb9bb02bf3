"""The ``timingbench`` command line.

Each task module registers its own subcommand through a ``register(subparsers)``
function that adds a parser and sets ``func`` (a callable taking the parsed namespace and
returning an exit status). Arguments are mapped explicitly by each module.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from timingbench.errors import TimingbenchError
from timingbench.version import __version__

#: Modules that register subcommands, in the order they appear in ``--help``.
COMMAND_MODULES = (
    "timingbench.commands.demo_cmd",
    "timingbench.commands.score_cmd",
    "timingbench.commands.explain_cmd",
    "timingbench.commands.export_cmd",
    "timingbench.commands.prompts_cmd",
    "timingbench.commands.promptset_cmd",
    "timingbench.commands.render_cmd",
    "timingbench.commands.features_cmd",
    "timingbench.commands.evidence_cmd",
    "timingbench.commands.tempo_cmd",
    "timingbench.commands.calibration_cmd",
    "timingbench.commands.compare_cmd",
    "timingbench.commands.report_cmd",
    "timingbench.commands.label_cmd",
    "timingbench.commands.annotations_cmd",
    "timingbench.commands.tag_cmd",
    "timingbench.commands.mgbench_cmd",
    "timingbench.commands.audiorag_cmd",
    "timingbench.commands.models_cmd",
)


def build_parser() -> argparse.ArgumentParser:
    """Build the top-level parser with every registered subcommand."""
    parser = argparse.ArgumentParser(
        prog="timingbench",
        description="Measure whether audio does the right thing at the right time.",
    )
    parser.add_argument("--version", action="version", version=f"timingbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except TimingbenchError as exc:
        print(f"timingbench: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # an output folder that is a file, a read-only place, a full disk
        print(f"timingbench: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("timingbench: interrupted; re-run the same command to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

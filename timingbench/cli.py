"""The ``timingbench`` command line.

Each task module registers its own subcommand through a ``register(subparsers)``
function that adds a parser and sets ``func`` (a callable taking the parsed namespace and
returning an exit status). Arguments are mapped explicitly by each module.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import warnings
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


#: ``--help`` lists the subcommands in these groups: (name, one line, commands in order).
COMMAND_GROUPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("scoring", "score generated clips against their prompts and read the results",
     ("score", "report", "explain", "compare", "demo")),
    ("benchmarks", "the grounding and question-answering benchmarks on the same interval core",
     ("tag", "mgbench", "audiorag")),
    ("data", "prompt sets, reference renders, annotations and exports",
     ("render", "prompts", "validate-prompts", "annotations", "label", "export")),
    ("development", "calibration, sensitivity, training and model internals",
     ("calibrate", "sweep", "floors", "confusion", "gain-check", "tempo-check", "evidence", "features", "models")),
)

#: The one metavar style: an upper-case placeholder (``DIR``, ``N``, ``KEY=VALUE``) or a choice set.
METAVAR_STYLE = re.compile(r"^[A-Z][A-Z0-9_]*(=[A-Z][A-Z0-9_]*)?$")


def _grouped_commands(sub: argparse._SubParsersAction) -> str:  # type: ignore[type-arg]
    """The subcommand listing of ``--help``, one block per :data:`COMMAND_GROUPS` entry."""
    helps = {a.dest: (a.help or "").replace("%%", "%") for a in sub._choices_actions}
    width = max(len(n) for n in helps) + 2
    blocks = []
    for group, line, names in COMMAND_GROUPS:
        rows = [f"  {n:<{width}}{helps[n]}" for n in names]
        blocks.append(f"{group}: {line}\n" + "\n".join(rows))
    return "\n\n".join(["commands (`timingbench COMMAND --help` for a command's options):", *blocks])


def _uniform_metavars(parser: argparse.ArgumentParser) -> None:
    """Give every argument without a metavar or choices the upper-case placeholder of its name."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sp in action.choices.values():
                _uniform_metavars(sp)
        elif action.metavar is None and action.choices is None and action.nargs != 0:
            action.metavar = action.dest.upper()


def build_parser() -> argparse.ArgumentParser:
    """Build the top-level parser with every registered subcommand, listed in groups."""
    parser = argparse.ArgumentParser(
        prog="timingbench",
        description="Measure whether audio does the right thing at the right time.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"timingbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", help=argparse.SUPPRESS)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    listed = [n for _, _, names in COMMAND_GROUPS for n in names]
    registered = [a.dest for a in sub._choices_actions]
    if sorted(listed) != sorted(registered):  # a new command must be placed in a group
        raise RuntimeError(f"COMMAND_GROUPS lists {sorted(listed)}, the modules register {sorted(registered)}")
    parser.usage = "timingbench [-h] [--version] COMMAND ..."  # set after the subparsers took their prog
    parser.epilog = _grouped_commands(sub)
    sub._choices_actions = []  # the grouped listing (epilog) replaces argparse's flat one
    _uniform_metavars(parser)
    return parser


def _one_line_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                      line: str | None = None) -> str:
    """A warning on the command line: ``timingbench: warning: <where>: <message>``, one line."""
    where = f"{filename}: " if filename and lineno == 0 else ""
    return f"timingbench: warning: {where}{message}\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    warnings.formatwarning = _one_line_warning
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

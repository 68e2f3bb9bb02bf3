"""``timingbench validate-prompts FILE``: check a prompt set against docs/formats.md §1."""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from timingbench.prompts import load_prompts


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``validate-prompts`` subcommand."""
    p = sub.add_parser(
        "validate-prompts",
        help="validate a prompt JSONL file (docs/formats.md §1)",
        description="Validate every row of a prompt file; print one line per rejected row.",
    )
    p.add_argument("file", help="prompt set (JSONL)")
    p.set_defaults(func=run_validate)


def run_validate(args: argparse.Namespace) -> int:
    """Validate the prompt file named by ``args.file``; exit 1 when any row is rejected."""
    ps = load_prompts(args.file)
    for err in ps.errors:
        print(f"error: {err}", file=sys.stderr)
    kinds = Counter(e.kind for p in ps.prompts.values() for e in p.events)
    n_events = sum(kinds.values())
    n_tempo = sum(1 for p in ps.prompts.values() if p.tempo_bpm is not None)
    print(
        f"{args.file}: {len(ps.prompts)} valid prompts, {len(ps.errors)} rejected; "
        f"{n_events} timed events, {n_tempo} tempo targets"
    )
    for kind, n in sorted(kinds.items()):
        print(f"  {kind:<28} {n}")
    return 1 if ps.errors else 0

"""``timingbench prompts generate|stats``: make the v1 prompt set and print its composition."""

from __future__ import annotations

import argparse
import sys

from timingbench.config import load_config
from timingbench.jsonio import write_jsonl
from timingbench.prompts import load_prompts
from timingbench.promptset import composition, format_composition, generate_prompt_set


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``prompts`` command group (``generate``, ``stats``)."""
    p = sub.add_parser(
        "prompts",
        help="generate the TimingBench prompt set or print a prompt file's composition",
        description="Generate the seeded v1 prompt set, or print the composition of a prompt file.",
    )
    group = p.add_subparsers(dest="prompts_command", metavar="ACTION")
    g = group.add_parser(
        "generate",
        help="write the seeded template prompt set (docs/formats.md §1 JSONL)",
        description="Write the 250-prompt TimingBench v1 set. The composition is fixed; "
        "the seed changes wording, styles, instruments and times.",
    )
    g.add_argument("--seed", type=int, default=None,
                   help="generator seed (default: the config's prompts.seed, which made the committed set)")
    g.add_argument("--out", required=True, help="output JSONL file")
    g.add_argument("--config", default=None, help="configuration YAML (default: the packaged v1)")
    g.set_defaults(func=run_generate)
    s = group.add_parser(
        "stats",
        help="print the composition table of a prompt file",
        description="Validate a prompt file and print its composition (prompts per family, "
        "events per kind and target family, times, tempo targets).",
    )
    s.add_argument("file", help="prompt set (JSONL)")
    s.add_argument("--config", default=None, help="configuration YAML (default: the packaged v1)")
    s.set_defaults(func=run_stats)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def run_generate(args: argparse.Namespace) -> int:
    """Generate the prompt set into ``args.out``; returns 0."""
    cfg = load_config(args.config)
    seed = cfg.params.prompts.seed if args.seed is None else int(args.seed)
    rows = generate_prompt_set(seed=seed, config=cfg)
    write_jsonl(args.out, rows)
    n_events = sum(len(r["events"]) for r in rows)
    print(f"wrote {len(rows)} prompts ({n_events} timed events) to {args.out} (seed {seed})")
    return 0


def run_stats(args: argparse.Namespace) -> int:
    """Print the composition of ``args.file``; exit 1 when any row is rejected."""
    cfg = load_config(args.config)
    ps = load_prompts(args.file)
    for err in ps.errors:
        print(f"error: {err}", file=sys.stderr)
    comp = composition(ps.prompts.values(), default_tolerance_s=float(cfg.params.search.default_tolerance_s))
    print(format_composition(comp, source=str(args.file)))
    if ps.errors:
        print(f"{len(ps.errors)} rows rejected (not counted above)", file=sys.stderr)
    return 1 if ps.errors else 0

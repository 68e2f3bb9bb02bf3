"""``timingbench demo``: the main job on a small built-in example."""

from __future__ import annotations

import argparse
from pathlib import Path

from timingbench.config import load_config
from timingbench.prompts import load_prompts

EXAMPLE_PROMPTS = Path(__file__).resolve().parent.parent / "data" / "example_prompts.jsonl"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``demo`` subcommand."""
    p = sub.add_parser("demo", help="run the main job on a small built-in example")
    p.add_argument("--out", default="demo-out", help="output folder (default: demo-out)")
    p.set_defaults(func=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    """Validate the built-in example prompts and show the configuration in use."""
    cfg = load_config()
    ps = load_prompts(EXAMPLE_PROMPTS)
    print(f"config {cfg.version} (hash {cfg.content_hash}), {len(cfg.keys())} constants")
    print(f"example prompts: {len(ps.prompts)} valid, {len(ps.errors)} rejected")
    for p in ps.prompts.values():
        for e in p.events:
            print(f"  {p.id}: {e.kind:<26} {e.target:<12} at {e.time_s:5.2f} s")
    Path(args.out).mkdir(parents=True, exist_ok=True)
    return 0

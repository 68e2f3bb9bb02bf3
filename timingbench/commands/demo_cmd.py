"""``timingbench demo``: the main job on a small built-in example.

Renders the reference renderer's ``demo`` corpus (a dozen clips spanning every event
kind, including a never-delivered event and an off-time delivery, with exact truth),
scores it with ``timingbench score`` and compares every verdict with the truth.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from timingbench.commands.score_cmd import positive_int
from timingbench.config import load_config
from timingbench.jsonio import iter_jsonl
from timingbench.runner import ScoreOptions, score_folder
from timingbench.summary import format_table


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``demo`` subcommand."""
    p = sub.add_parser("demo", help="render a small built-in example set and score it",
                       description="Render the demo corpus with exact truth, score it, compare with the truth.")
    p.add_argument("--out", default="demo-out", help="output folder (default: demo-out)")
    p.add_argument("--jobs", type=positive_int, default=2,
                   help="worker processes for rendering and scoring, >= 1 (default 2)")
    p.set_defaults(func=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    """Render, score and check the demo corpus."""
    from timingbench.render import render_corpus

    out = Path(args.out)
    cfg = load_config()
    t0 = time.perf_counter()
    corpus = Path(render_corpus("demo", out_dir=out / "corpus", jobs=max(1, args.jobs), progress=True))
    t1 = time.perf_counter()
    print(f"rendered the demo corpus to {corpus} in {t1 - t0:.1f} s")
    res = score_folder(corpus / "clips", corpus / "prompts.jsonl", out / "results", cfg,
                       opts=ScoreOptions(separation="dsp"), jobs=max(1, args.jobs))
    t2 = time.perf_counter()
    print(f"scored {len(res.clips)} clips in {t2 - t1:.1f} s -> {out / 'results'}")
    print()
    truth = {(r["clip"], r["event_id"]): r for _, r in iter_jsonl(corpus / "truth.jsonl") if isinstance(r, dict)}
    print(f"{'clip':<34}{'event':<28}{'truth':>10}{'verdict':>10}{'detected':>10}{'error':>8}{'p_chance':>10}")
    agree = 0
    for row in res.events:
        tr = truth.get((row["clip"], row["event_id"]))
        t_txt = "absent" if tr is None or not tr["occurred"] else f"{tr['onset_s']:.2f}s"
        det = "-" if row["detected_s"] is None else f"{row['detected_s']:.2f}s"
        err = "-" if row["error_s"] is None else f"{row['error_s']:+.2f}"
        pc = "-" if row["p_chance"] is None else f"{row['p_chance']:.2f}"
        print(f"{row['clip']:<34}{row['kind'] + '/' + row['family']:<28}{t_txt:>10}{row['outcome']:>10}"
              f"{det:>10}{err:>8}{pc:>10}")
        if tr is not None:
            expected_none = not tr["occurred"]
            agree += (row["outcome"] == "none") == expected_none
    print()
    print(format_table(res.summary))
    print(f"\nverdicts agreeing with the renderer's truth on delivered/not delivered: {agree}/{len(res.events)}")
    return 0

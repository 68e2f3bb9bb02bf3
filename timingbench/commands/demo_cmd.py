"""``timingbench demo``: the main job on a small built-in example.

Renders the reference renderer's ``demo`` corpus (a dozen clips spanning every event
kind, including a never-delivered event and an off-time delivery, with exact truth),
scores it with ``timingbench score`` and compares every verdict with the truth: a verdict
agrees when its outcome is the one the truth implies and, for a delivered event, its
detected time lies near the true onset (:func:`verdict_agrees`).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from timingbench.choices import SEPARATIONS
from timingbench.commands.executor_options import add_jobs_option, resolve_jobs
from timingbench.config import load_config
from timingbench.convert import round_time
from timingbench.jsonio import iter_jsonl
from timingbench.runner import ScoreOptions, score_folder
from timingbench.summary import format_table


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``demo`` subcommand."""
    p = sub.add_parser("demo", help="render a small built-in example set and score it",
                       description="Render the demo corpus with exact truth, score it, compare with the truth.")
    p.add_argument("--out", default="demo-out", help="output folder (default: demo-out)")
    add_jobs_option(p, what="worker processes for rendering and scoring")
    p.add_argument("--separation", choices=SEPARATIONS, default="auto",
                   help="source separation backend (default: auto = htdemucs when its weights are present "
                        "(timingbench models fetch demucs), else dsp)")
    p.set_defaults(func=run_demo)


def expected_outcome(row: dict[str, Any], truth: dict[str, Any] | None) -> str:
    """The outcome the renderer's truth implies for an event row.

    ``none`` when the event was not delivered (no truth row, or ``occurred`` false);
    ``on_time`` when the true onset lies within the row's tolerance of the instructed
    time (rounded as scoring rounds), else ``off_time``.
    """
    if truth is None or not truth.get("occurred") or truth.get("onset_s") is None:
        return "none"
    off = float(round_time(float(truth["onset_s"]) - float(row["instructed_s"])))
    return "on_time" if abs(off) <= float(round_time(float(row["tolerance_s"]))) else "off_time"


def verdict_agrees(row: dict[str, Any], truth: dict[str, Any] | None, *, offset_match_s: float) -> bool:
    """Whether a verdict agrees with the truth on outcome and on time.

    Parameters
    ----------
    row : dict
        An ``events.jsonl`` row (``outcome``, ``detected_s``, ``instructed_s``, ``tolerance_s``).
    truth : dict or None
        The renderer's truth row of the event (``occurred``, ``onset_s``), None when absent.
    offset_match_s : float
        How near the true onset an off-time report must lie, in seconds
        (``calibration.offset_match_s``).

    Returns
    -------
    agrees : bool
        The outcome is :func:`expected_outcome`; an on-time credit also lies within the
        event's tolerance of the true onset, an off-time report within ``offset_match_s``.
    """
    want = expected_outcome(row, truth)
    if row["outcome"] != want:
        return False
    if want == "none":
        return True
    if row.get("detected_s") is None or truth is None:
        return False
    err = abs(float(round_time(float(row["detected_s"]) - float(truth["onset_s"]))))
    reach = float(row["tolerance_s"]) if want == "on_time" else float(offset_match_s)
    return err <= float(round_time(reach))


def run_demo(args: argparse.Namespace) -> int:
    """Render, score and check the demo corpus."""
    from timingbench.render import render_corpus

    out = Path(args.out)
    cfg = load_config()
    resolve_jobs(args, cfg)
    t0 = time.perf_counter()
    corpus = Path(render_corpus("demo", out_dir=out / "corpus", jobs=max(1, args.jobs), progress=True))
    t1 = time.perf_counter()
    print(f"rendered the demo corpus to {corpus} in {t1 - t0:.1f} s")
    res = score_folder(corpus / "clips", corpus / "prompts.jsonl", out / "results", cfg,
                       opts=ScoreOptions(separation=args.separation), jobs=max(1, args.jobs))
    t2 = time.perf_counter()
    print(f"scored {len(res.clips)} clips in {t2 - t1:.1f} s -> {out / 'results'}")
    sep = res.summary["separation"]
    used = ", ".join(f"{k} ({n} clips)" for k, n in sorted(sep["used"].items())) or "none"
    sources = ", ".join(f"{k}: weights {v['licence']}" for k, v in sep.get("sources", {}).items())
    print(f"separation: requested {sep['requested']}, ran {used}" + (f"; {sources}" if sources else ""))
    print()
    truth = {(r["clip"], r["event_id"]): r for _, r in iter_jsonl(corpus / "truth.jsonl") if isinstance(r, dict)}
    print(f"{'clip':<34}{'event':<28}{'truth':>10}{'verdict':>10}{'detected':>10}{'error':>8}{'p_chance':>10}"
          f"{'agrees':>8}")
    match_s = cfg.params.calibration.offset_match_s
    agree = delivered = 0
    for row in res.events:
        tr = truth.get((row["clip"], row["event_id"]))
        t_txt = "absent" if tr is None or not tr["occurred"] else f"{tr['onset_s']:.2f}s"
        det = "-" if row["detected_s"] is None else f"{row['detected_s']:.2f}s"
        err = "-" if row["error_s"] is None else f"{row['error_s']:+.2f}"
        pc = "-" if row["p_chance"] is None else f"{row['p_chance']:.2f}"
        ok = verdict_agrees(row, tr, offset_match_s=match_s)
        agree += ok
        delivered += (row["outcome"] == "none") == (expected_outcome(row, tr) == "none")
        print(f"{row['clip']:<34}{row['kind'] + '/' + row['family']:<28}{t_txt:>10}{row['outcome']:>10}"
              f"{det:>10}{err:>8}{pc:>10}{'yes' if ok else 'NO':>8}")
    print()
    print(format_table(res.summary))
    n = len(res.events)
    print(f"\nverdicts agreeing with the renderer's truth on outcome and time: {agree}/{n} "
          f"(on time within the event's tolerance of the true onset, off time within {match_s:g} s of it, "
          f"none when not delivered; delivered vs not delivered alone: {delivered}/{n})")
    return 0

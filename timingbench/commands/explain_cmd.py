"""``timingbench explain RESULTS CLIP EVENT_ID [--plot out.png]``: why one event got its verdict."""

from __future__ import annotations

import argparse
from pathlib import Path

from timingbench.choices import FAMILY_EVIDENCE_CHOICES, SEPARATIONS
from timingbench.commands.results_options import add_rederive_options, add_results_argument
from timingbench.commands.tagger_options import add_tagger_weights_option, check_tagger_weights


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``explain`` subcommand."""
    p = sub.add_parser(
        "explain", help="show why one scored event got its verdict (table and plot)",
        description=("Re-run one event's detector on the clip of a results folder and print every "
                     "candidate with each gate's measured statistic against its threshold; with --plot, "
                     "draw the log-mel, search window, instructed and detected times, candidates, family "
                     "evidence and gate verdicts on one time axis. Inputs and options come from "
                     "RESULTS/summary.json unless given."))
    add_results_argument(p)
    p.add_argument("clip", metavar="CLIP", help="clip file name, as in events.jsonl (e.g. tb1-0042.wav)")
    p.add_argument("event_id", metavar="EVENT_ID", help="instructed event id (e.g. tb1-0042/e1)")
    p.add_argument("--plot", default=None, help="write the figure to this PNG")
    add_rederive_options(p)
    p.add_argument("--config", default=None, help="configuration YAML (default: the run's, else the packaged one)")
    p.add_argument("--separation", choices=SEPARATIONS, default=None,
                   help="separation backend (default: the one the run used for this clip)")
    p.add_argument("--family-evidence", choices=FAMILY_EVIDENCE_CHOICES, default=None,
                   help="family-evidence backend (default: the one the run requested)")
    p.add_argument("--demucs-repo", default=None, help="local folder with demucs model weights")
    p.add_argument("--clap-dir", default=None, help="local LAION-CLAP checkpoint folder")
    add_tagger_weights_option(p)
    p.set_defaults(func=run_explain)


def run_explain(args: argparse.Namespace) -> int:
    """Run ``timingbench explain``."""
    from timingbench.explain.event import explain_event, format_explanation
    from timingbench.explain.results import load_results

    check_tagger_weights(args)
    results = load_results(args.results)
    x = explain_event(
        results, args.clip, args.event_id, clips_dir=args.clips, prompts_path=args.prompts,
        config_path=args.config, tagger_weights=args.tagger_weights,
        overrides={"separation": args.separation, "family_evidence": args.family_evidence,
                   "cache_dir": args.cache, "demucs_repo": args.demucs_repo, "clap_dir": args.clap_dir},
    )
    print(format_explanation(x))
    if args.plot:
        from timingbench.explain.plot import plot_explanation

        print(f"plot: {plot_explanation(x, Path(args.plot))}")
    return 0

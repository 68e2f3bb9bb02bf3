"""``timingbench score``: score a folder of clips against a prompt set (docs/formats.md §3)."""

from __future__ import annotations

import argparse
import sys

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from timingbench.choices import DEFAULT_FAMILY_EVIDENCE, FAMILY_EVIDENCE_CHOICES, SEPARATIONS
from timingbench.commands.executor_options import (
    add_executor_options,
    add_jobs_option,
    executor_from_args,
    resolve_jobs,
)
from timingbench.commands.tagger_options import add_tagger_weights_option, with_tagger_weights_from
from timingbench.config import Config, load_config
from timingbench.runner import ScoreOptions, score_folder
from timingbench.summary import format_table
from timingbench.text import shortlist


def add_scoring_options(p: argparse.ArgumentParser) -> None:
    """Options shared by every command that scores clips."""
    p.add_argument("--config", default=None, help="configuration YAML (default: configs/timingbench-v1.yaml)")
    p.add_argument("--separation", choices=SEPARATIONS, default="auto",
                   help="source separation backend (auto: demucs when weights are present, else dsp)")
    p.add_argument("--demucs-repo", default=None, help="local folder with demucs model weights")
    p.add_argument("--cache", default=None, help="feature cache folder (default ~/.cache/timingbench)")
    p.add_argument("--family-evidence", choices=FAMILY_EVIDENCE_CHOICES, default=DEFAULT_FAMILY_EVIDENCE,
                   help="instrument-family evidence (default: the embedded trained model, "
                        "docs/evidence-model.md; musicnn: the embedded tagger; clap: needs --clap-dir)")
    p.add_argument("--clap-dir", default=None, help="local LAION-CLAP checkpoint folder (with --family-evidence clap)")
    add_tagger_weights_option(p)


def scoring_config(args: argparse.Namespace) -> Config:
    """The configuration of ``--config`` with ``--tagger-weights`` applied."""
    return with_tagger_weights_from(args, load_config(args.config))


#: Rejected prompt rows printed in full; the rest are counted (all are in summary.json).
MAX_REJECTED_SHOWN = 20


def options_from(args: argparse.Namespace, *, chance: bool = True) -> ScoreOptions:
    """Map parsed arguments to :class:`ScoreOptions` explicitly."""
    return ScoreOptions(
        separation=args.separation, demucs_repo=args.demucs_repo, cache_dir=args.cache,
        family_evidence=args.family_evidence, clap_dir=args.clap_dir, chance=chance,
    )


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``score`` subcommand."""
    p = sub.add_parser("score", help="score a folder of clips against a prompt set",
                       description="Score every instructed event of every clip (docs/formats.md §3).")
    p.add_argument("clips_dir", help="folder of clips named <prompt_id>[__<k>].<ext>")
    p.add_argument("--prompts", required=True, help="prompt set (JSONL)")
    p.add_argument("--out", required=True, help="results folder")
    add_jobs_option(p)
    p.add_argument("--no-chance", action="store_true", help="skip the chance-credit re-scoring (p_chance null)")
    add_scoring_options(p)
    add_executor_options(p)
    p.set_defaults(func=run_score)


def progress_bar() -> Progress:
    """The progress bar every long command shows (on stderr)."""
    from rich.console import Console

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeRemainingColumn(), TextColumn("{task.fields[clip]}"),
                    console=Console(stderr=True), transient=False)


def run_score(args: argparse.Namespace) -> int:
    """Run ``timingbench score``."""
    cfg = scoring_config(args)
    resolve_jobs(args, cfg)
    opts = options_from(args, chance=not args.no_chance)
    if opts.family_evidence == "clap" and not (opts.clap_dir or cfg.params.semantic.clap_dir):
        print("timingbench: warning: --family-evidence clap without --clap-dir (or semantic.clap_dir): "
              "no checkpoint, so every family is exempt (model_unavailable) and the identity gate is off",
              file=sys.stderr)
    executor = executor_from_args(args)
    with progress_bar() as bar:
        task = bar.add_task("scoring", total=None, clip="")

        def tick(done: int, total: int, clip: str) -> None:
            bar.update(task, completed=done, total=total, clip=clip,
                       description=f"scoring ({executor.describe()})")

        res = score_folder(args.clips_dir, args.prompts, args.out, cfg, opts=opts,
                           jobs=max(1, args.jobs), progress=tick, executor=executor)
    if res.reused:
        print(f"resumed: {res.reused} clips reused (finished parts in {args.out}/.parts), "
              f"{len(res.clips) - res.reused} scored now")
    print(format_table(res.summary))
    print(f"wrote {args.out}/events.jsonl, clips.jsonl, summary.json")
    unmatched = res.summary["unmatched"]
    if unmatched:
        print(f"{len(unmatched)} files match no prompt id (not scored; named <prompt_id>[__<k>].<ext>?): "
              + shortlist(unmatched), file=sys.stderr)
    rejected = res.summary["prompts"]["rejected"]
    for e in rejected[:MAX_REJECTED_SHOWN]:
        print(f"prompt rejected: {e}", file=sys.stderr)
    if len(rejected) > MAX_REJECTED_SHOWN:
        print(f"... and {len(rejected) - MAX_REJECTED_SHOWN} more rejected prompt rows "
              f"(all listed in summary.json)", file=sys.stderr)
    counts = res.summary["counts"]
    if counts["scored_clips"] == 0:
        why = ("no clip matched a prompt id" if counts["clips"] == 0
               else f"all {counts['clips']} clips failed (see the errors above and in clips.jsonl)")
        print(f"timingbench: error: nothing was scored: {why}", file=sys.stderr)
        return 1
    return 0

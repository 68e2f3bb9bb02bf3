"""``timingbench score``: score a folder of clips against a prompt set (docs/formats.md §3)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from timingbench.choices import DEFAULT_FAMILY_EVIDENCE, FAMILY_EVIDENCE_CHOICES, SEPARATIONS
from timingbench.commands.executor_options import (
    add_executor_options,
    add_jobs_option,
    check_executor_args,
    executor_from_args,
    resolve_jobs,
)
from timingbench.commands.tagger_options import add_tagger_weights_option, with_tagger_weights_from
from timingbench.config import DEFAULT_CONFIG_PATH, Config, load_config
from timingbench.errors import ConfigError, ParameterError
from timingbench.prompts import load_prompts
from timingbench.runner import ScoreOptions, score_folder
from timingbench.summary import format_table
from timingbench.text import shortlist

#: The separation a scoring command runs when none is asked for.
DEFAULT_SEPARATION = "auto"

#: What each ``--family-evidence`` choice is, as its help says it (docs/semantic.md).
FAMILY_EVIDENCE_MEANINGS = {
    "tagger": "the embedded AudioSet tagger with the trained network, chosen per family (docs/semantic.md)",
    "trained": "the embedded render-trained network alone (docs/evidence-model.md)",
    "musicnn": "the embedded MagnaTagATune tagger",
    "clap": "a local LAION-CLAP checkpoint, needs --clap-dir",
    "none": "timing only, no identity verified",
}


def family_evidence_help() -> str:
    """The help of ``--family-evidence``: the default backend by name, then every choice."""
    meanings = "; ".join(f"{name}: {FAMILY_EVIDENCE_MEANINGS[name]}" for name in FAMILY_EVIDENCE_CHOICES)
    return f"instrument-family evidence (default: {DEFAULT_FAMILY_EVIDENCE}). {meanings}"


def add_scoring_options(p: argparse.ArgumentParser) -> None:
    """Options shared by every command that scores clips."""
    p.add_argument("--config", default=None,
                   help=f"configuration YAML (default: the packaged {DEFAULT_CONFIG_PATH.name})")
    p.add_argument("--separation", choices=SEPARATIONS, default=DEFAULT_SEPARATION,
                   help=f"source separation backend (default: {DEFAULT_SEPARATION}; "
                        "auto: demucs when weights are present, else dsp)")
    p.add_argument("--demucs-repo", default=None, help="local folder with demucs model weights")
    p.add_argument("--cache", default=None,
                   help="feature cache folder (default: $XDG_CACHE_HOME/timingbench, else ~/.cache/timingbench)")
    p.add_argument("--family-evidence", choices=FAMILY_EVIDENCE_CHOICES, default=DEFAULT_FAMILY_EVIDENCE,
                   help=family_evidence_help())
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
    """The progress bar every long command shows on stderr when stderr is a terminal
    (a log or a pipe gets no bar: it would hold one frozen frame of it)."""
    from rich.console import Console

    console = Console(stderr=True)
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeRemainingColumn(), TextColumn("{task.fields[clip]}"),
                    console=console, transient=False, disable=not console.is_terminal)


def check_score_inputs(args: argparse.Namespace) -> None:
    """Refuse the paths of ``timingbench score`` that cannot work, before anything is printed or written.

    Each refusal is one line naming one absolute path and what to give instead.

    Raises
    ------
    ConfigError
        ``--config`` names no file.
    ParameterError
        The clips folder is missing or not a folder, ``--out`` is a file, or a ``--ray-*``
        option needs ``--executor ray`` (:func:`check_executor_args`).
    PromptError
        ``--prompts`` is missing, unreadable or not a prompt JSONL file at all
        (:func:`timingbench.prompts.load_prompts` with ``require_jsonl``).
    """
    if args.config is not None and not Path(args.config).is_file():
        raise ConfigError(f"{os.path.abspath(args.config)}: configuration file not found (--config takes a YAML "
                          "file; leave it out for the packaged one)")
    clips = os.path.abspath(args.clips_dir)
    if not Path(clips).is_dir():
        what = "not a folder" if Path(clips).exists() else "clips folder not found"
        raise ParameterError(f"{clips}: {what} (CLIPS_DIR is the folder of clips named <prompt_id>[__<k>].<ext>)")
    load_prompts(os.path.abspath(args.prompts), require_jsonl=True)
    out = os.path.abspath(args.out)
    if Path(out).exists() and not Path(out).is_dir():
        raise ParameterError(f"{out}: --out is a file; give a results folder (it is created when missing)")
    check_executor_args(args)


def run_score(args: argparse.Namespace) -> int:
    """Run ``timingbench score``."""
    check_score_inputs(args)
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
    if bar.disable:  # no bar (stderr is no terminal): where the clips ran, once
        n = len(res.clips)
        print(f"scored {n} clip{'' if n == 1 else 's'} ({executor.describe()})", file=sys.stderr)
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

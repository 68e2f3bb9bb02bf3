"""``timingbench annotations stats | agreement``: the human validation set's own tables.

Also :func:`human_floor_from_args`, which ``floors`` and ``confusion`` call to report the
detector beside the annotators when the annotations hold two or more of them.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from timingbench.annotation_io import AnnotationSet, load_annotations
from timingbench.calibration.agreement import (
    agreement_report,
    event_index,
    format_agreement,
    plot_agreement,
)
from timingbench.calibration.annotation_stats import annotation_stats, format_stats
from timingbench.calibration.human_floor import HumanFloor, human_floor
from timingbench.config import Config, load_config
from timingbench.errors import TimingbenchError
from timingbench.jsonio import write_json
from timingbench.params.tools import AnnotationsParams
from timingbench.prompts import Prompt, load_prompts, match_clips


def _prompts_near(explicit: str | None, *places: str | Path | None) -> Path | None:
    if explicit:
        return Path(explicit)
    for place in places:
        if place is None:
            continue
        p = Path(place)
        for cand in (p.parent / "prompts.jsonl", p / "prompts.jsonl"):
            if cand.is_file():
                return cand
    return None


def _load(args: argparse.Namespace) -> tuple[AnnotationSet, dict[str, Prompt], Path | None]:
    ann = load_annotations(args.annotations)
    for e in ann.errors:
        print(f"annotation rejected: {e}", file=sys.stderr)
    if args.split != "all":
        ann = ann.only(split=args.split)
    path = _prompts_near(args.prompts, getattr(args, "clips", None), args.annotations)
    prompts: dict[str, Prompt] = {}
    if path is not None:
        ps = load_prompts(path)
        for pe in ps.errors:
            print(f"prompt rejected: {pe}", file=sys.stderr)
        prompts = ps.prompts
    else:
        print("no prompts.jsonl beside the clips or the annotations (pass --prompts): kinds, "
              "families and displacements are reported as unknown", file=sys.stderr)
    return ann, prompts, path


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("annotations", metavar="ANNOTATIONS", help="annotation JSONL (docs/formats.md §5)")
    p.add_argument("--prompts", default=None,
                   help="prompt set (default: prompts.jsonl beside the clips folder or the annotations)")
    p.add_argument("--split", choices=["dev", "validation", "all"], default="all",
                   help="use only the rows of one split (default: all)")
    p.add_argument("--out", default=None, help="output folder for the JSON (and PNG) report")
    p.add_argument("--json", action="store_true", help="print the JSON report instead of the text table")
    p.add_argument("--config", default=None, help="configuration YAML (default: the packaged one)")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``annotations stats`` and ``annotations agreement``."""
    p = sub.add_parser("annotations", help="statistics and inter-annotator agreement of an annotation set")
    asub = p.add_subparsers(dest="annotations_command", metavar="SUBCOMMAND")
    s = asub.add_parser("stats", help="dataset table: clips, events, onset types, displacement, "
                                      "observed and unprompted events")
    _common(s)
    s.add_argument("--clips", default=None, help="clips folder: list the clips nobody labelled")
    s.set_defaults(func=run_stats)
    a = asub.add_parser("agreement", help="every pair of annotators: Cohen's kappa, onset |Δ|, "
                                          "Layer-2 onset F-measure (mir_eval), |Δ| plot")
    _common(a)
    a.set_defaults(func=run_agreement)

    def _usage(_: argparse.Namespace) -> int:
        p.print_help()
        return 2

    p.set_defaults(func=_usage)


def _emit(args: argparse.Namespace, report: Mapping[str, Any], text: str, name: str) -> None:
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(text)
    if args.out:
        write_json(Path(args.out) / name, report)
        print(f"wrote {Path(args.out) / name}", file=sys.stderr if args.json else sys.stdout)


def run_stats(args: argparse.Namespace) -> int:
    """Print the dataset statistics; write ``annotation_stats.json`` with ``--out``."""
    cfg = load_config(args.config)
    ann, prompts, _ = _load(args)
    names = None
    if args.clips and not Path(args.clips).is_dir():
        raise TimingbenchError(f"--clips {args.clips}: clips folder not found")
    if args.clips:
        names = [c.clip for c in match_clips(args.clips, prompts).clips] if prompts else \
            sorted(f.name for f in Path(args.clips).iterdir() if f.is_file() and not f.name.startswith("."))
    stats = annotation_stats(ann, prompts=prompts, events=event_index(prompts),
                             params=_annotations_params(cfg), window_s=_search_window_s(cfg), clip_names=names)
    _emit(args, stats, format_stats(stats), "annotation_stats.json")
    return 0


def run_agreement(args: argparse.Namespace) -> int:
    """Print the agreement tables; write ``agreement.json`` and ``agreement.png`` with ``--out``."""
    cfg = load_config(args.config)
    ann, prompts, _ = _load(args)
    report = agreement_report(ann, events=event_index(prompts), params=_annotations_params(cfg))
    _emit(args, report, format_agreement(report), "agreement.json")
    if args.out:
        plot_agreement(report, Path(args.out) / "agreement.png")
        print(f"wrote {Path(args.out) / 'agreement.png'}", file=sys.stderr if args.json else sys.stdout)
    return 0


def human_floor_from_args(args: argparse.Namespace, rows: Sequence[Mapping[str, Any]],
                          cfg: Config) -> HumanFloor | None:
    """The human floor of a ``floors``/``confusion`` run, or None with fewer than two annotators.

    Reads the same annotation file and split as the run; the scored ``rows`` already hold
    only the events of the requested families and kinds.
    """
    ann = load_annotations(args.annotations)
    if args.split != "all":
        ann = ann.only(split=args.split)
    return human_floor(rows, ann, offset_match_s=cfg.params.calibration.offset_match_s,
                       band_quantiles=_annotations_params(cfg).human_band_quantiles)


def _annotations_params(cfg: Config) -> AnnotationsParams:
    return cfg.params.annotations


def _search_window_s(cfg: Config) -> float:
    return float(cfg.params.search.window_s)

"""``timingbench sweep | floors | confusion | gain-check`` (formats §6) and ``timingbench calibrate evidence``."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.progress import Progress, TaskID

from timingbench.annotation_io import load_annotations
from timingbench.calibration.confusion import confusion_profile, format_confusion
from timingbench.calibration.dev_corpora import DevCorpus
from timingbench.calibration.evaluate import Corpus, default_prompts_path, load_corpus, score_corpus
from timingbench.calibration.floors import localization_floors, plot_floors
from timingbench.calibration.gain import gain_check
from timingbench.calibration.groups import (
    family_report,
    format_families,
    format_groups,
    group_report,
    scenarios_from_manifest,
)
from timingbench.calibration.human_floor import format_annotator_confusion, format_human_floor
from timingbench.calibration.sweep import format_sweep, run_sweep
from timingbench.commands.annotations_cmd import human_floor_from_args
from timingbench.commands.executor_options import (
    add_executor_options,
    add_jobs_option,
    executor_from_args,
    resolve_jobs,
)
from timingbench.commands.score_cmd import add_scoring_options, options_from, progress_bar, scoring_config
from timingbench.config import Config, load_config
from timingbench.executors import Executor
from timingbench.jsonio import write_json, write_jsonl
from timingbench.prompts import load_prompts


def _common(p: argparse.ArgumentParser, *, out_required: bool) -> None:
    p.add_argument("--annotations", required=True, help="annotation JSONL (docs/formats.md §5)")
    p.add_argument("--clips", required=True, help="folder of the annotated clips")
    p.add_argument("--prompts", default=None,
                   help="prompt set (default: prompts.jsonl beside the clips or annotations)")
    p.add_argument("--split", choices=["dev", "validation", "all"], default="all",
                   help="use only the rows of one split (default: all)")
    p.add_argument("--out", required=out_required, default=None, help="output folder")
    p.add_argument("--families", default=None, help="only events of these families (comma-separated)")
    p.add_argument("--kinds", default=None, help="only events of these kinds (comma-separated)")
    add_scoring_options(p)
    add_executor_options(p, with_jobs=True)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the calibration subcommands."""
    p = sub.add_parser("sweep", help="sensitivity sweep: every fitted constant ±10/±20 %%/off, every gate off")
    _common(p, out_required=True)
    p.set_defaults(func=run_sweep_cmd)
    p = sub.add_parser("floors", help="per-family localization floors (JSON + PNG plot)")
    _common(p, out_required=True)
    p.set_defaults(func=run_floors_cmd)
    p = sub.add_parser("confusion", help="the confusion profile against annotations (TimingBench paper "
                                         "Table II, docs/references.md)")
    _common(p, out_required=False)
    p.add_argument("--no-chance", action="store_true", help="skip the chance-credit re-scoring")
    p.set_defaults(func=run_confusion_cmd)
    p = sub.add_parser("gain-check", help="re-score at -12 and -20 dB; report verdict changes and onset shifts")
    _common(p, out_required=False)
    p.set_defaults(func=run_gain_cmd)
    p = sub.add_parser("calibrate", help="choose calibrated thresholds on dev corpora only")
    what = p.add_subparsers(dest="what", required=True, metavar="WHAT")
    q = what.add_parser("evidence", help="the family evidence's decision thresholds",
                        description="Fit, on dev corpora, each family's least presence step "
                                    "(presence.entry_min_step_by_family, exit_min_step_by_family) and print "
                                    "which families reach the judging bar. Refuses validation splits and MuseScore "
                                    "General "
                                    "renders. Writes the constants into the configuration with 'calibrated' "
                                    "provenance and the dev figures unless --dry-run.")
    q.add_argument("--fit", choices=["presence"], default="presence",
                   help="what to fit (default: presence, each family's presence step)")
    q.add_argument("--dev", action="append", required=True, type=Path, metavar="DIR",
                   help="a dev corpus folder (clips/, prompts.jsonl, truth.jsonl; repeatable)")
    q.add_argument("--config", type=Path, default=None,
                   help="configuration YAML to read and write (default: the packaged one)")
    q.add_argument("--out", type=Path, default=None, help="also write the full report as JSON here")
    q.add_argument("--dry-run", action="store_true", help="print the table; write no configuration")
    q.add_argument("--cache", default=None, metavar="DIR", help="feature cache folder (banks and evidence reused)")
    add_jobs_option(q, what="worker processes analysing the clips")
    q.set_defaults(func=run_calibrate_evidence_cmd)


def _corpus(args: argparse.Namespace) -> tuple[Corpus, Config]:
    cfg = scoring_config(args)
    resolve_jobs(args, cfg)
    args.executor_obj = executor_from_args(args)
    ann = load_annotations(args.annotations)
    for e in ann.errors:
        print(f"annotation rejected: {e}")
    if args.split != "all":
        ann = ann.only(split=args.split)
    prompts = args.prompts or default_prompts_path(args.clips, args.annotations)
    fams = set(args.families.split(",")) if args.families else None
    kinds = set(args.kinds.split(",")) if args.kinds else None
    if fams or kinds:
        ps = load_prompts(prompts)
        keep = {e.id for p in ps.prompts.values() for e in p.events
                if (fams is None or e.family in fams) and (kinds is None or e.kind in kinds)}
        ann.layer1 = [r for r in ann.layer1 if r.event_id in keep]
    with progress_bar() as bar:
        task = bar.add_task("analysing", total=None, clip="")
        corpus = load_corpus(args.clips, prompts, ann, cfg, options_from(args, chance=False),
                             progress=_ticker(bar, task, "analysing", args.executor_obj),
                             executor=args.executor_obj)
    for msg in corpus.errors:
        print(f"skipped: {msg}")
    return corpus, cfg


def _ticker(bar: Progress, task: TaskID, what: str, executor: Executor) -> Callable[[int, int, str], None]:
    """Progress callback showing cluster-wide counts next to the bar."""
    def tick(done: int, total: int, clip: str) -> None:
        bar.update(task, completed=done, total=total, clip=clip, description=f"{what} ({executor.describe()})")
    return tick


def run_confusion_cmd(args: argparse.Namespace) -> int:
    """Print (and optionally write) the confusion profile."""
    corpus, cfg = _corpus(args)
    rows = score_corpus(corpus, cfg, chance=not args.no_chance,
                        offset_match_s=cfg.params.calibration.offset_match_s)
    human = human_floor_from_args(args, rows, cfg)
    if human is not None:  # several annotators: the table is against their consensus
        rows = human.consensus_rows
    prof = confusion_profile(rows)
    print(format_confusion(prof))
    exempt = sorted({f for ev in corpus.evidence.values() if ev is not None for f in ev.exempt})
    groups = group_report(rows, exempt=exempt, scenarios=scenarios_from_manifest(args.clips),
                          offset_match_s=cfg.params.calibration.offset_match_s)
    used = sorted({ev.backend for ev in corpus.evidence.values() if ev is not None}) or ["none"]
    print(f"\nper family group (family evidence: {', '.join(used)}; exempt families apart):")
    print(format_groups(groups))
    families = family_report(rows, exempt=exempt, scenarios=scenarios_from_manifest(args.clips),
                             offset_match_s=cfg.params.calibration.offset_match_s)
    print("\nper instrument family (entrances and exits):")
    print(format_families(families))
    prof["groups"] = groups
    prof["families"] = families
    prof["family_evidence"] = {"used": used, "exempt_families": exempt}
    if human is not None:
        print("\n" + format_annotator_confusion(human))
        print(format_human_floor(human.report))
        prof = prof | {"human_floor": human.report}
    if args.out:
        write_json(Path(args.out) / "confusion.json", prof)
        write_jsonl(Path(args.out) / "confusion_events.jsonl", rows)
        print(f"wrote {args.out}/confusion.json, confusion_events.jsonl")
    return 0


def run_floors_cmd(args: argparse.Namespace) -> int:
    """Write floors.json and floors.png."""
    corpus, cfg = _corpus(args)
    rows = score_corpus(corpus, cfg, offset_match_s=cfg.params.calibration.offset_match_s)
    human = human_floor_from_args(args, rows, cfg)
    floors = localization_floors(rows) if human is None else human.floors
    out = Path(args.out)
    write_json(out / "floors.json", {"config": {"version": cfg.version, "hash": cfg.content_hash},
                                     "annotations": str(args.annotations), "floors": floors}
               | ({} if human is None else {"human_floor": human.report}))
    src = Path(args.annotations)
    plot_floors(floors, out / "floors.png", human=None if human is None else human.bands,
                title=f"Localization floors per family ({src.parent.name}/{src.name}, {args.separation} separation)")
    print(f"{'family':<14}{'n':>4}{'median ms':>11}{'IQR ms':>9}{'max ms':>9}")
    for f, s in floors.items():
        print(f"{f:<14}{s['n']:>4}{1000 * s['median_s']:>11.1f}{1000 * s['iqr_s']:>9.1f}{1000 * s['max_s']:>9.1f}")
    if human is not None:
        print(format_human_floor(human.report))
    print(f"wrote {out}/floors.json and {out}/floors.png")
    return 0


def run_sweep_cmd(args: argparse.Namespace) -> int:
    """Run the sensitivity sweep; write sweep.json and print the table."""
    corpus, cfg = _corpus(args)
    t0 = time.perf_counter()
    with progress_bar() as bar:
        task = bar.add_task("sweeping", total=None, clip="")
        report = run_sweep(corpus, cfg, progress=lambda d, t, c: bar.update(task, completed=d, total=t, clip=c))
    report["seconds"] = round(time.perf_counter() - t0, 2)
    print(format_sweep(report))
    print(f"sweep took {report['seconds']} s on cached feature banks")
    write_json(Path(args.out) / "sweep.json", report)
    print(f"wrote {args.out}/sweep.json")
    return 0


def run_gain_cmd(args: argparse.Namespace) -> int:
    """Run the gain invariance check."""
    corpus, cfg = _corpus(args)
    with progress_bar() as bar:
        task = bar.add_task("gain check", total=None, clip="")
        rep = gain_check(corpus, cfg, options_from(args, chance=False),
                         progress=_ticker(bar, task, "gain check", args.executor_obj),
                         executor=args.executor_obj)
    for msg in rep["failed"]:
        print(f"skipped: {msg}")
    for g, r in rep["by_gain"].items():
        print(f"{g} dB: {r['n_verdict_changes']} verdict changes of {rep['n_events']} events; "
              f"max onset shift {r['max_shift_frames']:.2f} frames; shifts > 1 frame: {r['shifts_over_one_frame']}")
        for c in r["verdict_changes"]:
            print(f"  {c['event']}: {c['at_0db']} -> {c['at_gain']}")
    if args.out:
        write_json(Path(args.out) / "gain_check.json", rep)
    return 0


def run_calibrate_evidence_cmd(args: argparse.Namespace) -> int:
    """Fit the presence steps on the dev corpora, print the table, write the configuration."""
    from timingbench.config import DEFAULT_CONFIG_PATH

    path = Path(args.config) if args.config is not None else DEFAULT_CONFIG_PATH
    cfg = load_config(path)
    resolve_jobs(args, cfg)
    return _calibrate_presence(args, cfg, path)


def _dev_corpora(args: argparse.Namespace, cfg: Config, bar: Progress
                 ) -> tuple[list[DevCorpus], Callable[[int, int, str], None]]:
    """The dev corpora of ``--dev``, analysed once under a progress bar that then says "fitting"; and the tick
    that moves the bar on (for a fit that reports its progress)."""
    from timingbench.calibration.dev_corpora import load_dev_corpora

    task = bar.add_task("analysing dev corpora", total=None, clip="")

    def tick(done: int, total: int, clip: str) -> None:
        bar.update(task, completed=done, total=total, clip=clip)

    devs = load_dev_corpora(args.dev, cfg, progress=tick, cache_dir=args.cache, jobs=args.jobs)
    bar.update(task, description="fitting")
    return devs, tick


def _print_report(table: str, devs: list[DevCorpus], report: dict[str, Any], out: Path | None) -> None:
    """Print a fit's table and the corpora's errors; write the report as JSON to ``out`` when given."""
    print(table)
    for d in devs:
        for err in d.corpus.errors:
            print(f"error: {err}")
    if out is not None:
        write_json(out, report)
        print(f"wrote {out}")


def _calibrate_presence(args: argparse.Namespace, cfg: Config, path: Path) -> int:
    """``calibrate evidence --fit presence``: every family's step thresholds and judging figures on dev corpora."""
    from timingbench.calibration.dev_corpora import write_values
    from timingbench.calibration.presence_fit import event_stats, fit, format_report
    from timingbench.families import FAMILY_NAMES, judging_every_family

    cal = cfg.params.calibration
    fit_cfg = judging_every_family(cfg)  # the evidence of every family is read, whatever the registry says
    t0 = time.perf_counter()
    with progress_bar() as bar:
        devs, _ = _dev_corpora(args, fit_cfg, bar)
        stats = event_stats(devs, fit_cfg)
    report = fit(stats, FAMILY_NAMES, max_negative_rate=cal.evidence_max_negative_rate,
                 offset_match_s=cal.offset_match_s, floor=cal.presence_step_floor,
                 judge_min_on_time=cal.judge_min_on_time, judge_min_events=cal.judge_min_events,
                 judge_max_negative_rate=cal.judge_max_negative_rate, judge_min_negatives=cal.judge_min_negatives)
    report["corpora"] = [str(d.root) for d in devs]
    report["events"] = [dict(vars(s)) for s in stats]
    _print_report(format_report(report), devs, report, args.out)
    if not args.dry_run:
        names = ", ".join(d.root.name for d in devs)
        values: dict[str, Any] = {}
        whys: dict[str, str] = {}
        for short in ("entry", "exit"):
            key = f"presence.{short}_min_step_by_family"
            values[key] = {f: r["min_step"][short] for f, r in report["families"].items()}
            whys[key] = (f"chosen per family by timingbench calibrate evidence on dev corpora only ({names}): "
                         "the least step that maximises on-time credits plus off-time located with at most "
                         "calibration.evidence_max_negative_rate of the negatives credited")
        write_values(path, cfg, values, whys)
        print(f"wrote {len(values)} calibrated constants to {path}: {', '.join(values)}")
    print(f"({time.perf_counter() - t0:.1f} s)")
    return 0

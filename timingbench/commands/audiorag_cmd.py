"""``timingbench audiorag score``: judged AudioRAG accuracy over runs (docs/formats.md §7)."""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path
from typing import Any

from timingbench.commands.judge_options import add_judge_options, client_from_args
from timingbench.config import Config, load_config
from timingbench.jsonio import write_json, write_jsonl
from timingbench.suites.audiorag import (
    LlmRagJudge,
    OfflineRagJudge,
    RagJudge,
    default_audio_root,
    load_answers,
    load_metadata,
    resolve_audio,
    score_audiorag,
)
from timingbench.suites.judge import verdict_words
from timingbench.version import __version__


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``audiorag`` subcommand with its ``score`` action."""
    p = sub.add_parser("audiorag", help="score AudioRAG answers (judged accuracy over runs)")
    acts = p.add_subparsers(dest="audiorag_action", metavar="ACTION")
    s = acts.add_parser(
        "score",
        help="judge answers against metadata.jsonl",
        description=(
            "Judge each answer against the AudioRAG ground truth, average accuracy over runs, "
            "break it down per data source and count error types (a reasoning, b audio "
            "processing, c knowledge, d invalid answer)."
        ),
    )
    s.add_argument("--gt", required=True, help="the release's metadata/metadata.jsonl")
    s.add_argument("--pred", required=True, help="answers JSONL: id (row index or audio_path), answer, run")
    s.add_argument("--out", required=True, help="output folder")
    add_judge_options(s, judge_help="'offline' (default: normalised exact/containment match) or the URL "
                      "of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1")
    s.add_argument("--audio-root", default=None,
                   help="folder audio_path is relative to (default: <release>/data when present)")
    s.add_argument("--config", default=None, help="configuration YAML (default: packaged timingbench-v1)")
    s.set_defaults(func=run_score)
    p.set_defaults(func=functools.partial(_print_help, p))


def _print_help(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``timingbench audiorag`` without an action: show the help, exit status 2."""
    parser.print_help()
    return 2


def build_judge(args: argparse.Namespace, cfg: Config) -> RagJudge:
    """The judge named by ``--judge`` (offline or LLM).

    Raises
    ------
    ParameterError
        If the URL is bad, or no ``--judge-model`` is given and the server does not list
        exactly one model.
    """
    jp = cfg.params.judge
    client = client_from_args(args, jp)
    if client is None:
        return OfflineRagJudge(polarity_words=jp.offline_polarity_words)
    return LlmRagJudge(client=client, letters=list(cfg.params.audiorag.error_types), **verdict_words(jp))


def _pct(v: float | None) -> str:
    return "   -  " if v is None else f"{100.0 * v:5.1f}%"


def format_table(summary: dict[str, Any]) -> str:
    """Readable table of an AudioRAG summary."""
    lines = [f"AudioRAG  judge: {summary['judge']['label']}"]
    lines.append(f"questions {summary['n_questions']}, runs {summary['n_runs']}, "
                 f"accuracy (mean over runs) {_pct(summary['accuracy_mean'])}")
    lines.append(f"  {'run':<12}{'judged':>8}{'correct':>9}{'unjudged':>10}{'missing':>9}{'accuracy':>10}")
    for run, r in summary["runs"].items():
        lines.append(f"  {run:<12}{r['judged']:>8}{r['correct']:>9}{r['unjudged']:>10}"
                     f"{r['missing']:>9}{_pct(r['accuracy']):>10}")
    lines.append(f"  {'source':<22}{'n':>5}{'accuracy':>10}")
    for src, r in summary["per_source"].items():
        lines.append(f"  {src:<22}{r['n']:>5}{_pct(r['accuracy_mean']):>10}")
    lines.append("  error types over wrong answers, all runs:")
    for letter, e in summary["error_types"].items():
        lines.append(f"    {letter:<13}{e['name']:<18}{e['count']:>6}")
    audio = summary["audio"]
    if audio["root"] is None:
        lines.append("  audio: not checked (no --audio-root and no <release>/data folder)")
    else:
        lines.append(f"  audio: {audio['resolved']} found ({audio['via_fallback']} via fallback folder), "
                     f"{len(audio['unresolved'])} unresolved under {audio['root']}")
    lines.append(f"  row errors: {len(summary['errors'])}")
    return "\n".join(lines)


def run_score(args: argparse.Namespace) -> int:
    """Score the answers; write ``answers.jsonl`` and ``summary.json``; print a table.

    Returns 1 when any row was rejected or any answer stayed unjudged (outputs are still
    written), else 0.
    """
    cfg = load_config(args.config)
    gt = Path(args.gt)
    meta = load_metadata(gt)
    answers, answer_errors = load_answers(args.pred, meta)
    judge = build_judge(args, cfg)
    rag = cfg.params.audiorag
    root = Path(args.audio_root) if args.audio_root else default_audio_root(gt, audio_subdir=rag.audio_subdir)
    res = resolve_audio(meta.items, audio_root=root, fallback_subdirs=rag.fallback_subdirs)
    workers = args.judge_workers if args.judge_workers is not None else cfg.params.judge.workers
    rows, summary = score_audiorag(meta, answers, judge=judge, error_types=rag.error_types, workers=workers)
    errors = meta.errors + answer_errors
    full: dict[str, Any] = {
        "benchmark": "AudioRAG",
        "judge": {"kind": judge.kind, "label": judge.label},
        **summary,
        "audio": {
            "root": res.root,
            "resolved": len(res.resolved),
            "via_fallback": len(res.via_fallback),
            "unresolved": res.unresolved,
        },
        "errors": errors,
        "gt": str(gt),
        "pred": str(args.pred),
        "config_version": cfg.version,
        "config_hash": cfg.content_hash,
        "timingbench_version": __version__,
    }
    out = Path(args.out)
    write_jsonl(out / "answers.jsonl", rows)
    write_json(out / "summary.json", full)
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    unjudged = [r for r in rows if r.get("correct") is None and r.get("judge_note")]
    if unjudged:
        print(f"error: {len(unjudged)} answers could not be judged and count in no accuracy "
              f"(first: {unjudged[0]['judge_note']}); see answers.jsonl", file=sys.stderr)
    print(format_table(full))
    return 1 if errors or summary["unjudged"] else 0

"""``timingbench audiorag score``: judged AudioRAG accuracy over runs (docs/formats.md §7)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from timingbench.commands.judge_options import add_judge_options, client_from_args, judge_workers
from timingbench.commands.scorer_command import add_scorer_command, provenance, write_scored
from timingbench.config import Config, load_config
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


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``audiorag`` subcommand with its ``score`` action."""
    s, _ = add_scorer_command(
        sub, "audiorag", help="score AudioRAG answers (judged accuracy over runs)",
        score_help="judge answers against metadata.jsonl",
        score_description=(
            "Judge each answer against the AudioRAG ground truth, average accuracy over runs, "
            "break it down per data source and count error types (a reasoning, b audio "
            "processing, c knowledge, d invalid answer)."
        ),
        gt_help="the release's metadata/metadata.jsonl",
        pred_help="answers JSONL: id (row index or audio_path), answer, run",
        out_help="output folder",
    )
    add_judge_options(s, judge_help="'offline' (default: normalised exact/containment match) or the URL "
                      "of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1")
    s.add_argument("--audio-root", default=None,
                   help="folder audio_path is relative to (default: <release>/data when present)")
    s.set_defaults(func=run_score)


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
    rows, summary = score_audiorag(meta, answers, judge=judge, error_types=rag.error_types,
                                   workers=judge_workers(args, cfg.params.judge))
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
        **provenance(cfg),
    }
    write_scored(Path(args.out), "answers.jsonl", rows, full, errors)
    unjudged = [r for r in rows if r.get("correct") is None and r.get("judge_note")]
    if unjudged:
        print(f"error: {len(unjudged)} answers could not be judged and count in no accuracy "
              f"(first: {unjudged[0]['judge_note']}); see answers.jsonl", file=sys.stderr)
    print(format_table(full))
    return 1 if errors or summary["unjudged"] else 0

"""``timingbench mgbench score``: MGBench grounding and understanding (docs/formats.md §7)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from timingbench.commands.judge_options import add_judge_options, client_from_args, judge_workers
from timingbench.commands.mgbench_gen_cmd import register_actions
from timingbench.commands.scorer_command import add_scorer_command, provenance, write_scored
from timingbench.config import load_config
from timingbench.errors import ParameterError
from timingbench.suites.judge import verdict_words
from timingbench.suites.mgbench import (
    LlmSpanExtractor,
    LlmUnderstandingJudge,
    OfflineUnderstandingJudge,
    RegexSpanExtractor,
    SpanExtractor,
    UnderstandingJudge,
    load_ground_truth,
    load_responses,
    score_mgbench,
)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``mgbench`` subcommand: ``score``, and ``generate`` / ``stats`` / ``baseline``."""
    s, acts = add_scorer_command(
        sub, "mgbench", help="generate MGBench splits, score grounding and understanding responses",
        score_help="score responses against MGBench ground truth",
        score_description=(
            "Grounding: IFR, MergedIoU, span P/R/F1 and onset/offset MAE under greedy matching "
            "at IoU 0.5 and 0.7. Understanding: IFR, global and per-concept accuracy through a judge."
        ),
        gt_help="MGBench ground truth JSONL",
        pred_help="responses JSONL: id, response (text) or intervals",
        out_help="output folder",
    )
    add_judge_options(s, judge_help="understanding judge: 'offline' (default: normalised "
                      "exact/containment match) or the URL of an OpenAI-compatible server")
    s.add_argument(
        "--extractor",
        choices=("regex", "llm"),
        default="regex",
        help="span extractor for free-text responses: regex (trained models) or llm (through --judge)",
    )
    s.set_defaults(func=run_score)
    register_actions(acts)


def _num(v: float | None, fmt: str = ".4f") -> str:
    return "-" if v is None else format(v, fmt)


def format_table(summary: dict[str, Any]) -> str:
    """Readable tables (paper Table 2 and Table 3 layout) of an MGBench summary."""
    lines: list[str] = []
    ths = summary["iou_thresholds"]
    if summary["grounding"]:
        lines.append(f"MGBench grounding  (extractor: {summary['extractor']})")
        head = f"  {'subset':<8}{'n':>6}{'IFR':>8}{'MIoU':>8}"
        for t in ths:
            head += f"  {'P@' + str(t):>7}{'R':>7}{'F1':>7}{'On/Off MAE ms':>16}"
        lines.append(head)
        for subset, g in summary["grounding"].items():
            row = f"  {subset:<8}{g['n']:>6}{_num(g['ifr']):>8}{_num(g['merged_iou']):>8}"
            for t in ths:
                m = g[f"iou_{t:g}"]
                mae = f"{_num(m['onset_mae_ms'], '.1f')}/{_num(m['offset_mae_ms'], '.1f')}"
                row += f"  {_num(m['precision']):>7}{_num(m['recall']):>7}{_num(m['f1']):>7}{mae:>16}"
            lines.append(row)
            e = g["empty"]
            lines.append(
                f"    empty-answer questions {e['n_empty_truth']}: correct empty {e['correct_empty']}, "
                f"false alarm {e['false_alarm']}, not following {e['invalid']}; "
                f"empty answers to non-empty truth {e['missed_nonempty']}"
            )
    if summary["understanding"]:
        lines.append(f"MGBench understanding  (judge: {summary['judge']['label']})")
        for subset, u in summary["understanding"].items():
            lines.append(
                f"  {subset}: IFR {_num(u['ifr'])} ({u['n_following']}/{u['n']})  "
                f"accuracy {_num(u['accuracy'])} ({u['n_correct']}/{u['n_following']})  unjudged {u['unjudged']}"
            )
            for c, r in u["per_concept"].items():
                lines.append(f"    {c:<20}{_num(r['accuracy']):>8} ({r['n_correct']}/{r['n_following']}, n={r['n']})")
    lines.append(f"missing responses: {len(summary['missing'])}; row errors: {len(summary['errors'])}")
    return "\n".join(lines)


def run_score(args: argparse.Namespace) -> int:
    """Score responses; write ``questions.jsonl`` and ``summary.json``; print tables.

    Returns 1 when any row was rejected or any understanding answer stayed unjudged
    (outputs are still written), else 0.
    """
    cfg = load_config(args.config)
    mg = cfg.params.mgbench
    jp = cfg.params.judge
    gt = load_ground_truth(args.gt)
    pred = load_responses(args.pred, gt.rows)
    client = client_from_args(args, jp)
    extractor: SpanExtractor
    if args.extractor == "llm":
        if client is None:
            raise ParameterError("--extractor llm needs --judge URL (an OpenAI-compatible server)")
        extractor = LlmSpanExtractor(client=client, empty_patterns=mg.empty_answer_patterns)
    else:
        extractor = RegexSpanExtractor.from_params(mg)
    judge: UnderstandingJudge
    if client is None:
        judge = OfflineUnderstandingJudge(polarity_words=jp.offline_polarity_words)
    else:
        judge = LlmUnderstandingJudge(client=client, **verdict_words(jp))
    thresholds = [float(t) for t in mg.iou_thresholds]
    rows, summary = score_mgbench(
        gt.rows,
        pred.rows,
        extractor=extractor,
        judge=judge,
        iou_thresholds=thresholds,
        concept_groups=mg.concept_groups,
        workers=judge_workers(args, jp),
    )
    errors = gt.errors + pred.errors
    full: dict[str, Any] = {
        "benchmark": "MGBench",
        "extractor": extractor.label,
        "extractor_strip_reasoning": (
            extractor.strip_reasoning if isinstance(extractor, RegexSpanExtractor) else None
        ),
        "judge": {"kind": judge.kind, "label": judge.label},
        "iou_thresholds": thresholds,
        **summary,
        "errors": errors,
        "gt": str(args.gt),
        "pred": str(args.pred),
        **provenance(cfg),
    }
    write_scored(Path(args.out), "questions.jsonl", rows, full, errors)
    print(format_table(full))
    unjudged = sum(u["unjudged"] for u in summary["understanding"].values())
    return 1 if errors or unjudged else 0

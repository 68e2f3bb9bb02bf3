"""Benchmark: TAG-Bench scoring of 100k synthetic queries.

Builds a synthetic ground-truth file and a free-form response file (mixed answer styles,
one-to-many queries, refusals) and times, in the same process:

- ``evaluate`` end to end (read both JSONL files, parse every answer, score, summarise);
- the scoring step alone (``score_queries`` + ``summarize``) on the parsed intervals;
- baseline: the same scoring done query by query with the single-set interval functions
  (``union_iou``, ``generalized_iou``, ``midpoint_errors``) in a Python loop.

Run: ``.venv/bin/python benchmarks/tag_scoring.py [--queries 100000] [--repeats 3]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from timingbench.benchmarks.tag import evaluate, score_queries, summarize
from timingbench.config import load_config
from timingbench.intervals import generalized_iou, midpoint_errors, union_iou

STYLES = (
    lambda s, e: f"The event occurs from {s:.2f} to {e:.2f} seconds.",
    lambda s, e: f"[{s:.2f}, {e:.2f}]",
    lambda s, e: f"Start: {int(s // 60):02d}:{s % 60:05.2f}, End: {int(e // 60):02d}:{e % 60:05.2f}",
    lambda s, e: f'{{"start": {s:.3f}, "end": {e:.3f}}}',
    lambda s, e: f"{s:.1f}s - {e:.1f}s",
)


def _make(folder: Path, q: int, rng: np.random.Generator) -> tuple[Path, Path]:
    gt_rows, pred_rows = [], []
    for k in range(q):
        dur = float(rng.choice([10.0, 60.0, 1200.0]))
        n = 1 if rng.random() < 0.78 else int(rng.integers(2, 8))
        s = np.sort(rng.uniform(0, dur * 0.9, n))
        e = s + rng.uniform(0.2, dur * 0.05, n)
        gt_rows.append({"id": f"q{k}", "audio_path": f"a{k}.wav", "duration_s": dur,
                        "subset": ["word", "event", "semantic", "long_desc"][k % 4],
                        "query": "x", "intervals": np.round(np.stack([s, e], 1), 3).tolist()})
        if rng.random() < 0.15:
            pred_rows.append({"id": f"q{k}", "response": "Sorry, I cannot find it."})
            continue
        m = int(rng.integers(1, n + 1))
        js = np.sort(rng.uniform(0, dur * 0.9, m))
        je = js + rng.uniform(0.2, dur * 0.05, m)
        style = STYLES[k % len(STYLES)]
        text = " and ".join(style(a, b) for a, b in zip(js, je, strict=True))
        pred_rows.append({"id": f"q{k}", "response": text})
    gt = folder / "gt.jsonl"
    pred = folder / "pred.jsonl"
    gt.write_text("".join(json.dumps(r) + "\n" for r in gt_rows))
    pred.write_text("".join(json.dumps(r) + "\n" for r in pred_rows))
    return gt, pred


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    cfg = load_config()
    rng = np.random.default_rng(20260101)
    with tempfile.TemporaryDirectory() as tmp:
        gt, pred = _make(Path(tmp), args.queries, rng)
        evaluate(gt, pred, config=cfg)  # warm-up: compile kernels
        t_end, c_end, t_score, t_base = [], [], [], []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            c0 = time.process_time()
            rep = evaluate(gt, pred, config=cfg)
            t_end.append(time.perf_counter() - t0)
            c_end.append(time.process_time() - c0)
        gts = [np.array(json.loads(x)["intervals"]) for x in gt.read_text().splitlines()]
        preds = [[tuple(iv) for iv in r["pred_intervals"]] if not r["failed"] else []
                 for r in rep.rows]
        subsets = [r["subset"] for r in rep.rows]
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            s = score_queries(gts, preds)
            summarize(s, subsets, config=cfg)
            t_score.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            base_iou, base_giou = [], []
            for g, p in zip(gts, preds, strict=True):
                est = p if p else [(0.0, 0.0)]
                base_iou.append(union_iou(g, est))
                base_giou.append(generalized_iou(g, est))
                midpoint_errors(g, p)
            t_base.append(time.perf_counter() - t0)
        np.testing.assert_allclose(s.iou, base_iou, atol=1e-12)
        np.testing.assert_allclose(s.giou, base_giou, atol=1e-12)
    o = rep.summary["groups"]["overall"]
    print(f"cores available: {os.cpu_count()}; queries: {args.queries}; repeats: {args.repeats}; "
          f"Fail {o['Fail']:.1f} %; one-to-many {rep.summary['groups']['one_to_many']['n']}")
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f}")
    for name, t in (("evaluate end to end (read+parse+score)", t_end),
                    ("  same, CPU time of this process", c_end),
                    ("scoring only (batch kernels)", t_score),
                    ("baseline: per-query loop, single-set functions", t_base)):
        print(f"{name:<48} min {min(t):.3f} s  median {statistics.median(t):.3f} s")
    print(f"scoring speed-up vs per-query loop (median): "
          f"{statistics.median(t_base) / statistics.median(t_score):.1f}x")


if __name__ == "__main__":
    main()

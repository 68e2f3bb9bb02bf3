"""Sensitivity sweep with reused intermediate statistics against the full re-run, same corpus, same process.

    PYTHONPATH=. .venv/bin/python benchmarks/sweep_speed.py --corpus /work/corp/validation --cache /tmp/cache

Loads the annotated corpus once (feature banks from ``--cache``; ``--separation dsp``),
then runs :func:`timingbench.calibration.sweep.run_sweep` twice, in the order given by
``--order``: with ``reuse=False`` (every variant and every gate ablation re-scores the
corpus from scratch and the banks' per-detector memo is off: the sweep as it was) and
with ``reuse=True`` (the detectors run once for the baseline, ablations re-decide the
stored candidates, sections no event detector reads are not re-scored, and re-runs reuse
the threshold-independent measurements memoised in the banks). The memos (banks and
family evidence) are cleared before each run, so the reuse run starts cold. Prints process CPU and wall seconds of
each, their ratio, and whether the two reports' rows are identical (exit 1 if not).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from timingbench.calibration.evaluate import load_corpus
from timingbench.calibration.sweep import run_sweep
from timingbench.config import load_config
from timingbench.memo import memo_disabled
from timingbench.runner import ScoreOptions


def _clear_memo(corpus) -> None:  # noqa: ANN001 - a Corpus
    for bank in corpus.banks.values():
        for k in [k for k in bank._memo if isinstance(k, tuple) and k[:1] == ("memo",)]:
            del bank._memo[k]
    for ev in corpus.evidence.values():
        if ev is not None:
            ev._memo.clear()


def _timed(fn):  # noqa: ANN001, ANN202
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c0, time.perf_counter() - w0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True, help="folder with clips/, prompts.jsonl and truth.jsonl")
    ap.add_argument("--cache", default=None, help="feature cache folder (banks are built once when empty)")
    ap.add_argument("--order", choices=("full-first", "reuse-first"), default="full-first")
    args = ap.parse_args()
    cfg = load_config()
    root = Path(args.corpus)
    corpus = load_corpus(root / "clips", root / "prompts.jsonl", root / "truth.jsonl", cfg,
                         ScoreOptions(separation="dsp", cache_dir=args.cache))
    runs = {}
    for mode in (("full", "reuse") if args.order == "full-first" else ("reuse", "full")):
        _clear_memo(corpus)
        if mode == "full":
            with memo_disabled():
                runs[mode] = _timed(lambda: run_sweep(corpus, cfg, reuse=False))
        else:
            runs[mode] = _timed(lambda: run_sweep(corpus, cfg, reuse=True))
    (full, f_cpu, f_wall), (reuse, r_cpu, r_wall) = runs["full"], runs["reuse"]
    same = json.dumps(full, sort_keys=True) == json.dumps(reuse, sort_keys=True)
    n = len(full["constants"]) + len(full["gates"])
    print(f"{len(corpus.refs)} clips, {full['n_events']} annotated events, {n} variants")
    print(f"full re-run : {f_cpu:7.2f} s CPU  {f_wall:7.2f} s wall")
    print(f"reuse       : {r_cpu:7.2f} s CPU  {r_wall:7.2f} s wall")
    print(f"speed-up    : {f_cpu / r_cpu:5.1f}x CPU  {f_wall / r_wall:5.1f}x wall")
    print(f"rows identical: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())

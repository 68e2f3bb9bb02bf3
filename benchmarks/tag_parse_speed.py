"""Benchmark: TAG-Bench end-to-end scoring with this parser against another checkout's.

Builds the 100k-query synthetic ground truth and responses of ``tag_scoring.py`` and
times ``evaluate`` (read, parse, score, summarise, evidence rows) in one process, with
the parser of this checkout and with the parser of a baseline checkout (its
``timingbench/suites/tag_parse.py`` loaded by path and put in place of
``parse_response``), alternating the two. Also times parsing alone on the unique
answers. Checks that both parsers give the same results on these answers.

CPU time of this process is reported as min / median over the repeats, because the
development machine is shared.

Run: ``.venv/bin/python benchmarks/tag_parse_speed.py --baseline-root ../main [--queries 100000] [--repeats 3]``
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from timingbench.suites import tag, tag_parse
from timingbench.config import load_config

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tag_scoring import _make  # noqa: E402  (the synthetic files of the scoring benchmark)


def _load_baseline(root: Path) -> ModuleType:
    path = root / "timingbench" / "benchmarks" / "tag_parse.py"
    spec = importlib.util.spec_from_file_location("baseline_tag_parse", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["baseline_tag_parse"] = mod
    spec.loader.exec_module(mod)
    return mod


def _cpu(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.process_time()
    out = fn()
    return out, time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline-root", type=Path, required=True,
                    help="repository root of the checkout whose parser is the baseline")
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    base = _load_baseline(args.baseline_root)
    current = tag.parse_response

    def baseline_parse(text: str, **_: Any) -> Any:
        return base.parse_response(text)

    cfg = load_config()
    rng = np.random.default_rng(20260101)
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        gt, pred = _make(Path(tmp), args.queries, rng)
        texts = list(dict.fromkeys(json.loads(x)["response"] for x in pred.read_text().splitlines()))
        tag.evaluate(gt, pred, config=cfg)  # warm-up
        for _ in range(args.repeats):
            for name, fn in (("current", current), ("baseline", baseline_parse)):
                tag.parse_response = fn  # type: ignore[assignment]
                try:
                    rep, t = _cpu(lambda: tag.evaluate(gt, pred, config=cfg))
                finally:
                    tag.parse_response = current
                times.setdefault(f"evaluate end to end, {name} parser", []).append(t)
                parse = tag_parse.parse_response if name == "current" else base.parse_response
                _, t = _cpu(lambda: [parse(x) for x in texts])  # noqa: B023
                times.setdefault(f"parse {len(texts)} unique answers, {name} parser", []).append(t)
    new = [tag_parse.parse_response(x) for x in texts]
    old = [base.parse_response(x) for x in texts]
    n_diff = sum(a.intervals != b.intervals or a.stage != b.stage for a, b in zip(new, old, strict=True))
    print(f"queries: {args.queries}; unique answers: {len(texts)}; repeats: {args.repeats}; "
          f"baseline: {args.baseline_root}; parse results differing: {n_diff}")
    for name, ts in times.items():
        print(f"{name:<52} CPU min {min(ts):6.3f} s  median {statistics.median(ts):6.3f} s")
    for what in ("evaluate end to end", f"parse {len(texts)} unique answers"):
        c = statistics.median(times[f"{what}, current parser"])
        b = statistics.median(times[f"{what}, baseline parser"])
        print(f"{what}: current / baseline (median CPU) = {c / b:.3f}")


if __name__ == "__main__":
    main()

"""Benchmark: TAG-Bench end-to-end scoring with this parser against another checkout's.

Builds the 100k-query synthetic ground truth and responses of ``tag_scoring.py`` and
times ``evaluate`` (read, parse, score, summarise, evidence rows) in one process, with
the parser of this checkout and with the parser of a baseline checkout (its time-span
core ``timingbench/suites/span_parse.py``, or ``timingbench/benchmarks/tag_parse.py`` in a
checkout from before the rename, loaded by path with that checkout's own helper modules
and put in place of the core), alternating the two. Also times parsing alone on the
unique answers. Checks that both parsers give the same results on these answers.

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

from timingbench.config import load_config
from timingbench.suites import span_parse
from timingbench.suites.tag import answers, evaluate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tag_scoring import make_files  # noqa: E402  (the synthetic files of the scoring benchmark)

#: (parser file, package of its helper modules, helper modules, parse function) per layout.
_LAYOUTS = (
    ("timingbench/suites/span_parse.py", "timingbench.suites", ("answer_scope", "answer_tables"), "parse_spans"),
    ("timingbench/benchmarks/tag_parse.py", "timingbench.benchmarks", ("answer_scope", "answer_tables"),
     "parse_response"),
)


def _exec(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up while the class is built
    spec.loader.exec_module(mod)
    return mod


def _load_baseline(root: Path) -> Callable[..., Any]:
    """The baseline checkout's parse function, with its own helper modules.

    The helpers are put under the names the parser imports for the time of its import
    only, so this process keeps using its own.
    """
    for rel, pkg, helpers, fn in _LAYOUTS:
        path = root / rel
        if not path.is_file():
            continue
        names = [pkg] + [f"{pkg}.{h}" for h in helpers]
        saved = {n: sys.modules.get(n) for n in names}
        try:
            sys.modules[pkg] = ModuleType(pkg)
            for h in helpers:
                sys.modules[f"{pkg}.{h}"] = _exec(f"{pkg}.{h}", path.parent / f"{h}.py")
            mod = _exec("baseline_span_parse", path)
        finally:
            for n, m in saved.items():
                if m is None:
                    sys.modules.pop(n, None)
                else:
                    sys.modules[n] = m
        parse: Callable[..., Any] = getattr(mod, fn)
        return parse
    raise SystemExit(f"{root}: no time-span parser at {' or '.join(r for r, *_ in _LAYOUTS)}")


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
    base_parse = _load_baseline(args.baseline_root)
    current = answers.parse_spans

    def baseline_parse(text: str, **_: Any) -> Any:
        return base_parse(text)

    params = load_config().params.tag
    rng = np.random.default_rng(20260101)
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        gt, pred = make_files(Path(tmp), args.queries, rng)
        texts = list(dict.fromkeys(json.loads(x)["response"] for x in pred.read_text().splitlines()))
        evaluate(gt, pred, params=params)  # warm-up
        for _ in range(args.repeats):
            for name, fn in (("current", current), ("baseline", baseline_parse)):
                answers.parse_spans = fn  # type: ignore[assignment]
                try:
                    _, t = _cpu(lambda: evaluate(gt, pred, params=params))
                finally:
                    answers.parse_spans = current
                times.setdefault(f"evaluate end to end, {name} parser", []).append(t)
                parse = span_parse.parse_spans if name == "current" else base_parse
                _, t = _cpu(lambda: [parse(x) for x in texts])  # noqa: B023
                times.setdefault(f"parse {len(texts)} unique answers, {name} parser", []).append(t)
    new = [span_parse.parse_spans(x) for x in texts]
    old = [base_parse(x) for x in texts]
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

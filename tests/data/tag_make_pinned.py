"""Regenerate ``tag_pinned_outputs.jsonl``: the TAG-Bench scorer's expected outputs.

600 synthetic queries of the scoring benchmark (``benchmarks/tag_scoring.py``, seed
20260101, five answer styles, one-to-many queries, refusals) are scored with the
packaged configuration. The first line holds the group metrics (``summary["groups"]``);
each further line holds one query's ground-truth row (``gt``), response row (``pred``)
and evidence row (``row``). ``tests/test_tag_pinned.py`` and the benchmark check that the
scorer still gives exactly these outputs. Regenerate only for an intended change of the
parser or the metrics, and say in the commit which outputs changed and why. Run from the
repository root: ``.venv/bin/python tests/data/tag_make_pinned.py``.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from timingbench.config import load_config
from timingbench.suites.tag import evaluate

HERE = Path(__file__).resolve().parent
OUT = HERE / "tag_pinned_outputs.jsonl"
QUERIES = 600
SEED = 20260101


def _bench() -> object:
    path = HERE.parents[1] / "benchmarks" / "tag_scoring.py"
    spec = importlib.util.spec_from_file_location("tag_scoring", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["tag_scoring"] = mod
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    bench = _bench()
    gt_rows, pred_rows = bench.make_rows(QUERIES, np.random.default_rng(SEED))  # type: ignore[attr-defined]
    with tempfile.TemporaryDirectory() as tmp:
        gt, pred = bench.write_rows(Path(tmp), gt_rows, pred_rows)  # type: ignore[attr-defined]
        rep = evaluate(gt, pred, params=load_config().params.tag)
    lines = [json.dumps({"queries": QUERIES, "seed": SEED, "groups": rep.summary["groups"]})]
    lines += [json.dumps({"gt": g, "pred": p, "row": r}) for g, p, r in zip(gt_rows, pred_rows, rep.rows, strict=True)]
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({QUERIES} queries)")


if __name__ == "__main__":
    main()

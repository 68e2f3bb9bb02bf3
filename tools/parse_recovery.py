"""Recovery rate of the TAG-Bench parser and the MGBench regex extractor on a form corpus.

An answer is recovered when the parse equals its intended intervals exactly (within
1e-6 s): the same intervals in the same order, and no interval for an answer that states
none. Prints the rate overall and per form, and the answers that were not recovered.

Run: ``.venv/bin/python tools/parse_recovery.py [--corpus tests/data/tag_answer_forms.jsonl]``
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import numpy as np

from timingbench.config import load_config
from timingbench.suites.mgbench.spans import extract_spans
from timingbench.suites.tag.answers import parse_response

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "tag_answer_forms.jsonl"


def _same(got: list[list[float]], expected: list[list[float]]) -> bool:
    if len(got) != len(expected):
        return False
    return not got or bool(np.allclose(np.asarray(got), np.asarray(expected), atol=1e-6, rtol=0))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--show", type=int, default=40, help="misses printed per parser")
    args = ap.parse_args()
    rows = [json.loads(x) for x in args.corpus.read_text(encoding="utf-8").splitlines() if x]
    patterns = load_config().params.mgbench.empty_answer_patterns
    parsers = {
        "tag": lambda t: [list(iv) for iv in parse_response(t).intervals],
        "mgbench-regex": lambda t: extract_spans(t, empty_patterns=patterns).spans.tolist(),
    }
    forms = Counter(r["form"] for r in rows)
    print(f"corpus: {args.corpus.name}, {len(rows)} answers in {len(forms)} forms")
    for name, fn in parsers.items():
        ok: Counter[str] = Counter()
        misses = []
        for r in rows:
            got = fn(r["response"])
            if _same(got, r["expected"]):
                ok[r["form"]] += 1
            else:
                misses.append((r["form"], r["response"], got, r["expected"]))
        total = sum(ok.values())
        print(f"\n{name}: recovered {total}/{len(rows)} ({100.0 * total / len(rows):.1f} %)")
        for f in forms:
            if ok[f] < forms[f]:
                print(f"  {f:<38} {ok[f]:>3}/{forms[f]}")
        for form, text, got, exp in misses[:args.show]:
            print(f"  MISS [{form}] {text[:90]!r}\n       got {got} expected {exp}")


if __name__ == "__main__":
    main()

"""Benchmark: union-IoU + greedy matching (IoU 0.5) over 100k random query sets.

Compares the compiled batch kernels of :mod:`timingbench.intervals` with a straightforward
pure-Python implementation of the same definitions, in the same process, on the same
data, and checks that both give the same answers.

Run: ``.venv/bin/python benchmarks/interval_core.py [--queries 100000] [--repeats 5]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from timingbench.intervals import match_greedy_batch, union_iou_batch


def _py_union(iv: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[list[float]] = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(a, b) for a, b in out]


def _py_union_iou(ref: list[tuple[float, float]], est: list[tuple[float, float]]) -> float:
    lr = sum(e - s for s, e in _py_union(ref))
    le = sum(e - s for s, e in _py_union(est))
    if lr == 0 and le == 0:
        return 1.0
    if lr == 0 or le == 0:
        return 0.0
    lu = sum(e - s for s, e in _py_union(ref + est))
    return round(max(0.0, round(lr + le - lu, 6)), 6) / round(lu, 6)


def _py_greedy(
    ref: list[tuple[float, float]], est: list[tuple[float, float]], t: float
) -> list[tuple[int, int]]:
    cand = []
    for i, (rs, re_) in enumerate(ref):
        for j, (es, ee) in enumerate(est):
            inter = max(0.0, min(re_, ee) - max(rs, es))
            union = (re_ - rs) + (ee - es) - inter
            if union > 0:
                v = round(inter / union, 6)
                if v >= t and v > 0:
                    cand.append((-v, i, j))
    cand.sort()
    ur: set[int] = set()
    ue: set[int] = set()
    out = []
    for _, i, j in cand:
        if i not in ur and j not in ue:
            ur.add(i)
            ue.add(j)
            out.append((i, j))
    return sorted(out)


def _make(rng: np.random.Generator, q: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    def one(n_max: int) -> tuple[np.ndarray, np.ndarray]:
        counts = rng.integers(1, n_max + 1, q)
        off = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        s = np.round(rng.uniform(0, 120, off[-1]), 3)
        d = np.round(rng.uniform(0.2, 15, off[-1]), 3)
        return np.stack([s, s + d], axis=1), off

    r, ro = one(4)
    e, eo = one(4)
    return r, ro, e, eo


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(20260101)
    r, ro, e, eo = _make(rng, args.queries)
    refs = [[tuple(x) for x in r[ro[k]:ro[k + 1]].tolist()] for k in range(args.queries)]
    ests = [[tuple(x) for x in e[eo[k]:eo[k + 1]].tolist()] for k in range(args.queries)]

    union_iou_batch(r[: ro[1]], [0, ro[1]], e[: eo[1]], [0, eo[1]])  # compile kernels
    match_greedy_batch(r, ro, e, eo, iou_threshold=0.5)

    def core() -> tuple[np.ndarray, np.ndarray]:
        return union_iou_batch(r, ro, e, eo), match_greedy_batch(r, ro, e, eo, iou_threshold=0.5)

    def python() -> tuple[list[float], list[list[tuple[int, int]]]]:
        return ([_py_union_iou(a, b) for a, b in zip(refs, ests, strict=True)],
                [_py_greedy(a, b, 0.5) for a, b in zip(refs, ests, strict=True)])

    t_core, t_py = [], []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        iou, pairs = core()
        t_core.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        piou, ppairs = python()
        t_py.append(time.perf_counter() - t0)
    np.testing.assert_allclose(iou, piou, atol=1e-12)
    flat = [(k, i, j) for k, ps in enumerate(ppairs) for i, j in ps]
    assert [tuple(x) for x in pairs.tolist()] == flat, "greedy matchings differ"

    print(f"cores available: {os.cpu_count()}; queries: {args.queries}; "
          f"intervals: {len(r)} ref + {len(e)} est; repeats: {args.repeats}")
    print(f"interval core (numba batch): min {min(t_core):.3f} s  median "
          f"{statistics.median(t_core):.3f} s")
    print(f"pure Python baseline:        min {min(t_py):.3f} s  median "
          f"{statistics.median(t_py):.3f} s")
    print(f"speed-up (median): {statistics.median(t_py) / statistics.median(t_core):.1f}x; "
          f"results identical: yes ({len(flat)} matches)")


if __name__ == "__main__":
    main()

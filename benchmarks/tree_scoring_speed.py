"""Cold and warm ``timingbench score`` CPU seconds per clip: this tree against a baseline tree.

    git worktree add --detach /tmp/tb-base a0a9f01        # the baseline tree
    .venv/bin/python benchmarks/tree_scoring_speed.py --corpus /tmp/corp/validation --n 40 \\
        --baseline-tree /tmp/tb-base
    (render the corpus with: timingbench render --corpus validation --out /tmp/corp/validation)

The first N clips of the corpus (and their prompts) are scored by the command line of each
tree, exactly as a user runs it (``--separation dsp``, chance credit on, one job):

- **cold**: an empty feature cache (decode, feature bank, family evidence, every event);
- **warm**: the same clips again with the cache the cold run filled and no finished parts,
  the re-scoring a user runs after changing a threshold.

Each tree runs in its own interpreter (two versions of one package), alternately
(baseline, this tree, baseline, this tree), and the lower of each tree's two figures is
kept. Reported: process CPU seconds (user + system of the command and its children) per
clip, the ratio this tree / baseline, and whether the two trees wrote the same
``events.jsonl`` and ``clips.jsonl`` bytes (the rows that differ are listed).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ROW_FILES = ("events.jsonl", "clips.jsonl")


def _subset(corpus: Path, n: int, out: Path) -> tuple[Path, Path, int]:
    clips = sorted(p for p in (corpus / "clips").iterdir() if p.is_file())[:n]
    (out / "clips").mkdir(parents=True)
    for p in clips:
        os.symlink(p, out / "clips" / p.name)
    ids = {p.stem.split("__")[0] for p in clips}
    rows = [line for line in (corpus / "prompts.jsonl").read_text().splitlines()
            if line.strip() and json.loads(line)["id"] in ids]
    (out / "prompts.jsonl").write_text("\n".join(rows) + "\n")
    return out / "clips", out / "prompts.jsonl", len(clips)


def _cpu_of(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    # run inside the tree: ``python -m`` puts the working folder first on sys.path, before
    # PYTHONPATH, so a run started elsewhere would import the package found there instead
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _run(tree: Path, clips: Path, prompts: Path, work: Path) -> tuple[float, float]:
    """(cold, warm) CPU seconds of scoring the subset with ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1"}
    cache, out = work / "cache", work / "out"
    for p in (cache, out):
        shutil.rmtree(p, ignore_errors=True)
    cmd = [sys.executable, "-m", "timingbench.cli", "score", str(clips), "--prompts", str(prompts),
           "--out", str(out), "--separation", "dsp", "--jobs", "1", "--cache", str(cache)]
    cold = _cpu_of(cmd, env, tree)
    for name in ROW_FILES:
        shutil.copyfile(out / name, work / name)
    shutil.rmtree(out)
    warm = _cpu_of(cmd, env, tree)
    for name in ROW_FILES:
        if (out / name).read_bytes() != (work / name).read_bytes():
            print(f"warning: {tree}: the warm run wrote other {name} rows than the cold run")
    return cold, warm


def _row_differences(a: Path, b: Path) -> list[str]:
    """The lines of the row files that differ between two runs' folders."""
    out = []
    for name in ROW_FILES:
        la, lb = (p.read_text(encoding="utf-8").splitlines() for p in (a / name, b / name))
        if len(la) != len(lb):
            out.append(f"{name}: {len(la)} rows against {len(lb)}")
        out.extend(f"{name}:{i}: {x}\n{' ' * (len(name) + len(str(i)) + 3)}{y}"
                   for i, (x, y) in enumerate(zip(la, lb, strict=False), start=1) if x != y)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, required=True, help="a rendered corpus (clips/ and prompts.jsonl)")
    ap.add_argument("--n", type=int, default=40, help="clips to score (default 40)")
    ap.add_argument("--baseline-tree", type=Path, required=True, help="source tree of the baseline")
    args = ap.parse_args()
    trees = {"baseline": args.baseline_tree.resolve(), "this tree": REPO}
    with tempfile.TemporaryDirectory() as tmp:
        clips, prompts, n = _subset(args.corpus, args.n, Path(tmp) / "subset")
        best: dict[str, list[float]] = {}
        for _ in range(2):
            for name, tree in trees.items():
                cold, warm = _run(tree, clips, prompts, Path(tmp) / name.replace(" ", "-"))
                b = best.setdefault(name, [cold, warm])
                best[name] = [min(b[0], cold), min(b[1], warm)]
        print(f"{n} clips of {args.corpus}, CPU s per clip (lower of two alternating runs)")
        print(f"{'tree':<10} {'cold':>8} {'warm':>8}")
        for name, (cold, warm) in best.items():
            print(f"{name:<10} {cold / n:>8.3f} {warm / n:>8.3f}")
        (bc, bw), (tc, tw) = best["baseline"], best["this tree"]
        print(f"{'ratio':<10} {tc / bc:>7.2f}x {tw / bw:>7.2f}x")
        diff = _row_differences(Path(tmp) / "baseline", Path(tmp) / "this-tree")
        print("rows: identical" if not diff else f"rows: {len(diff)} differ")
        for line in diff:
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

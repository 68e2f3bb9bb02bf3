"""Peak memory of ``timingbench score`` on one whole-mix clip, 35 s and 1 h long, per tree.

    git worktree add --detach /tmp/tb-base e0d825a        # a baseline tree (optional)
    .venv/bin/python benchmarks/score_memory.py [--lengths 35,3600] [--separation auto,dsp] \\
        [--baseline-tree /tmp/tb-base] [--dir /tmp/timingbench-score-memory]

Each clip is a stereo 44.1 kHz FLAC (a 440 Hz tone with a 0.5 Hz tremolo, made once with
ffmpeg in ``--dir`` and kept for re-runs) named after prompt ``tb1-0008`` of the shipped
prompt set, whose one event is a ``music_end`` (a whole-mix event: no family evidence).
Each run is the command line a user types, ``timingbench score CLIPS --prompts P --out OUT
--cache CACHE --separation S``, with a fresh results folder and an empty feature cache, in
its own interpreter started inside its tree (``python -m`` puts that tree's package first).
Its peak resident set size is read with ``resource.getrusage(RUSAGE_CHILDREN)`` by a small
wrapper process that runs nothing else, so no figure carries memory over from another (the
largest process counts: the command or one of its workers).

With ``--stages`` the same command runs once more per tree and length in one interpreter
that prints its resident set size after the imports and the command parser, after decoding,
after the feature bank, after the family evidence and after the rows (``VmRSS`` and the peak
``VmHWM`` from ``/proc/self/status``), and whether torch was imported by then.

With ``--baseline-tree`` the baseline runs first and the two trees' ``events.jsonl`` and
``clips.jsonl`` are compared byte for byte.

The target: at most 350 MB peak for the 1-hour file, flat in the file's length.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROMPT_ID = "tb1-0008"
ROW_FILES = ("events.jsonl", "clips.jsonl")
TARGET_MB = 350.0

WRAPPER = r"""
import json, resource, subprocess, sys
rc = subprocess.run(sys.argv[2:], cwd=sys.argv[1], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).returncode
if rc:
    sys.exit(f"exit status {rc}")
print(json.dumps({"peak_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""

STAGES = r"""
import functools, sys
def mem():
    d = dict(line.split(":", 1) for line in open("/proc/self/status"))
    return int(d["VmRSS"].split()[0]) / 1024, int(d["VmHWM"].split()[0]) / 1024
def say(stage):
    rss, hwm = mem()
    print(f"STAGE {stage}\t{rss:.1f}\t{hwm:.1f}\t{'torch' in sys.modules}", file=sys.stderr, flush=True)
say("interpreter")
import timingbench.cli as cli
cli.build_parser()
say("imports and parser")
import timingbench.features as features
import timingbench.runner as runner
def after(mod, name, stage):
    f = getattr(mod, name)
    @functools.wraps(f)
    def g(*a, **k):
        out = f(*a, **k)
        say(stage)
        return out
    setattr(mod, name, g)
after(runner, "load_clip", "decode")
after(features, "get_bank", "feature bank")
after(runner, "family_evidence_for", "family evidence")
after(runner, "score_bank", "rows (detectors, gates, chance)")
cli.main(sys.argv[1:])
say("end")
"""


def make_clip(directory: Path, seconds: int) -> Path:
    """A stereo 44.1 kHz FLAC tone of ``seconds`` named after :data:`PROMPT_ID` (made once)."""
    path = directory / f"clips-{seconds}s" / f"{PROMPT_ID}.flac"
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name("part.flac")
    src = f"sine=frequency=440:sample_rate=44100:duration={seconds}"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", src, "-af", "tremolo=f=0.5:d=0.5",
                    "-ac", "2", "-c:a", "flac", str(tmp)], check=True)
    tmp.rename(path)
    return path


def write_prompt(directory: Path) -> Path:
    """The one prompt :data:`PROMPT_ID` of the shipped prompt set, as its own file."""
    rows = [line for line in (REPO / "prompts" / "timingbench-v1.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip() and json.loads(line)["id"] == PROMPT_ID]
    kinds = [e["kind"] for e in json.loads(rows[0])["events"]]
    if kinds != ["music_end"]:
        raise SystemExit(f"{PROMPT_ID} no longer holds one music_end event ({kinds}); pick another whole-mix prompt")
    path = directory / "prompts.jsonl"
    path.write_text(rows[0] + "\n", encoding="utf-8")
    return path


def score_command(clips: Path, prompts: Path, out: Path, cache: Path, separation: str) -> list[str]:
    return [sys.executable, "-m", "timingbench", "score", str(clips), "--prompts", str(prompts), "--out", str(out),
            "--cache", str(cache), "--separation", separation]


def peak_mb(tree: Path, cmd: list[str]) -> float:
    """Peak RSS (MB) of ``cmd`` run inside ``tree``, read by a wrapper process that runs nothing else."""
    res = subprocess.run([sys.executable, "-c", WRAPPER, str(tree), *cmd], capture_output=True, text=True)
    if res.returncode:
        raise SystemExit(f"{' '.join(cmd)} (in {tree}) failed: {res.stderr.strip()[-2000:]}")
    return float(json.loads(res.stdout.strip().splitlines()[-1])["peak_kb"]) / 1024.0


def stages(tree: Path, cmd: list[str]) -> list[tuple[str, float, float, bool]]:
    """(stage, RSS MB, peak MB, torch imported) after each stage of one in-process run of ``cmd``."""
    res = subprocess.run([sys.executable, "-c", STAGES, *cmd[3:]], cwd=tree, capture_output=True, text=True)
    if res.returncode:
        raise SystemExit(f"staged run in {tree} failed: {res.stderr.strip()[-2000:]}")
    rows = []
    for line in res.stderr.splitlines():
        if line.startswith("STAGE "):
            name, rss, hwm, torch = line[len("STAGE "):].split("\t")
            rows.append((name, float(rss), float(hwm), torch == "True"))
    return rows


def run_tree(label: str, tree: Path, clips: dict[int, Path], prompts: Path, separations: list[str],
             work: Path, with_stages: bool) -> dict[tuple[int, str], Path]:
    """Measure one tree; returns the results folder of each (length, separation)."""
    outs = {}
    for sep in separations:
        for seconds, clip in clips.items():
            out, cache = work / f"{label}-{sep}-{seconds}s", work / f"{label}-{sep}-{seconds}s-cache"
            for p in (out, cache):
                shutil.rmtree(p, ignore_errors=True)
            mb = peak_mb(tree, score_command(clip.parent, prompts, out, cache, sep))
            outs[(seconds, sep)] = out
            flag = "" if seconds < 3600 or mb <= TARGET_MB else f"  (over the {TARGET_MB:.0f} MB target)"
            print(f"{label:<9} --separation {sep:<5} {seconds:>6} s: peak {mb:7.1f} MB{flag}", flush=True)
            if with_stages:
                staged_out, staged_cache = work / "staged", work / "staged-cache"
                for p in (staged_out, staged_cache):
                    shutil.rmtree(p, ignore_errors=True)
                for name, rss, hwm, torch in stages(tree, score_command(clip.parent, prompts, staged_out,
                                                                         staged_cache, sep)):
                    print(f"    after {name:<32} RSS {rss:7.1f} MB  peak {hwm:7.1f} MB  torch imported: {torch}")
    return outs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", default="35,3600", help="clip lengths in seconds, comma-separated")
    ap.add_argument("--separation", default="auto,dsp", help="--separation values to run, comma-separated")
    ap.add_argument("--baseline-tree", type=Path, default=None, help="a checkout to measure first, the same way")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/timingbench-score-memory"),
                    help="where the clips are kept between runs")
    ap.add_argument("--stages", action="store_true", help="also print the resident set size after each stage")
    args = ap.parse_args()
    clips = {int(s): make_clip(args.dir, int(s)) for s in args.lengths.split(",")}
    prompts = write_prompt(args.dir)
    separations = [s.strip() for s in args.separation.split(",") if s.strip()]
    with tempfile.TemporaryDirectory(prefix="tb-score-memory-") as tmp:
        work = Path(tmp)
        base = None
        if args.baseline_tree is not None:
            base = run_tree("baseline", args.baseline_tree.resolve(), clips, prompts, separations, work, args.stages)
        this = run_tree("this tree", REPO, clips, prompts, separations, work, args.stages)
        if base is not None:
            differ = [f"{k[0]} s {k[1]} {f}" for k, out in this.items() for f in ROW_FILES
                      if (out / f).read_bytes() != (base[k] / f).read_bytes()]
            print("rows (events.jsonl, clips.jsonl) against the baseline: "
                  + ("identical" if not differ else "differ in " + ", ".join(differ)))


if __name__ == "__main__":
    main()

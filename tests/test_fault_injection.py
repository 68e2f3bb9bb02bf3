"""A scoring run killed at 20 random moments and resumed each time ends byte-identical."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import timingbench

OUTPUTS = ("events.jsonl", "clips.jsonl", "summary.json")
KILLS = 20
ROOT = Path(timingbench.__file__).resolve().parent.parent


def _command(corpus: Path, out: Path, cache: Path) -> list[str]:
    return [sys.executable, "-c", "import sys; from timingbench.cli import main; sys.exit(main())",
            "score", str(corpus / "clips"), "--prompts", str(corpus / "prompts.jsonl"),
            "--out", str(out), "--separation", "dsp", "--family-evidence", "none",
            "--cache", str(cache), "--jobs", "2"]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _run(cmd: list[str]) -> float:
    t0 = time.monotonic()
    proc = subprocess.run(cmd, env=_env(), capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return time.monotonic() - t0


def _killed_run(cmd: list[str], after_s: float) -> bool:
    """Start ``cmd`` and SIGKILL its whole process group after ``after_s``; True if it was still running."""
    proc = subprocess.Popen(cmd, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        proc.wait(timeout=after_s)
        return False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return True


@pytest.mark.slow
def test_run_killed_at_20_random_points_resumes_to_identical_outputs(tmp_path: Path) -> None:
    from timingbench.render import render_recipe

    corpus = tmp_path / "corpus"
    rows = []
    recipes = ("silence_then_start", "end_cut", "energy_increase")
    for k in range(6):
        rc = render_recipe(recipes[k % 3], seed=2300 + k, out_dir=corpus, duration_s=8.0,
                           clip_id=f"c{k}")
        rows.append(rc.prompt)
    (corpus / "prompts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    ref = tmp_path / "ref"
    full_s = _run(_command(corpus, ref, tmp_path / "cache-ref"))
    reference = {n: (ref / n).read_bytes() for n in OUTPUTS}
    assert len(reference["clips.jsonl"].splitlines()) == 6

    rng = random.Random(20)
    killed = 0
    parts_at_kill: list[int] = []
    for trial in range(KILLS):
        # a uniform moment of a whole run: start-up, decoding, workers, cache writes, parts, assembly
        out, cache = tmp_path / f"out{trial}", tmp_path / f"cache{trial}"
        killed += _killed_run(_command(corpus, out, cache), rng.uniform(0.0, full_s))
        parts_at_kill.append(len(list((out / ".parts").glob("*.json"))) if (out / ".parts").is_dir() else 0)
        _run(_command(corpus, out, cache))  # the same command resumes
        for name in OUTPUTS:
            assert (out / name).read_bytes() == reference[name], (trial, name)
        parts = sorted((out / ".parts").iterdir())
        assert [p.name for p in parts] == sorted(p.name for p in (ref / ".parts").iterdir())
        for part in parts:
            assert part.read_bytes() == (ref / ".parts" / part.name).read_bytes(), (trial, part.name)
    print(f"kills inside a run: {killed}/{KILLS}; finished parts at each kill: {parts_at_kill}")
    assert killed >= KILLS * 3 // 4  # the kills landed inside a run, not after it had finished
    assert any(0 < n < 6 for n in parts_at_kill)  # some kills fell between finished clips

"""One scoring run per ``--out``: the results-folder lock (``timingbench.runlock``)."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from timingbench.cli import main
from timingbench.config import Config
from timingbench.runlock import LOCK_NAME, RunLock, RunLockedError
from timingbench.runner import score_folder


def _hold(out: str, ready: mp.synchronize.Event, done: mp.synchronize.Event) -> None:
    with RunLock(out):
        ready.set()
        done.wait(30)


@pytest.fixture
def held(tmp_path: Path):
    """A child process holding the lock of ``tmp_path / 'out'``; yields (out, pid)."""
    out = tmp_path / "out"
    out.mkdir()
    ctx = mp.get_context("fork")
    ready, done = ctx.Event(), ctx.Event()
    proc = ctx.Process(target=_hold, args=(str(out), ready, done))
    proc.start()
    assert ready.wait(20)
    try:
        yield out, proc.pid
    finally:
        done.set()
        proc.join(20)


#: A valid prompts file (the prompts are read before the results folder is locked).
ONE_PROMPT = ('{"id": "p1", "family": "single_event", "text": "x", "duration_s": 10.0, "events": '
              '[{"id": "p1/e1", "kind": "music_end", "family": "mix", "time_s": 5.0}], "tempo": null}\n')


def test_second_run_on_the_same_out_stops_at_once(held, config: Config, tmp_path: Path) -> None:
    out, pid = held
    (tmp_path / "clips").mkdir()
    (tmp_path / "p.jsonl").write_text(ONE_PROMPT, encoding="utf-8")
    t0 = time.perf_counter()
    with pytest.raises(RunLockedError) as err:
        score_folder(tmp_path / "clips", tmp_path / "p.jsonl", out, config)
    assert time.perf_counter() - t0 < 2.0
    msg = str(err.value)
    assert str(out) in msg and f"pid {pid}" in msg and socket.gethostname() in msg and "--out" in msg


def test_cli_reports_the_held_folder_and_exits_1(held, tmp_path: Path, capsys) -> None:
    out, pid = held
    prompts = tmp_path / "p.jsonl"
    prompts.write_text(ONE_PROMPT, encoding="utf-8")
    (tmp_path / "clips").mkdir()
    rc = main(["score", str(tmp_path / "clips"), "--prompts", str(prompts), "--out", str(out)])
    assert rc == 1
    err = capsys.readouterr().err
    assert "results folder is in use" in err and f"pid {pid}" in err


def test_lock_is_released_and_removed_after_a_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with RunLock(out) as lock:
        info = json.loads((out / LOCK_NAME).read_text(encoding="utf-8"))
        assert info["pid"] == os.getpid() and info["host"] == socket.gethostname()
        assert lock.stale is None
    assert not (out / LOCK_NAME).exists()
    with RunLock(out):  # free again
        pass


def test_stale_lock_of_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    # a run killed with SIGKILL leaves its lock file behind; the kernel dropped its flock
    code = ("import sys, os; from timingbench.runlock import RunLock; "
            "RunLock(sys.argv[1]).acquire(); os.kill(os.getpid(), 9)")
    proc = subprocess.run([sys.executable, "-c", code, str(out)], env={**os.environ, "PYTHONPATH": os.getcwd()},
                          check=False)
    assert proc.returncode == -9
    left = json.loads((out / LOCK_NAME).read_text(encoding="utf-8"))
    with RunLock(out) as lock:
        assert lock.stale is not None and lock.stale["pid"] == left["pid"]


def _race(out: str, start: mp.synchronize.Event, results: mp.Queue) -> None:
    start.wait(20)
    try:
        with RunLock(out):
            results.put("won")
            time.sleep(3.0)
    except RunLockedError:
        results.put("refused")


def test_simultaneous_runs_exactly_one_wins(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    ctx = mp.get_context("fork")
    start, results = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_race, args=(str(out), start, results)) for _ in range(6)]
    for p in procs:
        p.start()
    start.set()
    got = sorted(results.get(timeout=30) for _ in procs)
    for p in procs:
        p.join(20)
    assert got == ["refused"] * 5 + ["won"]

"""Executors: the local pool and a real local Ray instance score a rendered corpus identically.

One Ray instance (2 CPUs, no dashboard) is shared by the whole module. Worker deaths are
injected with the ``TIMINGBENCH_FAULT_DIR`` hook: a marker file ``<clip>.exit`` holding
``n`` makes the next ``n`` workers that pick up that clip end their process with
``os._exit``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

import timingbench
from timingbench.cli import main
from timingbench.config import load_config
from timingbench.errors import ParameterError
from timingbench.executors import FAULT_ENV, LocalExecutor, RayExecutor, RayOptions
from timingbench.runner import PARTS, ScoreOptions, score_folder

OPTS = ScoreOptions(separation="dsp", family_evidence="none")
REPO = Path(timingbench.__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three rendered clips and two extra samples of the first prompt (the fault targets)."""
    from timingbench.render import render_recipe

    root = tmp_path_factory.mktemp("ray_corpus")
    rows, truth = [], []
    for recipe, seed in (("silence_then_start", 3101), ("end_cut", 3102), ("energy_increase", 3103)):
        rc = render_recipe(recipe, seed=seed, out_dir=root, duration_s=8.0)
        rows.append(rc.prompt)
        truth.extend(rc.truth)
    (root / "truth.jsonl").write_text("".join(json.dumps(r) + "\n" for r in truth))
    clips = root / "clips"
    first = sorted(clips.glob("*.wav"))[0]
    for k in (7, 8):
        shutil.copyfile(first, clips / f"{first.stem}__{k}.wav")
    (root / "prompts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


@pytest.fixture(scope="module")
def faults(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("faults")


@pytest.fixture(scope="module")
def ray_cluster(faults: Path):
    """A local Ray instance on loopback with 2 CPUs, shared by every Ray test here."""
    import ray
    if ray.is_initialized():
        ray.shutdown()
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
             object_store_memory=200 * 1024**2,
             runtime_env={"env_vars": {"PYTHONPATH": path, FAULT_ENV: str(faults)}})
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def local_run(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("local") / "r"
    score_folder(corpus / "clips", corpus / "prompts.jsonl", out, load_config(), opts=OPTS, jobs=1)
    return out


def _same_bytes(a: Path, b: Path) -> None:
    for name in ("events.jsonl", "clips.jsonl"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


# ------------------------------------------------------------------ local executor


def test_local_pool_yields_every_index_once() -> None:
    items = list(range(7))
    got = dict(LocalExecutor(2).imap(abs, [-i for i in items], label=str))
    assert got == {i: i for i in items}
    assert dict(LocalExecutor(1).imap(abs, [-3, 4], label=str)) == {0: 3, 1: 4}


def test_local_pool_matches_serial(corpus: Path, local_run: Path, tmp_path: Path) -> None:
    score_folder(corpus / "clips", corpus / "prompts.jsonl", tmp_path / "r", load_config(),
                 opts=OPTS, executor=LocalExecutor(2))
    _same_bytes(local_run, tmp_path / "r")


def test_ray_missing_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(ParameterError, match=r"timingbench\[ray\]"):
        RayExecutor(RayOptions())


def test_ray_options_without_the_ray_executor_are_an_error(corpus: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["score", str(corpus / "clips"), "--prompts", str(corpus / "prompts.jsonl"),
               "--out", str(tmp_path / "r"), "--ray-address", "auto"])
    assert rc == 1 and "need --executor ray" in capsys.readouterr().err


def test_bad_ray_options_are_rejected_before_ray_starts() -> None:
    with pytest.raises(ParameterError, match="cpus"):
        RayExecutor(RayOptions(cpus_per_task=0))
    with pytest.raises(ParameterError, match="max-in-flight"):
        RayExecutor(RayOptions(max_in_flight=0))


# ------------------------------------------------------------------ ray executor


def test_ray_bounds_work_in_flight(ray_cluster) -> None:
    ex = RayExecutor(RayOptions(max_in_flight=2))
    seen = []
    out = {}
    for i, r in ex.imap(abs, [-i for i in range(6)], label=lambda x: f"n{x}"):
        seen.append(ex.in_flight)
        out[i] = r
    assert out == {i: i for i in range(6)} and max(seen) <= 2
    assert "2 CPUs" in ex.describe() and "0 failed" in ex.describe()
    # a Ray driver never forks: the local pool's workers come from a fork server
    assert dict(LocalExecutor(2).imap(abs, [-1, -2, -3], label=str)) == {0: 1, 1: 2, 2: 3}


def test_ray_scores_byte_identical_and_resumes(ray_cluster, corpus: Path, local_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "ray"
    score_folder(corpus / "clips", corpus / "prompts.jsonl", out, load_config(), opts=OPTS,
                 executor=RayExecutor(RayOptions()))
    _same_bytes(local_run, out)
    # a killed driver: one part lost; the same command scores only that clip, same bytes
    part = sorted((out / PARTS).glob("*.json"))[1]
    part.unlink()
    (out / "events.jsonl").unlink()
    score_folder(corpus / "clips", corpus / "prompts.jsonl", out, load_config(), opts=OPTS,
                 executor=RayExecutor(RayOptions()))
    assert part.is_file()
    _same_bytes(local_run, out)


def test_ray_worker_death_is_retried_and_twice_is_an_error_row(
    ray_cluster, corpus: Path, local_run: Path, faults: Path, tmp_path: Path,
) -> None:
    first = sorted((corpus / "clips").glob("*.wav"))[0].stem
    once, always = f"{first}__7.wav", f"{first}__8.wav"
    (faults / f"{once}.exit").write_text("1")
    (faults / f"{always}.exit").write_text("2")
    out = tmp_path / "ray"
    ex = RayExecutor(RayOptions(retries=1))
    res = score_folder(corpus / "clips", corpus / "prompts.jsonl", out, load_config(), opts=OPTS, executor=ex)
    assert (faults / f"{once}.exit").read_text() == "0" and (faults / f"{always}.exit").read_text() == "0"
    clips = {c["clip"]: c for c in res.clips}
    local = {json.loads(x)["clip"]: json.loads(x) for x in (local_run / "clips.jsonl").read_text().splitlines()}
    # the clip whose worker died once costs nothing: its row equals the local one
    assert clips[once] == local[once]
    # the clip whose worker died on both attempts is an error row; the run went on
    assert clips[always]["error"] and "2 attempts" in clips[always]["error"]
    # its events still count, as not delivered, with the error as their reason
    assert {(e["outcome"], e["error"]) for e in res.events if e["clip"] == always} == {("none", clips[always]["error"])}
    assert not (out / PARTS / f"{always}.json").exists()
    assert ex.failed == 1 and "1 failed" in ex.describe()
    assert {c for c in clips if c != always} == {c for c in local if c != always}
    assert all(clips[c] == local[c] for c in clips if c != always)
    assert [e for e in res.events if e["clip"] != always] == [
        json.loads(x) for x in (local_run / "events.jsonl").read_text().splitlines()
        if json.loads(x)["clip"] != always]
    # the same command again (no more faults) scores only the failed clip: local bytes
    score_folder(corpus / "clips", corpus / "prompts.jsonl", out, load_config(), opts=OPTS,
                 executor=RayExecutor(RayOptions()))
    _same_bytes(local_run, out)


def test_score_command_with_ray_executor(ray_cluster, corpus: Path, local_run: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli"
    rc = main(["score", str(corpus / "clips"), "--prompts", str(corpus / "prompts.jsonl"), "--out", str(out),
               "--separation", "dsp", "--family-evidence", "none", "--executor", "ray",
               "--ray-cpus-per-clip", "1", "--ray-max-in-flight", "3"])
    assert rc == 0
    _same_bytes(local_run, out)
    assert "ray: 1 node, 2 CPUs" in capsys.readouterr().err


def _calibration(corpus: Path, out: Path, command: str, *extra: str) -> int:
    return main([command, "--annotations", str(corpus / "truth.jsonl"), "--clips", str(corpus / "clips"),
                 "--prompts", str(corpus / "prompts.jsonl"), "--separation", "dsp",
                 "--family-evidence", "none", "--out", str(out), *extra])


def test_calibration_commands_on_ray_match_local(ray_cluster, corpus: Path, tmp_path: Path) -> None:
    for ex in ("local", "ray"):
        assert _calibration(corpus, tmp_path / ex, "confusion", "--executor", ex) == 0
        assert _calibration(corpus, tmp_path / ex, "floors", "--executor", ex) == 0
        assert _calibration(corpus, tmp_path / ex, "sweep", "--executor", ex) == 0
    for name in ("confusion_events.jsonl", "confusion.json", "floors.json"):
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "ray" / name).read_bytes(), name
    assert len((tmp_path / "ray" / "confusion_events.jsonl").read_text().splitlines()) >= 3
    sweeps = [json.loads((tmp_path / ex / "sweep.json").read_text()) for ex in ("local", "ray")]
    for s in sweeps:
        s.pop("seconds")
    assert sweeps[0] == sweeps[1]


@pytest.mark.slow
def test_gain_check_on_ray_matches_local(ray_cluster, corpus: Path, tmp_path: Path) -> None:
    for ex in ("local", "ray"):
        assert _calibration(corpus, tmp_path / ex, "gain-check", "--executor", ex) == 0
    assert (tmp_path / "local" / "gain_check.json").read_bytes() == (tmp_path / "ray" / "gain_check.json").read_bytes()
    rep = json.loads((tmp_path / "ray" / "gain_check.json").read_text())
    assert rep["failed"] == [] and rep["n_events"] >= 3

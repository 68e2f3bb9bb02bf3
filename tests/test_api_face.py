"""The API is a face: score_folder runs the runner's folder loop and keeps its rows as made."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import timingbench
from timingbench import runner
from timingbench.jsonio import dumps_row, json_values

REPO = Path(__file__).resolve().parents[1]


def _random_value(rng: np.random.Generator, depth: int = 0) -> object:
    kind = int(rng.integers(0, 11 if depth < 3 else 7))
    leaves = [None, True, int(rng.integers(-5, 5)), float(rng.normal()), "s", math.nan, np.float32(rng.normal())]
    if kind < 7:
        return leaves[kind]
    if kind == 7:
        return [_random_value(rng, depth + 1) for _ in range(int(rng.integers(0, 4)))]
    if kind == 8:
        return tuple(_random_value(rng, depth + 1) for _ in range(int(rng.integers(0, 4))))
    if kind == 9:
        return np.array([rng.normal(), np.inf, -1.0])
    keys = ["a", 1, 2.5, False, None]
    return {keys[int(rng.integers(0, 5))]: _random_value(rng, depth + 1) for _ in range(int(rng.integers(0, 4)))}


@pytest.mark.parametrize("seed", range(60))
def test_json_values_equals_a_json_round_trip(seed: int) -> None:
    row = {"v": _random_value(np.random.default_rng(seed)), "p": Path("x/y.wav")}
    assert json_values(row) == json.loads(dumps_row(row))
    assert dumps_row(json_values(row)) == dumps_row(row)


def test_score_folder_runs_the_runner_loop_in_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    loop = runner.score_matched

    def spy(*args: object, **kw: object) -> runner.RunResult:
        calls.append(kw.get("parts_dir"))
        return loop(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(runner, "score_matched", spy)
    (tmp_path / "clips").mkdir()
    res = timingbench.score_folder(tmp_path / "clips")
    assert calls == [None]  # the folder loop, writing no parts
    assert res.clips == () and res.out_dir is None and list(tmp_path.iterdir()) == [tmp_path / "clips"]
    assert res.summary["missing"]  # every packaged prompt lacks a clip


def test_api_module_is_at_most_500_lines() -> None:
    assert len((REPO / "timingbench" / "api.py").read_text(encoding="utf-8").splitlines()) <= 500

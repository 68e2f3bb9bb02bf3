"""Rendered systems -> score -> `timingbench compare` (issue 12's "done when").

The systems come from ``benchmarks/compare_rendered_systems.py``: one shared prompt set of
music starts after silence and abrupt endings, answered on time, 0.8 s late, or (for the
music starts) never, plus a copy of the on-time clips delayed by 20 ms.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from timingbench.cli import main

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "compare_rendered_systems.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("compare_rendered_systems", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


crs = _bench()


def _instructed(rows: list[dict[str, Any]]) -> list[tuple[str, str, str, float]]:
    return [(p["id"], p["text"], e["kind"], e["time_s"]) for p in rows for e in p["events"]]


def _check_prompt_rows_agree(build: dict[str, Any]) -> None:
    ref = build["rows"][crs.ON_TIME]
    shared = [json.loads(line) for line in build["prompts"].read_text().splitlines()]
    assert shared == ref
    for name, rows in build["rows"].items():
        assert rows == ref, name
        assert _instructed(rows) == _instructed(ref), name


def _check_truth(build: dict[str, Any]) -> None:
    instructed = {e["id"]: e["time_s"] for p in build["rows"][crs.ON_TIME] for e in p["events"]}
    for name, rows in build["truth"].items():
        for t in rows:
            want = instructed[t["event_id"]]
            if name == crs.LATE:
                want += crs.LATE_OFFSET_S
            if name == crs.OMITS and "silence" in next(
                    p["text"] for p in build["rows"][name] if t["event_id"].startswith(p["id"] + "/")):
                assert t["occurred"] is False and t["onset_s"] is None
            else:
                assert t["onset_s"] == pytest.approx(want, abs=1e-4), (name, t)


def _metrics(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["name"]: s["metrics"] for s in data["systems"]}


def _pair(data: dict[str, Any], metric: str, a: str, b: str) -> dict[str, Any]:
    return next(p for p in data["pairwise"] if p["metric"] == metric and p["a"] == a and p["b"] == b)


def test_two_rendered_systems_on_six_prompts(tmp_path: Path) -> None:
    build = crs.build_systems(tmp_path / "systems", n_prompts=6, duration_s=12.0,
                              systems=(crs.ON_TIME, crs.LATE))
    _check_prompt_rows_agree(build)
    _check_truth(build)
    results = crs.score_systems(build, tmp_path / "results", jobs=2)
    out = tmp_path / "cmp"
    assert main(crs.compare_args(results, out, plots=False)) == 0
    data = json.loads((out / "comparison.json").read_text())
    m = _metrics(data)
    assert m[crs.ON_TIME]["on_time_rate"]["value"] == 1.0
    assert m[crs.LATE]["off_time_rate"]["value"] == 1.0
    assert m[crs.LATE]["error_median_s"]["value"] == pytest.approx(0.8, abs=0.05)
    assert m[crs.LATE]["late_fraction"]["value"] == 1.0
    # Six prompts are below compare.min_prompts (10): the clear gap is still never ranked.
    pair = _pair(data, "on_time_rate", crs.ON_TIME, crs.LATE)
    assert pair["resolved"] is False
    assert pair["verdict"] == "not resolved: fewer than 10 prompts with data in both systems"


@pytest.mark.slow
def test_rendered_systems_rank_and_tiny_shift_is_not_resolved(tmp_path: Path) -> None:
    build = crs.build_systems(tmp_path / "systems", n_prompts=12, duration_s=12.0)
    _check_prompt_rows_agree(build)
    _check_truth(build)
    results = crs.score_systems(build, tmp_path / "results", jobs=2)
    out = tmp_path / "cmp"
    assert main(crs.compare_args(results, out)) == 0
    data = json.loads((out / "comparison.json").read_text())
    m = _metrics(data)

    rank = data["ranks"]["on_time_rate"]
    assert rank[crs.ON_TIME] == 1
    assert rank[crs.ON_TIME] < rank[crs.OMITS] < rank[crs.LATE]
    assert _pair(data, "on_time_rate", crs.ON_TIME, crs.LATE)["verdict"] == f"{crs.ON_TIME} better"
    assert _pair(data, "on_time_rate", crs.ON_TIME, crs.OMITS)["verdict"] == f"{crs.ON_TIME} better"

    assert m[crs.LATE]["error_median_s"]["value"] == pytest.approx(0.8, abs=0.05)
    assert m[crs.LATE]["late_fraction"]["value"] == 1.0
    late_line = next(line for line in (out / "comparison.txt").read_text().splitlines()
                     if line.startswith(crs.LATE) and "dragging" in line)
    assert "dragging (late)" in late_line

    assert m[crs.OMITS]["none_rate"]["value"] == pytest.approx(0.5, abs=0.1)
    # An omitted start's music may still begin after a few hundred ms of silence, which
    # is scored as an early (off-time) start rather than none.
    assert m[crs.OMITS]["none_rate|kind=music_start_after_silence"]["value"] >= 0.8
    assert m[crs.OMITS]["on_time_rate|kind=music_end"]["value"] == 1.0

    # The same clips 20 ms later: the same on-time credit, a difference that is never ranked.
    assert rank[crs.SHIFTED] == rank[crs.ON_TIME] == 1
    tiny = _pair(data, "on_time_rate", crs.ON_TIME, crs.SHIFTED)
    assert tiny["resolved"] is False
    assert tiny["verdict"].startswith("not resolved")
    assert {p.name for p in out.glob("*.png")} == {"on_time_by_family.png", "signed_errors.png"}

"""End to end on the command line: rendered clips -> `timingbench score` -> `timingbench compare`."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

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


@pytest.mark.slow
def test_score_then_compare_ranks_on_time_above_late(tmp_path: Path) -> None:
    build = crs.build_systems(tmp_path / "systems", n_prompts=2, duration_s=12.0,
                              systems=(crs.ON_TIME, crs.LATE))
    for name, clips in build["clips"].items():
        assert main(["score", str(clips), "--prompts", str(build["prompts"]), "--out", str(tmp_path / name),
                     "--separation", "dsp", "--family-evidence", "none", "--no-chance",
                     "--cache", str(tmp_path / "cache")]) == 0
    out = tmp_path / "cmp"
    assert main(["compare", str(tmp_path / crs.ON_TIME), str(tmp_path / crs.LATE),
                 "--names", f"{crs.ON_TIME},{crs.LATE}", "--out", str(out)]) == 0
    data = json.loads((out / "comparison.json").read_text())
    metrics = {s["name"]: s["metrics"] for s in data["systems"]}
    assert metrics[crs.ON_TIME]["on_time_rate"]["value"] == 1.0
    assert metrics[crs.LATE]["on_time_rate"]["value"] == 0.0
    assert metrics[crs.LATE]["error_median_s"]["value"] == pytest.approx(0.8, abs=0.05)
    # Two prompts are below compare.min_prompts: the difference is not resolved, never ranked.
    pair = next(p for p in data["pairwise"] if p["metric"] == "on_time_rate")
    assert pair["resolved"] is False

"""Tests of `timingbench compare` on synthetic results folders in the formats §3 format."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from timingbench.cli import main
from timingbench.compare import (
    compare_systems,
    format_text,
    load_results,
    write_plots,
    write_report,
)
from timingbench.compare.stats import (
    bootstrap_counts,
    estimate,
    macro_rate,
    rate_series,
    row_series,
    timbre_verdicts,
    weighted_quantile,
)
from timingbench.compare.synthetic import SyntheticSystem, write_synthetic_results
from timingbench.config import Config
from timingbench.errors import ParameterError, TimingbenchError
from timingbench.jsonio import write_json, write_jsonl
from timingbench.prompts import Prompt, load_prompts

PROMPTS = Path(__file__).resolve().parent.parent / "prompts" / "timingbench-v1.jsonl"


@pytest.fixture(scope="module")
def prompts() -> list[Prompt]:
    ps = list(load_prompts(PROMPTS).prompts.values())
    # 80 single-event, 40 sequence and 20 tempo prompts keep the tests fast.
    return ps[:80] + ps[100:140] + ps[200:220]


@pytest.fixture(scope="module")
def fast(config: Config) -> Config:
    return config.with_value("compare.bootstrap_n", 400)


def _systems(tmp: Path, prompts: list[Prompt], specs: dict[str, SyntheticSystem], *, samples: int = 2,
             **kw: str) -> list:
    out = []
    for i, (name, spec) in enumerate(specs.items()):
        d = write_synthetic_results(tmp / name, prompts=prompts, system=spec, samples=samples, seed=100 + i, **kw)
        out.append(load_results(d, name=name))
    return out


def _pair(comp, metric: str, a: str, b: str):  # type: ignore[no-untyped-def]
    return next(p for p in comp.pairwise if p.metric == metric and {p.a, p.b} == {a, b})


def test_ranks_on_time_late_and_omitting_systems(tmp_path: Path, prompts: list[Prompt], fast: Config) -> None:
    systems = _systems(tmp_path, prompts, {
        "ontime": SyntheticSystem(),
        "late": SyntheticSystem(offset_s=0.8, jitter_s=0.1),
        "omits": SyntheticSystem(omit_entry_fraction=0.5),
    })
    comp = compare_systems(systems, config=fast)
    assert comp.ranks["on_time_rate"] == {"ontime": 1, "omits": 2, "late": 3}
    assert comp.ranks["none_rate"]["omits"] == 3
    est = comp.estimates
    assert est["ontime"]["on_time_rate"].value > 0.99
    assert est["late"]["on_time_rate"].value < 0.05
    assert est["late"]["error_median_s"].value == pytest.approx(0.8, abs=0.03)
    assert est["late"]["late_fraction"].value == 1.0
    entries = est["omits"]["on_time_rate|kind=instrument_entry"].value
    assert entries == pytest.approx(0.5, abs=0.08)
    assert est["omits"]["on_time_rate|kind=instrument_exit"].value == 1.0
    p = _pair(comp, "on_time_rate", "ontime", "late")
    assert p.resolved and p.verdict == "ontime better"
    assert p.diff.lo > 0.9
    text = format_text(comp)
    assert "dragging (late)" in text
    assert "MIXED" not in text


def test_tiny_difference_is_not_resolved(tmp_path: Path, prompts: list[Prompt], fast: Config) -> None:
    systems = _systems(tmp_path, prompts, {
        "a": SyntheticSystem(offset_s=0.0, jitter_s=0.2),
        "b": SyntheticSystem(offset_s=0.02, jitter_s=0.2),
    })
    comp = compare_systems(systems, config=fast)
    p = _pair(comp, "on_time_rate", "a", "b")
    assert not p.resolved and p.verdict.startswith("not resolved")
    assert comp.ranks["on_time_rate"] == {"a": 1, "b": 1}


def test_timing_difference_below_the_family_floor_is_not_resolved(
    tmp_path: Path, prompts: list[Prompt], fast: Config
) -> None:
    # Both consistently late, 50 ms apart with little jitter: the interval excludes 0, yet
    # 50 ms is below the bass floor (218 ms) and above the percussion floor (8 ms).
    systems = _systems(tmp_path, prompts, {
        "late": SyntheticSystem(offset_s=0.80, jitter_s=0.005),
        "later": SyntheticSystem(offset_s=0.85, jitter_s=0.005),
    })
    comp = compare_systems(systems, config=fast)
    bass = _pair(comp, "error_median_s|family=bass", "late", "later")
    assert bass.diff.hi < 0  # the interval alone would resolve it
    assert not bass.resolved and "floor of 218 ms" in bass.verdict
    perc = _pair(comp, "error_median_s|family=percussion", "late", "later")
    assert perc.resolved and perc.verdict == "late earlier"
    overall = _pair(comp, "error_median_s", "late", "later")
    assert not overall.resolved and "floor" in overall.verdict


def test_refuses_mixed_config_unless_allowed(tmp_path: Path, prompts: list[Prompt], fast: Config) -> None:
    a = load_results(write_synthetic_results(tmp_path / "a", prompts=prompts, system=SyntheticSystem(),
                                             seed=1, config_hash="aaaa"), name="a")
    b = load_results(write_synthetic_results(tmp_path / "b", prompts=prompts, system=SyntheticSystem(),
                                             seed=2, config_hash="bbbb"), name="b")
    with pytest.raises(TimingbenchError, match="refusing to compare: different config hashes"):
        compare_systems([a, b], config=fast)
    comp = compare_systems([a, b], config=fast, allow_mixed=True)
    assert comp.mixed
    text = format_text(comp)
    tables = text.strip().split("\n\n")
    assert len(tables) >= 5 and all(t.startswith("MIXED COMPARISON") for t in tables)
    write_report(comp, tmp_path / "out")
    for name in ("systems.csv", "pairwise.csv", "by_family.csv", "by_kind.csv"):
        rows = list(csv.DictReader(open(tmp_path / "out" / name, encoding="utf-8")))
        assert rows and all(r["mixed"].startswith("MIXED COMPARISON") for r in rows)
    assert json.loads((tmp_path / "out" / "comparison.json").read_text())["mixed"]


def test_refuses_different_prompt_sets(tmp_path: Path, prompts: list[Prompt], fast: Config) -> None:
    a = load_results(write_synthetic_results(tmp_path / "a", prompts=prompts, system=SyntheticSystem(), seed=1),
                     name="a")
    b = load_results(write_synthetic_results(tmp_path / "b", prompts=prompts[:50], system=SyntheticSystem(),
                                             seed=2), name="b")
    with pytest.raises(TimingbenchError, match="different prompt sets"):
        compare_systems([a, b], config=fast)


def _row(clip: str, pid: str, k: int, eid: str, outcome: str, err: float | None) -> dict:
    return {"clip": clip, "prompt_id": pid, "sample": k, "event_id": eid, "kind": "instrument_entry",
            "family": "percussion", "instructed_s": 6.0, "tolerance_s": 0.5, "outcome": outcome,
            "detected_s": None if err is None else 6.0 + err, "error_s": err, "gates": {},
            "rejected_by": None, "detector": "x", "p_chance": 0.0, "floor_s": 0.008}


def _folder(d: Path, events: list[dict], clips: list[dict], **summary: object) -> Path:
    write_jsonl(d / "events.jsonl", events)
    write_jsonl(d / "clips.jsonl", clips)
    write_json(d / "summary.json", {"config_version": "v", "config_hash": "h", **summary})
    return d


def _clip(clip: str, pid: str, k: int, error: str | None = None) -> dict:
    return {"clip": clip, "prompt_id": pid, "sample": k, "duration_s": 30.0, "duration_ok": True,
            "tempo": None, "timbre_match": None, "error": error}


def test_macro_average_weighs_each_prompt_once(tmp_path: Path, fast: Config) -> None:
    # Prompt p1: one sample, on time. Prompt p2: three samples, never delivered.
    # Macro (per prompt, then averaged) = (1 + 0) / 2 = 0.5; pooled would be 1 / 4.
    ev = [_row("p1.wav", "p1", 0, "p1/e1", "on_time", 0.0)]
    ev += [_row(f"p2__{k}.wav", "p2", k, "p2/e1", "none", None) for k in (1, 2, 3)]
    cl = [_clip("p1.wav", "p1", 0)] + [_clip(f"p2__{k}.wav", "p2", k) for k in (1, 2, 3)]
    a = load_results(_folder(tmp_path / "a", ev, cl), name="a")
    ev_b = [_row("p1.wav", "p1", 0, "p1/e1", "on_time", 0.1), _row("p2.wav", "p2", 0, "p2/e1", "on_time", 0.1)]
    b = load_results(_folder(tmp_path / "b", ev_b, [_clip("p1.wav", "p1", 0), _clip("p2.wav", "p2", 0)]),
                     name="b")
    comp = compare_systems([a, b], config=fast)
    assert comp.estimates["a"]["on_time_rate"].value == 0.5
    assert comp.estimates["a"]["none_rate"].value == 0.5
    assert comp.estimates["b"]["on_time_rate"].value == 1.0


def test_scoring_errors_count_as_not_delivered_and_missing_prompts_are_disclosed(tmp_path: Path,
                                                                                 fast: Config) -> None:
    ev = [_row("p1.wav", "p1", 0, "p1/e1", "on_time", 0.0), _row("p2.wav", "p2", 0, "p2/e1", "none", None)]
    cl = [_clip("p1.wav", "p1", 0), _clip("p2.wav", "p2", 0, error="cannot decode")]
    a = load_results(_folder(tmp_path / "a", ev, cl, missing=["p3"]), name="a")
    assert [e["clip"] for e in a.events] == ["p1.wav", "p2.wav"]
    assert len(a.errors) == 1 and a.missing == ["p3"]
    ev_b = [_row(f"p{i}.wav", f"p{i}", 0, f"p{i}/e1", "on_time", 0.0) for i in (1, 2, 3)]
    b = load_results(_folder(tmp_path / "b", ev_b, [_clip(f"p{i}.wav", f"p{i}", 0) for i in (1, 2, 3)]), name="b")
    comp = compare_systems([a, b], config=fast)
    # the clip that could not be scored stays in the rates: its event was not delivered
    assert comp.estimates["a"]["on_time_rate"].value == 0.5
    assert comp.estimates["a"]["on_time_rate"].n_prompts == 2
    assert comp.estimates["a"]["duration_ok_rate"].value == 0.5
    text = format_text(comp)
    line = next(x for x in text.splitlines() if x.startswith("a ") and "%" not in x and x.rstrip().endswith("1"))
    assert line.split()[-2:] == ["1", "1"]  # one missing prompt, one scoring error


@pytest.mark.parametrize(("field", "value", "message"), [
    ("outcome", "late", "field 'outcome'"),
    ("error_s", None, "field 'error_s'"),
    ("p_chance", 1.5, "field 'p_chance'"),
    ("kind", "drop", "field 'kind'"),
])
def test_malformed_events_row_names_file_line_and_field(
    tmp_path: Path, field: str, value: object, message: str
) -> None:
    rows = [_row("p1.wav", "p1", 0, "p1/e1", "on_time", 0.0), _row("p2.wav", "p2", 0, "p2/e1", "on_time", 0.0)]
    rows[1][field] = value
    d = _folder(tmp_path / "a", rows, [_clip("p1.wav", "p1", 0), _clip("p2.wav", "p2", 0)])
    with pytest.raises(TimingbenchError, match=f"events.jsonl:2: {message}"):
        load_results(d, name="a")


def test_missing_results_files_raise(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(TimingbenchError, match="summary.json"):
        load_results(tmp_path / "empty", name="x")


def test_weighted_quantile_matches_numpy_median_for_equal_weights(rng: np.random.Generator) -> None:
    values = rng.normal(size=201)
    s = row_series(prompt_index=np.arange(201), values=values, n_prompts=201)
    got = weighted_quantile(s, np.ones((1, 201)), 0.5)[0]
    np.testing.assert_allclose(got, np.median(values), atol=0)


@pytest.mark.parametrize("series", [rate_series, row_series])
@pytest.mark.parametrize(("index", "values", "match"), [
    ([0, 1], [1.0], "1-D of one length"), ([0, 3], [1.0, 0.0], "out of range"), ([-1], [1.0], "out of range"),
])
def test_series_refuse_bad_prompt_indices(series: object, index: list[int], values: list[float], match: str) -> None:
    kw = {"hits" if series is rate_series else "values": values}
    with pytest.raises(ParameterError, match=match):
        series(prompt_index=index, n_prompts=3, **kw)  # type: ignore[operator]


def test_bootstrap_resamples_whole_prompts_and_is_seeded() -> None:
    c1 = bootstrap_counts(n_prompts=30, n_boot=50, seed=5)
    c2 = bootstrap_counts(n_prompts=30, n_boot=50, seed=5)
    np.testing.assert_array_equal(c1, c2)
    np.testing.assert_array_equal(c1.sum(axis=1), np.full(50, 30.0))
    # Prompt 0 has 100 samples all credited, prompts 1..29 one uncredited sample each:
    # macro rate is 1/30 in every resample in proportion to how often prompt 0 is drawn.
    idx = np.r_[np.zeros(100, dtype=np.int64), np.arange(1, 30)]
    hits = np.r_[np.ones(100), np.zeros(29)]
    s = rate_series(prompt_index=idx, hits=hits, n_prompts=30)
    np.testing.assert_allclose(macro_rate(s, c1), c1[:, 0] / 30.0)
    e = estimate(s, c1, level=0.95)
    assert e.value == pytest.approx(1 / 30) and e.lo <= e.value <= e.hi


@pytest.mark.parametrize(("value", "expected"), [
    (None, []), (True, [True]), ({"e1": True, "e2": False}, [True, False]),
    ([{"match": "mismatch"}, {"verdict": "exempt"}], [False]), ({"match": True}, [True]),
])
def test_timbre_verdicts_shapes(value: object, expected: list[bool]) -> None:
    assert timbre_verdicts(value) == expected


def test_cli_writes_tables_and_plots(tmp_path: Path, prompts: list[Prompt],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    a = write_synthetic_results(tmp_path / "ra", prompts=prompts[:40], system=SyntheticSystem(), seed=1)
    b = write_synthetic_results(tmp_path / "rb", prompts=prompts[:40], system=SyntheticSystem(offset_s=0.8), seed=2)
    out = tmp_path / "cmp"
    assert main(["compare", str(a), str(b), "--names", "A,B", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "A - B" in text and "A better" in text
    for name in ("comparison.json", "systems.csv", "by_kind.csv", "by_family.csv", "pairwise.csv",
                 "on_time_by_family.png", "signed_errors.png"):
        assert (out / name).stat().st_size > 0, name
    assert (out / "on_time_by_family.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads((out / "comparison.json").read_text())
    assert [s["name"] for s in data["systems"]] == ["A", "B"]
    assert main(["compare", str(a), str(b), "--names", "A", "--out", str(out)]) == 1


def test_plots_written_and_rushing_detected(tmp_path: Path, prompts: list[Prompt], fast: Config) -> None:
    systems = _systems(tmp_path, prompts[:30], {"x": SyntheticSystem(), "y": SyntheticSystem(offset_s=-1.0)},
                       samples=1)
    comp = compare_systems(systems, config=fast)
    paths = write_plots(comp, tmp_path / "plots")
    assert all(p.stat().st_size > 10_000 for p in paths)
    assert comp.estimates["y"]["error_median_s"].value < -0.9

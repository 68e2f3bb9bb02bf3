"""Inter-annotator agreement: real two-annotator onsets (vocadito) and a designed rendered set."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from two_annotators import (
    LAYER1_DESIGN,
    VOCADITO_PROMPT,
    shared_two_annotator_set,
    vocadito_onsets,
    vocadito_rows,
)

from timingbench.annotation_io import validate_annotation_rows
from timingbench.calibration.agreement import (
    agreement_report,
    cohen_kappa,
    delta_summary,
    event_index,
    match_onsets,
)
from timingbench.cli import main
from timingbench.errors import ParameterError
from timingbench.prompts import load_prompts


def greedy_matches(ref: list[float], est: list[float], window: float) -> list[tuple[float, float]]:
    """Maximum one-to-one matching of two sorted onset lists within a window.

    Every reference's window has the same width, so taking references in time order and
    giving each the earliest free estimate inside its window is optimal.
    """
    ref, est = sorted(ref), sorted(est)
    used = [False] * len(est)
    out = []
    for r in ref:
        for j, e in enumerate(est):
            if not used[j] and abs(e - r) <= window + 1e-12:
                used[j] = True
                out.append((r, e))
                break
    return out


@pytest.fixture(scope="module")
def vocadito_set(tmp_path_factory, realdata: Path) -> Path:
    root = tmp_path_factory.mktemp("vocadito")
    (root / "annotations.jsonl").write_text("".join(json.dumps(r) + "\n" for r in vocadito_rows(realdata)))
    (root / "prompts.jsonl").write_text(json.dumps(VOCADITO_PROMPT) + "\n")
    return root


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    return shared_two_annotator_set(tmp_path_factory)


# ----------------------------------------------------------------------------- metric units


@pytest.mark.parametrize(
    ("pairs", "expected"),
    [
        ([(1, 1), (0, 0)], 1.0),
        ([(1, 0), (0, 1)], -1.0),
        # 20 items: 10 both yes, 5 both no, 3 only a, 2 only b (p_o = 0.75)
        ([(1, 1)] * 10 + [(0, 0)] * 5 + [(1, 0)] * 3 + [(0, 1)] * 2,
         (0.75 - (13 / 20 * 12 / 20 + 7 / 20 * 8 / 20)) / (1 - (13 / 20 * 12 / 20 + 7 / 20 * 8 / 20))),
    ],
)
def test_cohen_kappa_known_values(pairs, expected):
    assert cohen_kappa(pairs) == pytest.approx(expected, abs=1e-12)


def test_cohen_kappa_undefined_when_one_label_everywhere():
    assert cohen_kappa([(True, True)] * 4) is None
    assert cohen_kappa([]) is None


def test_delta_summary_counts_an_exact_edge_as_within():
    s = delta_summary([0.025, -0.05, 0.1000000001, 0.2], within_s=[0.025, 0.05, 0.1])
    assert s["within"] == {"25ms": 0.25, "50ms": 0.5, "100ms": 0.75}
    assert s["median_s"] == pytest.approx(0.075) and s["max_s"] == 0.2
    assert s["p90_s"] == pytest.approx(np.percentile([0.025, 0.05, 0.1, 0.2], 90))
    empty = delta_summary([], within_s=[0.05])
    assert empty["n"] == 0 and empty["median_s"] is None and empty["within"] == {"50ms": None}


def test_match_onsets_agrees_with_an_independent_matcher(rng):
    ref = np.sort(rng.uniform(0, 20, 40))
    keep = rng.random(40) < 0.8
    est = np.sort(np.concatenate([ref[keep] + rng.uniform(-0.08, 0.08, int(keep.sum())),
                                  rng.uniform(0, 20, 5)]))
    f, p, r, pairs = match_onsets(ref.tolist(), est.tolist(), window_s=0.05)
    expected = greedy_matches(ref.tolist(), est.tolist(), 0.05)
    assert 0 < len(pairs) == len(expected) < 40
    assert all(abs(x - y) <= 0.05 for x, y in pairs)
    assert f == pytest.approx(2 * len(expected) / (40 + est.size))
    assert p == pytest.approx(len(expected) / est.size) and r == pytest.approx(len(expected) / 40)
    assert match_onsets([], [1.0], window_s=0.05)[:3] == (0.0, 0.0, 0.0)


# ----------------------------------------------------------------------------- vocadito


def test_vocadito_inventory_agreement_real_annotators(vocadito_set: Path, realdata: Path, tmp_path):
    a1, a2 = vocadito_onsets(realdata, "A1"), vocadito_onsets(realdata, "A2")
    assert (len(a1), len(a2)) == (59, 64)
    expected = greedy_matches(a1, a2, 0.05)
    assert len(expected) == 53  # the dataset's own figure (shared/realdata/README.md)
    out = tmp_path / "agree"
    assert main(["annotations", "agreement", str(vocadito_set / "annotations.jsonl"), "--out", str(out)]) == 0
    rep = json.loads((out / "agreement.json").read_text())
    assert (out / "agreement.png").stat().st_size > 10_000
    (pair,) = rep["pairs"]
    assert (pair["a"], pair["b"]) == ("A1", "A2")
    inv = pair["layer2"]["by_family"]["vocals"]
    assert (inv["n_a"], inv["n_b"], inv["matched"]) == (59, 64, 53)
    assert inv["f_measure"] == pytest.approx(round(2 * 53 / 123, 4))
    assert inv["precision"] == pytest.approx(round(53 / 64, 4)) and inv["recall"] == pytest.approx(round(53 / 59, 4))
    d = np.round(np.abs([x - y for x, y in expected]), 6)
    md = inv["matched_delta"]
    assert md["median_s"] == pytest.approx(float(np.median(d)), abs=1e-9)
    assert md["p90_s"] == pytest.approx(float(np.percentile(d, 90)), abs=1e-6)
    assert md["within"]["25ms"] == pytest.approx(round(float(np.mean(d <= 0.025)), 4))
    assert md["within"]["25ms"] < md["within"]["50ms"] == 1.0
    # Layer 1: the first vocal onset, which both annotators placed at the same instant
    l1 = pair["layer1"]
    assert l1["occurred"]["table"]["both_yes"] == 1 and l1["occurred"]["kappa"] is None
    assert l1["onset_delta"]["by_family"]["vocals"]["median_s"] == pytest.approx(abs(a1[0] - a2[0]))


def test_vocadito_stats_count_real_notes(vocadito_set: Path, capsys):
    assert main(["annotations", "stats", str(vocadito_set / "annotations.jsonl"), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["layer2"]["rows"] == 59 + 64
    assert stats["layer2"]["per_clip"] == {"labelled_clips": 2, "mean": 61.5, "median": 61.5, "min": 59, "max": 64}
    assert stats["layer1"]["by_kind"]["instrument_entry"] == {"labels": 2, "occurred": 2, "not_occurred": 0}


# ----------------------------------------------------------------------------- designed set


def test_designed_layer1_kappa_and_deltas(two):
    from timingbench.annotation_io import load_annotations
    from timingbench.config import load_config

    ann = load_annotations(two.annotations)
    assert not ann.errors
    rep = agreement_report(ann, events=event_index(load_prompts(two.prompts).prompts),
                           params=load_config().params.annotations)
    (pair,) = rep["pairs"]
    occ = pair["layer1"]["occurred"]
    # design: 4 both yes, 1 only ann_a, 1 both no
    assert occ["table"] == {"both_yes": 4, "a_only": 1, "b_only": 0, "both_no": 1}
    p_o, p_e = 5 / 6, 5 / 6 * 4 / 6 + 1 / 6 * 2 / 6
    assert occ["kappa"] == pytest.approx(round((p_o - p_e) / (1 - p_e), 4))
    assert occ["kappa"] == pytest.approx(4 / 7, abs=1e-4)
    heard = [(d[3][1], d[4][1]) for d in LAYER1_DESIGN if d[3][0] and d[4][0]]
    deltas = np.round([abs(a - b) for a, b in heard], 6)
    s = pair["layer1"]["onset_delta"]["all"]
    assert s["n"] == 4
    assert s["deltas_s"] == pytest.approx(sorted([0.001, 0.02, 0.06, 0.15]), abs=2e-6)
    assert s["median_s"] == pytest.approx(float(np.median(deltas)), abs=2e-6)
    assert s["p90_s"] == pytest.approx(0.123, abs=2e-6)
    assert s["within"] == {"25ms": 0.5, "50ms": 0.5, "100ms": 0.75}
    fam = pair["layer1"]["onset_delta"]["by_family"]
    assert fam["mix"]["median_s"] == pytest.approx(0.105, abs=2e-6)
    assert fam["percussion"]["deltas_s"] == pytest.approx([0.02], abs=2e-6)
    assert fam["bass"]["deltas_s"] == pytest.approx([0.001], abs=2e-6)
    char = pair["layer1"]["onset_delta"]["by_character"]
    assert set(char) == {"hard", "mixed"} and char["mixed"]["deltas_s"] == pytest.approx([0.06], abs=2e-6)
    assert pair["layer1"]["onset_character"] == {"n": 4, "agree": 3, "kappa": 0.0}


def test_designed_layer2_matches(two):
    from timingbench.annotation_io import load_annotations
    from timingbench.config import load_config

    rep = agreement_report(load_annotations(two.annotations), events={}, params=load_config().params.annotations)
    inv = rep["pairs"][0]["layer2"]
    a = {r["id"][2:]: r for r in two.rows if r.get("id", "").startswith("a-")}
    b = {r["id"][2:]: r for r in two.rows if r.get("id", "").startswith("b-")}
    assert len(a) == len(b) >= 10
    for fam in {r["family"] for r in a.values()}:
        keys = [k for k in a if a[k]["family"] == fam]
        want = sum(1 for k in keys if abs(round(b[k]["onset_s"] - a[k]["onset_s"], 6)) <= 0.05)
        got = inv["by_family"][fam]
        assert (got["n_a"], got["n_b"], got["matched"]) == (len(keys), len(keys), want), fam
    total = sum(1 for k in a if abs(round(b[k]["onset_s"] - a[k]["onset_s"], 6)) <= 0.05)
    assert inv["all"]["matched"] == total < len(a)
    assert inv["all"]["f_measure"] == pytest.approx(round(total / len(a), 4))
    assert inv["family_blind"]["matched"] >= total
    assert inv["shared_clips"] == len(LAYER1_DESIGN)


def test_agreement_needs_two_annotators(tmp_path: Path, capsys):
    ann = validate_annotation_rows([(1, {"clip": "x.wav", "source": "kick", "family": "percussion",
                                         "onset_s": 1.0, "annotator": "solo"})], source="one.jsonl")
    from timingbench.config import load_config

    with pytest.raises(ParameterError, match="at least two annotators"):
        agreement_report(ann, events={}, params=load_config().params.annotations)
    f = tmp_path / "one.jsonl"
    f.write_text(json.dumps({"clip": "x.wav", "source": "kick", "family": "percussion", "onset_s": 1.0,
                             "annotator": "solo"}) + "\n")
    assert main(["annotations", "agreement", str(f)]) == 1
    assert "at least two annotators" in capsys.readouterr().err


def test_vocadito_detector_against_both_annotators(vocadito_set: Path, realdata: Path, tmp_path, capsys):
    """The real first vocal onset: the detector beside two human labels of it."""
    common = ["--annotations", str(vocadito_set / "annotations.jsonl"),
              "--clips", str(realdata / "vocadito" / "Audio"), "--separation", "dsp",
              "--family-evidence", "none", "--cache", str(tmp_path / "cache")]
    assert main(["confusion", *common, "--no-chance", "--out", str(tmp_path / "c")]) == 0
    (ev,) = [json.loads(x) for x in (tmp_path / "c" / "confusion_events.jsonl").read_text().splitlines()]
    assert ev["outcome"] == "on_time" and ev["class"] == "correct_credit"
    assert main(["floors", *common, "--out", str(tmp_path / "f")]) == 0
    assert "human spread" in capsys.readouterr().out
    hum = json.loads((tmp_path / "f" / "floors.json").read_text())["human_floor"]["by_family"]["vocals"]
    a1, a2 = vocadito_onsets(realdata, "A1")[0], vocadito_onsets(realdata, "A2")[0]
    assert hum["detector_vs"]["A1"]["median_s"] == pytest.approx(abs(ev["detected_s"] - a1), abs=6e-5)
    assert hum["detector_vs"]["A2"]["median_s"] == pytest.approx(abs(ev["detected_s"] - a2), abs=6e-5)
    assert hum["annotators_vs_each_other"]["band_s"] == pytest.approx([abs(a1 - a2)] * 2, abs=1e-6)
    # both annotators put the first onset on the same instant; the detector is tens of ms late
    expected = "within" if abs(ev["detected_s"] - a1) <= abs(a1 - a2) + 1e-6 else "above"
    assert hum["verdict"] == expected


def test_vocadito_tool_writes_the_same_rows(realdata: Path, tmp_path: Path):
    import subprocess
    import sys

    tool = Path(__file__).resolve().parent.parent / "tools" / "vocadito_annotations.py"
    subprocess.run([sys.executable, str(tool), str(realdata / "vocadito"), str(tmp_path)], check=True,
                   capture_output=True)
    got = [json.loads(x) for x in (tmp_path / "annotations.jsonl").read_text().splitlines()]
    key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
    assert sorted(map(key, got)) == sorted(map(key, vocadito_rows(realdata)))
    assert load_prompts(tmp_path / "prompts.jsonl").prompts["vocadito_1"].events[0].family == "vocals"

"""The detector against two annotators: consensus, per-annotator floors, the human band."""

from __future__ import annotations

import json

import numpy as np
import pytest
from two_annotators import LAYER1_DESIGN, shared_two_annotator_set

from timingbench.annotation_io import Layer1Row, validate_annotation_rows
from timingbench.calibration.floors import plot_floors
from timingbench.calibration.human_floor import consensus_truth, format_human_floor, human_floor
from timingbench.cli import main

#: family -> (detected minus truth, [annotator b minus annotator a per event]); a is the truth.
DESIGN = {
    "percussion": (0.005, [0.03, 0.03, 0.03, 0.03]),
    "bass": (0.100, [0.02]),
    "mix": (0.050, [0.02, 0.04, 0.06, 0.08]),
}


def _rows_and_annotations():
    rows, ann = [], []
    t = 2.0
    for fam, (det, deltas) in DESIGN.items():
        for i, d in enumerate(deltas):
            clip, eid = f"{fam}{i}.wav", f"{fam}{i}/e1"
            rows.append({"clip": clip, "event_id": eid, "family": fam, "outcome": "on_time",
                         "instructed_s": t, "tolerance_s": 0.5, "detected_s": round(t + det, 6)})
            for name, onset in (("a", t), ("b", round(t + d, 6))):
                ann.append({"clip": clip, "event_id": eid, "occurred": True, "onset_s": onset,
                            "onset_character": "hard", "salience": 2, "annotator": name})
    # an ending only annotator a heard; the detector found nothing
    rows.append({"clip": "mixx.wav", "event_id": "mixx/e1", "family": "mix", "outcome": "none",
                 "instructed_s": t, "tolerance_s": 0.5, "detected_s": None})
    ann.append({"clip": "mixx.wav", "event_id": "mixx/e1", "occurred": True, "onset_s": t,
                "onset_character": "gradual", "salience": 1, "annotator": "a"})
    ann.append({"clip": "mixx.wav", "event_id": "mixx/e1", "occurred": False, "onset_s": None,
                "onset_character": None, "salience": None, "annotator": "b"})
    return rows, validate_annotation_rows(enumerate(ann, 1), source="mem.jsonl")


@pytest.fixture
def floor():
    rows, ann = _rows_and_annotations()
    assert not ann.errors
    hf = human_floor(rows, ann, offset_match_s=0.25, band_quantiles=[0.25, 0.75])
    assert hf is not None
    return hf


def test_consensus_is_the_mean_and_drops_disagreements():
    rows = [Layer1Row("c.wav", "c/e1", True, 1.0, "hard", 3, "b", "dev"),
            Layer1Row("c.wav", "c/e1", True, 1.1, "soft", 3, "a", "dev"),
            Layer1Row("c.wav", "c/e1", True, 1.3, "soft", 3, "c", "dev"),
            Layer1Row("d.wav", "d/e1", True, 1.0, "hard", 3, "a", "dev"),
            Layer1Row("d.wav", "d/e1", False, None, None, None, "b", "dev")]
    truth, disagree = consensus_truth(rows)
    assert disagree == [("d.wav", "d/e1")] and list(truth) == [("c.wav", "c/e1")]
    c = truth[("c.wav", "c/e1")]
    assert c.onset_s == pytest.approx(1.133333, abs=1e-6) and c.onset_character == "soft"
    assert c.annotator == "consensus" and c.extra["annotators"] == ["a", "b", "c"]


def test_detector_against_each_annotator_mean_and_band(floor):
    rep = floor.report
    assert rep["annotators"] == ["a", "b"]
    assert rep["occurred_disagreements"] == [{"clip": "mixx.wav", "event_id": "mixx/e1"}]
    for fam, (det, deltas) in DESIGN.items():
        v = rep["by_family"][fam]
        vs_a = [det] * len(deltas)
        vs_b = [abs(det - d) for d in deltas]
        vs_mean = [abs(det - d / 2) for d in deltas]
        assert v["detector_vs"]["a"]["median_s"] == pytest.approx(np.median(vs_a), abs=1e-6)
        assert v["detector_vs"]["b"]["median_s"] == pytest.approx(np.median(vs_b), abs=1e-6)
        assert v["detector_vs_annotators"]["median_s"] == pytest.approx(np.median(vs_a + vs_b), abs=1e-6)
        assert v["detector_vs_annotators"]["n"] == 2 * len(deltas)
        assert v["detector_vs_mean"]["median_s"] == pytest.approx(np.median(vs_mean), abs=1e-6)
        h = v["annotators_vs_each_other"]
        assert h["n"] == len(deltas)
        assert h["band_s"] == pytest.approx(np.quantile(deltas, [0.25, 0.75]), abs=1e-6)
        assert h["by_pair"]["a/b"]["n"] == len(deltas)
    assert floor.floors["mix"]["n"] == 8  # the pooled floor: every (event, annotator) credit
    assert floor.bands["mix"] == pytest.approx((0.035, 0.065, 0.05), abs=1e-6)


def test_verdicts(floor):
    by = floor.report["by_family"]
    assert (by["percussion"]["verdict"], by["percussion"]["within_human_spread"]) == ("below", True)
    assert (by["mix"]["verdict"], by["mix"]["within_human_spread"]) == ("within", True)
    assert (by["bass"]["verdict"], by["bass"]["within_human_spread"]) == ("above", False)
    text = format_human_floor(floor.report)
    assert "bass: detector median error 90.0 ms against the annotators lies ABOVE the human spread" in text
    assert "mix: detector median error 40.0 ms against the annotators lies within the human spread" in text
    assert "disagree on whether 1 event(s) occurred" in text


def test_classes_against_each_annotator(floor):
    a = {r["event_id"]: r["class"] for r in floor.annotator_rows["a"]}
    b = {r["event_id"]: r["class"] for r in floor.annotator_rows["b"]}
    assert a["mixx/e1"] == "missed" and b["mixx/e1"] == "correct_none"
    assert "mixx/e1" not in {r["event_id"] for r in floor.consensus_rows}
    assert len(floor.consensus_rows) == sum(len(d) for _, d in DESIGN.values())


def test_one_annotator_has_no_human_floor():
    rows, ann = _rows_and_annotations()
    ann.layer1 = [r for r in ann.layer1 if r.annotator == "a"]
    assert human_floor(rows, ann, offset_match_s=0.25, band_quantiles=[0.25, 0.75]) is None


def _band_pixels(path) -> int:
    import matplotlib.image as mpimg

    img = mpimg.imread(str(path))[..., :3]
    # tab:green at alpha 0.2 over white
    target = 0.8 * np.ones(3) + 0.2 * np.array([0.1725, 0.6275, 0.1725])
    return int((np.abs(img - target).max(axis=-1) < 0.02).sum())


def test_floors_plot_draws_the_human_band(floor, tmp_path):
    plot_floors(floor.floors, tmp_path / "with.png", human=floor.bands)
    plot_floors(floor.floors, tmp_path / "without.png")
    assert _band_pixels(tmp_path / "with.png") > 500
    assert _band_pixels(tmp_path / "without.png") == 0


def test_floors_and_confusion_commands_on_two_rendered_annotators(tmp_path_factory, tmp_path, capsys):
    two = shared_two_annotator_set(tmp_path_factory)
    common = ["--annotations", str(two.annotations), "--clips", str(two.clips), "--separation", "dsp",
              "--family-evidence", "none", "--cache", str(tmp_path / "cache")]
    assert main(["confusion", *common, "--no-chance", "--out", str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    assert "against ann_a:" in out and "against ann_b:" in out and "human spread" in out
    conf = json.loads((tmp_path / "c" / "confusion.json").read_text())
    assert conf["n"] == len(LAYER1_DESIGN) - 1  # the consensus leaves out the disagreed ending
    events = {json.loads(x)["event_id"]: json.loads(x)
              for x in (tmp_path / "c" / "confusion_events.jsonl").read_text().splitlines()}

    assert main(["floors", *common, "--out", str(tmp_path / "f")]) == 0
    fl = json.loads((tmp_path / "f" / "floors.json").read_text())
    assert _band_pixels(tmp_path / "f" / "floors.png") > 100
    hum = fl["human_floor"]["by_family"]
    truth = {t["event_id"]: t["onset_s"] for t in two.truth}
    # detector error against each simulated annotator, from the detected onsets and the design
    expect: dict[str, dict[str, list[float]]] = {}
    for recipe, seed, _, da, db in LAYER1_DESIGN:
        eid = f"{recipe}-s{seed}/e1"
        if not (da[0] and db[0]) or events[eid]["outcome"] != "on_time":
            continue
        ev = events[eid]
        for name, d in (("ann_a", da), ("ann_b", db)):
            expect.setdefault(ev["family"], {}).setdefault(name, []).append(
                abs(ev["detected_s"] - (truth[eid] + d[1])))
    assert set(expect) == {"percussion", "bass", "mix"}
    for fam, per in expect.items():
        for name, errs in per.items():
            assert hum[fam]["detector_vs"][name]["median_s"] == pytest.approx(np.median(errs), abs=6e-5)
    # the designed human spread: bass 1 ms, percussion 20 ms, mix 60 and 150 ms
    assert hum["bass"]["annotators_vs_each_other"]["band_s"] == pytest.approx([0.001, 0.001], abs=2e-6)
    assert hum["percussion"]["annotators_vs_each_other"]["band_s"] == pytest.approx([0.02, 0.02], abs=2e-6)
    assert hum["mix"]["annotators_vs_each_other"]["band_s"] == pytest.approx([0.0825, 0.1275], abs=2e-6)
    # the detector is ms-accurate on rendered onsets: outside a 1 ms human spread, inside 20 ms
    assert hum["bass"]["verdict"] == "above" and hum["percussion"]["within_human_spread"] is True
    assert fl["floors"]["percussion"]["n"] == 2

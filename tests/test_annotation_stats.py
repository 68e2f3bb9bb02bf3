"""Dataset statistics of an annotation set, on the designed two-annotator rendered set."""

from __future__ import annotations

import bisect
import json
from collections import Counter

import numpy as np
import pytest
from two_annotators import LAYER1_DESIGN, shared_two_annotator_set

from timingbench.annotation_io import load_annotations
from timingbench.calibration.agreement import event_index
from timingbench.calibration.annotation_stats import (
    annotation_stats,
    displacement_histogram,
    format_stats,
)
from timingbench.cli import main
from timingbench.config import load_config
from timingbench.prompts import load_prompts

EDGES = [-5.0, -2.0, -1.0, -0.5, -0.25, -0.1, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0]


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    return shared_two_annotator_set(tmp_path_factory)


@pytest.fixture(scope="module")
def stats(two):
    ps = load_prompts(two.prompts).prompts
    return annotation_stats(load_annotations(two.annotations), prompts=ps, events=event_index(ps),
                            params=load_config().params.annotations, window_s=load_config().params.search.window_s,
                            clip_names=[t["clip"] for t in two.truth] + ["extra.wav"])


def _bin(v: float) -> int:
    if v < EDGES[0]:
        return 0
    if v > EDGES[-1]:
        return len(EDGES)
    return min(bisect.bisect_right(EDGES, v), len(EDGES) - 1)


def test_displacement_histogram_bins_edges_and_open_ends():
    h = displacement_histogram([-7.0, -5.0, -0.1, 0.0, 0.1, 0.5, 5.0, 6.0], edges_s=EDGES)
    want = Counter(_bin(v) for v in [-7.0, -5.0, -0.1, 0.0, 0.1, 0.5, 5.0, 6.0])
    assert h["counts"] == [want.get(i, 0) for i in range(len(EDGES) + 1)]
    assert h["counts"][0] == 1 and h["counts"][-1] == 1 and sum(h["counts"]) == 8
    assert h["median_s"] == pytest.approx(0.05)
    assert displacement_histogram([], edges_s=EDGES)["median_s"] is None


def test_split_and_layer1_counts(stats, two):
    n_obs = len(two.layer2_truth)
    assert stats["by_split"] == {"validation": {"clips": 6, "events": 6, "layer1_labels": 12,
                                                "layer2_rows": 2 * n_obs, "annotators": ["ann_a", "ann_b"]}}
    l1 = stats["layer1"]
    assert l1["by_kind"] == {
        "instrument_entry": {"labels": 4, "occurred": 4, "not_occurred": 0},
        "music_end": {"labels": 6, "occurred": 3, "not_occurred": 3},
        "music_start_after_silence": {"labels": 2, "occurred": 2, "not_occurred": 0},
    }
    assert l1["by_family"]["mix"] == {"labels": 8, "occurred": 5, "not_occurred": 3}
    assert l1["onset_character"] == {"hard": 7, "soft": 1, "gradual": 1, "not_rated": 0}
    assert l1["salience"] == {"1": 0, "2": 0, "3": 9, "not_rated": 3}
    assert l1["events_without_prompt"] == []


def test_displacement_per_family(stats, two):
    by_event = {p["events"][0]["id"]: p["events"][0] for p in two.prompt_rows}
    disp: dict[str, list[float]] = {}
    for r in two.rows:
        if "event_id" in r and r["occurred"]:
            ev = by_event[r["event_id"]]
            disp.setdefault(ev["family"], []).append(r["onset_s"] - ev["time_s"])
    for fam, vals in disp.items():
        h = stats["displacement"]["by_family"][fam]
        assert h["n"] == len(vals)
        assert h["median_s"] == pytest.approx(float(np.median(vals)), abs=1e-6)
        want = Counter(_bin(round(v, 6)) for v in vals)
        assert h["counts"] == [want.get(i, 0) for i in range(len(EDGES) + 1)], fam
    # the never-delivered ending ann_a heard 0.5 s after the instruction: bin 0.5..1
    assert stats["displacement"]["by_family"]["mix"]["counts"][EDGES.index(0.5) + 1] >= 1
    assert sum(len(v) for v in disp.values()) == 9 == stats["displacement"]["all"]["n"]


def test_unprompted_events_match_an_independent_count(stats, two):
    events = {p["id"]: p["events"] for p in two.prompt_rows}
    unprompted: Counter[str] = Counter()
    observed: Counter[str] = Counter()
    for r in two.rows:
        if "source" not in r:
            continue
        observed[r["family"]] += 1
        evs = events[r["clip"].rsplit(".", 1)[0]]
        if not any(e["family"] == r["family"] and abs(r["onset_s"] - e["time_s"]) <= 5.0 for e in evs):
            unprompted[r["family"]] += 1
    l2 = stats["layer2"]
    assert l2["rows"] == sum(observed.values())
    assert l2["unprompted"] == sum(unprompted.values()) > 0
    assert l2["unprompted_rate"] == pytest.approx(round(sum(unprompted.values()) / sum(observed.values()), 4))
    for fam, n in observed.items():
        assert l2["by_family"][fam]["observed"] == n
        assert l2["by_family"][fam]["unprompted"] == unprompted[fam]
    per = Counter((r["annotator"], r["clip"]) for r in two.rows if "source" in r)
    assert l2["per_clip"]["max"] == max(per.values()) and l2["per_clip"]["labelled_clips"] == len(per)


def test_clips_folder_lists_unlabelled(stats):
    assert stats["clips_folder"] == {"clips": 7, "labelled": 6, "unlabelled": ["extra.wav"],
                                     "labelled_not_in_folder": []}
    text = format_stats(stats)
    assert "unprompted" in text and "displacement from the prompt" in text and "1 not labelled" in text


def test_stats_command_writes_json(two, tmp_path, capsys):
    out = tmp_path / "s"
    assert main(["annotations", "stats", str(two.annotations), "--clips", str(two.clips), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Layer 1 kind" in text and "instrument_entry" in text
    js = json.loads((out / "annotation_stats.json").read_text())
    assert js["clips_folder"]["unlabelled"] == [] and js["clips_folder"]["labelled"] == len(LAYER1_DESIGN)


def test_stats_without_prompts_reports_unknown(tmp_path, capsys):
    f = tmp_path / "a.jsonl"
    f.write_text(json.dumps({"clip": "x.wav", "event_id": "x/e1", "occurred": True, "onset_s": 1.0,
                             "onset_character": "hard", "salience": 2, "annotator": "ana"}) + "\n"
                 + "{not json\n")
    assert main(["annotations", "stats", str(f), "--json"]) == 0
    cap = capsys.readouterr()
    js = json.loads(cap.out)
    assert js["layer1"]["by_kind"] == {"unknown": {"labels": 1, "occurred": 1, "not_occurred": 0}}
    assert js["layer1"]["events_without_prompt"] == ["x/e1"] and js["rejected_rows"] == 1
    assert "a.jsonl:2" in cap.err and "--prompts" in cap.err


def test_stats_refuses_a_missing_clips_folder(two, tmp_path, capsys):
    assert main(["annotations", "stats", str(two.annotations), "--clips", str(tmp_path / "nope")]) == 1
    assert "clips folder not found" in capsys.readouterr().err

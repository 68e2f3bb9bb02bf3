"""Tests of the calibration commands on a small rendered corpus with exact truth."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from timingbench.annotation_io import load_annotations
from timingbench.calibration.confusion import confusion_profile, format_confusion
from timingbench.calibration.evaluate import CLASSES, classify, load_corpus, score_corpus
from timingbench.calibration.floors import localization_floors, plot_floors
from timingbench.calibration.sweep import compare_rows, direction, run_sweep, sweepable
from timingbench.cli import main
from timingbench.config import load_config
from timingbench.features import bank_build_count
from timingbench.params.sets import field_value
from timingbench.runner import ScoreOptions

OPTS = ScoreOptions(separation="dsp", family_evidence="none", chance=False)


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory) -> Path:
    """Whole-mix scenarios: delivered on time, off time, and a never-delivered negative."""
    from timingbench.render import render_recipe

    root = tmp_path_factory.mktemp("cal")
    prompts, truth = [], []
    for recipe, seed, params in (("silence_then_start", 2201, {}), ("end_cut", 2202, {}),
                                 ("end_cut", 2203, {"offset_s": -2.0}),
                                 ("never_delivered", 2204, {"kind": "music_end"})):
        rc = render_recipe(recipe, seed=seed, out_dir=root, duration_s=16.0, **params)
        prompts.append(rc.prompt)
        truth.extend(rc.truth)
    (root / "prompts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in prompts))
    (root / "truth.jsonl").write_text("".join(json.dumps(r) + "\n" for r in truth))
    return root


@pytest.fixture(scope="module")
def corpus(corpus_dir):
    return load_corpus(corpus_dir / "clips", corpus_dir / "prompts.jsonl",
                       load_annotations(corpus_dir / "truth.jsonl"), load_config(), OPTS)


class _Truth:
    def __init__(self, occurred, onset_s):
        self.occurred, self.onset_s = occurred, onset_s


@pytest.mark.parametrize(
    ("outcome", "occurred", "onset", "expected"),
    [
        ("on_time", True, 6.2, "correct_credit"),
        ("on_time", True, 6.5, "correct_credit"),   # exactly on the tolerance edge
        ("on_time", True, 7.5, "false_credit"),
        ("on_time", False, None, "false_credit"),
        ("off_time", False, None, "false_positive"),
        ("off_time", True, 7.5, "off_time"),
        ("none", True, 6.0, "missed"),
        ("none", False, None, "correct_none"),
    ],
)
def test_classify(outcome, occurred, onset, expected):
    assert classify(outcome, _Truth(occurred, onset), instructed_s=6.0, tolerance_s=0.5) == expected


def test_corpus_scores_against_truth(corpus):
    rows = score_corpus(corpus, load_config(), offset_match_s=0.25)
    assert len(rows) == 4
    by_clip = {r["clip"]: r for r in rows}
    classes = sorted(r["class"] for r in rows)
    assert classes.count("correct_credit") == 2
    off = next(r for c, r in by_clip.items() if "end_cut" in c and r["truth_onset_s"] != r["instructed_s"])
    assert off["class"] == "off_time" and off["offset_correct"]
    prof = confusion_profile(rows)
    assert prof["n"] == 4 and set(prof["overall"]) == set(CLASSES)
    assert "residual false credits" in format_confusion(prof)


def test_floors_and_plot(corpus, tmp_path):
    rows = score_corpus(corpus, load_config(), offset_match_s=0.25)
    floors = localization_floors(rows)
    assert set(floors) == {"mix"} and floors["mix"]["n"] >= 2
    assert 0 <= floors["mix"]["median_s"] <= floors["mix"]["max_s"] < 0.1
    plot_floors(floors, tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 5000


def test_sweep_reuses_banks(corpus):
    cfg = load_config()
    before = bank_build_count()
    report = run_sweep(corpus, cfg)
    assert bank_build_count() == before  # every variant re-scored on the cached banks
    keys = sweepable(cfg)
    assert keys and all(cfg.constants[k].provenance in ("calibrated", "few_shot") for k in keys)
    assert len(report["constants"]) == 5 * len(keys)
    assert {r["gate"] for r in report["gates"]} >= {"absence_before", "decay", "stays_down"}
    # every count is the number of events it lists; the events are the corpus's own, a lost
    # credit was credited in the baseline and a new false credit was not one already
    base = score_corpus(corpus, cfg)
    ident = {f"{r['clip']}:{r['event_id']}": r["class"] for r in base}
    kinds = ("new_false_credits", "new_false_positives", "new_misses", "lost_credits")
    for r in report["constants"] + report["gates"]:
        events = r["events"]
        for kind in kinds:
            listed = events.get(kind, [])
            assert r[kind] == len(listed) and set(listed) <= set(ident), (r.get("key", r.get("gate")), kind)
        assert all(ident[e] == "correct_credit" for e in events.get("lost_credits", []))
        assert all(ident[e] != "false_credit" for e in events.get("new_false_credits", []))
    # disabling the decay gate lets at most the never-delivered ending through
    decay = next(r for r in report["gates"] if r["gate"] == "decay")
    assert all(e.startswith("never_delivered-") for e in decay["events"]["new_false_credits"])
    assert not any(r["key"].startswith("gates.") for r in report["constants"])  # no section nothing reads


def test_reused_sweep_rows_equal_the_full_re_run(corpus):
    from timingbench.memo import memo_disabled

    cfg = load_config()
    reused = run_sweep(corpus, cfg)
    with memo_disabled():
        full = run_sweep(corpus, cfg, reuse=False)
    assert json.dumps(reused, sort_keys=True) == json.dumps(full, sort_keys=True)
    # the corpus is sensitive: some variant or ablation changes a verdict class
    assert any(r["new_false_credits"] or r["new_false_positives"] or r["new_misses"] or r["lost_credits"]
               for r in reused["constants"] + reused["gates"])
    # a variant of a section no event detector reads keeps the baseline rows
    assert all(not (r["new_false_credits"] or r["new_misses"] or r["lost_credits"] or r["new_false_positives"])
               for r in reused["constants"] if r["key"].split(".")[0] in ("tempo", "mgbench_baseline"))


def test_compare_rows_and_direction():
    base = [{"clip": "a", "event_id": "e", "class": "correct_none"},
            {"clip": "b", "event_id": "e", "class": "correct_credit"}]
    var = [{"clip": "a", "event_id": "e", "class": "false_credit"},
           {"clip": "b", "event_id": "e", "class": "missed"}]
    res = compare_rows(base, var)
    assert res["new_false_credits"] == 1 and res["lost_credits"] == 1 and res["new_misses"] == 1
    cfg = load_config()
    key = next(k for k in sweepable(cfg) if cfg.constants[k].loosening == "decrease")
    assert direction(cfg, key, 0.9) == "loosening" and direction(cfg, key, 1.1) == "tightening"
    assert direction(cfg, key, None) == "disabled"


def test_cli_commands(corpus_dir, tmp_path, capsys):
    common = ["--annotations", str(corpus_dir / "truth.jsonl"), "--clips", str(corpus_dir / "clips"),
              "--separation", "dsp", "--family-evidence", "none"]
    assert main(["confusion", *common, "--no-chance", "--out", str(tmp_path / "c")]) == 0
    assert "credit ok" in capsys.readouterr().out
    assert main(["floors", *common, "--out", str(tmp_path / "f")]) == 0
    assert (tmp_path / "f" / "floors.png").is_file() and (tmp_path / "f" / "floors.json").is_file()
    assert main(["gain-check", *common, "--out", str(tmp_path / "g")]) == 0
    rep = json.loads((tmp_path / "g" / "gain_check.json").read_text())
    assert all(v["n_verdict_changes"] == 0 for v in rep["by_gain"].values())
    assert all(v["max_shift_frames"] <= 1.0 for v in rep["by_gain"].values())


def test_presence_tables_are_swept_as_a_whole(config):
    from timingbench.calibration.sweep import scaled

    keys = sweepable(config)
    assert "presence.entry_min_step_by_family" in keys and "presence.exit_min_step_by_family" in keys
    table = field_value(config, "presence.entry_min_step_by_family")
    up = scaled(table, 1.2)
    assert set(up) == set(table)
    assert all(up[f] == (None if v is None else v * 1.2) for f, v in table.items())
    assert scaled({"stems": {"default": 10.0, "bass": None}}, 0.5) == {"stems": {"default": 5.0, "bass": None}}
    # the variant loads: a table perturbation is a configuration like any other
    variant = config.with_value("presence.entry_min_step_by_family", up)
    assert variant.params.presence.entry_min_step_by_family == up

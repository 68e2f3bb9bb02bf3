"""``timingbench calibrate evidence``: dev corpora only, a fit that moves with the data, constants written with
provenance."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from timingbench.calibration.evidence_fit import (
    CalibrationRefused,
    check_dev_corpus,
    fit,
    format_report,
    load_dev_corpora,
    objective,
    write_constants,
)
from timingbench.config import DEFAULT_CONFIG_PATH, Config, load_config
from timingbench.render.corpus import ClipSpec, render_specs

FLUID = Path("/usr/share/sounds/sf2/FluidR3_GM.sf2")
needs_fluid = pytest.mark.skipif(not FLUID.is_file() or not shutil.which("fluidsynth"),
                                 reason="FluidSynth and FluidR3_GM are installed by `make setup`")


def _write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_validation_rows_and_held_out_soundfonts_are_refused(tmp_path: Path) -> None:
    _write(tmp_path / "truth.jsonl", [{"clip": "b.wav", "event_id": "b/e1", "split": "validation"},
                                      {"clip": "c.wav", "event_id": "c/e1", "split": "validation"}])
    with pytest.raises(CalibrationRefused, match=r"truth.jsonl:1: field 'split' is 'validation'"):
        check_dev_corpus(tmp_path)
    _write(tmp_path / "truth.jsonl", [{"clip": "a.wav", "event_id": "a/e1", "split": "dev"},
                                      {"clip": "b.wav", "event_id": "b/e1", "split": "validation"}])
    assert check_dev_corpus(tmp_path) == 1  # both splits: only the dev row will be scored
    _write(tmp_path / "truth.jsonl", [{"clip": "a.wav", "event_id": "a/e1", "split": "dev"}])
    _write(tmp_path / "manifest.jsonl", [{"clip": "a.wav", "split": "dev", "soundfont": "MuseScore_General_Full.sf3"}])
    with pytest.raises(CalibrationRefused, match=r"manifest.jsonl:1: field 'soundfont'.*held out"):
        check_dev_corpus(tmp_path)
    _write(tmp_path / "manifest.jsonl", [{"clip": "a.wav", "split": "dev", "soundfont": "FluidR3_GM.sf2"}])
    check_dev_corpus(tmp_path)  # a dev render of a training soundfont passes
    (tmp_path / "manifest.jsonl").write_text('{"clip": "a.wav", "soundfont": \n', encoding="utf-8")
    with pytest.raises(CalibrationRefused, match=r"manifest.jsonl:1: not a JSON object"):
        check_dev_corpus(tmp_path)  # a soundfont that cannot be read is not assumed innocent
    (tmp_path / "manifest.jsonl").unlink()
    (tmp_path / "truth.jsonl").write_text('{"clip": "a.wav", "event_id": "a/e1", "split": "dev"}\nnot json\n',
                                          encoding="utf-8")
    assert check_dev_corpus(tmp_path) == 1  # the malformed row is reported when the annotations load
    with pytest.raises(Exception, match="no truth.jsonl"):
        check_dev_corpus(tmp_path / "missing")


def test_objective_caps_false_credits() -> None:
    c = {"n_on_time": 4, "on_time_credited": 4, "n_off_time": 2, "off_time_located": 1,
         "n_negative": 40, "negative_credited": 1}
    assert objective(c, max_negative_rate=0.03) == (True, pytest.approx(1.5))
    assert objective({**c, "negative_credited": 2}, max_negative_rate=0.03) == (False, pytest.approx(-0.05))
    assert objective({**c, "n_negative": 0, "negative_credited": 0}, max_negative_rate=0.03) == (True, 1.5)
    # any feasible point outranks every infeasible one
    assert objective({**c, "on_time_credited": 0}, max_negative_rate=0.03) > objective(
        {**c, "negative_credited": 2}, max_negative_rate=0.03)


@needs_fluid
def test_fit_chooses_on_dev_and_writes_calibrated_constants(tmp_path: Path, config: Config) -> None:
    root = tmp_path / "dev"
    specs = [ClipSpec("entry_on_time", 31, params={"family": "percussion", "time_s": 6.0}, duration_s=14.0),
             ClipSpec("busy_decoy", 32, params={"family": "percussion", "time_s": 6.0}, duration_s=14.0),
             ClipSpec("exit_on_time", 33, params={"family": "bass", "time_s": 7.0}, duration_s=14.0)]
    render_specs(specs, out_dir=root, split="dev", soundfont=FLUID)
    table = [dict(r) for r in config.params.families.table]
    for r in table:  # the fit reads the judged families: these two are, whatever the shipped registry says
        if r["name"] in ("percussion", "bass"):
            r.pop("exempt", None)
            r["judged"] = True
    small = config.with_value("families.table", table).with_value("calibration.evidence_change_grid", [0.5, 0.9]) \
        .with_value("calibration.evidence_rise_grid", [1.0]).with_value("calibration.evidence_quiet_grid", [0.7]) \
        .with_value("calibration.evidence_present_grid", [0.5]) \
        .with_value("calibration.evidence_confident_grid", [1.01])
    # a validation row beside the dev rows is never scored
    truth = (root / "truth.jsonl").read_text(encoding="utf-8").splitlines()
    val = json.loads(truth[0])
    (root / "truth.jsonl").write_text("\n".join([json.dumps({**val, "split": "validation"}), *truth[1:]]) + "\n",
                                      encoding="utf-8")
    devs = load_dev_corpora([root], small)
    assert (val["clip"], val["event_id"]) not in devs[0].corpus.truth and len(devs[0].corpus.truth) == 2
    (root / "truth.jsonl").write_text("\n".join(truth) + "\n", encoding="utf-8")
    devs = load_dev_corpora([root], small)
    report = fit(devs, small)
    assert set(report["rules"]) == {"rise", "change", "absolute"} and report["chosen_rule"] in report["rules"]
    rise = report["rules"]["rise"]
    assert rise["entry"]["n_on_time"] == 1 and rise["entry"]["n_negative"] == 1 and rise["exit"]["n_on_time"] == 1
    assert set(rise["constants"]) == {"evidence.entry_min_prob", "evidence.exit_min_prob", "evidence.min_logit_rise",
                                      "evidence.quiet_max", "evidence.present_prob", "evidence.confident_change"}
    assert "chosen rule:" in format_report(report)
    # writing touches only the fitted constants' lines, which then load with calibrated provenance
    cfg_path = tmp_path / "config.yaml"
    shutil.copy(DEFAULT_CONFIG_PATH, cfg_path)
    before = cfg_path.read_text(encoding="utf-8").splitlines()
    keys = write_constants(cfg_path, small, report)
    after = cfg_path.read_text(encoding="utf-8").splitlines()
    changed = [b.split(":")[0].strip() for b, a in zip(before, after, strict=True) if a != b]
    assert len(before) == len(after) and set(changed) <= {k.split(".")[1] for k in keys}
    new = load_config(cfg_path)
    assert new.params.evidence.decision_rule == report["chosen_rule"]
    for k, v in report["rules"][report["chosen_rule"]]["constants"].items():
        assert new.constants[k].provenance == "calibrated" and new.constants[k].value == v
        assert "calibrate evidence on dev corpora only" in new.constants[k].why
    if report["chosen_rule"] == "absolute":  # min_logit_rise is read only by the other rules: said so
        assert "not read under the calibrated rule absolute" in new.constants["evidence.min_logit_rise"].why


def test_cli_refuses_a_validation_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from timingbench.cli import main

    _write(tmp_path / "truth.jsonl", [{"clip": "a.wav", "event_id": "a/e1", "split": "validation"}])
    rc = main(["calibrate", "evidence", "--dev", str(tmp_path), "--dry-run"])
    assert rc != 0
    assert "only dev rows may choose thresholds" in capsys.readouterr().err

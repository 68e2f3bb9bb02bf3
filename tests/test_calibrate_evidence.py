"""``timingbench calibrate evidence``: dev corpora only, constants written with provenance."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from timingbench.calibration.dev_corpora import (
    CalibrationRefused,
    check_dev_corpus,
    load_dev_corpora,
    write_values,
)
from timingbench.config import DEFAULT_CONFIG_PATH, Config, load_config
from timingbench.errors import ConfigError
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


@needs_fluid
def test_dev_corpora_score_only_dev_rows(tmp_path: Path, config: Config) -> None:
    root = tmp_path / "dev"
    specs = [ClipSpec("entry_on_time", 31, params={"family": "percussion", "time_s": 6.0}, duration_s=14.0),
             ClipSpec("exit_on_time", 33, params={"family": "bass", "time_s": 7.0}, duration_s=14.0)]
    render_specs(specs, out_dir=root, split="dev", soundfont=FLUID)
    # a validation row beside the dev rows is never scored
    truth = (root / "truth.jsonl").read_text(encoding="utf-8").splitlines()
    val = json.loads(truth[0])
    (root / "truth.jsonl").write_text("\n".join([json.dumps({**val, "split": "validation"}), *truth[1:]]) + "\n",
                                      encoding="utf-8")
    devs = load_dev_corpora([root], config)
    assert (val["clip"], val["event_id"]) not in devs[0].corpus.truth and len(devs[0].corpus.truth) == 1


def test_written_values_change_only_their_lines(tmp_path: Path, config: Config) -> None:
    cfg_path = tmp_path / "config.yaml"
    shutil.copy(DEFAULT_CONFIG_PATH, cfg_path)
    before = cfg_path.read_text(encoding="utf-8").splitlines()
    key = "presence.entry_min_step_by_family"
    write_values(cfg_path, config, {key: {"default": 1.5}}, {key: "fitted on the dev corpora"})
    after = cfg_path.read_text(encoding="utf-8").splitlines()
    changed = [b.split(":")[0].strip() for b, a in zip(before, after, strict=True) if a != b]
    assert changed == ["entry_min_step_by_family"]
    new = load_config(cfg_path)
    assert new.constants[key].provenance == "calibrated" and new.constants[key].value == {"default": 1.5}
    with pytest.raises(ConfigError, match="not found"):
        write_values(cfg_path, config, {"presence.no_such_constant": 1.0}, {"presence.no_such_constant": "x"})


def test_cli_refuses_a_validation_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from timingbench.cli import main

    _write(tmp_path / "truth.jsonl", [{"clip": "a.wav", "event_id": "a/e1", "split": "validation"}])
    rc = main(["calibrate", "evidence", "--dev", str(tmp_path), "--dry-run"])
    assert rc != 0
    assert "only dev rows may choose thresholds" in capsys.readouterr().err

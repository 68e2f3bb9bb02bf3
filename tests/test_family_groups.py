"""Scorer accuracy per family group: the rates the family evidence issue is judged on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from timingbench.calibration.groups import format_groups, group_report, scenarios_from_manifest


def _row(clip: str, family: str, outcome: str, *, occurred: bool, onset: float | None, instructed: float = 10.0,
         detected: float | None = None) -> dict:
    err = None if detected is None or onset is None else abs(detected - onset)
    return {"clip": clip, "family": family, "outcome": outcome, "truth_occurred": occurred, "truth_onset_s": onset,
            "instructed_s": instructed, "tolerance_s": 0.5, "abs_error_to_truth_s": err}


def test_rates_per_group_with_exempt_families_apart() -> None:
    rows = [
        _row("a.wav", "percussion", "on_time", occurred=True, onset=10.0, detected=10.01),
        _row("b.wav", "percussion", "none", occurred=True, onset=10.1),
        _row("c.wav", "piano", "on_time", occurred=False, onset=None, detected=10.0),  # false credit
        _row("d.wav", "piano", "none", occurred=False, onset=None),  # pre-existing, rejected
        _row("e.wav", "vocals", "off_time", occurred=True, onset=13.0, detected=13.2),  # located
        _row("f.wav", "vocals", "off_time", occurred=True, onset=13.0, detected=13.4),  # not located
        _row("g.wav", "synth", "on_time", occurred=True, onset=9.8, detected=9.9),
    ]
    rep = group_report(rows, exempt=["synth"], scenarios={"d.wav": "pre_existing"}, offset_match_s=0.25)
    perc = rep["percussion"]["stats"]
    assert perc["on_time_credited"] == 0.5 and perc["median_error_ms"] == pytest.approx(10.0)
    stem = rep["stem families"]["stats"]
    assert stem["negative_credited"] == 0.5 and stem["pre_existing_rejected"] == 1.0
    assert stem["off_time_located"] == 0.5 and stem["n_off_time"] == 2
    tonal = rep["tonal families"]
    assert tonal["stats"]["n"] == 0 and tonal["exempt_families"] == ["synth"]
    assert tonal["exempt_stats"]["on_time_credited"] == 1.0
    text = format_groups(rep)
    assert "exempt (synth)" in text and "percussion" in text


def test_scenarios_come_from_the_corpus_manifest(tmp_path: Path) -> None:
    (tmp_path / "clips").mkdir()
    (tmp_path / "manifest.jsonl").write_text(
        json.dumps({"clip": "x.wav", "scenario": "pre_existing"}) + "\nnot json\n" + json.dumps({"clip": 3}) + "\n")
    assert scenarios_from_manifest(tmp_path / "clips") == {"x.wav": "pre_existing"}
    assert scenarios_from_manifest(tmp_path / "other" / "clips") == {}


def test_rates_per_family_mark_exempt_ones() -> None:
    from timingbench.calibration.groups import family_report, format_families

    rows = [
        {**_row("a.wav", "percussion", "on_time", occurred=True, onset=10.0, detected=10.01),
         "kind": "instrument_entry"},
        {**_row("b.wav", "vocals", "none", occurred=False, onset=None), "kind": "instrument_entry"},
        {**_row("c.wav", "synth", "on_time", occurred=False, onset=None, detected=10.0), "kind": "instrument_entry"},
        {**_row("d.wav", "mix", "on_time", occurred=True, onset=10.0, detected=10.0), "kind": "music_end"},
    ]
    rep = family_report(rows, exempt=["synth"], scenarios={"b.wav": "pre_existing"}, offset_match_s=0.25)
    assert list(rep) == ["percussion", "vocals", "synth"]  # judged first, mix left out
    assert (rep["percussion"]["stats"]["on_time_credited"] == 1.0
            and rep["vocals"]["stats"]["pre_existing_rejected"] == 1.0)
    assert rep["synth"]["judged"] is False and rep["synth"]["stats"]["negative_credited"] == 1.0
    assert "synth (identity not verified)" in format_families(rep)

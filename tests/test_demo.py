"""Tests of the demo's agreement count: outcome and time against the renderer's truth."""

from __future__ import annotations

import pytest

from timingbench.commands.demo_cmd import expected_outcome, verdict_agrees

MATCH_S = 0.25


def _row(outcome: str, detected: float | None, *, instructed: float = 5.0, tol: float = 0.5) -> dict:
    return {"outcome": outcome, "detected_s": detected, "instructed_s": instructed, "tolerance_s": tol}


def _truth(onset: float | None) -> dict:
    return {"occurred": onset is not None, "onset_s": onset}


@pytest.mark.parametrize(
    ("row", "truth", "agrees"),
    [
        (_row("on_time", 5.1), _truth(5.05), True),
        # credited on time, but on the far side of the instruction from where the layer came in
        (_row("on_time", 4.6), _truth(5.45), False),
        (_row("off_time", 7.1), _truth(7.0), True),
        (_row("off_time", 7.3), _truth(7.0), False),  # reported off time, but not where it happened
        (_row("on_time", 5.2), _truth(7.0), False),  # delivered late, credited on time
        (_row("none", None), _truth(None), True),
        (_row("on_time", 5.0), _truth(None), False),  # never delivered, credited
        (_row("off_time", 8.0), None, False),  # no truth row: not delivered
        (_row("none", None), _truth(5.0), False),  # delivered, missed
        # edges: the true onset exactly at the tolerance is on time; a detection exactly at the
        # tolerance (or offset_match_s) from it still agrees
        (_row("on_time", 5.0), _truth(5.5), True),
        (_row("on_time", 5.5), _truth(5.0), True),
        (_row("off_time", 6.25), _truth(6.0), True),
        (_row("off_time", 5.751), _truth(5.501), True),  # just past the tolerance: off time
    ],
)
def test_verdict_agrees_on_outcome_and_time(row: dict, truth: dict | None, agrees: bool) -> None:
    assert verdict_agrees(row, truth, offset_match_s=MATCH_S) is agrees


def test_expected_outcome_follows_the_tolerance_edge() -> None:
    assert expected_outcome(_row("none", None), _truth(5.5)) == "on_time"
    assert expected_outcome(_row("none", None), _truth(5.5 + 1e-3)) == "off_time"
    assert expected_outcome(_row("none", None), {"occurred": True, "onset_s": None}) == "none"

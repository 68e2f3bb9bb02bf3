"""The first screen says who was judged: summary.json, the terminal table and the report's overview.

The judged families are read from the registry (never written into the tests): a
configuration that judges another family names it. The report's overview has one primary
headline card, leaves out tempo cards when no clip has a tempo target, shows an interval
over one prompt as none, explains the exempt marker of its clip table in words.
"""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from timingbench.config import Config
from timingbench.families import judged_families, judging, registry
from timingbench.report import build_report
from timingbench.runner import ScoreOptions
from timingbench.summary import build_summary, format_table


def _row(clip: str, family: str, kind: str, outcome: str, *, verified: bool) -> dict[str, Any]:
    return {"clip": clip, "prompt_id": clip[:-4], "sample": 0, "event_id": f"{clip[:-4]}/e1", "kind": kind,
            "family": family, "instructed_s": 6.0, "tolerance_s": 0.5, "outcome": outcome,
            "detected_s": 6.1 if outcome == "on_time" else None, "error_s": 0.1 if outcome == "on_time" else None,
            "gates": {}, "rejected_by": None, "detector": "mix", "p_chance": None, "floor_s": 0.02,
            "error": None, "identity_verified": verified}


def _clip(clip: str) -> dict[str, Any]:
    return {"clip": clip, "prompt_id": clip[:-4], "sample": 0, "duration_s": 12.0, "duration_ok": True,
            "tempo": None, "timbre_match": None, "error": None, "separation": "dsp", "family_evidence": "tagger",
            "controls": None, "silent": False}


def _summary(config: Config, *, family_evidence: str = "tagger") -> dict[str, Any]:
    judged = judged_families(config)
    fam = judged[0] if judged else "strings"
    events = [_row("a.wav", fam, "instrument_entry", "on_time", verified=bool(judged)),
              _row("b.wav", "mix", "music_end", "on_time", verified=True),
              _row("c.wav", "bass", "instrument_entry", "none", verified=False)]
    return build_summary(events, [_clip(r["clip"]) for r in events], config=config,
                         opts=ScoreOptions(separation="dsp", family_evidence=family_evidence, chance=False),
                         unmatched=[], missing=[], prompt_errors=[], parts=[], prompts_path="")


@pytest.fixture
def config() -> Config:
    """The packaged configuration with strings judged: these tests need one judged family whatever the
    registry ships."""
    from timingbench.config import load_config

    return judging(load_config(), ["strings"])


def test_the_summary_and_the_table_name_the_judged_families(config: Config) -> None:
    s = _summary(config)
    names = list(judged_families(config))
    assert s["identity_judged"]["families"] == names and s["identity_judged"]["whole_mix"] is True
    label = f"judged: {', '.join(names)}; + whole mix"
    assert s["identity_judged"]["label"] == label
    assert f"identity-verified events ({label})" in format_table(s)


def test_another_judged_set_is_named_as_the_registry_says(config: Config) -> None:
    exempt = [f.name for f in registry(config).rows if not f.judged]
    assert exempt, "the packaged registry exempts at least one family"
    other = judging(config, [exempt[-1]])
    names = list(judged_families(other))
    assert exempt[-1] in names
    s = _summary(other)
    assert s["identity_judged"]["families"] == names
    assert f"identity-verified events (judged: {', '.join(names)}; + whole mix)" in format_table(s)


def test_without_family_evidence_only_the_whole_mix_is_judged(config: Config) -> None:
    s = _summary(config, family_evidence="none")
    assert s["identity_judged"]["families"] == []
    assert "identity-verified events (judged: none; whole mix only)" in format_table(s)


def test_a_judged_family_whose_figures_credit_negatives_is_warned_of(
        config: Config, monkeypatch: pytest.MonkeyPatch) -> None:
    import timingbench.judged as judged

    names = list(judged_families(config))
    exempt = next(f.name for f in registry(config).rows if not f.judged)
    figures = {names[0]: (3, 3), exempt: (2, 2)}
    monkeypatch.setattr(judged, "published_credited_negatives", lambda cfg: figures)
    s = _summary(config)
    warnings = s["identity_judged"]["warnings"]
    assert len(warnings) == 1 and warnings[0].startswith(f"{names[0]} is judged")
    assert "credit 3 of 3 negatives" in warnings[0]
    assert f"warning: {warnings[0]}" in format_table(s)


def test_published_negatives_are_read_from_the_registry_rows(config: Config, monkeypatch: pytest.MonkeyPatch) -> None:
    """A row that records the field gives its figure; rows without it give none."""
    from types import SimpleNamespace

    import timingbench.judged as judged

    table = [{k: v for k, v in row.items() if k != judged.NEGATIVES_FIELD} for row in registry(config).table]
    table[0][judged.NEGATIVES_FIELD] = [1, 4]
    monkeypatch.setattr(judged, "registry", lambda cfg: SimpleNamespace(table=table))
    assert judged.published_credited_negatives(config) == {table[0]["name"]: (1, 4)}


# ------------------------------------------------------------------------------ the report


def _results(root: Path, summary: dict[str, Any], events: list[dict[str, Any]],
             clips: list[dict[str, Any]]) -> Path:
    res = root / "results"
    res.mkdir(parents=True)
    (res / "events.jsonl").write_text("".join(json.dumps(r) + "\n" for r in events))
    (res / "clips.jsonl").write_text("".join(json.dumps(r) + "\n" for r in clips))
    (res / "summary.json").write_text(json.dumps(summary))
    return res


@pytest.fixture
def index(tmp_path: Path, config: Config, monkeypatch: pytest.MonkeyPatch) -> str:
    """The index page of a run of one judged-family event, one whole-mix event, one exempt one."""
    import timingbench.judged as judged

    names = list(judged_families(config))
    monkeypatch.setattr(judged, "published_credited_negatives", lambda cfg: {names[0]: (3, 3)})
    judged_fam = names[0]
    events = [_row("a.wav", judged_fam, "instrument_entry", "on_time", verified=True),
              _row("b.wav", "mix", "music_end", "on_time", verified=True),
              _row("c.wav", "bass", "instrument_entry", "none", verified=False)]
    clips = [_clip(r["clip"]) for r in events]
    s = build_summary(events, clips, config=config,
                      opts=ScoreOptions(separation="dsp", family_evidence="tagger", chance=False),
                      unmatched=[], missing=[], prompt_errors=[], parts=[], prompts_path="")
    res = _results(tmp_path, s, events, clips)
    build_report(res, tmp_path / "report", config=config, clip_pages=False)
    return (tmp_path / "report" / "index.html").read_text()


def _cards(html: str) -> list[tuple[str, str, str]]:
    """(classes, data-key, inner html) of the overview's cards, in page order."""
    return [(m.group(1), unescape(m.group(2)), m.group(3)) for m in re.finditer(
        r'<div class="(card[^"]*)" data-key="([^"]+)" data-value="[^"]*">(.*?)<div class="key">', html, re.S)]


def test_one_headline_card_stands_out_and_names_who_was_judged(index: str, config: Config) -> None:
    cards = _cards(index)
    primary = [c for c in cards if "primary" in c[0].split()]
    assert len(primary) == 1 and primary[0][1] == "rates_identity_verified.on_time_rate"
    assert cards[0] == primary[0]
    label = f"judged: {', '.join(judged_families(config))}; + whole mix"
    assert label in unescape(primary[0][2])
    warn = re.search(r'id="judged-warnings">(.*?)</', index, re.S)
    assert warn is not None and "credit 3 of 3 negatives" in unescape(warn.group(1))


def test_tempo_cards_are_left_out_without_a_tempo_target(index: str) -> None:
    keys = [k for _, k, _ in _cards(index)]
    assert keys and not [k for k in keys if k.startswith("tempo.")]
    assert 'id="ladder"' not in index


def test_an_interval_over_one_prompt_says_so(index: str) -> None:
    text = unescape(re.sub(r"<[^>]+>", " ", re.sub(r"<script.*?</script>", "", index, flags=re.S)))
    assert "n = 1, no interval" in text
    assert "· 1 prompts" not in text


def test_the_exempt_marker_is_explained_in_words(index: str) -> None:
    legend = re.search(r'id="exempt-legend"[^>]*>(.*?)</p>', index, re.S)
    assert legend is not None
    words = unescape(re.sub(r"<[^>]+>", "", legend.group(1)))
    assert "*" in words and "identity not verified" in words

"""Tests of the versioned configuration."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from timingbench.config import PROVENANCES, load_config, parse_config
from timingbench.errors import ConfigError


def test_packaged_config_loads_with_provenance(config):
    assert config.version
    assert len(config.content_hash) == 16
    for key in config:
        c = config.constants[key]
        assert c.provenance in PROVENANCES
        assert c.why


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("search.window_s", 5.0),
        ("mix.decay_budget_s", 3.0),
        ("audio.analysis_window_s", 35.0),
        ("mix.silence_below_loud_db", 35.0),
        ("mix.fade_point_below_loud_db", 23.0),
        ("tempo.tolerance_pct", 3.0),
    ],
)
def test_paper_conventions(config, key, expected):
    assert config.value(key) == expected
    assert config.constants[key].provenance == "convention"


def test_ladder_and_octave_factors(config):
    assert config.params.tempo.ladder_pct == [2.0, 3.0, 5.0]
    assert config.params.tempo.octave_factors == pytest.approx([1 / 3, 0.5, 1.0, 2.0, 3.0])


def test_override_changes_hash_and_disable_reads_none(config):
    c2 = config.with_value("search.window_s", 4.0)
    assert c2.value("search.window_s") == 4.0
    assert c2.content_hash != config.content_hash
    c3 = config.with_disabled("search.window_s")
    assert c3.value("search.window_s") is None
    assert c3.content_hash not in (config.content_hash, c2.content_hash)
    # the original is untouched
    assert config.params.search.window_s == 5.0


def test_hash_is_stable_across_loads():
    assert load_config().content_hash == load_config().content_hash


def test_unknown_key_names_the_key(config):
    with pytest.raises(ConfigError, match="no constant 'search.nope'"):
        config.value("search.nope")


@pytest.mark.parametrize(
    ("entry", "match"),
    [
        ({"value": 1, "why": "x"}, "provenance"),
        ({"value": 1, "provenance": "guessed", "why": "x"}, "provenance"),
        ({"value": 1, "provenance": "convention"}, "why"),
        ({"provenance": "convention", "why": "x"}, "no 'value'"),
        ({"value": 1, "provenance": "calibrated", "why": "x", "loosening": "sideways"}, "loosening"),
        ({"value": 1, "provenance": "convention", "why": "x", "extra": 2}, "unknown field"),
    ],
)
def test_schema_errors_name_the_key(entry, match):
    with pytest.raises(ConfigError, match=match) as info:
        parse_config({"version": "v", "constants": {"sec": {"k": entry}}}, source="f.yaml")
    assert "sec.k" in str(info.value) and "f.yaml" in str(info.value)


def test_missing_and_bad_files(tmp_path: Path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)
    nov = tmp_path / "nov.yaml"
    nov.write_text(yaml.safe_dump({"constants": {"a": {}}}))
    with pytest.raises(ConfigError, match="version"):
        load_config(nov)

"""The stem and singing evidences decide located candidates (identity.decide.located_verdict) and the registry's
judged_by is checked."""

from __future__ import annotations

import numpy as np
import pytest

from timingbench.config import load_config
from timingbench.errors import ConfigError, ParameterError
from timingbench.identity.decide import judging, level_step_at, located_by_stem, located_verdict
from timingbench.identity.evidence import FamilyEvidence
from timingbench.verdicts import FAIL, PASS


def _evidence(backend: str, family: str, level: np.ndarray, hop: float = 0.0464) -> FamilyEvidence:
    t = np.arange(level.size) * hop
    return FamilyEvidence(times=t, curves={family: level}, backend=backend, exempt={}, window_s=hop,
                          presence_times={family: t}, presence_logits={family: level})


def _entrance(at_s: float, quiet: float, loud: float, n: int = 400, hop: float = 0.0464) -> np.ndarray:
    t = np.arange(n) * hop
    return np.where(t >= at_s, loud, quiet).astype(np.float64)


@pytest.fixture(scope="module")
def presence():  # type: ignore[no-untyped-def]
    return load_config().params.presence


def test_a_stem_that_enters_passes_and_one_already_there_fails(presence) -> None:  # type: ignore[no-untyped-def]
    ev = _evidence("stems", "bass", _entrance(6.0, -60.0, -12.0))
    verdict, stats = located_verdict((ev,), "bass", 6.0, entry=True, params=presence)
    assert verdict == PASS and stats["decided_by"] == ["stems"] and stats["stems"]["step"] == pytest.approx(48.0)
    already = _evidence("stems", "bass", _entrance(6.0, -20.0, -12.0))
    verdict, stats = located_verdict((already,), "bass", 6.0, entry=True, params=presence)
    assert verdict == FAIL and not stats["stems"]["pass"]


def test_every_evidence_must_pass(presence) -> None:  # type: ignore[no-untyped-def]
    stem = _evidence("stems", "vocals", _entrance(6.0, -60.0, -12.0))
    singing_before = _evidence("singing", "vocals", np.full(400, 6.0))  # a voice already sings before it
    verdict, stats = located_verdict((stem, singing_before), "vocals", 6.0, entry=True, params=presence)
    assert verdict == FAIL and stats["stems"]["pass"] and not stats["singing"]["pass"]
    singing = _evidence("singing", "vocals", _entrance(6.0, -6.0, 6.0))
    assert located_verdict((stem, singing), "vocals", 6.0, entry=True, params=presence)[0] == PASS


def test_an_exit_reads_the_fall(presence) -> None:  # type: ignore[no-untyped-def]
    ev = _evidence("stems", "percussion", -_entrance(8.0, 12.0, 60.0))  # -12 dB, then -60 dB from 8 s
    assert located_verdict((ev,), "percussion", 8.0, entry=False, params=presence)[0] == PASS
    assert located_verdict((ev,), "percussion", 8.0, entry=True, params=presence)[0] == FAIL


def test_an_entrance_at_the_clip_start_is_decided_on_the_clip_floor(presence) -> None:  # type: ignore[no-untyped-def]
    ev = _evidence("stems", "bass", _entrance(0.0, -60.0, -12.0) + np.linspace(0, 1, 400))
    stats = level_step_at(ev, "bass", 0.0, entry=True, params=presence)
    assert stats["quiet_side"] == "clip_floor" and stats["pre_roll_s"] == 0.0


def test_a_gain_moves_no_decision(presence) -> None:  # type: ignore[no-untyped-def]
    # a stem's level is relative to the mix's loud level: a gain shifts neither (the curve is unchanged);
    # the decision reads only differences and levels relative to that reference
    ev = _evidence("stems", "bass", _entrance(6.0, -45.0, -12.0))
    base = located_verdict((ev,), "bass", 6.0, entry=True, params=presence)
    assert base[0] == PASS


def test_judging_reads_the_judges(presence) -> None:  # type: ignore[no-untyped-def]
    stem = _evidence("stems", "bass", _entrance(6.0, -60.0, -12.0))
    carrier = FamilyEvidence(times=np.zeros(0), curves={}, backend="none", exempt={}, window_s=0.0)
    import dataclasses

    carrier = dataclasses.replace(carrier, judges={"bass": (stem,)})
    assert judging(carrier, "bass") == (stem,) and judging(carrier, "vocals") == () and judging(None, "bass") == ()
    assert located_by_stem((stem,))
    with pytest.raises(ParameterError):
        located_verdict((), "bass", 6.0, entry=True, params=presence)


def test_registry_judged_by_is_checked() -> None:
    cfg = load_config()
    table = [dict(r) for r in cfg.params.families.table]
    bad = [dict(r, judged_by={"mix": ["stems"]}) if r["name"] == "bass" else r for r in table]
    with pytest.raises(ConfigError, match="judged_by"):
        cfg.with_value("families.table", bad).params.families.rows  # noqa: B018
    bad = [dict(r, judged_by={"stems": ["tagger"]}) if r["name"] == "bass" else r for r in table]
    with pytest.raises(ConfigError, match="judged_by"):
        cfg.with_value("families.table", bad).params.families.rows  # noqa: B018
    good = [dict(r, judged_by={"stems": ["stems", "singing"], "mix": ["singing"]}) if r["name"] == "vocals" else r
            for r in table]
    row = cfg.with_value("families.table", good).params.families.family("vocals")
    assert row is not None and row.judging_evidences(stems=True) == ("stems", "singing")
    assert row.judging_evidences(stems=False) == ("singing",)

"""One identity path: the scorer alone asks whether a family is judged; detectors only locate and measure."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from timingbench.config import Config
from timingbench.errors import ParameterError
from timingbench.families import FAMILY_NAMES, judging
from timingbench.identity.decide import identity_verdict, judged_by_presence
from timingbench.identity.evidence import FamilyEvidence
from timingbench.identity.providers import with_registry_exemptions

PKG = Path(__file__).resolve().parent.parent / "timingbench"


def _ev(*, backend: str = "tagger", exempt: dict[str, str] | None = None, n: int = 40) -> FamilyEvidence:
    t = 0.5 * np.arange(n)
    curves = {"strings": np.full(n, 0.5), "piano": np.full(n, 0.5)}
    kw = {"entered": dict(curves), "left": dict(curves)} if backend in ("tagger", "trained") else {}
    return FamilyEvidence(times=t, curves=curves, backend=backend, exempt=dict(exempt or {}), window_s=0.5, **kw)


def test_detectors_hold_no_identity_code() -> None:
    for path in sorted((PKG / "detectors").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        names += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        assert not [m for m in names if m.startswith("timingbench.identity")], path.name
        assert "family_evidence" not in path.read_text(encoding="utf-8"), path.name


@pytest.mark.parametrize(
    ("evidence", "family", "entry", "source", "detail"),
    [
        (None, "strings", True, "family", {"reason": "model_unavailable"}),
        (_ev(exempt={"strings": "x"}), "strings", True, "stem", {"reason": "stem_identity"}),
        (_ev(exempt={"strings": "dev_on_time_below_0.80"}), "strings", True, "family",
         {"backend": "tagger", "change": None, "reason": "dev_on_time_below_0.80"}),
        (_ev(exempt={"strings": "dev_on_time_below_0.80"}), "strings", False, "family",
         {"backend": "tagger", "change": None, "reason": "dev_on_time_below_0.80"}),
        (_ev(), "brass", True, "family", {"backend": "tagger", "change": None, "reason": "not_in_vocabulary"}),
        (_ev(backend="musicnn", exempt={"strings": "x"}), "strings", True, "family",
         {"backend": "musicnn", "before": None, "after": None, "rise": None, "reason": "x"}),
        (_ev(backend="musicnn", exempt={"strings": "x"}), "strings", False, "family",
         {"backend": "musicnn", "reason": "exit_not_judged"}),
        (_ev(n=0), "strings", True, "family", {"backend": "tagger", "change": None, "reason": "insufficient_context"}),
    ],
)
def test_an_unjudged_family_is_exempt_and_says_why(evidence: FamilyEvidence | None, family: str, entry: bool,
                                                   source: str, detail: dict[str, object]) -> None:
    assert not judged_by_presence(evidence, family)
    assert identity_verdict(evidence, family, entry=entry, source=source) == ("exempt", detail)


def test_identity_verdict_refuses_a_judged_family_and_an_unknown_source() -> None:
    with pytest.raises(ParameterError, match="judged by its presence"):
        identity_verdict(_ev(), "strings", entry=True, source="family")
    with pytest.raises(ParameterError, match="identity source"):
        identity_verdict(_ev(), "strings", entry=True, source="tagger")


def test_registry_exemptions_reach_every_provider(config: Config) -> None:
    registry = dict(config.params.families.exempt)
    assert registry, "the shipped registry exempts families"
    ev = with_registry_exemptions(_ev(backend="musicnn", exempt={"brass": "not_in_vocabulary"}),
                                  config.params.families)
    # the backend's own reason stands; every other registry exemption is added with its reason
    assert ev.exempt["brass"] == "not_in_vocabulary"
    assert all(ev.exempt[f] == r for f, r in registry.items() if f != "brass")
    assert not any(judged_by_presence(ev, f) for f in FAMILY_NAMES if f in registry)
    judged = judging(config, ["strings"])
    ev = with_registry_exemptions(_ev(backend="musicnn"), judged.params.families)
    assert judged_by_presence(ev, "strings") and not judged_by_presence(ev, "piano")


def test_scoring_applies_the_gate_the_detector_named(config: Config, monkeypatch: pytest.MonkeyPatch) -> None:
    from timingbench import scoring
    from timingbench.verdicts import Candidate, EventContext

    found = [Candidate(6.0, identity="family"), Candidate(7.0, identity="stem"), Candidate(8.0)]
    for c in found:
        c.apply("level_change", ("pass", {}))
    monkeypatch.setattr(scoring, "detect_tonal", lambda *a, **k: [Candidate(c.time_s, dict(c.gates), dict(c.stats),
                                                                            c.identity) for c in found])
    ctx = EventContext("instrument_entry", "strings", "strings", 6.0, 1.0, 11.0)
    ev = _ev(exempt={"strings": "dev_on_time_below_0.80"})
    out = scoring.run_detector(None, ctx, scoring.DetectorParams.of(config), family_evidence=ev)  # type: ignore[arg-type]
    assert [list(c.gates) for c in out] == [["level_change", "semantic_family"]] * 2 + [["level_change"]]
    assert [c.stats.get("semantic_family", {}).get("reason") for c in out] == \
        ["dev_on_time_below_0.80", "stem_identity", None]
    assert all(v != "fail" for c in out for v in c.gates.values())

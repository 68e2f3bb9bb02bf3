"""Tests of `timingbench explain`: gate statistics against their constants, the table, the PNG, bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf

from timingbench.cli import main
from timingbench.config import Config
from timingbench.curves import Grid
from timingbench.errors import TimingbenchError
from timingbench.explain.thresholds import format_checks, gate_checks
from timingbench.gates import level_change, persistence
from timingbench.identity.evidence import FamilyEvidence
from timingbench.runner import ScoreOptions, score_folder

SR = 44100
ENTRY_S = 2.0
END_S = 4.5


def _clips(root: Path) -> tuple[Path, Path]:
    """A 6 s tone with noise bursts from 2 s (drums enter) and a copy that stops at 4.5 s."""
    rng = np.random.default_rng(20260101)
    clips = root / "clips"
    clips.mkdir()
    t = np.arange(6 * SR) / SR
    y = 0.1 * np.sin(2 * np.pi * 220 * t)
    for k in range(8):
        s = int((ENTRY_S + 0.5 * k) * SR)
        y[s:s + 2000] += 0.5 * rng.standard_normal(2000) * np.exp(-np.arange(2000) / 600)
    sf.write(clips / "drums.wav", y.astype(np.float32), SR)
    cut = y.copy()
    cut[int(END_S * SR):] = 0.0
    sf.write(clips / "cut.wav", cut.astype(np.float32), SR)
    rows = [
        {"id": "drums", "family": "single_event", "text": "Bring in drums at 2 s.", "duration_s": 6.0,
         "tempo": None, "events": [{"id": "drums/e1", "kind": "instrument_entry", "target": "drums",
                                    "family": "percussion", "time_s": ENTRY_S, "tolerance_s": 0.5}]},
        {"id": "cut", "family": "single_event", "text": "Stop the music at 4.5 s.", "duration_s": 6.0,
         "tempo": None, "events": [{"id": "cut/e1", "kind": "music_end", "target": "", "family": "mix",
                                    "time_s": END_S, "tolerance_s": 0.5}]},
    ]
    prompts = root / "prompts.jsonl"
    prompts.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return clips, prompts


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from timingbench.config import load_config

    root = tmp_path_factory.mktemp("explain")
    clips, prompts = _clips(root)
    cache = root / "cache"
    score_folder(clips, prompts, root / "results", load_config(),
                 opts=ScoreOptions(separation="dsp", family_evidence="none", cache_dir=str(cache), chance=False))
    return {"root": root, "results": root / "results", "cache": cache, "clips": clips, "prompts": prompts}


def _events(results: Path) -> dict[str, dict[str, Any]]:
    return {(r := json.loads(x))["event_id"]: r for x in (results / "events.jsonl").read_text().splitlines()}


# ----------------------------------------------------------------------------- end to end


def test_explain_prints_every_gate_against_its_constant_and_draws_the_event(
        scored: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    png = tmp_path / "plots" / "drums.png"
    rc = main(["explain", str(scored["results"]), "drums.wav", "drums/e1", "--plot", str(png),
               "--cache", str(scored["cache"])])
    out = capsys.readouterr().out
    assert rc == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    row = _events(scored["results"])["drums/e1"]
    for gate in row["gates"]:
        if gate != "detection":
            assert f"\n  {gate} " in out, gate
    # the verdict is re-derived, not copied: the same outcome and time as events.jsonl
    assert f"re-scored:    {row['outcome']}, detected {row['detected_s']:.3f} s" in out
    assert "differs from events.jsonl" not in out
    assert "percussion.absence_strict_below_ref_db" in out and "percussion.persistence_min_fraction" in out
    assert "search window [0.000, 6.000] s" in out


def test_explain_whole_mix_event_uses_the_mix_constants(
        scored: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["explain", str(scored["results"]), "cut.wav", "cut/e1", "--cache", str(scored["cache"])])
    out = capsys.readouterr().out
    assert rc == 0
    assert "mix.decay_budget_s" in out and "mix.quiet_min_fraction" in out
    assert "family evidence not used (requested none)" in out


def test_explain_reads_the_trained_evidence_and_draws_its_change_curve(
        scored: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """With trained evidence (here a made-up one) judging the family, the family's presence finds the event."""
    import timingbench.explain.event as event

    def fake(bank: Any, prompt: Any, config: Config, opts: ScoreOptions) -> tuple[FamilyEvidence, dict[str, Any]]:
        t = np.arange(0.0, float(bank.duration_s), 0.0464)
        present = np.where(t < ENTRY_S, 0.02, 0.95)
        entered = np.where(np.abs(t - ENTRY_S) < 0.2, 0.9, 0.01)
        ev = FamilyEvidence(times=t, curves={"percussion": present}, backend="trained", exempt={},
                            window_s=0.0464, entered={"percussion": entered},
                            left={"percussion": np.zeros_like(t)})
        return ev, {"backend": "trained", "exempt": {}}

    monkeypatch.setattr(event, "family_evidence_for", fake)
    png = tmp_path / "trained.png"
    rc = main(["explain", str(scored["results"]), "drums.wav", "drums/e1", "--plot", str(png),
               "--cache", str(scored["cache"]), "--family-evidence", "trained"])
    out = capsys.readouterr().out
    assert rc == 0 and png.is_file()
    assert "family evidence trained (percussion judged)" in out
    # the made-up evidence says the drums came in at 2 s from silence: the presence step passes there
    step = [ln for ln in out.splitlines() if ln.startswith("  family_change") and " size " in ln]
    assert step and step[0].split()[1] == "pass"
    assert "detector presence" in out


def test_another_configuration_is_disclosed_with_the_changed_verdict(
        scored: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    from timingbench.config import DEFAULT_CONFIG_PATH

    doc = yaml.safe_load(DEFAULT_CONFIG_PATH.read_text())
    doc["constants"]["percussion"]["level_min_change_db"]["value"] = 100.0  # no routed envelope moves that much
    strict = tmp_path / "strict.yaml"
    strict.write_text(yaml.safe_dump(doc, sort_keys=False))
    rc = main(["explain", str(scored["results"]), "drums.wav", "drums/e1", "--config", str(strict),
               "--cache", str(scored["cache"])])
    out = capsys.readouterr().out
    assert rc == 0
    assert "strict.yaml" in out and "is not the one of the run" in out
    assert "re-scored:    none" in out and "differs from events.jsonl (on_time" in out
    assert ">= 100 (percussion.level_min_change_db)" in out


@pytest.mark.slow
def test_explain_with_the_shipped_evidence_model(scored: dict[str, Path], config: Config,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["explain", str(scored["results"]), "drums.wav", "drums/e1", "--cache", str(scored["cache"]),
               "--family-evidence", "trained"])
    out = capsys.readouterr().out
    assert rc == 0
    exempt = config.params.families.exempt
    if "percussion" in exempt:
        assert f"family evidence trained (percussion exempt: {exempt['percussion']})" in out
    else:  # the percussion absence and identity gates read the model's presence and change head
        assert "family evidence trained (percussion judged)" in out
        assert "(evidence.quiet_max)" in out and "(evidence.entry_min_prob)" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{root}/nowhere", "drums.wav", "drums/e1"], "nowhere: results folder not found"),
        (["{root}", "drums.wav", "drums/e1"], "events.jsonl: not found"),
        (["{results}", "ghost.wav", "drums/e1"], "no clip 'ghost.wav'; clips there: cut.wav, drums.wav"),
        (["{results}", "drums.wav", "drums/e9"], "clip 'drums.wav' has no event 'drums/e9'; its events: drums/e1"),
    ],
)
def test_bad_input_is_one_clear_line(scored: dict[str, Path], args: list[str], message: str,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    argv = [a.format(root=scored["root"], results=scored["results"]) for a in args]
    rc = main(["explain", *argv])
    err = capsys.readouterr().err
    assert rc == 1
    assert len(err.strip().splitlines()) == 1 and message in err and err.startswith("timingbench: error: ")


def test_missing_inputs_say_which_option_to_pass(scored: dict[str, Path], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    res = tmp_path / "results"
    shutil.copytree(scored["results"], res)
    summary = json.loads((res / "summary.json").read_text())
    del summary["clips_dir"], summary["clips_dir_relative"]
    (res / "summary.json").write_text(json.dumps(summary))
    assert main(["explain", str(res), "drums.wav", "drums/e1"]) == 1
    assert "does not record the clips folder; pass --clips DIR" in capsys.readouterr().err
    assert main(["explain", str(res), "drums.wav", "drums/e1", "--clips", str(tmp_path / "gone")]) == 1
    assert "gone: clips folder not found" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["explain", str(res), "drums.wav", "drums/e1", "--clips", str(empty)]) == 1
    assert "no audio file 'drums.wav'" in capsys.readouterr().err


# ----------------------------------------------------------------------------- the rules


GRID = Grid(sr=SR, hop=512, n_frames=400)


@pytest.mark.parametrize("rise_db", [-8.0, -2.0, 2.0, 8.0])
@pytest.mark.parametrize("rising", [True, False])
def test_level_change_statistic_meets_its_threshold_exactly_when_the_gate_passes(
        config: Config, rise_db: float, rising: bool) -> None:
    env = np.where(np.arange(GRID.n) < 200, -30.0, -30.0 + rise_db)
    t = GRID.time(200)
    verdict, ev = level_change(env, GRID, t_s=t, rising=rising, params=config.params.stem.level)
    (check,) = gate_checks({"level_change": verdict}, {"level_change": ev},
                           kind="instrument_entry" if rising else "instrument_exit", detector="stem", config=config)
    need = float(config.params.stem.level.level_min_change_db)
    assert check.constant == "stem.level_min_change_db"
    assert check.threshold == (need if rising else -need) and check.op == (">=" if rising else "<=")
    assert check.meets is (verdict == "pass")


@pytest.mark.parametrize("held", [0.3, 0.69, 0.71, 1.0])
def test_persistence_is_judged_by_the_detectors_own_constant(config: Config, held: float) -> None:
    stem = config.params.stem
    present = np.zeros(GRID.n, dtype=bool)
    span = GRID.span(1.0, 1.0 + stem.persistence.windows.persistence_s)
    present[span.start:span.start + int(round(held * (span.stop - span.start)))] = True
    verdict, ev = persistence(present, GRID, t_s=1.0, clip_end_s=GRID.time(GRID.n), want_present=True,
                              params=stem.persistence)
    (check,) = gate_checks({"persistence": verdict}, {"persistence": ev}, kind="instrument_entry",
                           detector="stem", config=config)
    assert check.constant == "stem.persistence_min_fraction"
    assert check.threshold == stem.persistence.persistence_min_fraction
    assert check.meets is (verdict == "pass")
    # a detector without a persistence constant of its own has no threshold for it (no shared defaults)
    (other,) = gate_checks({"persistence": verdict}, {"persistence": ev}, kind="instrument_entry",
                           detector="energy", config=config)
    assert other.constant is None and other.value == ev["held_fraction"]


def test_identity_and_top_level_statistics(config: Config) -> None:
    checks = gate_checks(
        {"tonal_change": "pass", "register_absent_before": "fail", "semantic_family": "exempt"},
        {"register_change_db": 5.0, "whole_rise_db": 1.0, "novelty": 0.4,
         "semantic_family": {"backend": "tagger", "change": None, "reason": "dev_on_time_below_0.80"}},
        kind="instrument_entry", detector="tonal", config=config)
    by = {(c.gate, c.statistic): c for c in checks}
    assert by[("tonal_change", "register_change_db")].constant == "tonal.min_rise_db"
    assert by[("register_absent_before", "whole_rise_db")].meets is False
    reason = by[("semantic_family", "reason")]
    assert reason.value == "dev_on_time_below_0.80" and reason.constant is None and reason.verdict == "exempt"
    assert ("tonal_change", "novelty") not in by  # candidate information, not a gate statistic
    assert "(value only)" in "\n".join(format_checks(checks))


def test_disabled_and_unknown_statistics(config: Config) -> None:
    cfg = config.with_disabled("stem.absence_whole_below_ref_db")
    checks = gate_checks({"absence_before": "pass", "new_gate": "fail"},
                         {"absence_before": {"strict_db": -30.0, "whole_db": -3.0},
                          "new_gate": {"oddity": 1.5}},
                         kind="instrument_entry", detector="stem", config=cfg)
    by = {(c.gate, c.statistic): c for c in checks}
    whole = by[("absence_before", "whole_db")]
    assert whole.constant == "stem.absence_whole_below_ref_db" and whole.threshold is None and whole.meets is None
    assert by[("absence_before", "strict_db")].meets is True
    odd = by[("new_gate", "oddity")]
    assert odd.value == 1.5 and odd.constant is None and odd.meets is None
    assert "<= disabled (stem.absence_whole_below_ref_db)" in "\n".join(format_checks(checks))


# ----------------------------------------------------------------------------- paths that travel


def test_explain_and_report_work_from_any_folder_after_results_and_clips_move_together(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from timingbench.config import load_config
    from timingbench.report import build_report

    root = tmp_path / "project"
    root.mkdir()
    _clips(root)
    monkeypatch.chdir(root)  # score with relative paths, as a user types them
    cache = tmp_path / "cache"
    score_folder("clips", "prompts.jsonl", "results", load_config(),
                 opts=ScoreOptions(separation="dsp", family_evidence="none", cache_dir=str(cache), chance=False))
    summary = json.loads((root / "results" / "summary.json").read_text())
    assert summary["clips_dir"] == str(root / "clips") and summary["clips_dir_relative"] == "../clips"
    assert summary["prompts"]["path"] == str(root / "prompts.jsonl")
    # from another working directory
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["explain", str(root / "results"), "drums.wav", "drums/e1", "--cache", str(cache)]) == 0
    # after the results, clips and prompts move together (the recorded absolute paths are gone)
    moved = tmp_path / "moved"
    shutil.move(str(root), str(moved))
    assert main(["explain", str(moved / "results"), "cut.wav", "cut/e1", "--cache", str(cache)]) == 0
    assert "cut/e1" in capsys.readouterr().out
    r = build_report(moved / "results", tmp_path / "report", config=load_config(), audio="copy",
                     overrides={"cache_dir": str(cache)})
    assert r.pages == 2 and r.not_derived == []
    assert sorted(p.name for p in (tmp_path / "report" / "audio").iterdir()) == ["c00000.wav", "c00001.wav"]
    # clips gone: the report stops before writing, unless told to go on without audio
    shutil.rmtree(moved / "clips")
    with pytest.raises(TimingbenchError, match="clips folder not found"):
        build_report(moved / "results", tmp_path / "report2", config=load_config(), audio="mp3")
    assert not (tmp_path / "report2").exists()
    r = build_report(moved / "results", tmp_path / "report3", config=load_config(), audio="mp3",
                     allow_missing_audio=True)
    assert [c for c, _ in r.not_derived] == ["cut.wav", "drums.wav"]
    r = build_report(moved / "results", tmp_path / "report4", config=load_config(), audio="none")
    assert r.pages == 2


def test_the_plot_title_says_when_an_events_identity_is_not_verified(scored: dict[str, Path]) -> None:
    from timingbench.explain.event import explain_event
    from timingbench.explain.plot import identity_verified, title_of
    from timingbench.explain.results import load_results

    res = load_results(scored["results"])
    # scored with --family-evidence none: no instrument is identified, a whole-mix event needs none
    drums = explain_event(res, "drums.wav", "drums/e1", overrides={"cache_dir": str(scored["cache"])})
    cut = explain_event(res, "cut.wav", "cut/e1", overrides={"cache_dir": str(scored["cache"])})
    assert drums.row["identity_verified"] is False and not identity_verified(drums)
    assert title_of(drums).endswith("[identity not verified: timing only]")
    assert identity_verified(cut) and "identity not verified" not in title_of(cut)

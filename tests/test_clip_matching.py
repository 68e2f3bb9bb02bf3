"""Matching a clips folder: files that claim one (prompt, sample), and subfolders that hold audio."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from timingbench.config import Config
from timingbench.executors import LocalExecutor
from timingbench.prompts import match_clips
from timingbench.runner import ScoreOptions, score_folder
from timingbench.summary import format_table

SR = 22050


def _clip(path: Path, rng: np.random.Generator) -> None:
    t = np.arange(SR * 12) / SR
    level = np.where(t < 6.0, 0.05, 0.3)
    sf.write(path, (rng.normal(0.0, 1.0, t.size) * level).astype(np.float32), SR, format="WAV", subtype="FLOAT")


def _prompts(tmp: Path, ids: tuple[str, ...]) -> Path:
    path = tmp / "prompts.jsonl"
    path.write_text("".join(json.dumps({
        "id": pid, "family": "single_event", "text": "Lift the energy at the 6th second.", "duration_s": 12.0,
        "events": [{"id": f"{pid}/e1", "kind": "mix_energy_increase", "family": "mix", "time_s": 6.0}]}) + "\n"
        for pid in ids))
    return path


def _score(clips: Path, prompts: Path, out: Path, config: Config):  # type: ignore[no-untyped-def]
    return score_folder(clips, prompts, out, config, jobs=1, executor=LocalExecutor(1),
                        opts=ScoreOptions(separation="dsp", family_evidence="none", chance=False, use_cache=False))


@pytest.fixture
def folder(tmp_path: Path, rng: np.random.Generator) -> Path:
    """``x.wav`` with byte-identical copies ``x.WAV``, ``x__0.flac`` (one sample claimed thrice), and ``y.wav``."""
    clips = tmp_path / "clips"
    clips.mkdir()
    _clip(clips / "x.wav", rng)
    for name in ("x.WAV", "x__0.flac"):
        shutil.copy(clips / "x.wav", clips / name)
    _clip(clips / "y.wav", rng)
    return clips


def test_files_claiming_one_sample_are_all_refused_naming_each_other(folder: Path) -> None:
    match = match_clips(folder, ["x", "y"])
    by_name = {c.clip: c for c in match.clips}
    assert set(by_name) == {"x.wav", "x.WAV", "x__0.flac", "y.wav"} and match.missing == []
    assert by_name["y.wav"].conflict is None
    for name in ("x.wav", "x.WAV", "x__0.flac"):
        why = by_name[name].conflict
        assert why is not None and why.startswith("sample 0 of prompt 'x' is also claimed by")
        assert all(other in why for other in {"x.wav", "x.WAV", "x__0.flac"} - {name})


def test_a_claimed_sample_counts_as_not_delivered_and_the_other_clips_score(folder: Path, tmp_path: Path,
                                                                            config: Config) -> None:
    res = _score(folder, _prompts(tmp_path, ("x", "y")), tmp_path / "out", config)
    s = res.summary
    errors = {e["clip"]: e["error"] for e in s["errors"]}
    assert set(errors) == {"x.wav", "x.WAV", "x__0.flac"}
    assert all("sample 0 of prompt 'x' is also claimed by" in why for why in errors.values())
    assert all(other in errors[name] for name in errors for other in set(errors) - {name})
    assert s["counts"]["scored_clips"] == 1 and s["counts"]["events"] == 4  # every claimant's event counts
    assert [e["outcome"] for e in res.events if e["clip"] != "y.wav"] == ["none"] * 3
    assert next(e for e in res.events if e["clip"] == "y.wav")["error"] is None


def test_a_resumed_run_does_not_reuse_a_part_a_new_claimant_invalidates(folder: Path, tmp_path: Path,
                                                                       config: Config) -> None:
    prompts, out = _prompts(tmp_path, ("x", "y")), tmp_path / "out"
    moved = tmp_path / "aside"
    moved.mkdir()
    for name in ("x.WAV", "x__0.flac"):
        shutil.move(folder / name, moved / name)
    first = _score(folder, prompts, out, config)
    assert first.summary["errors"] == []
    shutil.move(moved / "x.WAV", folder / "x.WAV")
    again = _score(folder, prompts, out, config)
    assert {e["clip"] for e in again.summary["errors"]} == {"x.wav", "x.WAV"}


def test_subfolders_holding_audio_are_named_not_silently_skipped(tmp_path: Path, config: Config,
                                                                 rng: np.random.Generator) -> None:
    clips = tmp_path / "clips"
    (clips / "takes" / "deeper").mkdir(parents=True)
    (clips / "notes").mkdir()
    (clips / ".cache").mkdir()
    _clip(clips / "y.wav", rng)
    _clip(clips / "takes" / "deeper" / "x.wav", rng)
    _clip(clips / ".cache" / "x.wav", rng)
    (clips / "notes" / "readme.txt").write_text("not audio")
    with pytest.warns(UserWarning, match=r"subfolders holding audio are not searched and not scored: takes/"):
        assert match_clips(clips, ["x", "y"]).subfolders == ["takes"]
    with pytest.warns(UserWarning, match="takes/"):
        res = _score(clips, _prompts(tmp_path, ("x", "y")), tmp_path / "out", config)
    assert res.summary["ignored_subfolders"] == ["takes"]
    assert "subfolder takes/ of the clips folder holds audio" in format_table(res.summary)
    assert res.summary["missing"] == ["x"]

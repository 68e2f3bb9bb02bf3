"""What `timingbench score` prints on bad input: a one-line error naming one absolute path,
before any ``jobs:`` line or progress bar and before anything is written; a prompts file that
is not JSONL at all refused as a whole; the backends used printed as words."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from timingbench.cli import main
from timingbench.errors import PromptError
from timingbench.prompts import load_prompts

ROOT = Path(__file__).resolve().parents[1]
SR = 22050
#: No --jobs: the resolved default is printed ("jobs: ..."), but only once the arguments are checked.
FAST = ["--separation", "dsp", "--family-evidence", "none", "--no-chance"]
PROMPT = {"id": "p1", "family": "single_event", "text": "Stop at 2 s.", "duration_s": 4.0, "tempo": None,
          "events": [{"id": "p1/e1", "kind": "music_end", "family": "mix", "time_s": 2.0, "tolerance_s": 0.5}]}


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``clips/`` (empty), ``p.jsonl`` (one prompt) and a cache, with the working folder there:
    every path the tests pass is relative, as a user types it."""
    (tmp_path / "clips").mkdir()
    (tmp_path / "p.jsonl").write_text(json.dumps(PROMPT) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _score(clips: str, prompts: str, *extra: str) -> list[str]:
    return ["score", clips, "--prompts", prompts, "--out", "scored-here", "--cache", "cache", *FAST, *extra]


def _one_line_error(err: str, path: Path) -> str:
    """The only line of ``err``; it names ``path`` once, absolute, and no relative form of it."""
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    line = lines[0]
    assert line.startswith("timingbench: error: "), line
    assert line.count(str(path)) == 1, line
    assert line.count(path.name) == 1, line  # no second, relative spelling of the same file
    return line


def test_a_missing_clips_folder_is_one_line_before_anything_else(folder: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_score("no-such-folder", "p.jsonl")) == 1
    cap = capsys.readouterr()
    line = _one_line_error(cap.err, folder / "no-such-folder")
    assert "clips folder not found" in line
    assert "jobs:" not in cap.err and "━" not in cap.err and cap.out == ""
    assert not (folder / "scored-here").exists()


def _wav(path: Path, seconds: float = 3.0) -> Path:
    sf.write(path, np.random.default_rng(0).standard_normal(int(SR * seconds)).astype(np.float32) * 0.1, SR)
    return path


@pytest.mark.parametrize("kind", ["audio", "yaml", "empty", "json_array"])
def test_a_prompts_file_that_is_not_jsonl_is_refused_in_one_line(folder: Path, kind: str,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    _wav(folder / "clips" / "p1.wav")
    bad = folder / {"audio": "clip.wav", "yaml": "timingbench-v1.yaml", "empty": "empty.jsonl",
                    "json_array": "prompts.json"}[kind]
    if kind == "audio":
        _wav(bad)
    elif kind == "yaml":
        bad.write_bytes((ROOT / "configs" / "timingbench-v1.yaml").read_bytes())
    elif kind == "json_array":
        bad.write_text(json.dumps([PROMPT, PROMPT], indent=1), encoding="utf-8")
    else:
        bad.write_bytes(b"")
    assert main(_score("clips", bad.name)) == 1
    cap = capsys.readouterr()
    line = _one_line_error(cap.err, bad)
    assert "not a prompt file" in line and "JSONL" in line
    assert {"audio": "binary data", "yaml": "lines is a JSON object", "empty": "empty",
            "json_array": "lines is a JSON object"}[kind] in line
    assert "prompt rejected" not in cap.err and "jobs:" not in cap.err and "━" not in cap.err and cap.out == ""
    assert not (folder / "scored-here").exists()


def test_a_prompts_file_with_some_good_rows_is_still_read_row_by_row(folder: Path) -> None:
    mixed = folder / "mixed.jsonl"
    mixed.write_text("version: 1\n" + json.dumps(PROMPT) + "\nnot json\n", encoding="utf-8")
    ps = load_prompts(mixed, require_jsonl=True)
    assert list(ps.prompts) == ["p1"] and len(ps.errors) == 2
    audio = _wav(folder / "x.wav")
    with pytest.raises(PromptError, match=r"x\.wav: not a prompt file \(binary data"):
        load_prompts(audio, require_jsonl=True)
    # without require_jsonl (validate-prompts, the row-by-row loader) each line stays one rejected row
    ps = load_prompts(audio)
    assert not ps.prompts and len(ps.errors) >= 1


def test_a_missing_prompts_file_and_an_out_that_is_a_file_are_one_line(folder: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_score("clips", "nope.jsonl")) == 1
    _one_line_error(capsys.readouterr().err, folder / "nope.jsonl")
    (folder / "scored-here").write_text("x")
    assert main(_score("clips", "p.jsonl")) == 1
    cap = capsys.readouterr()
    assert "--out is a file" in _one_line_error(cap.err, folder / "scored-here")
    assert "jobs:" not in cap.err


def test_an_undecodable_clip_is_named_once_by_its_absolute_path(folder: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "clips" / "p1.wav").write_bytes(b"RIFF garbage" * 10)
    assert main(_score("clips", "p.jsonl")) == 1
    cap = capsys.readouterr()
    path = folder / "clips" / "p1.wav"
    lines = [ln for ln in (cap.out + cap.err).splitlines() if "p1.wav" in ln]
    assert len(lines) == 1, lines
    # the clip's name (its key in the rows), then its one path, absolute
    assert lines[0].startswith(f"error: p1.wav: {path}: corrupt"), lines[0]
    assert lines[0].count(str(path)) == 1 and lines[0].count("clips/p1.wav") == 1, lines[0]
    assert "━" not in cap.err  # stderr is not a terminal: no frozen frame of a bar
    assert "nothing was scored" in cap.err
    row = json.loads((folder / "scored-here" / "clips.jsonl").read_text())
    assert row["error"] == lines[0].split("error: p1.wav: ", 1)[1]


def test_the_backends_used_are_printed_as_words(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _wav(folder / "clips" / "p1.wav", seconds=4.0)
    assert main(_score("clips", "p.jsonl")) == 0
    out = capsys.readouterr().out
    sep = next(ln for ln in out.splitlines() if ln.startswith("separation:"))
    fam = next(ln for ln in out.splitlines() if ln.startswith("family evidence:"))
    assert sep == "separation: dsp (1 clip); requested dsp", sep
    assert fam == "family evidence: not used; requested none", fam
    assert "{" not in out


def test_ray_options_without_the_ray_executor_are_one_line_before_the_jobs_line(
        folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_score("clips", "p.jsonl", "--ray-address", "auto")) == 1
    cap = capsys.readouterr()
    lines = [ln for ln in cap.err.splitlines() if ln.strip()]
    assert lines == ["timingbench: error: --ray-address and --ray-gpus-per-clip need --executor ray"], lines
    assert not (folder / "scored-here").exists()

"""Bad input to `timingbench score`: every error names the file and the field, the rest runs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import timingbench.features as features
from timingbench.cli import main
from timingbench.config import load_config
from timingbench.errors import ParameterError
from timingbench.prompts import load_prompts
from timingbench.runner import ScoreOptions, score_folder

SR = 44100


def _opts(tmp: Path) -> ScoreOptions:
    return ScoreOptions(separation="dsp", family_evidence="none", chance=False, cache_dir=str(tmp / "cache"))


def _prompt(pid: str, time_s: float = 6.0) -> dict:
    return {"id": pid, "family": "single_event", "text": "Stop the music at 6 s.", "style": "",
            "duration_s": 12.0, "tempo": None,
            "events": [{"id": f"{pid}/e1", "kind": "music_end", "target": "", "family": "mix",
                        "time_s": time_s, "tolerance_s": 0.5}]}


def _music(seconds: float = 12.0, sr: int = SR) -> np.ndarray:
    """Noise bursts for 6 s, then digital silence: a clear music_end at 6 s."""
    rng = np.random.default_rng(7)
    t = np.arange(int(seconds * sr)) / sr
    x = rng.standard_normal(t.size) * (0.2 + 0.2 * (np.sin(2 * np.pi * 2 * t) > 0))
    x[t >= 6.0] = 0.0
    return x.astype(np.float32)


def _write_prompts(path: Path, rows: list[dict | str]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def bad_folder(tmp_path: Path) -> Path:
    clips = tmp_path / "clips"
    clips.mkdir()
    x = _music()
    sf.write(clips / "good.wav", x, SR, subtype="PCM_16")
    sf.write(clips / "odd-8k.wav", _music(sr=8000), 8000, subtype="PCM_16")
    sf.write(clips / "low-4k.wav", _music(sr=4000), 4000, subtype="PCM_16")
    sf.write(clips / "odd-96k.wav", _music(sr=96000), 96000, subtype="PCM_24")
    sf.write(clips / "odd-6ch-u8.wav", np.tile(x[:, None], (1, 6)), SR, subtype="PCM_U8")
    (clips / "zero.wav").write_bytes(b"")
    (clips / "random.wav").write_bytes(np.random.default_rng(1).bytes(4000))
    (clips / "text.mp3").write_text("not an mp3\n" * 40)
    sf.write(clips / "silent.wav", np.zeros(12 * SR, np.float32), SR, subtype="PCM_16")
    nan = x.copy()
    nan[100], nan[200] = np.nan, np.inf
    sf.write(clips / "nan.wav", nan, SR, subtype="FLOAT")
    sf.write(clips / "short.wav", x[: int(0.04 * SR)], SR, subtype="PCM_16")
    sf.write(clips / "stray.wav", x, SR, subtype="PCM_16")
    ids = ["good", "odd-8k", "low-4k", "odd-96k", "odd-6ch-u8", "zero", "random", "text", "silent", "nan", "short"]
    _write_prompts(tmp_path / "prompts.jsonl", [_prompt(i) for i in ids])
    return tmp_path


def test_bad_clips_are_named_and_the_rest_is_scored(bad_folder: Path) -> None:
    out = bad_folder / "out"
    res = score_folder(bad_folder / "clips", bad_folder / "prompts.jsonl", out, load_config(), opts=_opts(bad_folder))
    assert all((out / f).is_file() for f in ("events.jsonl", "clips.jsonl", "summary.json"))
    errors = {e["clip"]: e["error"] for e in res.summary["errors"]}
    reasons = {"zero.wav": "empty file", "random.wav": "corrupt", "text.mp3": "corrupt",
               "nan.wav": "2 non-finite samples",
               "short.wav": "audio.min_duration_s is 50 ms",
               "low-4k.wav": "sample rate 4000 Hz is below audio.min_sample_rate_hz (8000 Hz)"}
    assert set(errors) == set(reasons)
    for clip, reason in reasons.items():
        assert str(bad_folder / "clips" / clip) in errors[clip] and reason in errors[clip], errors[clip]
    assert "1764 samples at 44100 Hz = 40.00 ms" in errors["short.wav"]
    scored = {c["clip"] for c in res.clips if c["error"] is None}
    assert scored == {"good.wav", "odd-8k.wav", "odd-96k.wav", "odd-6ch-u8.wav", "silent.wav"}
    # every submitted clip's events count: the error clips' as none, with the error named
    assert {e["clip"] for e in res.events} == {c["clip"] for c in res.clips}
    for e in res.events:
        if e["clip"] in errors:
            assert (e["outcome"], e["rejected_by"], e["error"]) == ("none", None, errors[e["clip"]])
    assert res.summary["counts"]["error_events"] == len(reasons)
    assert res.summary["rates"]["n"] == len(res.clips) == 11
    assert res.summary["rates_excluding_errors"]["n"] == len(scored)
    assert res.summary["unmatched"] == ["stray.wav"]
    # silence is a valid output in which nothing was delivered: scored, its event none
    silent = next(c for c in res.clips if c["clip"] == "silent.wav")
    assert silent["silent"] is True and silent["duration_ok"] is True
    assert [e["outcome"] for e in res.events if e["clip"] == "silent.wav"] == ["none"]
    assert all(c["duration_ok"] is False for c in res.clips if c["clip"] in errors)


def test_pipeline_errors_name_the_file(bad_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def failing(*a: object, **k: object) -> None:
        raise ParameterError("magnitude contains NaN or inf")

    monkeypatch.setattr(features, "get_bank", failing)
    res = score_folder(bad_folder / "clips", bad_folder / "prompts.jsonl", bad_folder / "out", load_config(),
                       opts=_opts(bad_folder))
    row = next(c for c in res.clips if c["clip"] == "good.wav")
    assert row["error"] == f"{bad_folder / 'clips' / 'good.wav'}: magnitude contains NaN or inf"


def test_non_utf8_line_is_rejected_alone(tmp_path: Path) -> None:
    path = _write_prompts(tmp_path / "p.jsonl", [_prompt("a"), _prompt("b")])
    path.write_bytes(path.read_bytes() + b'{"id": "caf\xe9"}\n')
    ps = load_prompts(path)
    assert sorted(ps.prompts) == ["a", "b"]
    assert [str(e) for e in ps.errors] == [f"{path}:3: not valid UTF-8 (byte 0xe9 at column 12)"]


def test_huge_numbers_are_rejected_with_the_field(tmp_path: Path) -> None:
    big = json.dumps(_prompt("big")).replace('"time_s": 6.0', '"time_s": 1' + "0" * 400)
    longer = json.dumps(_prompt("longer")).replace('"time_s": 6.0', '"time_s": 1' + "0" * 5000)
    path = _write_prompts(tmp_path / "p.jsonl", [_prompt("a"), big, longer])
    ps = load_prompts(path)
    assert list(ps.prompts) == ["a"]
    msgs = [str(e) for e in ps.errors]
    assert msgs[0].startswith(f"{path}:2: prompt 'big': field 'events[0].time_s': must be a number of seconds")
    assert msgs[1].startswith(f"{path}:3: not valid JSON (ValueError: Exceeds the limit")


def test_cli_reports_bad_prompt_lines_and_scores_the_rest(bad_folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prompts = bad_folder / "prompts.jsonl"
    prompts.write_bytes(json.dumps(_prompt("good")).encode() + b"\n\xff\xfe\n")
    (bad_folder / "only").mkdir()
    (bad_folder / "clips" / "good.wav").rename(bad_folder / "only" / "good.wav")
    rc = main(["score", str(bad_folder / "only"), "--prompts", str(prompts), "--out", str(bad_folder / "out"),
               "--separation", "dsp", "--family-evidence", "none", "--no-chance", "--cache", str(bad_folder / "cache")])
    assert rc == 0
    err = capsys.readouterr().err
    assert f"prompt rejected: {prompts}:2: not valid UTF-8 (byte 0xff at column 1)" in err
    clips = [json.loads(x) for x in (bad_folder / "out" / "clips.jsonl").read_text().splitlines()]
    assert [(c["clip"], c["error"]) for c in clips] == [("good.wav", None)]


def test_edited_prompt_is_rescored_not_reused(tmp_path: Path) -> None:
    clips = tmp_path / "clips"
    clips.mkdir()
    sf.write(clips / "good.wav", _music(), SR, subtype="PCM_16")
    prompts = _write_prompts(tmp_path / "p.jsonl", [_prompt("good", 6.0)])
    out = tmp_path / "out"
    first = score_folder(clips, prompts, out, load_config(), opts=_opts(tmp_path))
    assert [e["instructed_s"] for e in first.events] == [6.0]
    _write_prompts(prompts, [_prompt("good", 3.0)])
    second = score_folder(clips, prompts, out, load_config(), opts=_opts(tmp_path))
    assert [e["instructed_s"] for e in second.events] == [3.0]
    score_folder(clips, prompts, tmp_path / "fresh", load_config(), opts=_opts(tmp_path))
    assert (out / "events.jsonl").read_bytes() == (tmp_path / "fresh" / "events.jsonl").read_bytes()


def test_cli_exit_status_says_when_nothing_was_scored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    clips = tmp_path / "clips"
    clips.mkdir()
    (clips / "a.wav").write_bytes(b"")
    _write_prompts(tmp_path / "p.jsonl", [_prompt("a")])
    args = ["score", str(clips), "--prompts", str(tmp_path / "p.jsonl"), "--separation", "dsp",
            "--family-evidence", "none", "--no-chance", "--cache", str(tmp_path / "cache")]
    assert main([*args, "--out", str(tmp_path / "r")]) == 1
    assert "nothing was scored: all 1 clips failed" in capsys.readouterr().err
    # an output folder that is a file: a one-line error, not a traceback
    (tmp_path / "afile").write_text("x")
    assert main([*args, "--out", str(tmp_path / "afile")]) == 1
    assert "timingbench: error: " in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*args, "--out", str(tmp_path / "r2"), "--jobs", "0"])


def test_results_are_ordinary_files(bad_folder: Path) -> None:
    import os

    out = bad_folder / "out"
    score_folder(bad_folder / "clips", bad_folder / "prompts.jsonl", out, load_config(), opts=_opts(bad_folder))
    mask = os.umask(0)
    os.umask(mask)
    for f in ("events.jsonl", "clips.jsonl", "summary.json"):
        assert (out / f).stat().st_mode & 0o777 == 0o666 & ~mask


def test_a_folder_of_bad_clips_counts_every_submitted_clip(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's bad-input folder: zero-byte, text-as-mp3, 0.2 s, silent, 96 kHz 6-channel, an
    unmatched name and malformed prompt lines. Every submitted clip's events are counted."""
    clips = tmp_path / "clips"
    clips.mkdir()
    x = _music()
    (clips / "zero.wav").write_bytes(b"")
    (clips / "text.mp3").write_text("not an mp3\n" * 40)
    sf.write(clips / "short.wav", x[: int(0.2 * SR)], SR, subtype="PCM_16")
    sf.write(clips / "silent.wav", np.zeros(12 * SR, np.float32), SR, subtype="PCM_16")
    sf.write(clips / "wide.wav", np.tile(_music(sr=96000)[:, None], (1, 6)), 96000, subtype="PCM_24")
    sf.write(clips / "nobody-asked.wav", x, SR, subtype="PCM_16")
    ids = ["zero", "text", "short", "silent", "wide"]
    prompts = _write_prompts(tmp_path / "p.jsonl", [*(_prompt(i) for i in ids), "{not json", '{"id": "x"}'])
    out = tmp_path / "out"
    rc = main(["score", str(clips), "--prompts", str(prompts), "--out", str(out), "--jobs", "1",
               "--separation", "dsp", "--family-evidence", "none", "--no-chance", "--cache", str(tmp_path / "c")])
    assert rc == 0
    cap = capsys.readouterr()
    assert "1 files match no prompt id" in cap.err and "nobody-asked.wav" in cap.err
    assert cap.err.count("prompt rejected:") == 2
    summary = json.loads((out / "summary.json").read_text())
    events = [json.loads(x) for x in (out / "events.jsonl").read_text().splitlines()]
    # every submitted (matched) clip's event is a row of every rate's denominator
    assert sorted(e["clip"] for e in events) == sorted(f"{i}.{'mp3' if i == 'text' else 'wav'}" for i in ids)
    assert summary["rates"]["n"] == summary["rates_identity_verified"]["n"] == 5
    assert {e["clip"] for e in summary["errors"]} == {"zero.wav", "text.mp3"}
    assert summary["counts"]["error_events"] == 2 and summary["rates_excluding_errors"]["n"] == 3
    silent = next(e for e in events if e["clip"] == "silent.wav")
    assert silent["outcome"] == "none" and silent["error"] is None
    assert summary["duration_compliance"] <= summary["duration_compliance_excluding_errors"]
    assert summary["unmatched"] == ["nobody-asked.wav"] and len(summary["prompts"]["rejected"]) == 2
    assert "excluding the 2 clips with an error" in cap.out

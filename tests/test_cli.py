"""The command line as a user meets it: grouped help, one metavar style, one --jobs default,
what `score` says about unmatched files and resumed runs, nothing written before the inputs check."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from timingbench.cli import COMMAND_GROUPS, METAVAR_STYLE, build_parser, main
from timingbench.commands import executor_options
from timingbench.config import Config


def _parsers(parser: argparse.ArgumentParser, path: str = "timingbench") -> list[tuple[str, argparse.ArgumentParser]]:
    out = [(path, parser)]
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sp in a.choices.items():
                out += _parsers(sp, f"{path} {name}")
    return out


def test_help_lists_every_command_once_in_four_groups(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert [g for g, _, _ in COMMAND_GROUPS] == ["scoring", "benchmarks", "data", "development"]
    groups = {g: names for g, _, names in COMMAND_GROUPS}
    assert groups["scoring"] == ("score", "report", "explain", "compare", "demo")
    assert groups["benchmarks"] == ("tag", "mgbench", "audiorag")
    assert {"render", "prompts", "annotations", "label", "export"} <= set(groups["data"])
    assert {"calibrate", "sweep", "gain-check", "evidence", "features", "models"} <= set(groups["development"])
    positions = [text.index(f"\n{g}: {line}\n") for g, line, _ in COMMAND_GROUPS]
    assert positions == sorted(positions)  # in this order, each with its one line
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    registered = set(sub.choices)
    listed = [n for _, _, names in COMMAND_GROUPS for n in names]
    assert sorted(listed) == sorted(registered) and len(listed) == len(set(listed))
    for name in listed:  # each command's line sits under its group, once
        assert text.count(f"\n  {name} ") == 1, name


def test_every_argument_has_one_metavar_style() -> None:
    bad = []
    for path, p in _parsers(build_parser()):
        for a in p._actions:
            if a.nargs == 0 or isinstance(a, argparse._SubParsersAction | argparse._HelpAction):
                continue
            if a.choices is not None and a.metavar is None:
                continue  # argparse's {a,b,c}
            if not isinstance(a.metavar, str) or not METAVAR_STYLE.match(a.metavar):
                bad.append(f"{path} {a.option_strings or a.dest}: {a.metavar!r}")
    assert not bad, bad


def test_jobs_has_one_default_everywhere() -> None:
    with_jobs = []
    for path, p in _parsers(build_parser()):
        for a in p._actions:
            if "--jobs" in a.option_strings:
                with_jobs.append(path)
                assert a.default is None and a.metavar == "N", path
    assert {"timingbench score", "timingbench demo", "timingbench report", "timingbench render"} <= set(with_jobs)


@pytest.mark.parametrize(("cores", "want"), [(1, 1), (2, 2), (16, 4)])
def test_default_jobs_are_the_cores_capped_and_printed(config: Config, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str], cores: int,
                                                       want: int) -> None:
    monkeypatch.setattr(executor_options, "available_cores", lambda: cores)
    assert config.params.runtime.default_jobs_max == 4
    args = argparse.Namespace(jobs=None)
    assert executor_options.resolve_jobs(args, config) == want == args.jobs
    assert f"jobs: {want} ({cores} cores available" in capsys.readouterr().err
    assert executor_options.resolve_jobs(argparse.Namespace(jobs=3), config) == 3  # given: as given, silent
    assert capsys.readouterr().err == ""


def _folder(tmp: Path, n_stray: int) -> tuple[Path, Path]:
    clips = tmp / "clips"
    clips.mkdir()
    sf.write(clips / "p1.wav", np.zeros(44100 * 4, np.float32), 44100)  # silence: scored, nothing delivered
    for i in range(n_stray):
        (clips / f"stray{i:02d}.wav").write_bytes(b"")
    prompts = tmp / "prompts.jsonl"
    prompts.write_text(json.dumps({"id": "p1", "family": "single_event", "text": "Stop at 2 s.", "duration_s": 4.0,
                                   "tempo": None, "events": [{"id": "p1/e1", "kind": "music_end", "family": "mix",
                                                              "time_s": 2.0, "tolerance_s": 0.5}]}) + "\n")
    return clips, prompts


def test_score_names_unmatched_files_and_says_what_it_reused(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    clips, prompts = _folder(tmp_path, 12)
    argv = ["score", str(clips), "--prompts", str(prompts), "--out", str(tmp_path / "out"), "--jobs", "1",
            "--separation", "dsp", "--family-evidence", "none", "--no-chance", "--cache", str(tmp_path / "c")]
    assert main(argv) == 0
    cap = capsys.readouterr()
    assert "12 files match no prompt id" in cap.err
    assert "stray00.wav, stray01.wav" in cap.err and "stray09.wav ... and 2 more" in cap.err
    assert "stray10.wav" not in cap.err and "resumed" not in cap.out
    assert main(argv) == 0
    assert "resumed: 1 clips reused" in capsys.readouterr().out


@pytest.mark.parametrize("broken", ["clips", "prompts"])
def test_nothing_is_written_before_the_inputs_check(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    broken: str) -> None:
    clips, prompts = _folder(tmp_path, 0)
    clips_arg = str(tmp_path / "no-such-folder") if broken == "clips" else str(clips)
    prompts_arg = str(tmp_path / "no-such.jsonl") if broken == "prompts" else str(prompts)
    out = tmp_path / "out"
    assert main(["score", clips_arg, "--prompts", prompts_arg, "--out", str(out), "--jobs", "1"]) == 1
    assert "not found" in capsys.readouterr().err
    assert not out.exists()

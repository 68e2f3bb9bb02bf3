"""A write that fails mid-run (disk full, read-only folder) keeps finished parts and resumes."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

import timingbench.jsonio as jsonio
import timingbench.runner as runner
from timingbench.cli import main

OUTPUTS = ("events.jsonl", "clips.jsonl", "summary.json")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three short rendered clips and their prompts."""
    from timingbench.render import render_recipe

    root = tmp_path_factory.mktemp("corpus")
    rows = []
    for recipe, seed in (("silence_then_start", 2201), ("end_cut", 2202), ("energy_increase", 2203)):
        rows.append(render_recipe(recipe, seed=seed, out_dir=root, duration_s=6.0).prompt)
    (root / "prompts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def _score(corpus: Path, out: Path, cache: Path) -> int:
    return main(["score", str(corpus / "clips"), "--prompts", str(corpus / "prompts.jsonl"),
                 "--out", str(out), "--separation", "dsp", "--family-evidence", "none",
                 "--cache", str(cache), "--no-chance", "--jobs", "1"])  # in process: the fault patch sees it


@pytest.fixture(scope="module")
def reference(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("ref") / "r"
    assert _score(corpus, out, out.parent / "cache") == 0
    files = {n: (out / n).read_bytes() for n in OUTPUTS}
    clips = [json.loads(x) for x in files["clips.jsonl"].splitlines()]
    assert len(clips) == 3 and all(c["error"] is None for c in clips)
    files.update({f"{runner.PARTS}/{p.name}": p.read_bytes() for p in (out / runner.PARTS).glob("*.json")})
    return files


def _fail_fsync(monkeypatch: pytest.MonkeyPatch, *, where: str, nth: int) -> list[str]:
    """Make the ``nth`` atomic write whose target matches ``where`` fail with ENOSPC."""
    seen: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        target = os.readlink(f"/proc/self/fd/{fd}")
        if where in target:
            seen.append(target)
            if len(seen) == nth:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), target)
        real(fd)

    monkeypatch.setattr(jsonio.os, "fsync", fsync)
    return seen


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to see which file is written")
@pytest.mark.parametrize(("where", "nth", "parts_kept"),
                         [(f"/{runner.PARTS}/", 2, 1), (f"/{runner.PARTS}/", 3, 2), (".events.jsonl.", 1, 3)])
def test_failed_write_keeps_finished_parts_and_the_next_run_resumes(
    corpus: Path, reference: dict[str, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], where: str, nth: int, parts_kept: int,
) -> None:
    out, cache = tmp_path / "r", tmp_path / "cache"
    with monkeypatch.context() as m:
        seen = _fail_fsync(m, where=where, nth=nth)
        rc = _score(corpus, out, cache)
    assert len(seen) == nth
    assert rc != 0
    errors = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("timingbench: error:")]
    assert len(errors) == 1 and "No space left on device" in errors[0] and str(out) in errors[0]
    # every part finished before the failure is intact and byte-identical to an uninterrupted run
    parts = sorted((out / runner.PARTS).iterdir())
    assert [p.suffix for p in parts] == [".json"] * parts_kept  # no temporary file left behind
    for p in parts:
        assert p.read_bytes() == reference[f"{runner.PARTS}/{p.name}"]
    assert not any((out / n).exists() for n in OUTPUTS)
    # the same command again finishes and writes exactly what an uninterrupted run writes
    calls: list[str] = []
    real = runner.score_clip

    def counting(ref, *a, **k):  # type: ignore[no-untyped-def]
        calls.append(ref.clip)
        return real(ref, *a, **k)

    monkeypatch.setattr(runner, "score_clip", counting)
    assert _score(corpus, out, cache) == 0
    assert len(calls) == 3 - parts_kept  # finished parts are not scored again
    for name in OUTPUTS:
        assert (out / name).read_bytes() == reference[name]

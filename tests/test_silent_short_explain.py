"""Silent and short clips in ``timingbench explain`` and the report: the page says what the row says.

Silent audio is scored as a clip that delivered nothing (every event ``none``, no gate, no
separation); explain and the report's clip page show exactly that, not a re-run detector's
verdict. A clip that ends before the instructed time has no search window, and says so
instead of printing an inverted one. The gate table of a clip page is an HTML table.
"""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf

from timingbench.cli import main
from timingbench.config import Config
from timingbench.report import build_report
from timingbench.runner import ScoreOptions, score_folder

SR = 44100


def _prompt(pid: str, *, duration_s: float, kind: str, family: str, time_s: float) -> dict[str, Any]:
    return {"id": pid, "family": "single_event", "text": f"{kind} of {family} at {time_s} s.",
            "duration_s": duration_s, "tempo": None,
            "events": [{"id": f"{pid}/e1", "kind": kind, "target": family, "family": family, "time_s": time_s,
                        "tolerance_s": 0.5}]}


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Drums entering at 2 s, a silent clip (strings, a judged family), a 0.1 s clip instructed at 7 s."""
    from timingbench.config import load_config

    root = tmp_path_factory.mktemp("silent_short")
    clips = root / "clips"
    clips.mkdir()
    rng = np.random.default_rng(20260101)
    t = np.arange(6 * SR) / SR
    y = 0.1 * np.sin(2 * np.pi * 220 * t)
    for k in range(8):
        s = int((2.0 + 0.5 * k) * SR)
        y[s:s + 2000] += 0.5 * rng.standard_normal(2000) * np.exp(-np.arange(2000) / 600)
    sf.write(clips / "drums.wav", y.astype(np.float32), SR)
    sf.write(clips / "quiet.wav", np.zeros(6 * SR, np.float32), SR)
    sf.write(clips / "short.wav", y[:int(0.1 * SR)].astype(np.float32), SR)
    rows = [_prompt("drums", duration_s=6.0, kind="instrument_entry", family="percussion", time_s=2.0),
            _prompt("quiet", duration_s=6.0, kind="instrument_entry", family="strings", time_s=2.0),
            _prompt("short", duration_s=12.0, kind="instrument_entry", family="percussion", time_s=7.0)]
    prompts = root / "prompts.jsonl"
    prompts.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cache = root / "cache"
    score_folder(clips, prompts, root / "results", load_config(),
                 opts=ScoreOptions(separation="dsp", family_evidence="none", cache_dir=str(cache), chance=False))
    return {"root": root, "results": root / "results", "cache": cache}


def _row(results: Path, event_id: str) -> dict[str, Any]:
    rows = [json.loads(x) for x in (results / "events.jsonl").read_text().splitlines()]
    return next(r for r in rows if r["event_id"] == event_id)


def test_explain_shows_a_silent_clip_as_scoring_scored_it(
        scored: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import timingbench.explain.event as event

    def no_evidence(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("silent audio is scored without family evidence")

    monkeypatch.setattr(event, "family_evidence_for", no_evidence)
    row = _row(scored["results"], "quiet/e1")
    assert row["outcome"] == "none" and row["rejected_by"] is None and row["gates"] == {}
    png = tmp_path / "quiet.png"
    rc = main(["explain", str(scored["results"]), "quiet.wav", "quiet/e1", "--plot", str(png),
               "--cache", str(scored["cache"])])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "events.jsonl: none, detected -, error -, rejected by -" in out
    assert "re-scored:    none, detected -, rejected by -" in out
    assert "silent audio" in out and "differs from events.jsonl" not in out
    assert "separation -" in out and "separation dsp" not in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_explain_says_a_short_clip_ends_before_the_instructed_time(
        scored: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["explain", str(scored["results"]), "short.wav", "short/e1", "--cache", str(scored["cache"])])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "[2.000, 0.100]" not in out
    assert "no search window: the clip ends at 0.100 s, before the instructed time 7.000 s" in out


def _pages(out: Path) -> dict[str, str]:
    pages = {}
    for p in (out / "clips").glob("*.html"):
        text = p.read_text()
        pages[re.search(r"<h1>(.*?)</h1>", text).group(1)] = text  # type: ignore[union-attr]
    return pages


def _visible(page: str) -> str:
    return unescape(re.sub(r"<[^>]+>", " ", re.sub(r"<script.*?</script>", "", page, flags=re.S)))


@pytest.fixture(scope="module")
def report(scored: dict[str, Path]) -> dict[str, str]:
    from timingbench.config import load_config

    out = scored["root"] / "report"
    r = build_report(scored["results"], out, config=load_config(), audio="none",
                     overrides={"cache_dir": str(scored["cache"])})
    assert r.not_derived == []
    return _pages(out)


def test_a_silent_clips_page_shows_exactly_its_rows_values(report: dict[str, str]) -> None:
    text = " ".join(_visible(report["quiet.wav"]).split())
    assert "rejected by detection" not in text and "separation dsp" not in text
    assert "rejected by -" in text and "separation -" in text
    assert "silent audio" in text


def test_a_short_clips_page_has_no_inverted_window(report: dict[str, str]) -> None:
    page = report["short.wav"]
    text = " ".join(_visible(page).split())
    assert "[2.000, 0.100]" not in text
    assert "no search window: the clip ends at 0.100 s, before the instructed time 7.000 s" in text
    data = json.loads(re.search(r'id="tb-clip">(.*?)</script>', page, re.S).group(1))  # type: ignore[union-attr]
    assert data["events"][0]["window"] is None


def test_the_gate_table_is_an_html_table(report: dict[str, str]) -> None:
    page = report["drums.wav"]
    assert '<pre class="gates"' not in page
    table = re.search(r'<table class="gates">(.*?)</table>', page, re.S)
    assert table is not None
    head = re.findall(r"<th>(.*?)</th>", table.group(1))
    assert head[:4] == ["gate", "verdict", "statistic", "value"]
    assert "percussion.persistence_min_fraction" in table.group(1)


def test_explain_plots_stay_small(scored: dict[str, Path], tmp_path: Path, config: Config) -> None:
    """A dense log-mel (noise) over 12 s: the explain PNG stays under 200 KB."""
    rng = np.random.default_rng(7)
    clips = tmp_path / "clips"
    clips.mkdir()
    n = 12 * SR
    env = 0.2 + 0.8 * (np.arange(n) > 6 * SR)
    sf.write(clips / "dense.wav", (0.3 * env * rng.standard_normal(n)).astype(np.float32), SR)
    prompts = tmp_path / "p.jsonl"
    prompts.write_text(json.dumps(_prompt("dense", duration_s=12.0, kind="mix_energy_increase", family="mix",
                                          time_s=6.0)) + "\n")
    score_folder(clips, prompts, tmp_path / "res", config,
                 opts=ScoreOptions(separation="dsp", family_evidence="none", chance=False,
                                   cache_dir=str(tmp_path / "cache")))
    png = tmp_path / "dense.png"
    assert main(["explain", str(tmp_path / "res"), "dense.wav", "dense/e1", "--plot", str(png),
                 "--cache", str(tmp_path / "cache")]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size <= 200_000, png.stat().st_size

"""``timingbench report``: the static HTML report of a scored run.

The browser test renders a small corpus as two systems (whole-mix prompts answered on time
and 0.8 s late, from ``benchmarks/compare_rendered_systems.py``, plus a drum entrance and a
bass exit delivered on time and, for the second system, 0.8 s late), scores both, writes
``timingbench report A --compare B --audio copy`` and opens it from disk in headless
Chromium (Playwright, as the labelling page's test). It checks that the overview numbers
equal ``summary.json``, that filtering the clip table to one family leaves exactly that
family's rows, that the comparison shows ``timingbench compare``'s verdicts, that a clip
page plays audio and that clicking its spectrogram seeks, and that nothing but local files
is requested. Screenshots are taken in every run, into the test's temporary folder: the docs'
screenshots (``docs/img/report-*.png``) come from ``tools/report_screenshots.sh``, a report of
the demo under a neutral path, so that no temporary folder shows in them.

The other tests need no browser: bad results folders, the audio modes, the charts and
the index's numbers read back from its HTML.
"""

from __future__ import annotations

import importlib
import json
import re
import shutil
import sys
from html import unescape
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
import soundfile as sf
from browser import CHROMIUM, CHROMIUM_ARGS

from timingbench.cli import main
from timingbench.config import Config
from timingbench.errors import ParameterError, TimingbenchError
from timingbench.report import build_report
from timingbench.report.clip_page import copy_audio
from timingbench.report.overview import lookup
from timingbench.report.run import margin_floors
from timingbench.report.svg import error_histogram, fmt_pct, outcome_bar

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks" / "compare_rendered_systems.py"


def _bench() -> ModuleType:
    """``benchmarks/compare_rendered_systems.py``, the rendered systems of ``timingbench compare``'s tests."""
    if str(BENCH.parent) not in sys.path:
        sys.path.insert(0, str(BENCH.parent))
    return importlib.import_module(BENCH.stem)


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# ---------------------------------------------------------------- a small scored run, no audio


def _fake_run(root: Path, *, clips_dir: Path | None = None) -> Path:
    """A results folder of two clips written by hand (its clips folder does not exist)."""
    res = root / "results"
    res.mkdir(parents=True)
    ev = [
        {"clip": "p1.wav", "prompt_id": "p1", "sample": 0, "event_id": "p1/e1", "kind": "instrument_entry",
         "family": "percussion", "instructed_s": 6.0, "tolerance_s": 0.5, "outcome": "on_time",
         "detected_s": 6.49, "error_s": 0.49, "gates": {"detection": "pass"}, "rejected_by": None,
         "detector": "percussion", "p_chance": 0.125, "floor_s": 0.02},
        {"clip": "p2.wav", "prompt_id": "p2", "sample": 0, "event_id": "p2/e1", "kind": "music_end",
         "family": "mix", "instructed_s": 20.0, "tolerance_s": 0.5, "outcome": "none", "detected_s": None,
         "error_s": None, "gates": {"detection": "fail"}, "rejected_by": "detection", "detector": "mix",
         "p_chance": 0.0, "floor_s": 0.005},
    ]
    clips = [{"clip": c, "prompt_id": c[:2], "sample": 0, "duration_s": 30.0, "duration_ok": True, "tempo": None,
              "timbre_match": None, "error": None, "controls": {"beats": {"f_measure": 0.5}}} for c in ("p1.wav",
                                                                                                          "p2.wav")]
    summary = {"timingbench_version": "0.1.0", "config": {"version": "v", "hash": "h"},
               "prompts": {"path": str(root / "prompts.jsonl"), "hash": None, "rejected": []},
               "clips_dir": str(clips_dir or root / "gone"),
               "counts": {"clips": 2, "scored_clips": 2, "events": 2, "unmatched": 0, "missing": 0, "errors": 0},
               "rates": {"n": 2, "on_time_rate": 0.5, "off_time_rate": 0.0, "none_rate": 0.5, "on_time": 1,
                         "off_time": 0, "none": 1},
               "by_kind": {}, "by_family": {"mix": {"n": 1, "on_time_rate": 0.0, "off_time_rate": 0.0,
                                                    "none_rate": 1.0, "on_time": 0, "off_time": 0, "none": 1}},
               "p_chance_discounted_on_time_rate": 0.4375, "tempo": {"n": 0, "ladder": {"3": None}},
               "duration_compliance": 1.0, "timbre_match_rate": None, "unmatched": [], "missing": [],
               "errors": [], "separation": {"requested": "dsp", "used": {"dsp": 2}, "notes": []},
               "family_evidence": {"requested": "none", "used": {}, "exempt_families": {}},
               "chance_credit": {"enabled": True, "draws": 16}, "disabled_gates": [],
               "controls": {"beats": {"metric": "f_measure", "n": 2, "mean": 0.8125, "chance_mean": 0.25,
                                      "above_chance": 0.5625, "p_chance": 0.0, "floor": 0.912, "cmlt": 0.5,
                                      "amlt": 1.0}}}
    (res / "events.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ev))
    (res / "clips.jsonl").write_text("".join(json.dumps(r) + "\n" for r in clips))
    (res / "summary.json").write_text(json.dumps(summary))
    (root / "prompts.jsonl").write_text("")
    return res


def _cards(html: str) -> dict[str, tuple[str, str]]:
    """data-key -> (data-value, shown number) of the index's headline cards."""
    out = {}
    for m in re.finditer(r'<div class="card[^"]*" data-key="([^"]+)" data-value="([^"]*)">.*?<div class="num">([^<]*)'
                         r"</div>", html):
        out[unescape(m.group(1))] = (m.group(2), unescape(m.group(3)))
    return out


def test_index_numbers_are_summary_json_and_pages_say_why_not_derived(tmp_path: Path, config: Config) -> None:
    res = _fake_run(tmp_path)
    out = tmp_path / "report"
    r = build_report(res, out, config=config)
    assert r.pages == 2 and [c for c, _ in r.not_derived] == ["p1.wav", "p2.wav"]
    assert all("clips folder not found" in why for _, why in r.not_derived)
    html = (out / "index.html").read_text()
    summary = json.loads((res / "summary.json").read_text())
    cards = _cards(html)
    assert set(cards) >= {"rates.on_time_rate", "rates.none_rate", "p_chance_discounted_on_time_rate",
                          "duration_compliance"}
    assert not [k for k in cards if k.startswith("tempo.")]  # no clip has a tempo target
    for key, (value, shown) in cards.items():
        want = lookup(summary, key)
        assert (value == "" and want is None) or float(value) == want, key
        assert shown == fmt_pct(want), key
    ctl = re.search(r'<table class="controls">(.*?)</table>', html, re.S).group(1)  # type: ignore[union-attr]
    # the summary's controls as the run table prints them: mean, chance, difference, p_chance, floor
    assert re.search(r"<th>beat F1</th><td>2</td><td>0.812</td><td>0.250</td><td>0.562</td><td>0.000</td>"
                     r"<td>0.912</td><td>CMLt 0.500, AMLt 1.000</td>", ctl), ctl
    table = json.loads(re.search(r'id="tb-table">(.*?)</script>', html, re.S).group(1))  # type: ignore[union-attr]
    assert [(row["clip"], row["outcome"], row["derived"]) for row in table["rows"]] == [
        ("p1.wav", "on_time", False), ("p2.wav", "none", False)]
    assert table["rows"][0]["margin_floors"] == pytest.approx(0.5)
    page = (out / "clips" / "c00000.html").read_text()
    assert 'id="clip-error"' in page and "clips folder not found" in page
    assert "f_measure" in page
    assert not re.search(r"https?://", html + page + (out / "assets" / "index.js").read_text()
                         + (out / "assets" / "clip.js").read_text())


@pytest.mark.parametrize("damage, named", [
    ("no folder", "results folder not found"),
    ("no summary", "summary.json"),
    ("corrupt summary", "summary.json:1"),
    ("corrupt events", "events.jsonl:2"),
    ("field missing", "events.jsonl:1: field 'outcome'"),
    ("no clips", "clips.jsonl: not found"),
])
def test_bad_results_folder_names_the_file(tmp_path: Path, config: Config, damage: str, named: str) -> None:
    res = _fake_run(tmp_path)
    if damage == "no folder":
        shutil.rmtree(res)
    elif damage == "no summary":
        (res / "summary.json").unlink()
    elif damage == "corrupt summary":
        (res / "summary.json").write_text("{not json")
    elif damage == "corrupt events":
        (res / "events.jsonl").write_text((res / "events.jsonl").read_text().splitlines()[0] + "\n{oops\n")
    elif damage == "field missing":
        row = _rows(res / "events.jsonl")[0]
        del row["outcome"]
        (res / "events.jsonl").write_text(json.dumps(row) + "\n")
    else:
        (res / "clips.jsonl").unlink()
    with pytest.raises(TimingbenchError, match=re.escape(named)):
        build_report(res, tmp_path / "report", config=config)
    assert main(["report", str(res), "--out", str(tmp_path / "r2")]) == 1


def test_bad_options(tmp_path: Path, config: Config) -> None:
    res = _fake_run(tmp_path)
    with pytest.raises(ParameterError, match="--audio must be one of"):
        build_report(res, tmp_path / "r", config=config, audio="flac")
    with pytest.raises(ParameterError, match="--names gives 1 names for 2"):
        build_report(res, tmp_path / "r", config=config, compare=[res], names=["a"])


def test_audio_modes(tmp_path: Path, rng: np.random.Generator) -> None:
    src = tmp_path / "x.WAV"
    sf.write(src, (0.1 * rng.standard_normal(22050)).astype(np.float32), 22050)
    assert copy_audio(src, tmp_path / "none", "none") is None
    copied = copy_audio(src, tmp_path / "copy", "copy")
    assert copied is not None and copied.name == "copy.wav" and copied.read_bytes() == src.read_bytes()
    if shutil.which("ffmpeg") is None:
        pytest.skip("ffmpeg is not installed (make setup)")
    mp3 = copy_audio(src, tmp_path / "m", "mp3")
    assert mp3 is not None and mp3.suffix == ".mp3"
    head = mp3.read_bytes()[:3]
    assert head == b"ID3" or head[0] == 0xFF
    with pytest.raises(TimingbenchError, match=re.escape(f"{tmp_path / 'bad.wav'}: ffmpeg could not")):
        (tmp_path / "bad.wav").write_bytes(b"not audio")
        copy_audio(tmp_path / "bad.wav", tmp_path / "bad", "mp3")


@pytest.mark.parametrize("row, want", [
    ({"error_s": 0.49, "tolerance_s": 0.5, "floor_s": 0.02}, 0.5),
    ({"error_s": -0.5, "tolerance_s": 0.5, "floor_s": 0.02}, 0.0),
    ({"error_s": 0.8, "tolerance_s": 0.5, "floor_s": 0.1}, -3.0),
    ({"error_s": None, "tolerance_s": 0.5, "floor_s": 0.02}, None),
    ({"error_s": 0.1, "tolerance_s": 0.5, "floor_s": None}, None),
])
def test_margin_in_floors(row: dict[str, Any], want: float | None) -> None:
    got = margin_floors(row)
    assert got == want if want is None else got == pytest.approx(want)


def test_charts() -> None:
    bar = outcome_bar({"on_time": 3, "off_time": 1, "none": 0})
    assert "on_time: 3 of 4 (75.0 %)" in bar and "off_time: 1 of 4 (25.0 %)" in bar and "none:" not in bar
    svg = error_histogram([0.01, -0.02, 0.3], [0.9], floor_s=0.025, tolerance_s=0.5)
    assert 'class="floor"' in svg and "floor ±25 ms" in svg and "off time +0.900 s" in svg
    assert svg.count("credited events from") == 3
    assert 'class="floor"' not in error_histogram([], [], floor_s=None, tolerance_s=None)


# ---------------------------------------------------------------- rendered systems in Chromium


@pytest.fixture(scope="module")
def rendered_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two rendered systems, scored, compared by `timingbench compare` and reported."""
    crs = _bench()
    try:
        from timingbench.render.pipeline import render_recipe

        root = tmp_path_factory.mktemp("report")
        build = crs.build_systems(root / "systems", n_prompts=4, duration_s=12.0, systems=(crs.ON_TIME, crs.LATE))
        extra = root / "extra"
        made = [render_recipe("entry_on_time", seed=7, out_dir=extra, duration_s=8.0, family="percussion",
                              target="drums", time_s=3.0),
                render_recipe("exit_on_time", seed=8, out_dir=extra, duration_s=8.0, family="bass",
                              target="bass_guitar", time_s=5.0)]
    except (ImportError, TimingbenchError) as exc:  # no FluidSynth or soundfont here
        pytest.skip(f"the reference renderer is not available: {exc}")
    on_dir, late_dir = build["clips"][crs.ON_TIME], build["clips"][crs.LATE]
    for m in made:
        shutil.copy(m.audio_path, on_dir / m.audio_path.name)
    crs.shift_clips(extra / "clips", late_dir, shift_s=crs.LATE_OFFSET_S)
    with build["prompts"].open("a") as fh:
        for m in made:
            fh.write(json.dumps(m.prompt) + "\n")
    results = crs.score_systems(build, root / "results", jobs=2)
    a, b = results[crs.ON_TIME], results[crs.LATE]
    assert main(["compare", str(a), str(b), "--names", f"{crs.ON_TIME},{crs.LATE}", "--out", str(root / "cmp"),
                 "--no-plots"]) == 0
    out = root / "report"
    assert main(["report", str(a), "--compare", str(b), "--names", f"{crs.ON_TIME},{crs.LATE}", "--out", str(out),
                 "--audio", "copy", "--jobs", "2", "--cache", str(root / "cache")]) == 0
    return {"out": out, "a": a, "b": b, "cmp": json.loads((root / "cmp" / "comparison.json").read_text()),
            "names": (crs.ON_TIME, crs.LATE)}


def _shot(page: Any, name: str, tmp: Path) -> None:
    path = tmp / f"{name}.png"
    page.screenshot(path=str(path))
    assert path.stat().st_size > 10_000


def test_report_in_chromium(rendered_report: dict[str, Any], tmp_path: Path) -> None:
    import playwright.sync_api as playwright_api  # a declared dev dependency: missing is a failure
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is not installed (make setup)")
    out, a, b = rendered_report["out"], rendered_report["a"], rendered_report["b"]
    summary = json.loads((a / "summary.json").read_text())
    events = _rows(a / "events.jsonl")
    late = {r["event_id"]: r for r in _rows(b / "events.jsonl")}
    name_a, name_b = rendered_report["names"]
    requests: list[str] = []
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: requests.append(r.url))
            page.set_default_timeout(20000)
            page.goto((out / "index.html").as_uri())
            page.wait_for_function("window.tbReport && window.tbReport.ready")

            # the overview numbers are summary.json's
            cards = page.eval_on_selector_all(
                ".card", "els => els.map(e => [e.dataset.key, e.dataset.value, e.querySelector('.num').textContent])")
            assert {k for k, _, _ in cards} >= {"rates.on_time_rate", "rates.off_time_rate", "rates.none_rate",
                                                "p_chance_discounted_on_time_rate", "duration_compliance"}
            for key, value, shown in cards:
                want = lookup(summary, key)
                assert (value == "" and want is None) or float(value) == want, key
                assert shown == fmt_pct(want), key
            cells = page.eval_on_selector_all("td[data-key^='by_family.']",
                                              "els => els.map(e => [e.dataset.key, e.textContent])")
            assert len(cells) == 4 * len(summary["by_family"])
            for key, shown in cells:
                want = lookup(summary, key)
                assert shown == (str(want) if key.endswith(".n") else fmt_pct(want)), key
            _shot(page, "overview", tmp_path)

            # the systems side by side, with compare's verdicts
            pairs = page.eval_on_selector_all("#pairs tr td:last-child", "els => els.map(e => e.textContent)")
            assert pairs == [p["verdict"] for p in rendered_report["cmp"]["pairwise"]]
            assert page.locator("table.systems th", has_text=name_b).count() == 1

            # filtering the table to one family leaves exactly that family's rows
            assert page.locator("#clip-table tbody tr").count() == len(events)
            page.select_option("#f-family", "percussion")
            fam = page.eval_on_selector_all("#clip-table tbody tr", "els => els.map(e => e.dataset.family)")
            assert fam == ["percussion"] * sum(r["family"] == "percussion" for r in events) and fam
            rows = page.evaluate("window.tbReport.filtered()")
            assert sorted(r["event_id"] for r in rows) == sorted(r["event_id"] for r in events
                                                                 if r["family"] == "percussion")
            # per clip, both systems' verdicts in one row
            for r in rows:
                assert r["others"][0]["outcome"] == late[r["event_id"]]["outcome"]
            assert page.locator("#clip-table thead th", has_text=name_b).count() == 1

            # a clip page: audio plays, the cursor follows, a click on the spectrogram seeks
            with page.expect_navigation():
                page.click("#clip-table tbody tr >> nth=0")
            page.wait_for_function("!!(window.tbReport && window.tbReport.ready && window.tbReport.xForTime)")
            assert page.locator("h1").inner_text() == rows[0]["clip"]
            assert page.locator("table.gates").count() >= 1 and page.locator("img.explain").count() >= 1
            page.evaluate("document.getElementById('audio').play()")
            page.wait_for_function("document.getElementById('audio').currentTime > 0.3")
            page.evaluate("document.getElementById('audio').pause()")
            page.evaluate("window.scrollTo(0, 0)")  # the row's link scrolled to the event's section
            box = page.locator("#spec-wrap").bounding_box()
            assert box is not None
            target = 2.0
            page.mouse.click(box["x"] + page.evaluate(f"window.tbReport.xForTime({target})"), box["y"] + 100)
            page.wait_for_function("Math.abs(document.getElementById('audio').currentTime - 2.0) < 0.05")
            end = page.evaluate("window.tbReport.endS")
            cursor = page.locator("#cursor").bounding_box()
            assert cursor is not None and abs(cursor["x"] - box["x"] - box["width"] * target / end) < 3
            _shot(page, "clip", tmp_path)
            assert errors == []
        finally:
            browser.close()
    assert requests and all(u.startswith("file://") for u in requests), [u for u in requests
                                                                         if not u.startswith("file://")]


def test_index_alone(tmp_path: Path) -> None:
    res = _fake_run(tmp_path)
    out = tmp_path / "report"
    assert main(["report", str(res), "--out", str(out), "--no-clip-pages"]) == 0
    assert not (out / "clips").exists() and (out / "assets" / "index.js").is_file()
    html = (out / "index.html").read_text()
    table = json.loads(re.search(r'id="tb-table">(.*?)</script>', html, re.S).group(1))  # type: ignore[union-attr]
    assert [r["page"] for r in table["rows"]] == [None, None]


def _paint(style: str) -> tuple[str, str, str]:
    """(line style, line colour where a line is drawn, fill) of a mark's computed style."""
    colour, line, _, fill = style.split(" | ")
    return line, colour if line != "none" else "", fill


def test_every_clip_page_plays_its_audio_and_its_legend_shows_the_drawn_colours(
        rendered_report: dict[str, Any]) -> None:
    import playwright.sync_api as playwright_api  # a declared dev dependency: missing is a failure
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is not installed (make setup)")
    pages = sorted((rendered_report["out"] / "clips").glob("*.html"))
    assert pages
    style = ("el => { const s = getComputedStyle(el); return [s.borderLeftColor, s.borderLeftStyle, "
             "s.borderLeftWidth, s.backgroundColor].join(' | '); }")
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 800})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.set_default_timeout(20000)
            legend_colours: dict[str, str] = {}
            for p in pages:
                page.goto(p.as_uri())
                page.wait_for_function("window.tbReport && window.tbReport.ready")
                # every page has its log-mel and an audio element that plays
                assert page.locator("#spec").count() == 1, p.name
                assert page.locator("audio#audio").count() == 1, p.name
                page.evaluate("document.getElementById('audio').play()")
                page.wait_for_function("document.getElementById('audio').currentTime > 0.2")
                page.evaluate("document.getElementById('audio').pause()")
                # the legend draws every mark with the classes of the overlay, so with its colours
                legend = {cls: page.eval_on_selector(f"#legend .key[data-mark='{cls}'] .mark", style)
                          for cls in page.eval_on_selector_all("#legend .key[data-mark]",
                                                               "els => els.map(e => e.dataset.mark)")}
                assert {"detected on_time", "detected off_time", "nearest"} <= set(legend)
                legend_colours.update(legend)
                drawn = page.eval_on_selector_all(
                    "#overlay .mark", f"els => els.map(e => [e.className.replace(/^mark /, ''), ({style})(e)])")
                assert drawn, p.name
                for cls, look in drawn:
                    assert cls in legend, (p.name, cls)
                    assert _paint(look) == _paint(legend[cls]), (p.name, cls, look, legend[cls])
            # the off-time detection and the nearest rejected candidate never share a colour
            assert _paint(legend_colours["detected off_time"])[1] != _paint(legend_colours["nearest"])[1]
            assert errors == []
        finally:
            browser.close()


def test_tempo_only_silent_and_undecodable_clips_get_their_pages(tmp_path: Path, config: Config) -> None:
    """A tempo-only clip and silent audio get audio and log-mel; numbers are shown to what they resolve."""
    import soundfile as sf

    from timingbench.runner import ScoreOptions, score_folder

    sr = 44100
    clips = tmp_path / "clips"
    clips.mkdir()
    y = np.zeros(8 * sr, np.float32)
    burst = (np.random.default_rng(3).standard_normal(400) * np.exp(-np.arange(400) / 60)).astype(np.float32)
    for t in np.arange(0.25, 7.5, 0.5):  # clicks at 120 BPM
        y[int(t * sr):int(t * sr) + 400] += 0.5 * burst
    sf.write(clips / "tempo.wav", y, sr)
    sf.write(clips / "quiet.wav", np.zeros(8 * sr, np.float32), sr)
    (clips / "broken.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk")
    event = {"kind": "music_end", "family": "mix", "time_s": 4.0, "tolerance_s": 0.5}
    rows = [{"id": "tempo", "family": "tempo", "text": "Clicks at 120 BPM.", "duration_s": 8.0, "events": [],
             "tempo": {"bpm": 120.0}},
            {"id": "quiet", "family": "single_event", "text": "Stop at 4 s.", "duration_s": 8.0,
             "events": [{"id": "quiet/e1", **event}], "tempo": None},
            {"id": "broken", "family": "single_event", "text": "Stop at 4 s.", "duration_s": 8.0,
             "events": [{"id": "broken/e1", **event}], "tempo": None}]
    prompts = tmp_path / "p.jsonl"
    prompts.write_text("".join(json.dumps(r) + "\n" for r in rows))
    score_folder(clips, prompts, tmp_path / "res", config,
                 opts=ScoreOptions(separation="dsp", family_evidence="none", chance=False,
                                   cache_dir=str(tmp_path / "cache")))
    r = build_report(tmp_path / "res", tmp_path / "rep", config=config, audio="copy",
                     overrides={"cache_dir": str(tmp_path / "cache")})
    assert r.pages == 3 and [c for c, _ in r.not_derived] == ["broken.wav"]
    page_of = {}
    for p in (tmp_path / "rep" / "clips").glob("*.html"):
        text = p.read_text()
        page_of[re.search(r"<h1>(.*?)</h1>", text).group(1)] = text  # type: ignore[union-attr]
    for clip in ("tempo.wav", "quiet.wav"):
        assert '<audio id="audio"' in page_of[clip] and 'id="spec"' in page_of[clip], clip
    tempo = page_of["tempo.wav"]
    assert re.search(r"tempo \d+\.\d BPM for 120\.0 BPM", tempo) and 'id="no-events"' in tempo
    assert "family evidence not consulted" in tempo and "None" not in unescape(re.sub(r"<script.*?</script>", "",
                                                                                      tempo, flags=re.S))
    assert "silent audio: nothing delivered" in page_of["quiet.wav"]
    # the undecodable file's page says why, and its event row counts as none in the table
    assert 'id="clip-error"' in page_of["broken.wav"]
    html = (tmp_path / "rep" / "index.html").read_text()
    table = json.loads(re.search(r'id="tb-table">(.*?)</script>', html, re.S).group(1))  # type: ignore[union-attr]
    by_clip = {row["clip"]: row for row in table["rows"]}
    assert by_clip["tempo.wav"]["no_event"] is True and by_clip["tempo.wav"]["outcome"] is None
    assert by_clip["broken.wav"]["outcome"] == "none" and by_clip["broken.wav"]["clip_error"]


def test_the_overview_says_what_clips_that_could_not_be_scored_cost(tmp_path: Path, config: Config) -> None:
    res = _fake_run(tmp_path)
    summary = json.loads((res / "summary.json").read_text())
    summary["counts"] = {**summary.get("counts", {}), "errors": 2, "error_events": 3}
    summary["rates_excluding_errors"] = {"n": 9, "on_time_rate": 0.5}
    (res / "summary.json").write_text(json.dumps(summary))
    build_report(res, tmp_path / "r", config=config, clip_pages=False)
    html = unescape((tmp_path / "r" / "index.html").read_text())
    assert ("2 clips could not be scored: their 3 events count as none in every rate above (failing never raises "
            "a rate); without them the on-time rate over 9 events is 50.0 %.") in html

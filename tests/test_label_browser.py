"""End-to-end test of the labelling page in real headless Chromium (Playwright).

Opens a rendered clip, plays it, clicks the spectrogram to set an onset, fills Layer 1
with the keyboard, adds Layer 2 events (mouse and keyboard), reloads, and checks that
everything was saved with the right times (within one analysis frame). The screenshot of
the page at work is taken in every run (and refreshes ``docs/img/label.png`` when
TIMINGBENCH_UPDATE_SCREENSHOT=1).

Skips when ``/usr/bin/chromium`` is missing (a system package, which ``make setup``
installs); Playwright is a declared development dependency, so without it the test fails.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import playwright.sync_api as playwright_api  # a declared dev dependency: missing is a failure
import pytest
import soundfile as sf
from browser import CHROMIUM, CHROMIUM_ARGS

from timingbench.annotation_io import load_annotations
from timingbench.config import Config
from timingbench.errors import ConfigError
from timingbench.label.server import LabelApp, LabelServer, make_server
from timingbench.label.store import LabelStore

#: The README's screenshot; refreshed when TIMINGBENCH_UPDATE_SCREENSHOT=1, otherwise the
#: test run writes its screenshot to a temporary folder.
README_SCREENSHOT = Path(__file__).resolve().parent.parent / "docs" / "img" / "label.png"
HOP_S = 512 / 44100
ENTRY_S = 3.0  # the rendered drum entrance (exact by construction)


def make_clips(root: Path, rng: np.random.Generator) -> tuple[Path, Path, str, str]:
    """A rendered clip (drums enter at 3 s) when FluidSynth is there, else a synthetic one."""
    clips = root / "clips"
    clips.mkdir(parents=True)
    prompts = root / "prompts.jsonl"
    try:
        from timingbench.render.pipeline import render_recipe

        r = render_recipe("entry_on_time", seed=7, out_dir=root / "render", duration_s=8.0,
                          family="percussion", target="drums", time_s=ENTRY_S)
        r2 = render_recipe("exit_on_time", seed=8, out_dir=root / "render", duration_s=8.0,
                           family="bass", target="bass_guitar", time_s=5.0)
        for x in (r, r2):
            shutil.copy(x.audio_path, clips / x.audio_path.name)
        prompts.write_text(json.dumps(r.prompt) + "\n" + json.dumps(r2.prompt) + "\n")
        return clips, prompts, r.audio_path.name, r.prompt["events"][0]["id"]
    except (ImportError, ConfigError):  # no FluidSynth or soundfont here
        sr = 44100
        t = np.arange(8 * sr) / sr
        y = 0.1 * np.sin(2 * np.pi * 220 * t)
        for k in range(10):
            s = int((ENTRY_S + 0.5 * k) * sr)
            y[s:s + 3000] += 0.5 * rng.standard_normal(3000) * np.exp(-np.arange(3000) / 700)
        sf.write(clips / "synth-entry.wav", y.astype(np.float32), sr)
        row = {"id": "synth-entry", "family": "single_event", "duration_s": 8.0, "tempo": None,
               "text": "An ambient track for 8 seconds. Bring in drums at exactly 3 seconds.",
               "events": [{"id": "synth-entry/e1", "kind": "instrument_entry", "target": "drums",
                           "family": "percussion", "time_s": ENTRY_S, "tolerance_s": 0.5}]}
        prompts.write_text(json.dumps(row) + "\n")
        return clips, prompts, "synth-entry.wav", "synth-entry/e1"


@pytest.fixture
def page_server(tmp_path: Path, rng: np.random.Generator, config: Config,
                monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[LabelServer, Path, str, str]]:
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is not installed (make setup)")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    clips, prompts, clip, event_id = make_clips(tmp_path, rng)
    out = tmp_path / "annotations.jsonl"
    results = tmp_path / "results"  # a scorer verdict for the read-only layer
    results.mkdir()
    (results / "events.jsonl").write_text(json.dumps({
        "clip": clip, "event_id": event_id, "kind": "instrument_entry", "family": "percussion",
        "instructed_s": ENTRY_S, "tolerance_s": 0.5, "outcome": "on_time", "detected_s": ENTRY_S + 0.04,
        "error_s": 0.04, "rejected_by": None, "detector": "percussion", "p_chance": 0.0, "gates": {}}) + "\n")
    store = LabelStore(out, annotator="ana", split="validation")
    app = LabelApp(clips_dir=clips, prompts_path=prompts, store=store, cfg=config, results=results)
    server = make_server(app, host="127.0.0.1", port=0)
    th = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    th.start()
    try:
        yield server, out, clip, event_id
    finally:
        server.shutdown()
        server.server_close()
        store.close()


def test_label_page_end_to_end(page_server: tuple[LabelServer, Path, str, str], tmp_path: Path) -> None:
    server, out, clip, event_id = page_server
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.set_default_timeout(20000)
            page.goto(server.url)
            page.wait_for_function("window.tbLabel && window.tbLabel.ready")
            assert page.locator("#clipname").inner_text() == clip
            verdict = page.locator(f'[data-testid="verdict-{event_id}"]')
            assert "scorer: on_time +40 ms" in verdict.inner_text()
            page.click("#show-verdicts")  # the read-only layer can be hidden
            assert verdict.count() == 0
            page.click("#show-verdicts")
            assert verdict.count() == 1

            # play, and the playhead follows playback
            page.click("#play")
            page.wait_for_function("document.getElementById('audio').currentTime > 0.3")
            page.keyboard.press("Space")  # pause
            page.wait_for_function("document.getElementById('audio').paused")

            # seek near the entrance with the keyboard, zoom in so one pixel is ~3 ms
            page.evaluate("document.getElementById('audio').currentTime = 0")
            for _ in range(3):
                page.keyboard.press("ArrowRight")
            page.keyboard.press("+")
            page.keyboard.press("+")
            spec = page.locator("#spec").bounding_box()
            assert spec is not None

            def click_time(t: float) -> None:
                x = page.evaluate(f"window.tbLabel.xForTime({t})")
                assert 44 <= x <= spec["width"], f"{t} s is not in view (x={x})"
                page.mouse.click(spec["x"] + x, spec["y"] + 120)

            # Layer 1: the active slot is the instructed event; a click sets its onset
            card = page.locator(f'[data-event="{event_id}"]')
            click_time(ENTRY_S)
            page.wait_for_function(
                f"(window.tbLabel.state.detail.layer1[{json.dumps(event_id)}] || {{}}).onset_s != null")
            page.keyboard.press("h")  # hard
            page.keyboard.press("3")  # salience 3
            page.wait_for_function(
                f"(window.tbLabel.state.detail.layer1[{json.dumps(event_id)}] || {{}}).complete === true")
            assert card.locator("button[data-char=hard]").get_attribute("class").split().count("on") == 1

            # Layer 2 with the mouse: select the form, click the onset, describe, Add
            page.click("#l2-new-onset")
            click_time(ENTRY_S + 0.5)
            page.fill("#l2-source", "snare")
            page.select_option("#l2-family", "percussion")
            page.click("#l2-add")
            page.wait_for_function("window.tbLabel.state.detail.layer2.length === 1")

            # Layer 2 with the keyboard: a = new event at the playhead
            page.keyboard.press("Escape")
            page.evaluate("document.getElementById('audio').currentTime = 0")
            for _ in range(4):
                page.keyboard.press("ArrowRight")  # playhead at 4 s
            page.keyboard.press("a")
            page.keyboard.type("kick drum")
            page.select_option("#l2-family", "percussion")
            page.focus("#l2-source")
            page.keyboard.press("Enter")
            page.wait_for_function("window.tbLabel.state.detail.layer2.length === 2")
            page.keyboard.press("-")
            page.mouse.move(spec["x"] + page.evaluate("window.tbLabel.xForTime(3.7)"), spec["y"] + 150)
            shot = README_SCREENSHOT if os.environ.get("TIMINGBENCH_UPDATE_SCREENSHOT") == "1" \
                else tmp_path / "label.png"
            shot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(shot))
            assert shot.stat().st_size > 10_000

            # reload: everything is back, and the page resumes on the same clip
            page.reload()
            page.wait_for_function("window.tbLabel && window.tbLabel.ready")
            state = page.evaluate("window.tbLabel.state.detail")
            assert page.locator("#clipname").inner_text() == clip
            assert errors == []
        finally:
            browser.close()

    rec = state["layer1"][event_id]
    assert rec["complete"] and rec["onset_character"] == "hard" and rec["salience"] == 3
    assert sorted(r["source"] for r in state["layer2"]) == ["kick drum", "snare"]

    ann = load_annotations(out)
    assert ann.errors == []
    (row,) = ann.layer1
    assert (row.clip, row.event_id, row.occurred, row.annotator, row.split) == (
        clip, event_id, True, "ana", "validation")
    assert row.onset_s is not None and abs(row.onset_s - ENTRY_S) <= HOP_S
    assert abs(row.onset_s / HOP_S - round(row.onset_s / HOP_S)) < 1e-3  # on the frame grid
    onsets = {r.source: r.onset_s for r in ann.layer2}
    assert abs(onsets["snare"] - (ENTRY_S + 0.5)) <= HOP_S
    assert abs(onsets["kick drum"] - 4.0) <= HOP_S
    assert {r.family for r in ann.layer2} == {"percussion"}

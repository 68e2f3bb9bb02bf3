"""Speed of ``timingbench report``: seconds to write the report of 250 and 2,000 clips, and first paint.

Run: ``.venv/bin/python benchmarks/report_speed.py --results RESULTS [--clips 250 2000] [--jobs 2]``
(``--clips`` with no size: the index-only report and its first paint alone).

A scored run rarely has 2,000 clips at hand, so the corpus is synthesised: the rows of a
real scored run (``--results``, e.g. the rendered validation corpus scored with
``--separation dsp``) are replicated as further samples of the same prompts
(``<prompt_id>__<k>.wav``, each a symbolic link to the original audio), until there are
``N`` clips. Every clip page is written in full (log-mel image, every event re-derived,
its gate table and explain plot); the replicas of one audio file share its feature bank
in the cache. The first (smallest) report starts from an empty cache, so it pays for
computing each original clip's bank once; the larger one finds every bank cached, so its
figure is the report's own cost.

Baseline (same process, ``--baseline-clips`` clips, one process each side, the feature cache
filled by the first report): each event of a clip explained on its own and plotted, the way
``timingbench explain --plot`` does it (a feature bank read per event), against the report
of the same clips (all of a clip's events re-derived on one bank, plus its page).

First paint: the 2,000-clip ``index.html`` (written alone with ``--no-clip-pages``: the
same page, its rows linking nowhere) opened from disk in headless Chromium (Playwright, as
the report's test), ``--loads`` times: ``first-contentful-paint`` and the moment the clip
table is ready, medians; and the first clip page's first contentful paint.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from timingbench.config import load_config
from timingbench.report import build_report

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--mute-audio"]


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def replicate(results: Path, n_clips: int, root: Path) -> Path:
    """A results folder of ``n_clips`` clips: the run's clips, then replicas as further samples."""
    summary = json.loads((results / "summary.json").read_text())
    clips = _rows(results / "clips.jsonl")
    events = _rows(results / "events.jsonl")
    src_dir = Path(summary["clips_dir"])
    by_clip: dict[str, list[dict[str, Any]]] = {}
    for e in events:
        by_clip.setdefault(e["clip"], []).append(e)
    cdir, rdir = root / "clips", root / "results"
    cdir.mkdir(parents=True)
    rdir.mkdir(parents=True)
    out_clips, out_events = [], []
    for i in range(n_clips):
        c = clips[i % len(clips)]
        k = i // len(clips)
        src = src_dir / c["clip"]
        name = c["clip"] if k == 0 else f"{c['prompt_id']}__{k}{src.suffix}"
        (cdir / name).symlink_to(src.resolve())
        out_clips.append({**c, "clip": name, "sample": k})
        out_events += [{**e, "clip": name, "sample": k} for e in by_clip.get(c["clip"], [])]
    summary = {**summary, "clips_dir": str(cdir)}
    summary["counts"] = {**summary["counts"], "clips": n_clips, "scored_clips": n_clips, "events": len(out_events)}
    (rdir / "clips.jsonl").write_text("".join(json.dumps(r) + "\n" for r in out_clips))
    (rdir / "events.jsonl").write_text("".join(json.dumps(r) + "\n" for r in out_events))
    (rdir / "summary.json").write_text(json.dumps(summary))
    return rdir


def baseline_per_clip(results: Path, n: int, out: Path, cache: Path) -> float:
    """Seconds per clip to explain and plot each event on its own (``timingbench explain --plot``)."""
    from timingbench.explain.event import explain_event
    from timingbench.explain.plot import plot_explanation
    from timingbench.explain.results import load_results

    folder = load_results(results)
    names = list(folder.clips)[:n]
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    for c in names:
        for k, r in enumerate(folder.rows_of(c)):
            x = explain_event(folder, c, r["event_id"], overrides={"cache_dir": str(cache)})
            plot_explanation(x, out / f"{Path(c).stem}_{k}.png")
    return (time.perf_counter() - t0) / max(len(names), 1)


_PAINT = ("new Promise(r => { const f = () => { const e = performance.getEntriesByName("
          "'first-contentful-paint')[0]; if (e) r(e.startTime); else setTimeout(f, 20); }; f(); })")


def first_paint(index: Path, loads: int) -> dict[str, float]:
    """Median first contentful paint and table-ready time (ms) of ``index`` in Chromium."""
    from playwright.sync_api import sync_playwright

    fcp, ready = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            for _ in range(loads):
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.goto(index.as_uri(), wait_until="commit")
                fcp.append(float(page.evaluate(_PAINT)))
                page.wait_for_function("window.tbReport && window.tbReport.ready")
                ready.append(float(page.evaluate("performance.now()")))
                page.close()
        finally:
            browser.close()
    return {"fcp_ms": statistics.median(fcp), "ready_ms": statistics.median(ready),
            "index_bytes": float(index.stat().st_size)}


def first_paint_clip(report: Path, loads: int) -> float:
    """Median first contentful paint (ms) of a report's first clip page (nan without Chromium)."""
    if not CHROMIUM.exists():
        return float("nan")
    from playwright.sync_api import sync_playwright

    fcp = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            for _ in range(loads):
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.goto((report / "clips" / "c00000.html").as_uri(), wait_until="commit")
                fcp.append(float(page.evaluate(_PAINT)))
                page.close()
        finally:
            browser.close()
    return statistics.median(fcp)


def main() -> int:
    """Write the reports, time them and the baseline, print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", required=True, help="a real scored results folder to replicate")
    ap.add_argument("--clips", type=int, nargs="*", default=[250, 2000], help="sizes of the full reports")
    ap.add_argument("--index-clips", type=int, default=2000,
                    help="size of the index-only report (--no-clip-pages) whose first paint is measured")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--baseline-clips", type=int, default=10)
    ap.add_argument("--loads", type=int, default=5)
    ap.add_argument("--keep", default=None, help="keep the reports in this folder")
    a = ap.parse_args()
    config = load_config()
    work = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="report-speed-"))
    cache = work / "cache"
    print(f"corpus: the rows of {a.results} replicated as further samples of the same prompts "
          "(synthesised; replicas share the original's audio and feature bank)", flush=True)
    try:
        n = a.index_clips
        res = replicate(Path(a.results), n, work / f"corpus-{n}")
        t0 = time.perf_counter()
        build_report(res, work / "index-only", config=config, clip_pages=False)
        dt = time.perf_counter() - t0
        print(f"{n} clips, index.html alone (--no-clip-pages): {dt:.2f} s to write ({1000 * dt / n:.2f} ms per clip)")
        if CHROMIUM.exists():
            fp = first_paint(work / "index-only" / "index.html", a.loads)
            print(f"first paint of the {n}-clip index.html ({fp['index_bytes'] / 1e6:.2f} MB), median of {a.loads} "
                  f"loads: first contentful paint {fp['fcp_ms']:.0f} ms, clip table ready {fp['ready_ms']:.0f} ms",
                  flush=True)
        base = None
        for n in a.clips:
            res = replicate(Path(a.results), n, work / f"corpus-{n}-full")
            out = work / f"report-{n}"
            t0 = time.perf_counter()

            def tick(done: int, total: int, clip: str, t0: float = t0) -> None:
                if done % 250 == 0 or done == total:
                    print(f"  {done}/{total} pages, {time.perf_counter() - t0:.0f} s", flush=True)

            r = build_report(res, out, config=config, jobs=a.jobs, overrides={"cache_dir": str(cache)},
                             progress=tick)
            dt = time.perf_counter() - t0
            print(f"{n} clips: {dt:.1f} s to write ({dt / n:.3f} s per clip, {a.jobs} jobs), "
                  f"{len(r.not_derived)} pages not derived", flush=True)
            if base is None:  # the first report filled the feature cache: both sides read it
                base = baseline_per_clip(res, a.baseline_clips, work / "baseline", cache)
                sub = replicate(Path(a.results), a.baseline_clips, work / "corpus-baseline")
                t0 = time.perf_counter()
                build_report(sub, work / "report-baseline", config=config, jobs=1, overrides={"cache_dir": str(cache)})
                own = (time.perf_counter() - t0) / a.baseline_clips
                print(f"same {a.baseline_clips} clips, 1 process: explain + plot per event {base:.3f} s per clip "
                      f"(baseline), report {own:.3f} s per clip ({base / own:.2f}x faster); first clip page: "
                      f"first contentful paint {first_paint_clip(out, a.loads):.0f} ms", flush=True)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""One clip page of a report: the log-mel with every event's times, audio, gate tables, explain plots.

The per-clip work runs in executor workers (:class:`timingbench.executors.LocalExecutor`):
the clip is decoded and its feature bank built once (from the feature cache when present)
with the options the run recorded; every event is re-derived with
:func:`timingbench.explain.event.explain_event` on that bank, its account and gate tables
written as HTML by :func:`timingbench.report.html.explanation_html` (the lines and cells
``timingbench explain`` prints) and drawn by
:func:`timingbench.explain.plot.plot_explanation`; the log-mel image comes from the
labelling page's :mod:`timingbench.label.spectrogram`. A clip that cannot be re-derived
(audio gone, undecodable, a prompt that changed) still gets its page, with the reason.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from timingbench.convert import frames_to_time
from timingbench.errors import TimingbenchError
from timingbench.explain.event import RunInputs, clip_inputs, resolve_run
from timingbench.explain.results import ResultsFolder
from timingbench.memo import lru_table
from timingbench.report.pages import ClipJob, page_name
from timingbench.summary import row_identity_verified

AUDIO_MODES = ("none", "copy", "mp3")
#: zlib level of the report's PNGs: writing speed over file size (a 2,000-clip report writes
#: thousands of figures).
PNG_COMPRESS_LEVEL = 1

def _run_inputs(job: ClipJob, folder: ResultsFolder) -> RunInputs:
    """Run inputs per (results folder, clips, prompts, config), once per worker process."""
    key = (job.results, *(str(job.resolve.get(k)) for k in ("clips_dir", "prompts_path", "config_path")))
    runs = lru_table("report-run-inputs", 8)
    got: RunInputs | None = runs.get(key)
    if got is None:
        got = resolve_run(folder, **job.resolve)
        runs.put(key, got)
    return got


def copy_audio(src: Path, dest_stem: Path, mode: str) -> Path | None:
    """Put the clip's audio beside the pages: a copy, an MP3 (ffmpeg), or nothing.

    Parameters
    ----------
    src : Path
        The clip's audio file.
    dest_stem : Path
        Destination without extension.
    mode : str
        ``none``, ``copy`` or ``mp3``.

    Returns
    -------
    path : Path or None
        The written file (None for ``none``).

    Raises
    ------
    TimingbenchError
        If ffmpeg is missing or fails (naming the file).
    """
    if mode == "none":
        return None
    if mode == "copy":
        dest = dest_stem.with_suffix(src.suffix.lower())
        shutil.copyfile(src, dest)
        return dest
    exe = shutil.which("ffmpeg")
    if exe is None:
        raise TimingbenchError(f"{src}: --audio mp3 needs ffmpeg on the PATH (or use --audio copy)")
    dest = dest_stem.with_suffix(".mp3")
    proc = subprocess.run([exe, "-nostdin", "-loglevel", "error", "-y", "-i", str(src), "-vn",
                           "-codec:a", "libmp3lame", "-q:a", "4", str(dest)], capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise TimingbenchError(f"{src}: ffmpeg could not transcode it to MP3 ({why})")
    return dest


def _event_view(x: Any, row: dict[str, Any]) -> dict[str, Any]:
    ev = x.prompt.events[x.index]
    chosen = x.chosen
    return {
        "event_id": ev.id, "kind": ev.kind, "family": ev.family, "target": ev.target,
        "instructed_s": ev.time_s, "tolerance_s": row.get("tolerance_s", ev.tolerance_s),
        "window": [x.window[0], x.window[1]] if x.has_window else None, "outcome": row.get("outcome"),
        "detected_s": row.get("detected_s"),
        "nearest_s": None if chosen is None or row.get("detected_s") is not None else chosen.candidate.time_s,
        "candidates": [c.candidate.time_s for c in x.candidates], "exempt": row.get("_exempt", False),
    }


def _row_view(row: dict[str, Any]) -> dict[str, Any]:
    """A clip page's event when it could not be re-derived: the row's times only."""
    return {"event_id": row.get("event_id"), "kind": row.get("kind"), "family": row.get("family"),
            "target": None, "instructed_s": row.get("instructed_s"), "tolerance_s": row.get("tolerance_s"),
            "window": None, "outcome": row.get("outcome"), "detected_s": row.get("detected_s"),
            "nearest_s": None, "candidates": [], "exempt": row.get("_exempt", False)}


def missing_audio(folder: ResultsFolder, clips: list[str], resolve: dict[str, Any]) -> list[str]:
    """The clips of a run whose audio file cannot be found (all of them when the folder is gone).

    Parameters
    ----------
    folder : ResultsFolder
        The reported run.
    clips : list of str
        Clip names that get a page.
    resolve : dict
        ``clips_dir``, ``prompts_path``, ``config_path`` overrides.

    Returns
    -------
    missing : list of str
        ``"<clip>: <why>"`` per clip without audio (clips that could not be scored are not
        listed: their page says why).

    Raises
    ------
    TimingbenchError
        If the clips folder or the prompt file is neither recorded nor found (the message
        says to pass ``--clips`` / ``--prompts``).
    """
    run = resolve_run(folder, **resolve)
    return [f"{c}: no audio file in {run.clips_dir}" for c in clips
            if c not in run.audio and not (folder.clips.get(c) or {}).get("error")]


def write_clip_page(job: ClipJob) -> dict[str, Any]:
    """Write one clip page with its images and audio.

    Parameters
    ----------
    job : ClipJob

    Returns
    -------
    status : dict
        ``page``, ``clip``, ``error`` (None, or why the clip could not be re-derived) and
        ``seconds`` (wall time of this page).
    """
    from timingbench.report.html import clip_page_html

    t0 = time.perf_counter()
    out = Path(job.out)
    stem = page_name(job.page)
    rows = [{**r, "_exempt": not row_identity_verified(r, job.summary)} for r in job.rows]
    job = replace(job, rows=rows)
    folder = ResultsFolder(Path(job.results), job.rows, {job.clip: job.clip_row} if job.clip_row else {},
                           job.summary)
    views: list[dict[str, Any]] = []
    accounts: dict[str, str] = {}
    plots: dict[str, str] = {}
    event_errors: dict[str, str] = {}
    spec: dict[str, Any] | None = None
    audio_rel: str | None = None
    error = job.clip_row.get("error")
    prompt_text = None
    if error is None and (job.rows or job.clip_row.get("prompt_id")):
        try:
            spec, audio_rel, prompt_text = _derive(job, folder, stem, views, accounts, plots, event_errors)
        except (TimingbenchError, OSError) as exc:
            error = str(exc)
            views.clear()  # the row's own times only, for every event alike
            accounts.clear()
            plots.clear()
    if not views:
        views = [_row_view(r) for r in job.rows]
    html = clip_page_html(job=job, views=views, accounts=accounts, plots=plots, event_errors=event_errors,
                          spec=spec, audio_rel=audio_rel, error=error, prompt_text=prompt_text)
    (out / "clips" / f"{stem}.html").write_text(html, encoding="utf-8")
    return {"page": job.page, "clip": job.clip, "error": error, "seconds": time.perf_counter() - t0}


def _derive(job: ClipJob, folder: ResultsFolder, stem: str, views: list[dict[str, Any]], accounts: dict[str, str],
            plots: dict[str, str], event_errors: dict[str, str]) -> tuple[dict[str, Any], str | None, str]:
    from timingbench.explain.event import clip_bank, explain_event
    from timingbench.explain.plot import plot_explanation
    from timingbench.label.spectrogram import logmel_from_bank, write_logmel_png
    from timingbench.report.html import explanation_html

    out = Path(job.out)
    run = _run_inputs(job, folder)
    prompt_id = job.clip_row.get("prompt_id") or job.rows[0]["prompt_id"]  # a tempo-only clip has no rows
    inp = clip_inputs(run, folder, job.clip, str(prompt_id), overrides=job.overrides)
    bank = clip_bank(inp)
    lm = logmel_from_bank(bank)
    write_logmel_png(lm, out / "img" / f"{stem}.png", compress_level=PNG_COMPRESS_LEVEL)
    n_frames = int(lm.db.shape[1])
    end_s = float(frames_to_time(n_frames, sr=lm.sr, hop=lm.hop))
    spec = {"src": f"../img/{stem}.png", "n_frames": n_frames, "n_mels": int(lm.db.shape[0]),
            "sr": lm.sr, "hop": lm.hop, "end_s": end_s, "fmax_hz": lm.fmax_hz}
    for k, row in enumerate(job.rows, start=1):
        eid = str(row["event_id"])
        try:
            x = explain_event(folder, job.clip, eid, inputs=inp, bank=bank)
        except TimingbenchError as exc:
            event_errors[eid] = str(exc)
            views.append(_row_view(row))
            continue
        views.append(_event_view(x, row))
        accounts[eid] = explanation_html(x)
        png = plot_explanation(x, out / "img" / f"{stem}_e{k}.png", compress_level=PNG_COMPRESS_LEVEL)
        plots[eid] = f"../img/{png.name}"
    audio = copy_audio(inp.audio, out / "audio" / stem, job.audio)
    return spec, None if audio is None else f"../audio/{audio.name}", inp.prompt.text

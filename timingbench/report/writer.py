"""Write a run report: ``index.html``, one page per clip, their images and (on request) audio."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from timingbench.compare.core import compare_systems, system_estimates
from timingbench.config import Config
from timingbench.errors import ParameterError, TimingbenchError
from timingbench.executors import LocalExecutor
from timingbench.jsonio import atomic_write_text
from timingbench.packaged import REPORT_ASSETS
from timingbench.report.clip_page import AUDIO_MODES, missing_audio, write_clip_page
from timingbench.report.html import index_html
from timingbench.report.overview import build_overview
from timingbench.report.pages import ClipJob
from timingbench.report.run import Run, load_run, table_rows
from timingbench.text import shortlist

ASSET_FILES = ("report.css", "index.js", "clip.js")


@dataclass(frozen=True)
class ReportResult:
    """What :func:`build_report` wrote.

    Attributes
    ----------
    index : Path
        ``index.html``.
    pages : int
        Clip pages written.
    not_derived : list of tuple of str
        ``(clip, reason)`` for the clip pages written without a spectrogram and gate tables.
    """

    index: Path
    pages: int
    not_derived: list[tuple[str, str]] = field(default_factory=list)


def _names(folders: Sequence[Path], names: Sequence[str] | None) -> list[str]:
    if names is None:
        out = [f.resolve().name for f in folders]
        if len(set(out)) != len(out):
            out = [f"{n} ({k + 1})" for k, n in enumerate(out)]
        return out
    out = [n.strip() for n in names]
    if len(out) != len(folders) or not all(out):
        raise ParameterError(f"--names gives {len(out)} names for {len(folders)} results folders")
    if len(set(out)) != len(out):
        raise ParameterError(f"--names must be unique, got {out}")
    return out


def build_report(
    results: str | Path, out: str | Path, *, config: Config, compare: Sequence[str | Path] = (),
    names: Sequence[str] | None = None, audio: str = "none", jobs: int = 1, allow_mixed: bool = False,
    resolve: dict[str, Any] | None = None, overrides: dict[str, Any] | None = None,
    progress: Callable[[int, int, str], None] | None = None, clip_pages: bool = True,
    allow_missing_audio: bool = False,
) -> ReportResult:
    """Write the static HTML report of a results folder.

    Parameters
    ----------
    results : str or Path
        The reported run (a ``timingbench score --out`` folder).
    out : str or Path
        Report folder (created).
    config : Config
        Reads the ``compare`` and ``tempo`` sections (bootstrap, floors' rounding).
    compare : sequence of str or Path
        Other systems' results folders, shown side by side.
    names : sequence of str, optional
        One display name per folder, the reported run first (default: folder names).
    audio : str
        ``none`` (no audio), ``copy`` (the clips as they are) or ``mp3`` (ffmpeg).
    jobs : int
        Worker processes for the clip pages.
    allow_mixed : bool
        Compare folders scored with different configurations or prompt sets.
    resolve : dict, optional
        ``clips_dir``, ``prompts_path``, ``config_path`` of the run when not as recorded.
    overrides : dict, optional
        Options of the re-derivation (``cache_dir``, ``separation``, ...).
    progress : callable, optional
        Called with ``(done, total, clip)`` after each clip page.
    clip_pages : bool
        Write the clip pages (False: ``index.html`` alone, whose rows then open no page).
    allow_missing_audio : bool
        Write the pages of clips whose audio is gone without their log-mel and audio
        (each page says why). Without it, and with clip pages and ``audio`` other than
        ``none``, missing audio stops the report before anything is written.

    Returns
    -------
    result : ReportResult

    Raises
    ------
    ParameterError
        For an unknown audio mode or bad names.
    TimingbenchError
        If a results folder is missing or malformed (naming the file, line and field), the
        systems are not comparable and ``allow_mixed`` is false, or clips' audio is missing
        (see ``allow_missing_audio``).
    """
    if audio not in AUDIO_MODES:
        raise ParameterError(f"--audio must be one of {list(AUDIO_MODES)}, got {audio!r}")
    folders = [Path(results), *(Path(c) for c in compare)]
    labels = _names(folders, names)
    runs = [load_run(f, name=n) for f, n in zip(folders, labels, strict=True)]
    run, others = runs[0], runs[1:]
    comp = compare_systems([r.checked for r in runs], config=config, allow_mixed=allow_mixed) if others else None
    est = comp.estimates[run.name] if comp is not None else system_estimates(run.checked, config=config)
    ov = build_overview(run, est, min_prompts=config.params.compare.min_prompts)

    clips = run.clip_names()
    if clip_pages and audio != "none" and not allow_missing_audio:
        gone = missing_audio(run.folder, clips, dict(resolve or {}))
        if gone:
            raise TimingbenchError(
                f"{len(gone)} of {len(clips)} clips have no audio ({shortlist(gone, sep='; ')}): "
                "pass --clips DIR (the folder that was scored), or --audio none / --allow-missing-audio "
                "to write pages without audio and log-mel")

    d = Path(out)
    for sub in ("assets", *(["clips", "img"] if clip_pages else []), *(["audio"] if audio != "none" else [])):
        (d / sub).mkdir(parents=True, exist_ok=True)
    for name in ASSET_FILES:
        atomic_write_text(d / "assets" / name, (REPORT_ASSETS / name).read_text(encoding="utf-8"))

    page_of = {c: i for i, c in enumerate(clips)}
    rows_by_clip: dict[str, list[dict[str, Any]]] = {c: [] for c in clips}
    for r in run.folder.events:
        rows_by_clip[str(r["clip"])].append(r)
    other_rows = []
    for o in others:
        by: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
        for r in o.folder.events:
            by.setdefault((r["prompt_id"], r["sample"]), []).append(r)
        other_rows.append((o.name, by))
    jobs_list = []
    for i, c in enumerate(clips):
        crow = run.folder.clips.get(c, {})
        rows = rows_by_clip[c]
        key = (crow.get("prompt_id", rows[0]["prompt_id"] if rows else None),
               crow.get("sample", rows[0]["sample"] if rows else None))
        jobs_list.append(ClipJob(
            page=i, clip=c, rows=rows, clip_row=crow, summary=run.summary, results=str(run.folder.path),
            out=str(d), audio=audio, system=run.name, others=[(n, by.get(key, [])) for n, by in other_rows],
            neighbours=(i - 1 if i > 0 else None, i + 1 if i + 1 < len(clips) else None),
            resolve=dict(resolve or {}), overrides=dict(overrides or {})))
    not_derived: list[tuple[str, str]] = []
    done = 0
    failed: set[str] = set()
    if not clip_pages:
        jobs_list, page_of = [], {}
    for _, status in LocalExecutor(jobs).imap(write_clip_page, jobs_list, label=lambda j: j.clip):
        done += 1
        if status["error"]:
            not_derived.append((status["clip"], status["error"]))
            failed.add(status["clip"])
        if progress is not None:
            progress(done, len(jobs_list), status["clip"])
    rows = table_rows(run, page_of, others)
    for r in rows:
        r["derived"] = r["clip"] not in failed
    table = {"systems": [r.name for r in runs], "rows": rows,
             "families": sorted({str(r["family"]) for r in rows if r.get("family")}),
             "kinds": sorted({str(r["kind"]) for r in rows if r.get("kind")})}
    index = d / "index.html"
    title = "timingbench report" + (f": {run.name} vs {', '.join(o.name for o in others)}" if others
                                    else f": {run.name}")
    atomic_write_text(index, index_html(title=title, system=run.name, results=str(run.folder.path),
                                        summary=run.summary, ov=ov, table=table, comp=comp))
    return ReportResult(index, len(jobs_list), sorted(not_derived))


__all__ = ["ReportResult", "Run", "build_report"]

"""Read a ``timingbench score`` results folder back (formats §3).

``events.jsonl`` is required; ``clips.jsonl`` and ``summary.json`` are read when present
(the summary records the prompt file, the clips folder, the configuration and the
options of the run, so a verdict can be re-derived with the same inputs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from timingbench.errors import TimingbenchError
from timingbench.jsonio import iter_jsonl, read_json
from timingbench.text import shortlist


@dataclass(frozen=True)
class ResultsFolder:
    """The rows of one results folder.

    Attributes
    ----------
    path : Path
        The folder.
    events : list of dict
        ``events.jsonl`` rows, in file order.
    clips : dict of str to dict
        ``clips.jsonl`` rows by clip name (empty when the file is absent).
    summary : dict or None
        ``summary.json`` (None when absent).
    """

    path: Path
    events: list[dict[str, Any]]
    clips: dict[str, dict[str, Any]] = field(default_factory=dict)
    summary: dict[str, Any] | None = None

    def rows_of(self, clip: str) -> list[dict[str, Any]]:
        """The event rows of ``clip`` (empty when the clip has none)."""
        return [r for r in self.events if r.get("clip") == clip]

    def row(self, clip: str, event_id: str) -> dict[str, Any]:
        """The event row of ``(clip, event_id)``.

        Raises
        ------
        TimingbenchError
            If the clip has no rows in ``events.jsonl`` or no row of that event id; the
            message names the file and lists what it holds.
        """
        where = self.path / "events.jsonl"
        rows = self.rows_of(clip)
        if not rows:
            known = sorted({str(r.get("clip")) for r in self.events})
            why = ""
            if clip in self.clips and self.clips[clip].get("error"):
                why = f" (the clip could not be scored: {self.clips[clip]['error']})"
            raise TimingbenchError(f"{where}: no clip {clip!r}{why}; clips there: {shortlist(known)}")
        for r in rows:
            if r.get("event_id") == event_id:
                return r
        ids = [str(r.get("event_id")) for r in rows]
        raise TimingbenchError(f"{where}: clip {clip!r} has no event {event_id!r}; its events: {shortlist(ids)}")


def _rows(path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for line, row in iter_jsonl(path):
        if isinstance(row, TimingbenchError):
            raise row
        if not isinstance(row, dict):
            raise TimingbenchError(f"{path}:{line}: not a JSON object")
        out.append(row)
    return out


def load_results(path: str | Path) -> ResultsFolder:
    """Read a results folder written by ``timingbench score``.

    Parameters
    ----------
    path : str or Path
        The folder given to ``score --out``.

    Returns
    -------
    results : ResultsFolder

    Raises
    ------
    TimingbenchError
        If the folder or its ``events.jsonl`` does not exist, or a file is not valid JSON.
    """
    p = Path(path)
    if not p.is_dir():
        raise TimingbenchError(f"{p}: results folder not found (the folder given to `timingbench score --out`)")
    ev = p / "events.jsonl"
    if not ev.is_file():
        raise TimingbenchError(f"{ev}: not found; {p} is not a finished `timingbench score` results folder")
    clips_path, summary_path = p / "clips.jsonl", p / "summary.json"
    clips = {str(r.get("clip")): r for r in _rows(clips_path)} if clips_path.is_file() else {}
    summary = read_json(summary_path) if summary_path.is_file() else None
    if summary is not None and not isinstance(summary, dict):
        raise TimingbenchError(f"{summary_path}: not a JSON object")
    return ResultsFolder(p, _rows(ev), clips, summary)


def recorded_path(results: ResultsFolder, key: str) -> Path | None:
    """A folder or file ``summary.json`` records, found from any working directory.

    Candidates, first existing wins: the recorded path (absolute since results format 4;
    an older relative one is tried against the working directory and then the results
    folder) and the recorded path relative to the results folder (``clips_dir_relative``,
    ``prompts.path_relative``), which still holds after the results and clips folders move
    together.

    Parameters
    ----------
    results : ResultsFolder
    key : str
        ``clips_dir`` or ``prompts``.

    Returns
    -------
    path : Path or None
        The first candidate that exists; else the recorded path as written (None when the
        summary records none).
    """
    s = results.summary or {}
    if key == "prompts":
        obj = s.get("prompts")
        recorded, relative = (obj.get("path"), obj.get("path_relative")) if isinstance(obj, dict) else (None, None)
    else:
        recorded, relative = s.get(key), s.get(f"{key}_relative")
    cands = []
    if isinstance(recorded, str) and recorded:
        cands += [Path(recorded), results.path / recorded]
    if isinstance(relative, str) and relative:
        cands.append(results.path / relative)
    for c in cands:
        if c.exists():
            return c.resolve()
    return cands[0] if cands else None


def verdict_view(row: dict[str, Any]) -> dict[str, Any]:
    """The read-only part of an event row that a page shows beside the audio."""
    keys = ("event_id", "kind", "family", "instructed_s", "tolerance_s", "outcome", "detected_s",
            "error_s", "rejected_by", "detector", "p_chance", "gates")
    return {k: row.get(k) for k in keys}

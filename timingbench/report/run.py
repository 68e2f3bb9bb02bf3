"""The results folders a report reads, and the rows of its clip table.

A report reads each folder twice over the same files: through
:func:`timingbench.compare.load_results`, which checks every field the rates and
intervals read and names the file, line and field of the first malformed row, and through
:func:`timingbench.explain.results.load_results`, whose view keeps the rows of clips that
could not be scored and serves :func:`timingbench.explain.event.explain_event`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from timingbench.compare.results import SystemResults
from timingbench.compare.results import load_results as load_checked
from timingbench.explain.results import ResultsFolder
from timingbench.explain.results import load_results as load_folder
from timingbench.summary import row_identity_verified

#: Event-row fields a table row carries as they are.
TABLE_FIELDS = ("clip", "prompt_id", "sample", "event_id", "kind", "family", "instructed_s", "tolerance_s",
                "outcome", "detected_s", "error_s", "rejected_by", "detector", "p_chance", "floor_s")


@dataclass(frozen=True)
class Run:
    """One scored system.

    Attributes
    ----------
    name : str
        Display name.
    checked : SystemResults
        The checked rows (rates and intervals are computed from these).
    folder : ResultsFolder
        Every row as written, for the clip pages.
    """

    name: str
    checked: SystemResults
    folder: ResultsFolder

    @property
    def summary(self) -> dict[str, Any]:
        """``summary.json`` as read."""
        return self.checked.summary

    def clip_names(self) -> list[str]:
        """Every clip of ``clips.jsonl`` and ``events.jsonl``, in file order, each once."""
        names = list(self.folder.clips)
        names += [str(r["clip"]) for r in self.folder.events if r["clip"] not in self.folder.clips]
        return list(dict.fromkeys(names))


def load_run(path: str | Path, *, name: str) -> Run:
    """Read and check one results folder.

    Parameters
    ----------
    path : str or Path
        A folder written by ``timingbench score --out``.
    name : str
        Display name of the system.

    Returns
    -------
    run : Run

    Raises
    ------
    TimingbenchError
        If the folder, ``summary.json``, ``events.jsonl`` or ``clips.jsonl`` is missing or
        unreadable, or a row lacks a field the report reads; the message names the file
        (and the line and field).
    """
    checked = load_checked(path, name=name)
    folder = load_folder(path)
    return Run(name, checked, folder)


def exempt_families(summary: dict[str, Any]) -> dict[str, str]:
    """Family -> why the run's family evidence could not judge it (``identity not verified``)."""
    fe = summary.get("family_evidence")
    ex = fe.get("exempt_families") if isinstance(fe, dict) else None
    return {str(k): str(v) for k, v in ex.items()} if isinstance(ex, dict) else {}


def margin_floors(row: dict[str, Any]) -> float | None:
    """How far a detection lies from its tolerance edge, in measurement floors.

    ``(tolerance - |error|) / floor``: positive inside the tolerance (on time), negative
    outside it (off time). Below 1 in magnitude, the apparatus's own error could flip the
    verdict. None when nothing was detected or the row carries no floor.
    """
    err, tol, floor = row.get("error_s"), row.get("tolerance_s"), row.get("floor_s")
    if err is None or tol is None or not floor:
        return None
    return round((float(tol) - abs(float(err))) / float(floor), 3)


def table_rows(run: Run, page_of: dict[str, int], others: list[Run]) -> list[dict[str, Any]]:
    """One row per (clip, instructed event) of ``run``, plus one per clip that has no event rows.

    Parameters
    ----------
    run : Run
        The reported system.
    page_of : dict of str to int
        Clip name -> index of its clip page.
    others : list of Run
        Compared systems; each row carries their verdict of the same event (matched on
        prompt id, sample and event id) under ``others``, None where they have no row.

    Returns
    -------
    rows : list of dict
        :data:`TABLE_FIELDS` plus ``page``, ``margin_floors``, ``exempt`` (identity not
        verified), ``clip_error`` and ``others``.
    """
    keyed = [{(r["prompt_id"], r["sample"], r["event_id"]): r for r in o.folder.events} for o in others]
    rows: list[dict[str, Any]] = []
    with_events = set()
    for r in run.folder.events:
        with_events.add(r["clip"])
        row = {k: r.get(k) for k in TABLE_FIELDS}
        crow = run.folder.clips.get(str(r["clip"]), {})
        row.update(page=page_of.get(str(r["clip"])), margin_floors=margin_floors(r),
                   exempt=not row_identity_verified(r, run.summary), clip_error=crow.get("error") or r.get("error"))
        key = (r["prompt_id"], r["sample"], r["event_id"])
        row["others"] = [None if key not in k else {"outcome": k[key]["outcome"], "error_s": k[key].get("error_s")}
                         for k in keyed]
        rows.append(row)
    for clip, crow in run.folder.clips.items():
        if clip not in with_events:
            rows.append({**{k: crow.get(k) for k in TABLE_FIELDS}, "page": page_of.get(clip), "outcome": None,
                         "margin_floors": None, "exempt": False, "clip_error": crow.get("error"),
                         "no_event": True, "others": [None for _ in others]})
    return rows

"""Read one results folder written by ``timingbench score`` (formats §3).

A results folder holds ``events.jsonl`` (one row per clip and instructed event),
``clips.jsonl`` (one row per clip) and ``summary.json``. :func:`load_results` checks every
field the comparison reads and raises one :class:`TimingbenchError` naming the file, the
line and the field at the first malformed row: a comparison built on a half-read folder
would be silently wrong. Unknown keys are kept in the rows.

``summary.json`` names the configuration it was scored with. formats §3 fixes the
content ("the config version and its content hash") but not the key names, so the reader
accepts ``config_version``/``config_hash`` at the top level or a ``config`` object with
``version`` and ``content_hash`` (or ``hash``). The prompt set is identified by the
summary's ``prompts_hash`` (or ``prompts.hash``) when present, and always by the prompt ids the folder covers
(scored clips plus ``missing`` prompts).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from timingbench.errors import TimingbenchError
from timingbench.jsonio import field_error, read_json, read_rows
from timingbench.prompts import EVENT_FAMILIES, EVENT_KINDS

OUTCOMES = ("on_time", "off_time", "none")

_EVENT_FIELDS: dict[str, tuple[type, ...]] = {
    "clip": (str,),
    "prompt_id": (str,),
    "sample": (int,),
    "event_id": (str,),
    "kind": (str,),
    "family": (str,),
    "instructed_s": (int, float),
    "tolerance_s": (int, float),
    "outcome": (str,),
}


@dataclass(frozen=True)
class SystemResults:
    """The scored results of one system.

    Attributes
    ----------
    name : str
        Display name of the system.
    path : Path
        The results folder.
    events : list of dict
        ``events.jsonl`` rows, those of clips with an ``error`` included (outcome ``none``:
        every submitted clip counts).
    clips : list of dict
        ``clips.jsonl`` rows without an ``error``.
    errors : list of dict
        ``clips.jsonl`` rows with an ``error`` (scoring errors), plus summary-only errors.
    missing : list of str
        Prompt ids with no clip (provider-side failures).
    unmatched : list of str
        Files that matched no prompt.
    summary : dict
        ``summary.json`` as read.
    config_version, config_hash : str or None
        The configuration the folder was scored with.
    prompts_hash : str or None
        Identity of the prompt file, when the summary records one.
    prompt_ids : frozenset of str
        Prompts the folder covers: those with a clip (scored or errored) plus ``missing``.
    """

    name: str
    path: Path
    events: list[dict[str, Any]]
    clips: list[dict[str, Any]]
    errors: list[dict[str, Any]]
    missing: list[str]
    unmatched: list[str]
    summary: dict[str, Any] = field(repr=False)
    config_version: str | None
    config_hash: str | None
    prompts_hash: str | None
    prompt_ids: frozenset[str]


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _bad(path: Path, line: int, fld: str, rule: str) -> TimingbenchError:
    return field_error(f"{path}:{line}", fld, rule, error=TimingbenchError)


def _check_event(row: dict[str, Any], path: Path, line: int) -> dict[str, Any]:
    for key, types in _EVENT_FIELDS.items():
        v = row.get(key)
        ok = isinstance(v, types) and not isinstance(v, bool)
        if ok and types == (int, float):
            ok = _is_number(v)
        if not ok:
            raise _bad(path, line, key, f"missing or not a {'/'.join(t.__name__ for t in types)} "
                       f"(got {v!r}); was this folder written by `timingbench score`?")
    if row["outcome"] not in OUTCOMES:
        raise _bad(path, line, "outcome", f"must be one of {list(OUTCOMES)}, got {row['outcome']!r}")
    if row["kind"] not in EVENT_KINDS:
        raise _bad(path, line, "kind", f"must be one of {list(EVENT_KINDS)}, got {row['kind']!r}")
    if row["family"] not in EVENT_FAMILIES:
        raise _bad(path, line, "family", f"must be one of {list(EVENT_FAMILIES)}, got {row['family']!r}")
    for key in ("detected_s", "error_s"):
        v = row.get(key)
        if row["outcome"] == "none":
            if v is not None:
                raise _bad(path, line, key, "must be null when outcome is 'none'")
        elif not _is_number(v):
            raise _bad(path, line, key, f"must be seconds when outcome is {row['outcome']!r}, got {v!r}")
    for key in ("p_chance", "floor_s"):
        v = row.get(key)
        if v is not None and (not _is_number(v) or v < 0):
            raise _bad(path, line, key, f"must be a non-negative number or null, got {v!r}")
    if row.get("p_chance") is not None and row["p_chance"] > 1:
        raise _bad(path, line, "p_chance", f"is a fraction in [0, 1], got {row['p_chance']!r}")
    return row


def _check_clip(row: dict[str, Any], path: Path, line: int) -> dict[str, Any]:
    for key, types in (("clip", (str,)), ("prompt_id", (str,)), ("sample", (int,))):
        v = row.get(key)
        if not isinstance(v, types) or isinstance(v, bool):
            raise _bad(path, line, key, f"missing or not a {types[0].__name__} (got {v!r})")
    if row.get("error") is not None:
        return row
    if not isinstance(row.get("duration_ok"), bool | None):
        raise _bad(path, line, "duration_ok", f"must be true, false or null, got {row.get('duration_ok')!r}")
    tempo = row.get("tempo")
    if tempo is not None:
        if not isinstance(tempo, Mapping):
            raise _bad(path, line, "tempo", "must be an object or null")
        if not _is_number(tempo.get("target_bpm")) or tempo["target_bpm"] <= 0:
            raise _bad(path, line, "tempo.target_bpm", f"must be a positive number, got {tempo.get('target_bpm')!r}")
        est = tempo.get("estimate_bpm")
        if est is not None and not _is_number(est):
            raise _bad(path, line, "tempo.estimate_bpm", f"must be a number or null, got {est!r}")
    return row


def _read_rows(path: Path, check: Any) -> list[dict[str, Any]]:
    if not path.is_file():
        raise TimingbenchError(f"{path}: not found; a results folder holds events.jsonl, clips.jsonl "
                               "and summary.json written by `timingbench score`")
    return [check(row, path, line) for line, row in read_rows(path, what="results", error=TimingbenchError)]


def _str_or_none(v: Any) -> str | None:
    return None if v is None else str(v)


def _names(v: Any) -> list[str]:
    """A list of names from a list of strings or of objects with a name-like key."""
    if v is None or isinstance(v, int):
        return []
    out = []
    for item in v if isinstance(v, list) else [v]:
        if isinstance(item, Mapping):
            item = item.get("prompt_id", item.get("clip", item.get("id", item.get("file"))))
        out.append(str(item))
    return out


def load_results(path: str | Path, *, name: str) -> SystemResults:
    """Load and check one results folder.

    Parameters
    ----------
    path : str or Path
        Folder with ``events.jsonl``, ``clips.jsonl`` and ``summary.json``.
    name : str
        Display name of the system.

    Returns
    -------
    results : SystemResults

    Raises
    ------
    TimingbenchError
        If the folder or a file is missing, or a row lacks a field the comparison reads
        (the message names file, line and field).
    """
    d = Path(path)
    if not d.is_dir():
        raise TimingbenchError(f"{d}: results folder not found")
    summary = read_json(d / "summary.json") if (d / "summary.json").is_file() else None
    if not isinstance(summary, dict):
        raise TimingbenchError(f"{d / 'summary.json'}: missing or not a JSON object")
    events = _read_rows(d / "events.jsonl", _check_event)
    clips = _read_rows(d / "clips.jsonl", _check_clip)
    errored = [c for c in clips if c.get("error") is not None]
    bad_clips = {c["clip"] for c in errored}
    extra_errors = [{"clip": n, "error": "listed in summary.json errors"} for n in _names(summary.get("errors"))
                    if n not in bad_clips and n not in {c["clip"] for c in clips}]
    cfg_obj = summary.get("config")
    cfg: Mapping[str, Any] = cfg_obj if isinstance(cfg_obj, Mapping) else {}
    pr_obj = summary.get("prompts")
    prompts_obj: Mapping[str, Any] = pr_obj if isinstance(pr_obj, Mapping) else {}
    version = summary.get("config_version", cfg.get("version"))
    chash = summary.get("config_hash", cfg.get("content_hash", cfg.get("hash")))
    missing = sorted(set(_names(summary.get("missing"))))
    covered = {c["prompt_id"] for c in clips} | {e["prompt_id"] for e in events} | set(missing)
    return SystemResults(
        name=name,
        path=d,
        events=events,
        clips=[c for c in clips if c.get("error") is None],
        errors=errored + extra_errors,
        missing=missing,
        unmatched=_names(summary.get("unmatched")),
        summary=summary,
        config_version=_str_or_none(version),
        config_hash=_str_or_none(chash),
        prompts_hash=_str_or_none(summary.get("prompts_hash", prompts_obj.get("hash"))),
        prompt_ids=frozenset(covered),
    )


def mixed_reasons(systems: list[SystemResults]) -> list[str]:
    """Say how the folders differ in configuration or prompt set (empty when comparable).

    Parameters
    ----------
    systems : list of SystemResults

    Returns
    -------
    reasons : list of str
        One line per difference (config version, config hash, prompt set), naming systems.
    """
    reasons = []
    for label, attr in (("config versions", "config_version"), ("config hashes", "config_hash"),
                        ("prompt-set hashes", "prompts_hash")):
        vals = {s.name: getattr(s, attr) for s in systems}
        if attr == "prompts_hash" and all(v is None for v in vals.values()):
            continue
        if len(set(vals.values())) > 1:
            reasons.append(f"different {label}: " + ", ".join(f"{k}={v}" for k, v in vals.items()))
    ids = {s.name: s.prompt_ids for s in systems}
    first = systems[0]
    for s in systems[1:]:
        if ids[s.name] != ids[first.name]:
            only_a = len(ids[first.name] - ids[s.name])
            only_b = len(ids[s.name] - ids[first.name])
            reasons.append(f"different prompt sets: {first.name} covers {only_a} prompts that "
                           f"{s.name} does not, {s.name} covers {only_b} that {first.name} does not")
    return reasons

"""The optional ``controls`` object of a prompt row: parsing and validation.

All times are seconds from the start of the clip. Curves (``dynamics``, ``melody``) are
sampled on their own hop: value ``k`` describes ``[k * hop_s, (k + 1) * hop_s)``; a
``null`` value leaves that frame unconstrained (partial controls).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from timingbench.errors import PromptError
from timingbench.jsonio import is_finite_number

CONTROL_NAMES = ("beats_s", "downbeats_s", "dynamics", "melody", "chords", "drums_s")

#: Harte chord syntax: ``N``, ``X`` or ``root[:quality][(extensions)][/bass]``.
_HARTE = re.compile(r"^(N|X|[A-G](?:b+|#+)?(?::[A-Za-z0-9]*)?(?:\([^()]*\))?(?:/[b#]*[0-9]+)?)$")

F64 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Chord:
    """One requested chord: ``label`` (Harte syntax) over ``[start_s, end_s)``."""

    start_s: float
    end_s: float
    label: str


@dataclass(frozen=True)
class Controls:
    """The validated controls of one prompt (absent controls are ``None``).

    Attributes
    ----------
    beats_s, downbeats_s : np.ndarray of float64 or None
        Requested beat / downbeat times in seconds, increasing.
    dynamics_hop_s : float or None
        Hop of the dynamics curve, seconds.
    dynamics_db : np.ndarray of float64 or None
        Requested level per frame in dB (NaN where the request is null).
    melody_hop_s : float or None
        Hop of the melody line, seconds.
    melody_midi : np.ndarray of float64 or None
        Requested MIDI pitch per frame (NaN where no melody is requested).
    chords : tuple of Chord or None
        Requested chords, ordered and non-overlapping.
    drums_s : np.ndarray of float64 or None
        Requested drum onsets in seconds.
    drums_path : Path or None
        A control audio file whose drum onsets are the request (``drums_s`` given as a path).
    """

    beats_s: F64 | None = None
    downbeats_s: F64 | None = None
    dynamics_hop_s: float | None = None
    dynamics_db: F64 | None = None
    melody_hop_s: float | None = None
    melody_midi: F64 | None = None
    chords: tuple[Chord, ...] | None = None
    drums_s: F64 | None = None
    drums_path: Path | None = None

    def names(self) -> tuple[str, ...]:
        """The controls given, in :data:`CONTROL_NAMES` order."""
        have = {"beats_s": self.beats_s is not None, "downbeats_s": self.downbeats_s is not None,
                "dynamics": self.dynamics_db is not None, "melody": self.melody_midi is not None,
                "chords": self.chords is not None,
                "drums_s": self.drums_s is not None or self.drums_path is not None}
        return tuple(n for n in CONTROL_NAMES if have[n])


def _fail(pid: str, fld: str, rule: str, where: str) -> PromptError:
    return PromptError(f"{where}prompt {pid!r}: field 'controls.{fld}': {rule}")


def _times(v: Any, fld: str, *, pid: str, dur: float, where: str) -> F64:
    if not isinstance(v, list) or not v:
        raise _fail(pid, fld, "must be a non-empty list of seconds", where)
    for i, t in enumerate(v):
        if not is_finite_number(t):
            raise _fail(pid, f"{fld}[{i}]", f"must be a number of seconds, got {t!r}", where)
        if not 0.0 <= t <= dur:
            raise _fail(pid, f"{fld}[{i}]", f"{t} s lies outside [0, duration_s={dur}]", where)
        if i and t <= v[i - 1]:
            raise _fail(pid, f"{fld}[{i}]", "times must be strictly increasing", where)
    return np.asarray(v, dtype=np.float64)


def _curve(v: Any, fld: str, key: str, *, pid: str, dur: float, where: str,
           lo: float, hi: float, unit: str) -> tuple[float, F64]:
    if not isinstance(v, Mapping):
        raise _fail(pid, fld, f"must be an object {{hop_s, {key}}}", where)
    hop: Any = v.get("hop_s")
    if not is_finite_number(hop) or hop <= 0:
        raise _fail(pid, f"{fld}.hop_s", f"must be a positive number of seconds, got {hop!r}", where)
    vals = v.get(key)
    if not isinstance(vals, list) or not vals:
        raise _fail(pid, f"{fld}.{key}", "must be a non-empty list (null for an unconstrained frame)", where)
    if (len(vals) - 1) * hop > dur + 1e-9:
        raise _fail(pid, f"{fld}.{key}", f"{len(vals)} frames of {hop} s run past duration_s={dur}", where)
    out = np.full(len(vals), np.nan)
    for i, x in enumerate(vals):
        if x is None:
            continue
        if not is_finite_number(x) or not lo <= x <= hi:
            raise _fail(pid, f"{fld}.{key}[{i}]", f"must be null or a number in [{lo:g}, {hi:g}] {unit}, "
                        f"got {x!r}", where)
        out[i] = float(x)
    if not np.any(np.isfinite(out)):
        raise _fail(pid, f"{fld}.{key}", "every frame is null: leave the control out instead", where)
    return float(hop), out


def _chords(v: Any, *, pid: str, dur: float, where: str) -> tuple[Chord, ...]:
    if not isinstance(v, list) or not v:
        raise _fail(pid, "chords", "must be a non-empty list of {start_s, end_s, label}", where)
    out: list[Chord] = []
    for i, c in enumerate(v):
        f = f"chords[{i}]"
        if not isinstance(c, Mapping):
            raise _fail(pid, f, "must be an object {start_s, end_s, label}", where)
        s: Any = c.get("start_s")
        e: Any = c.get("end_s")
        lab = c.get("label")
        if not is_finite_number(s) or not is_finite_number(e) or not 0.0 <= s < e <= dur:
            raise _fail(pid, f, f"needs 0 <= start_s < end_s <= duration_s={dur}, got {s!r}..{e!r}", where)
        if not isinstance(lab, str) or not _HARTE.match(lab):
            raise _fail(pid, f + ".label", f"must be a chord in Harte syntax (C:maj, A:min7, N), got {lab!r}",
                        where)
        if out and s < out[-1].end_s - 1e-9:
            raise _fail(pid, f, "chords must be ordered and must not overlap", where)
        out.append(Chord(float(s), float(e), lab))
    return tuple(out)


def parse_controls(raw: Any, *, pid: str, duration_s: float, where: str = "",
                   base_dir: Path | None = None) -> Controls:
    """Validate a prompt's ``controls`` object.

    Parameters
    ----------
    raw : Any
        The parsed JSON value of ``controls``.
    pid : str
        The prompt id (for messages).
    duration_s : float
        The prompt's instructed duration in seconds; every time must lie in it.
    where : str
        Location prefix for messages (``"file.jsonl:12: "``).
    base_dir : Path, optional
        Folder a relative ``drums_s`` audio path is resolved against (the prompt file's).

    Returns
    -------
    controls : Controls

    Raises
    ------
    PromptError
        ``file:line: prompt 'id': field 'controls.x': rule`` for the first rule broken.
    """
    if not isinstance(raw, Mapping):
        raise PromptError(f"{where}prompt {pid!r}: field 'controls': must be an object")
    unknown = sorted(set(raw) - set(CONTROL_NAMES))
    if unknown:
        raise _fail(pid, unknown[0], f"unknown control; controls are {list(CONTROL_NAMES)}", where)
    kw: dict[str, Any] = {}
    if raw.get("beats_s") is not None:
        kw["beats_s"] = _times(raw["beats_s"], "beats_s", pid=pid, dur=duration_s, where=where)
    if raw.get("downbeats_s") is not None:
        kw["downbeats_s"] = _times(raw["downbeats_s"], "downbeats_s", pid=pid, dur=duration_s, where=where)
    if raw.get("dynamics") is not None:
        kw["dynamics_hop_s"], kw["dynamics_db"] = _curve(raw["dynamics"], "dynamics", "db", pid=pid,
                                                         dur=duration_s, where=where, lo=-200.0, hi=20.0,
                                                         unit="dB")
    if raw.get("melody") is not None:
        kw["melody_hop_s"], kw["melody_midi"] = _curve(raw["melody"], "melody", "midi", pid=pid,
                                                       dur=duration_s, where=where, lo=0.0, hi=127.0,
                                                       unit="(MIDI pitch)")
    if raw.get("chords") is not None:
        kw["chords"] = _chords(raw["chords"], pid=pid, dur=duration_s, where=where)
    drums = raw.get("drums_s")
    if isinstance(drums, str):
        if not drums.strip():
            raise _fail(pid, "drums_s", "a control audio path must be non-empty", where)
        path = Path(drums)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        if not path.is_file():
            raise _fail(pid, "drums_s", f"control audio file {str(path)!r} not found", where)
        kw["drums_path"] = path
    elif drums is not None:
        kw["drums_s"] = _times(drums, "drums_s", pid=pid, dur=duration_s, where=where)
    return Controls(**kw)

"""Truth rules: how the exact truth of a rendered clip is read from its MIDI notes.

:func:`truth_rows` gives the formats §5 Layer-1 rows of the instructed events,
:func:`observed_entrances` the instruction-independent Layer-2 rows, and
:func:`beat_times` the beat positions of a tempo reference, all from the notes the
written MIDI file holds (read back, so the truth is what the audio was rendered from).

Truth conventions (paper Sec. IV-B):

- ``instrument_entry``: the first note-on of the target part.
- ``instrument_exit``: the note-off of the target's last note; for percussion (drum kits,
  timpani), whose sound ignores note-off, the onset of its last hit.
- ``music_start_after_silence``: the first note-on of the mix.
- ``music_end`` / ``music_pause`` (the "first edge"): an abrupt cut -> the cut time
  (sample-accurate); a last accent with decay -> that accent's note-on; a gradual fade ->
  the time the fade gain reaches ``mix.fade_point_below_loud_db`` below the loud level.
- ``mix_energy_increase``: the first note-on of the layers that enter with the rise.
- Negatives (``never_delivered``, ``busy_decoy``, ``pre_existing``): ``occurred`` false,
  ``onset_s`` null.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from timingbench.errors import ParameterError
from timingbench.render.arrangement import Note, Part


@dataclass(frozen=True)
class TruthRule:
    """How one event's truth is read from the MIDI notes.

    ``rule`` is ``first_on`` | ``last_on`` | ``last_off`` (over ``parts``; ``("*",)`` =
    every part), ``fixed`` (``fixed_s``, for envelope edges) or ``absent``.
    """

    rule: str
    parts: tuple[str, ...] = ()
    fixed_s: float | None = None
    character: str = "hard"
    salience: int = 2


def truth_time(rule: TruthRule, notes: Mapping[str, list[Note]]) -> float | None:
    """The truth time in seconds of one event (None for an ``absent`` rule).

    Raises
    ------
    ParameterError
        For a ``fixed`` rule without ``fixed_s``, a rule over parts without notes or an
        unknown rule.
    """
    if rule.rule == "absent":
        return None
    if rule.rule == "fixed":
        if rule.fixed_s is None:
            raise ParameterError("a 'fixed' truth rule needs fixed_s")
        return float(rule.fixed_s)
    names = list(notes) if rule.parts == ("*",) else list(rule.parts)
    pool = [n for name in names for n in notes.get(name, [])]
    if not pool:
        raise ParameterError(f"truth rule {rule.rule} reads parts {names} that hold no notes")
    if rule.rule == "first_on":
        return min(n.start for n in pool)
    if rule.rule == "last_on":
        return max(n.start for n in pool)
    if rule.rule == "last_off":
        return max(n.end for n in pool)
    raise ParameterError(f"unknown truth rule {rule.rule!r}")



def truth_rows(events: Sequence[Mapping[str, Any]], rules: Sequence[TruthRule],
               notes: Mapping[str, list[Note]], *, clip: str, split: str) -> list[dict[str, Any]]:
    """formats §5 Layer-1 rows, one per instructed event, by the event's rule.

    Raises
    ------
    ParameterError
        See :func:`truth_time`.
    """
    truth: list[dict[str, Any]] = []
    for ev, rule in zip(events, rules, strict=True):
        onset = truth_time(rule, notes)
        truth.append({"clip": clip, "event_id": ev["id"], "occurred": onset is not None,
                      "onset_s": None if onset is None else round(onset, 6),
                      "onset_character": rule.character, "salience": rule.salience,
                      "annotator": "renderer", "split": split})
    return truth


def observed_entrances(parts: Sequence[Part], notes: Mapping[str, list[Note]],
                       envelope: npt.NDArray[np.float64], *, sr: int, gap_s: float, clip: str,
                       split: str) -> list[dict[str, Any]]:
    """formats §5 Layer-2 rows: every audible entrance of every part.

    An entrance is a part's first note and each note after ``gap_s`` of that part's
    silence (``render.observed_gap_s``), where the gain ``envelope`` is above -40 dB.
    Rows are sorted by onset, then source.
    """
    n = envelope.size
    observed: list[dict[str, Any]] = []
    for part in parts:
        last_end = -math.inf
        for x in notes.get(part.name, []):
            i = min(int(round(x.start * sr)), n - 1)
            if x.start - last_end >= gap_s and envelope[i] > 0.01:  # audible: above -40 dB of gain
                observed.append({"clip": clip, "source": part.spec.target,
                                 "family": part.spec.family, "onset_s": round(x.start, 6),
                                 "salience": 3 if part.spec.family == "percussion" else 2,
                                 "annotator": "renderer", "split": split})
            last_end = max(last_end, x.end)
    observed.sort(key=lambda r: (r["onset_s"], r["source"]))
    return observed


def beat_times(notes: Sequence[Note], *, bpm: float, first_beat_s: float) -> list[float]:
    """Beat times of a tempo reference: the note-ons of its beat part (the kick or click)
    that lie on the beat grid of ``bpm`` from ``first_beat_s``, as the MIDI file holds
    them (sorted, rounded to 1 µs)."""
    beat_s = 60.0 / float(bpm)
    first_beat = float(first_beat_s)
    return sorted({round(x.start, 6) for x in notes
                   if abs((x.start - first_beat) / beat_s - round((x.start - first_beat) / beat_s)) < 0.01})

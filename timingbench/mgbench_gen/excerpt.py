"""Value types of the MGBench generators: notes, excerpts and question-answer pairs.

Times are seconds on the MIDI tick grid (:func:`on_tick_grid`), so that the annotation
written beside the audio equals what the MIDI file holds and what the synthesiser plays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from timingbench.convert import round_time

#: Ticks per second of every generated MIDI file (960 ticks per beat at 120 BPM).
TICKS_PER_SECOND = 1920
MIDI_TEMPO_BPM = 120.0


def on_tick_grid(t: float) -> float:
    """``t`` seconds moved to the nearest MIDI tick (1/1920 s)."""
    return round(float(t) * TICKS_PER_SECOND) / TICKS_PER_SECOND


def seconds(t: float) -> float:
    """Time rounded to the package's 6 decimals (``timingbench.convert.round_time``)."""
    return float(round_time(np.asarray([t]))[0])


@dataclass(frozen=True)
class GenNote:
    """One generated piano note.

    Attributes
    ----------
    onset_s, offset_s : float
        Note-on and note-off in seconds (on the tick grid).
    pitch : int
        MIDI pitch (21-108).
    velocity : int
        MIDI velocity (1-127).
    """

    onset_s: float
    offset_s: float
    pitch: int
    velocity: int

    def span(self) -> list[float]:
        """``[onset_s, offset_s]`` rounded to 6 decimals."""
        return [seconds(self.onset_s), seconds(self.offset_s)]


@dataclass
class Excerpt:
    """One generated clip with its annotations.

    Attributes
    ----------
    id : str
        Clip id (also the audio and MIDI file stem).
    subset : str
        ``3N`` or ``2B``.
    duration_s : float
        Length of the rendered audio in seconds.
    notes : list of GenNote
        Sequential, strictly monophonic notes in time order.
    note_labels : list of dict
        Per-note structural labels (same order as ``notes``).
    labels : dict
        Clip-level labels (sampled controls and labels derived from the notes).
    """

    id: str
    subset: str
    duration_s: float
    notes: list[GenNote]
    note_labels: list[dict[str, Any]] = field(default_factory=list)
    labels: dict[str, Any] = field(default_factory=dict)

    def spans(self, idx: Sequence[int], *, merge_runs: bool = False) -> list[list[float]]:
        """Reference spans of the notes ``idx``.

        Parameters
        ----------
        idx : sequence of int
            Note indices (any order, duplicates ignored).
        merge_runs : bool
            One span per run of consecutive notes (first onset to last offset), as for
            a bar or a pattern; otherwise one span per note.

        Returns
        -------
        spans : list of [start, end]
            Seconds, rounded to 6 decimals, in time order.
        """
        ids = sorted(set(int(i) for i in idx))
        if not merge_runs:
            return [self.notes[i].span() for i in ids]
        out: list[list[float]] = []
        run: list[int] = []
        for i in ids:
            if run and i != run[-1] + 1:
                out.append([seconds(self.notes[run[0]].onset_s), seconds(self.notes[run[-1]].offset_s)])
                run = []
            run.append(i)
        if run:
            out.append([seconds(self.notes[run[0]].onset_s), seconds(self.notes[run[-1]].offset_s)])
        return out


@dataclass(frozen=True)
class Candidate:
    """A question an excerpt supports, before sampling.

    Attributes
    ----------
    task : str
        ``grounding`` or ``understanding``.
    category : str
        3N query family (``ABS``/``REL``/``ORD``/``PAT``) or 2B concept group.
    template : str
        Template name (questions are sampled template first, so that parameterised
        templates do not crowd out the others).
    question : str
    targets : tuple of int
        Grounding: the notes whose spans answer the question (empty: an empty answer).
        Understanding: the evidence notes.
    merge_runs : bool
        Whether consecutive target notes form one span (a bar, a pattern).
    answer : str or None
        Understanding answer text.
    """

    task: str
    category: str
    template: str
    question: str
    targets: tuple[int, ...]
    merge_runs: bool = False
    answer: str | None = None

    @property
    def empty(self) -> bool:
        """True for a grounding question whose answer is empty."""
        return self.task == "grounding" and not self.targets

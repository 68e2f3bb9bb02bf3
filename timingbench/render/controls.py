"""The exact controls of a rendered clip: its beats, downbeats, level curve, melody and chords.

They are read from what the clip was rendered from, the way the event truth is
(:mod:`timingbench.render.truth_rules`):

- ``beats_s`` / ``downbeats_s``: the arrangement's beat grid (bar lines are downbeats)
  wherever the mix sounds, i.e. between the first note-on and the last note-off of the
  mix, where the gain envelope is above -40 dB, inside the instructed duration.
- ``dynamics``: the A-weighted level of the rendered mix itself
  (:func:`timingbench.controls.frames.level_curve_db`, the scorer's definition) on
  ``controls.render_dynamics_hop_s``: exact by construction, so the oracle checks the
  scoring path (decode, hop, pooling), not the renderer.
- ``melody``: the top sounding note of the first ``lead`` part per frame of
  ``controls.render_melody_hop_s`` (null where it rests or the envelope is under -40 dB);
  left out when the arrangement has no lead part.
- ``chords``: the harmony's chord of every bar (Harte ``root:maj|min|dim``) over the span
  where a pitched part sounds; left out for drum-only clips.
- ``drums_s``: the note-ons of the drum parts (kit and drum machine), when there are any.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from timingbench.controls.frames import level_curve_db, spectral_frames
from timingbench.features.bank import grid_magnitude
from timingbench.params.analysis import FeaturesParams
from timingbench.params.controls import ControlsParams
from timingbench.render.arrangement import Grid, Harmony, Note, Part

PITCH_NAMES = ("C", "C#", "D", "Eb", "E", "F", "F#", "G", "Ab", "A", "Bb", "B")
#: Gain-envelope level under which the mix counts as silent (-40 dB).
_AUDIBLE = 0.01


def chord_label(chord: tuple[int, int, int]) -> str:
    """Harte label of a (root, third, fifth) pitch-class triad."""
    root, third, fifth = chord
    q = {(4, 7): "maj", (3, 7): "min", (3, 6): "dim", (4, 8): "aug"}[((third - root) % 12, (fifth - root) % 12)]
    return f"{PITCH_NAMES[root]}:{q}"


def _audible(env: npt.NDArray[np.float64], t: float, sr: int) -> bool:
    i = int(round(t * sr))
    return 0 <= i < env.size and env[i] > _AUDIBLE


def rendered_controls(*, parts: list[Part], notes: Mapping[str, list[Note]], grid: Grid | None,
                      harmony: Harmony | None, envelope: npt.NDArray[np.float64], mix: npt.NDArray[np.floating],
                      sr: int, prompt_s: float, controls: ControlsParams,
                      features: FeaturesParams) -> dict[str, Any]:
    """The formats §1 ``controls`` object of a rendered clip (see the module docstring).

    Parameters
    ----------
    parts : list of Part
        The arrangement's parts.
    notes : mapping of str to list of Note
        The notes the written MIDI file holds, by part name.
    grid, harmony : Grid, Harmony or None
        What the parts were generated on (beats and chords are left out without them).
    envelope : np.ndarray, shape (n,)
        The linear gain envelope applied to the mix.
    mix : np.ndarray, shape (n,)
        The rendered mix as written (after gain and scaling).
    sr : int
        Sample rate, Hz.
    prompt_s : float
        The instructed duration, seconds (every control lies inside it).
    controls, features : ControlsParams, FeaturesParams
        Hops of the written curves; the level definition's STFT.

    Returns
    -------
    controls : dict
    """
    out: dict[str, Any] = {}
    all_notes = [x for part in parts for x in notes.get(part.name, [])]
    if not all_notes:
        return out
    first_on = min(x.start for x in all_notes)
    last_off = min(max(x.end for x in all_notes), prompt_s)
    if grid is not None:
        beats: list[float] = []
        downs: list[float] = []
        for bar in grid.bars(first_on, last_off):
            for b in range(grid.beats_per_bar):
                t = round(grid.time(bar, float(b)), 6)
                if first_on - 1e-6 <= t <= last_off and _audible(envelope, t, sr):
                    beats.append(t)
                    if b == 0:
                        downs.append(t)
        if beats:
            out["beats_s"] = beats
        if downs:
            out["downbeats_s"] = downs
    hop_d = float(controls.render_dynamics_hop_s)
    n_d = int(math.floor(prompt_s / hop_d + 1e-9))
    fr = spectral_frames(grid_magnitude(mix, p=features), sr=sr, n_fft=features.n_fft, hop=features.hop,
                         tuning=features.chroma_tuning, highpass_hz=controls.melody_highpass_hz)
    db = level_curve_db(fr["a_ms"], frame_hop_s=fr["hop_s"], hop_s=hop_d, n=n_d, range_db=features.level_range_db)
    out["dynamics"] = {"hop_s": hop_d, "db": [None if not np.isfinite(v) else round(float(v), 3) for v in db]}
    lead = next((p for p in parts if p.spec.role == "lead" and notes.get(p.name)), None)
    if lead is not None:
        hop_m = float(controls.render_melody_hop_s)
        n_m = int(math.floor(prompt_s / hop_m + 1e-9))
        midi: list[int | None] = []
        lead_notes = notes[lead.name]
        for k in range(n_m):
            t = (k + 0.5) * hop_m
            sounding = [x.pitch for x in lead_notes if x.start <= t < x.end]
            midi.append(max(sounding) if sounding and _audible(envelope, t, sr) else None)
        if any(m is not None for m in midi):
            out["melody"] = {"hop_s": hop_m, "midi": midi}
    pitched = [x for part in parts if not part.spec.is_drum for x in notes.get(part.name, [])]
    if grid is not None and harmony is not None and pitched:
        lo = min(x.start for x in pitched)
        hi = min(max(x.end for x in pitched), prompt_s)
        chords = []
        for bar in grid.bars(lo, hi):
            s, e = max(grid.time(bar, 0.0), lo), min(grid.time(bar + 1, 0.0), hi)
            if e - s > 1e-3:
                chords.append({"start_s": round(s, 6), "end_s": round(e, 6), "label": chord_label(harmony.chord(bar))})
        if chords:
            out["chords"] = chords
    drums = sorted({round(x.start, 6) for part in parts if part.spec.is_drum for x in notes.get(part.name, [])
                    if x.start <= prompt_s and _audible(envelope, x.start, sr)})
    if drums:
        out["drums_s"] = drums
    return out

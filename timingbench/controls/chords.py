"""Chords: madmom's deep-chroma chord recogniser, scored with mir_eval.chord (major/minor).

The recogniser (Korzeniowski and Widmer 2016: a deep chroma extractor and a CRF over
24 major/minor triads and no-chord, 10 frames/s) is the chord estimator that runs
offline here. Its vocabulary fixes the resolution: requested chords are compared at the
``majmin`` level of mir_eval (root and major/minor third; sevenths reduce to their triad;
chords outside major/minor, e.g. diminished, are left out of the comparison).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import soxr

from timingbench.audio import MADMOM_SR
from timingbench.controls.schema import Chord
from timingbench.memo import process_cache

F64 = npt.NDArray[np.float64]


@process_cache(maxsize=1)
def _processors() -> tuple[Any, Any]:
    from madmom.audio.chroma import DeepChromaProcessor
    from madmom.features.chords import DeepChromaChordRecognitionProcessor

    return DeepChromaProcessor(num_threads=1), DeepChromaChordRecognitionProcessor()


def recognise_chords(samples: npt.NDArray[np.floating], *, sr: int) -> list[Chord]:
    """Chord segments of a mono signal (labels ``C:maj``, ``A:min``, ``N``)."""
    x = np.asarray(samples, dtype=np.float32)
    if sr != MADMOM_SR:
        x = soxr.resample(x, sr, MADMOM_SR, quality="VHQ").astype(np.float32)
    from madmom.audio.signal import Signal

    chroma_proc, crf = _processors()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        segs = crf(chroma_proc(Signal(x, sample_rate=MADMOM_SR)))
    return [Chord(float(s), float(e), str(lab)) for s, e, lab in segs]


def chord_accuracy(requested: Sequence[Chord], produced: Sequence[Chord]) -> dict[str, Any]:
    """Duration-weighted majmin accuracy of produced against requested chords.

    Each requested segment is compared with every produced segment it overlaps, weighted
    by the overlap; where no produced segment covers it, the produced chord is ``N``.
    Comparisons mir_eval.chord.majmin leaves out (-1) are dropped from both sums.

    Returns
    -------
    scores : dict
        ``accuracy`` (None when nothing was comparable), ``scored_s`` (seconds compared).
    """
    import mir_eval

    refs: list[str] = []
    ests: list[str] = []
    durs: list[float] = []
    for rq in requested:
        covered = 0.0
        for pr in produced:
            d = min(rq.end_s, pr.end_s) - max(rq.start_s, pr.start_s)
            if d > 0:
                refs.append(rq.label)
                ests.append(pr.label)
                durs.append(d)
                covered += d
        gap = (rq.end_s - rq.start_s) - covered
        if gap > 1e-6:
            refs.append(rq.label)
            ests.append("N")
            durs.append(gap)
    if not refs:
        return {"accuracy": None, "scored_s": 0.0}
    comp = np.asarray(mir_eval.chord.majmin(refs, ests), dtype=np.float64)
    w = np.asarray(durs)
    ok = comp >= 0
    if not np.any(ok) or w[ok].sum() <= 0:
        return {"accuracy": None, "scored_s": 0.0}
    return {"accuracy": float(np.sum(comp[ok] * w[ok]) / np.sum(w[ok])), "scored_s": float(w[ok].sum())}

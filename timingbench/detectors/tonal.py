"""Tonal layers without a dedicated stem (strings, brass, woodwinds, keys, plucked, synth).

Three independent pieces of evidence (paper Sec. IV-B):

- **when** — a peak of the checkerboard novelty curve over timbre and harmony, refined to
  the nearest harmonic onset;
- **whether** — harmonic energy or a register band rises (falls, for exits) across it;
- **who** — the semantic family gate: the family's evidence must rise across the
  candidate and have been quiet before. Rejection-only; families the evidence backend
  cannot judge are ``exempt`` and disclosed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from timingbench.config import Config
from timingbench.detectors.base import Candidate, EventContext, Grid
from timingbench.gates import semantic_family


def _novelty_peaks(nov: np.ndarray, lo: int, hi: int, thresh: float) -> list[int]:
    lo, hi = max(lo, 1), min(hi, len(nov) - 1)
    if hi <= lo:
        return []
    seg = nov[lo - 1 : hi + 1]
    mid = seg[1:-1]
    idx = np.flatnonzero((mid > seg[:-2]) & (mid >= seg[2:]) & (mid >= thresh))
    return [int(i) + lo for i in idx]


def detect_tonal(
    bank: Any, ctx: EventContext, config: Config, *, family_evidence: Any = None
) -> list[Candidate]:
    """Candidates for an entrance or exit of a tonal layer.

    Parameters
    ----------
    bank : FeatureBank
        The clip's feature bank (novelty, harmonic onset and levels, band envelopes).
    ctx : EventContext
        The instructed event and its search window.
    config : Config
        Reads the ``tonal`` section (and the semantic gate's section).
    family_evidence : FamilyEvidence, optional
        Windowed family evidence; None -> the semantic gate is ``exempt``.

    Returns
    -------
    candidates : list of Candidate
    """
    grid = Grid(sr=bank.sr, hop=bank.hop, n_frames=bank.n_frames)
    nov = np.asarray(bank.novelty, dtype=np.float64)
    rel = config.value("tonal.novelty_peak_rel")
    top = float(nov.max()) if nov.size else 0.0
    if top <= 0:
        return []
    span = grid.span(ctx.window_lo_s, ctx.window_hi_s)
    peaks = _novelty_peaks(nov, span.start, span.stop, (rel or 0.0) * top)
    snap = grid.frames(config.value("tonal.snap_s") or 0.0)
    onset_h = np.asarray(bank.onset_harmonic, dtype=np.float64)
    rising = ctx.kind == "instrument_entry"
    win = config.value("tonal.rise_window_s")
    min_rise = config.value("tonal.min_rise_db")
    levels = {"harmonic": np.asarray(bank.harmonic_rms_db)} | {
        f"band_{k}": np.asarray(v) for k, v in bank.bands_db.items()
    }
    out: list[Candidate] = []
    for p in peaks:
        f = p
        if rising and snap > 0:
            lo, hi = max(p - snap, 0), min(p + snap + 1, grid.n)
            if hi > lo and onset_h[lo:hi].max() > 0:
                f = lo + int(np.argmax(onset_h[lo:hi]))
        t = grid.time(f)
        cand = Candidate(t, evidence={"novelty": round(float(nov[p] / top), 3), "novelty_s": round(grid.time(p), 4)})
        if win is None or min_rise is None:
            cand.gates["tonal_change"] = "pass"
        else:
            changes = {}
            for name, lv in levels.items():
                b, a = lv[grid.span(t - win, t)], lv[grid.span(t, t + win)]
                if b.size and a.size:
                    changes[name] = float(a.mean() - b.mean())
            if not changes:
                best = -np.inf
            elif rising:
                best = max(changes.values())
            else:
                best = -min(changes.values())
            cand.evidence["tonal_change"] = {k: round(v, 2) for k, v in changes.items()}
            cand.gates["tonal_change"] = "pass" if changes and best >= min_rise else "fail"
        if rising:
            v, e = semantic_family(family_evidence, ctx.family, t_s=t, config=config)
        else:
            v, e = "exempt", {"reason": "exit_identity_not_checked"}
        cand.gates["semantic_family"], cand.evidence["semantic_family"] = v, e
        out.append(cand)
    return out

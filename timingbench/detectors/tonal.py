"""Tonal layers without a dedicated stem (the families whose registry row has no ``stem``).

Three independent pieces of evidence (paper Sec. IV-B):

- **when** — a peak of the checkerboard novelty curve over timbre and harmony, refined to
  the step of the register that changed (the new layer's own onset, not the kernel's
  centre);
- **whether** — a register (a block of adjacent log-mel bands) rises across the refined
  time (falls, for exits); an entrance's register must also have been absent from the
  clip before it (whole-clip bound), an exit's must stay absent after it;
- **who** — not decided here: every candidate names the family evidence as what its
  identity rests on, and the scorer applies the identity gate
  (:func:`timingbench.scoring.run_detector`).

Every candidate keeps the time it was refined to; no gate moves it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import numpy.typing as npt

from timingbench.curves import Grid, accent, local_peaks, window_means
from timingbench.errors import ParameterError
from timingbench.memo import memoised
from timingbench.params.base import zero_if_off
from timingbench.params.detectors import TonalParams
from timingbench.verdicts import EXEMPT, FAIL, PASS, Candidate, EventContext

if TYPE_CHECKING:
    from timingbench.features.bank import FeatureBank

F64 = npt.NDArray[np.float64]
_T = TypeVar("_T")

# The constants each memoised step of the register analysis reads (its memo key,
# :mod:`timingbench.memo`); the registers' layout (source and width) is an input of each.
REGISTER_READS = ("rise_window_s", "guard_s", "whole_percentile", "windows.strict_s", "absent_after_percentile")
STEP_READS = ("snap_s", "step_window_s")
SNAP_READS = ("onset_back_s", "guard_s", "onset_rel_height")
MEASURE_READS = REGISTER_READS
WINDOW_READS = tuple(dict.fromkeys(("novelty_peak_rel", "register_source", "register_width_bands",
                                    *REGISTER_READS, *STEP_READS, *SNAP_READS, *MEASURE_READS)))


def _novelty_peaks(nov: F64, lo: int, hi: int, thresh: float) -> list[int]:
    """Novelty peaks in ``[lo, hi)`` reaching ``thresh`` (never the curve's first or last frame)."""
    return [int(f) for f in local_peaks(nov, max(lo, 1), min(hi, len(nov) - 1), edges="neighbours",
                                        strict_left=True, min_value=thresh)]


def register_levels(logmel: npt.NDArray[np.floating[Any]], *, width: int) -> F64:
    """Mean log-mel level (dB) of blocks of ``width`` adjacent mel bands.

    Parameters
    ----------
    logmel : np.ndarray, shape (n_mels, n_frames)
        Log-mel power in dB.
    width : int
        Bands per register; the last register takes the remainder.

    Returns
    -------
    levels : np.ndarray of float64, shape (n_registers, n_frames)
    """
    m = np.asarray(logmel, dtype=np.float64)
    edges = list(range(0, m.shape[0], max(1, width)))
    return np.stack([m[a : a + width].mean(axis=0) for a in edges])


def harmonic_logmel(bank: FeatureBank) -> npt.NDArray[np.float32]:
    """Log-mel power (dB) of the bank's harmonic part (median-filtering HPSS).

    Parameters
    ----------
    bank : FeatureBank
        Supplies ``samples``, ``sr`` and ``params`` (FFT, hop, mel and HPSS settings).

    Returns
    -------
    logmel : np.ndarray of float32, shape (n_mels, n_frames)
        On the same frames as ``bank.logmel``; sustained partials keep their level while
        drum transients, which raise every register at once, are removed.
    """
    return bank.harmonic_logmel()


def _register_source(bank: FeatureBank, source: str) -> npt.NDArray[np.floating[Any]]:
    if source == "mix":
        return np.asarray(bank.logmel)
    if source == "harmonic":
        return bank.derived("tonal:harmonic_logmel", harmonic_logmel)  # type: ignore[no-any-return]
    raise ParameterError(f"tonal.register_source must be 'mix' or 'harmonic', got {source!r}")


def _mean(x: F64, sl: slice) -> F64 | None:
    seg = x[:, sl]
    return seg.mean(axis=1) if seg.shape[1] else None


def _step_frame(lv: F64, lo: int, hi: int, half: int, *, rising: bool) -> int | None:
    """Frame in ``[lo, hi)`` with the largest short-window step of ``lv`` (rise or fall)."""
    lo, hi = max(lo, half), min(hi, lv.size - half)
    if hi <= lo:
        return None
    f = np.arange(lo, hi)
    before, after = window_means(np.asarray(lv, dtype=np.float64), before=half, after=half, edges="nan", at=f)
    step = after - before if rising else before - after
    return int(f[int(np.argmax(step))])


def _snap_onset(onset: F64, lo: int, hi: int, rel: float) -> int | None:
    """Earliest local peak in ``[lo, hi)`` reaching ``rel`` of the span's maximum."""
    return accent(onset, max(lo, 1), min(hi, onset.size - 1), rel_height=rel, edges="neighbours")


def detect_tonal(bank: FeatureBank, ctx: EventContext, params: TonalParams) -> list[Candidate]:
    """Candidates for an entrance or exit of a tonal layer.

    Parameters
    ----------
    bank : FeatureBank
        The clip's feature bank (novelty, log-mel, harmonic onset).
    ctx : EventContext
        The instructed event and its search window.
    params : TonalParams
        The ``tonal`` section.

    Returns
    -------
    candidates : list of Candidate
        One per distinct refined time; empty when the window holds no novelty peak whose
        register change can be localised.
    """
    grid = bank.grid
    nov = np.asarray(bank.novelty, dtype=np.float64)
    if not nov.size or float(nov.max()) <= 0:
        return []
    rising = ctx.kind == "instrument_entry"
    width = params.register_width_bands
    source = params.register_source
    levels = bank.derived(f"tonal:registers:{source}:w={width}",
                          lambda b: register_levels(_register_source(b, source), width=width))
    onset_h = np.asarray(bank.onset_harmonic, dtype=np.float64)

    span = grid.span(ctx.window_lo_s, ctx.window_hi_s)
    clip_end_s = float(bank.duration_s)
    window = memoised(bank, "tonal-window", params, WINDOW_READS,
                      partial(_measured_peaks, bank, levels, onset_h, nov, span, grid=grid, rising=rising,
                              clip_end_s=clip_end_s),
                      span.start, span.stop, rising, clip_end_s)
    return [_gated(m, p, grid=grid, rising=rising, nov=nov, params=params) for p, m in window]


def _measured_peaks(
    bank: FeatureBank, levels: F64, onset_h: F64, nov: F64, span: slice, params: TonalParams, *, grid: Grid,
    rising: bool, clip_end_s: float,
) -> list[tuple[int, _PeakMeasure]]:
    """Every novelty peak of a window with its refined frame and gate statistics (one per distinct frame).

    Each step is memoised per bank under what it reads: no threshold is part of any key,
    so re-scoring with another threshold (the sweep) reuses every measurement.
    """
    peaks = _novelty_peaks(nov, span.start, span.stop, zero_if_off(params.novelty_peak_rel))
    back = grid.frames(zero_if_off(params.onset_back_s))
    layout = (params.register_source, params.register_width_bands)  # what ``levels`` is
    out: list[tuple[int, _PeakMeasure]] = []
    seen: set[int] = set()
    for p in peaks:
        reg = memoised(bank, "tonal-register", params, REGISTER_READS,
                       partial(_changed_register, levels, p, grid=grid, rising=rising, clip_end_s=clip_end_s),
                       *layout, p, rising, clip_end_s)
        if reg is None:
            continue
        f = memoised(bank, "tonal-step", params, STEP_READS,
                     partial(_snapped_step, levels[reg], p, grid=grid, rising=rising), *layout, reg, p,
                     rising)
        if f is None:
            continue
        if rising and back > 0 and params.onset_rel_height is not None:
            s = memoised(bank, "tonal-snap", params, SNAP_READS, partial(_snapped_onset, onset_h, f, grid=grid), f)
            f = s if s is not None else f
        if f in seen:
            continue
        seen.add(f)
        out.append((p, memoised(bank, "tonal-stats", params, MEASURE_READS,
                                partial(_measure, levels, f, reg, grid=grid, rising=rising, clip_end_s=clip_end_s),
                                *layout, reg, f, rising, clip_end_s)))
    return out


def _snapped_step(lv: F64, p: int, params: TonalParams, *, grid: Grid, rising: bool) -> int | None:
    """:func:`_step_frame` within ``tonal.snap_s`` of the novelty peak ``p``."""
    snap = grid.frames(zero_if_off(params.snap_s))
    return _step_frame(lv, p - snap, p + snap + 1, grid.frames(params.step_window_s), rising=rising)


def _snapped_onset(onset_h: F64, f: int, params: TonalParams, *, grid: Grid) -> int | None:
    """:func:`_snap_onset` from ``tonal.onset_back_s`` before frame ``f`` to ``tonal.guard_s`` after it."""
    if params.onset_rel_height is None:
        return None
    return _snap_onset(onset_h, f - grid.frames(zero_if_off(params.onset_back_s)), f + grid.frames(params.guard_s) + 1,
                       params.onset_rel_height)


@dataclass(frozen=True)
class _PeakMeasure:
    """What a novelty peak's candidate rests on, before any threshold is applied."""

    frame: int
    register: int
    change_db: float | None
    whole_rise_db: float | None
    after_drop_db: float | None


def _measure(levels: F64, f: int, reg: int, params: TonalParams, *, grid: Grid, rising: bool,
             clip_end_s: float) -> _PeakMeasure:
    """The gate statistics of a candidate at frame ``f`` in register ``reg``, before any threshold."""
    win, guard = grid.frames(params.rise_window_s), grid.frames(params.guard_s)
    lv = levels[reg]
    before = lv[max(f - guard - win, 0) : max(f - guard, 0)]
    after = lv[f + guard : f + guard + win]
    change = float(after.mean() - before.mean()) if before.size and after.size else None
    if rising:
        return _PeakMeasure(f, reg, change, _whole_rise(lv, f, after, grid=grid, guard=guard, params=params), None)
    return _PeakMeasure(f, reg, change, None, _after_drop(lv, f, before, grid=grid, guard=guard,
                                                          clip_end_s=clip_end_s, params=params))


def _changed_register(levels: F64, p: int, params: TonalParams, *, grid: Grid, rising: bool,
                      clip_end_s: float) -> int | None:
    """The register that both steps across frame ``p`` and is new to the clip there.

    For an entrance: the smaller of the local rise (1 s either side) and the rise over the
    register's bulk level on the whole clip before; for an exit: the smaller of the local
    fall and the fall to its high level over the absence window after. The register with
    the largest such score is the new (or departing) layer's.
    """
    win, guard = grid.frames(params.rise_window_s), grid.frames(params.guard_s)
    b0 = _mean(levels, slice(max(p - guard - win, 0), max(p - guard, 0)))
    a0 = _mean(levels, slice(p + guard, p + guard + win))
    if b0 is None or a0 is None:
        return None
    if rising:
        pct = params.whole_percentile
        whole = levels[:, : max(p - guard, 0)]
        score = a0 - b0
        if whole.shape[1]:
            score = np.minimum(score, a0 - np.percentile(whole, pct, axis=1))
    else:
        w, pct = params.windows.strict_s, params.absent_after_percentile
        score = b0 - a0
        t = grid.time(p + guard)
        seg = levels[:, grid.span(t, min(t + w, clip_end_s))]
        if seg.shape[1]:
            score = np.minimum(score, b0 - np.percentile(seg, pct, axis=1))
    return int(np.argmax(score))


def _gated(
    m: _PeakMeasure, p: int, *, grid: Grid, rising: bool, nov: F64, params: TonalParams,
) -> Candidate:
    t = grid.time(m.frame)
    cand = Candidate(t, stats={"novelty": round(float(nov[p]), 3), "novelty_s": round(grid.time(p), 4),
                                  "register": m.register})
    change = m.change_db
    cand.stats["tonal_change"] = {"register_change_db": None if change is None else round(change, 2)}
    min_change = params.min_rise_db if rising else params.min_fall_db
    if min_change is None:
        cand.gates["tonal_change"] = EXEMPT
    elif change is None:
        cand.gates["tonal_change"] = FAIL
    else:
        ok = change >= min_change if rising else -change >= min_change
        cand.gates["tonal_change"] = PASS if ok else FAIL

    if rising:
        cand.gates["register_absent_before"] = _judge(m.whole_rise_db, params.whole_rise_db,
                                                      "register_absent_before", "whole_rise_db", cand.stats)
    else:
        cand.gates["register_absent_after"] = _judge(m.after_drop_db, params.absent_after_db,
                                                     "register_absent_after", "after_drop_db", cand.stats)
    cand.identity = "family"
    return cand


def _judge(stat: float | None, need: float | None, gate: str, name: str, evidence: dict[str, Any]) -> str:
    """``stat >= need``; ``exempt`` (and no statistic recorded) when ``need`` is switched off, ``fail`` without a
    statistic."""
    if need is None:
        return EXEMPT
    if stat is None:
        evidence[gate] = {name: None}
        return FAIL
    evidence[gate] = {name: round(stat, 2)}
    return PASS if stat >= need else FAIL


def _whole_rise(lv: F64, f: int, after: F64, *, grid: Grid, guard: int, params: TonalParams) -> float | None:
    """How far the register after the entrance stands above its level over the whole clip before (dB).

    None when the span before is shorter than ``windows.strict_s`` or nothing follows.
    """
    whole = lv[: max(f - guard, 0)]
    if whole.size < grid.frames(params.windows.strict_s) or not after.size:
        return None
    return float(after.mean() - np.percentile(whole, params.whole_percentile))


def _after_drop(lv: F64, f: int, before: F64, *, grid: Grid, guard: int, clip_end_s: float,
                params: TonalParams) -> float | None:
    """How far the register stays under its level before the exit over the window after it (dB).

    None when the window runs past the end of the audio or a side is empty.
    """
    w = params.windows.strict_s
    t = grid.time(f + guard)
    if t + w > clip_end_s:
        return None
    seg = lv[grid.span(t, t + w)]
    if not seg.size or not before.size:
        return None
    return float(before.mean() - np.percentile(seg, params.absent_after_percentile))

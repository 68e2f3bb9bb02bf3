"""Percussion entrances and exits on a rectified onset density (paper Sec. IV-B).

The routed onset curve is the onset strength of the drums signal: the demucs drum stem,
or with the ``dsp`` fallback the strict percussive power in the bands where drum kits
live (:func:`timingbench.features.separation.route_percussion`), because the plain HPSS
percussive part also carries every piano, mallet and guitar attack. Its rectified density
is the trailing 1 s mean of the curve above its leading-window noise floor: it rises at
the first hit of a train and falls one window after the last. Detections snap to the
underlying accent. Entrance absence is checked on the *unrectified* routed envelope so
quiet pre-existing percussion cannot be erased by the rectification.

Identity is not decided here: a candidate found on the drum stem names the stem as what
its identity rests on; one of the ``dsp`` route with ``percussion.semantic_with_dsp`` (an
entrance), or of the low route, whose band also carries bass attacks, names the family
evidence. The scorer applies the identity gate (:func:`timingbench.scoring.run_detector`).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from timingbench.convert import seconds_to_frame_count
from timingbench.curves import Grid, accent, falling_crossings, moving_average, rising_crossings
from timingbench.errors import ConfigError
from timingbench.features.kernels import hysteresis, rectified_onset_density
from timingbench.gates import (
    absence_after,
    absence_levels,
    judge_absence_before,
    level_change,
    persistence,
)
from timingbench.memo import memo_key, memoised, persisted
from timingbench.params.analysis import FeaturesParams
from timingbench.params.detectors import PercussionParams
from timingbench.verdicts import FAIL, Candidate, EventContext, GateVerdict

if TYPE_CHECKING:
    from timingbench.features.bank import FeatureBank

F64 = npt.NDArray[np.float64]
#: The constants the dsp route's curves read (their memo key, :mod:`timingbench.memo`).
ROUTE_READS = ("route_margin", "route_band_floor_percentile", "envelope_smooth_s", "route_sub_hz",
               "route_high_hz", "route_low_hz", "route_low_top_hz")
#: The constants :func:`percussion_curves` reads.
CURVE_READS = (*ROUTE_READS, "floor_percentile", "density_window_s", "reference_percentile", "present_rel",
               "absent_rel")
#: The constants :func:`_absence_measures` reads (the curves it is handed are an input).
ABSENCE_READS = ("absence.absence_guard_s", "absence.windows.strict_s",
                 "absence.absence_strict_percentile", "absence.absence_whole_percentile",
                 "absence_density_percentile", "absence_density_whole_percentile")


@dataclass(frozen=True)
class PercussionCurves:
    """What the percussion detector reads for one clip, on the bank's grid.

    Attributes
    ----------
    onset : np.ndarray, shape (n,)
        Routed onset strength (dB per frame).
    envelope_db : np.ndarray, shape (n,)
        Unrectified level of the routed signal, dBFS.
    loud_level_db : float
        ``features.loud_percentile`` percentile of ``envelope_db``.
    density : np.ndarray, shape (n,)
        Rectified onset density (trailing-window mean above the noise floor).
    reference : float
        The density's own loud level (``reference_percentile`` percentile).
    present : np.ndarray of bool, shape (n,)
        Hysteresis of the density against its own reference.
    route : str
        ``dsp-route`` | ``demucs``.
    """

    onset: F64
    envelope_db: F64
    loud_level_db: float
    density: F64
    reference: float
    present: npt.NDArray[np.bool_]
    route: str


def _routed_stem(bank: FeatureBank, params: PercussionParams, route: str,
                 features: FeaturesParams) -> tuple[F64, F64, float, str]:
    bank.require_params(features, reader="percussion")
    if bank.separation_backend != "dsp":
        stem = bank.stem("drums")
        return (np.asarray(stem.onset, dtype=np.float64), np.asarray(stem.envelope_db, dtype=np.float64),
                float(stem.loud_level_db), str(stem.backend))

    def compute(params: PercussionParams) -> dict[str, Any]:
        from timingbench.features import spectral as sp
        from timingbench.features.separation import route_percussion, route_percussion_low

        if route == "low":
            if params.route_low_hz is None or params.route_low_top_hz is None:
                raise ConfigError("constant 'percussion.route_low_top_hz' is disabled; the low route needs it")
            a, b = params.route_low_hz, params.route_low_top_hz
        else:
            a, b = params.route_sub_hz, params.route_high_hz
        bk, p, margin = bank, features, params.route_margin
        hp, pp = bk.hpss()
        basis = sp.mel_basis(sr=bk.sr, n_fft=p.n_fft, n_mels=p.n_mels)
        if route == "low":
            routed = route_percussion_low(hp, pp, sr=bk.sr, n_fft=p.n_fft, margin=margin, lo_hz=a, hi_hz=b)
            # only the mel bands the band reaches: empty bands would dilute its flux and level
            freqs = np.arange(basis.shape[1]) * (bk.sr / p.n_fft)
            reach = np.asarray(basis[:, (freqs >= a) & (freqs < b)].sum(axis=1)).ravel()
            basis = basis[np.flatnonzero(reach > 0)]
        else:
            routed = route_percussion(hp, pp, sr=bk.sr, n_fft=p.n_fft, margin=margin, sub_hz=a, high_hz=b)
        mel_power = np.asarray(basis @ routed, dtype=np.float64)
        return _route_features(mel_power, mel_ref=bk.mel_ref, db_range=p.db_range,
                               band_floor_pct=params.route_band_floor_percentile, loud_pct=p.loud_percentile,
                               smooth_frames=seconds_to_frame_count(params.envelope_smooth_s, sr=bk.sr, hop=p.hop))

    d = persisted(bank, f"percussion-route-{route}", params, ROUTE_READS, compute)
    return (np.asarray(d["onset"], dtype=np.float64), np.asarray(d["envelope_db"], dtype=np.float64),
            float(d["loud_level_db"]), "dsp-route" if route == "high" else "dsp-low-route")


def _route_features(
    mel_power: F64, *, mel_ref: float, db_range: float, band_floor_pct: float, loud_pct: float,
    smooth_frames: int,
) -> dict[str, Any]:
    """Onset and envelope of the routed drums above each mel band's own steady level.

    Steady bleed sets a band's floor (``band_floor_pct`` percentile of its level over the
    clip); only what rises above it counts, both for the log-mel flux (onset) and for the
    envelope (the mean over bands of the level above the band's floor, dB, averaged over
    ``smooth_frames`` centred frames so that the gaps between hits do not read as
    absence). Both are gain-invariant.
    """
    floor_power = np.percentile(mel_power, band_floor_pct, axis=1, keepdims=True)
    ref = max(float(mel_ref), np.finfo(np.float64).tiny)
    lo = ref * 10.0 ** (-float(db_range) / 10.0)
    mel_db = 10.0 * np.log10(np.maximum(np.maximum(mel_power, floor_power), lo) / ref)
    onset = np.zeros(mel_power.shape[1])
    if mel_power.shape[1] > 1:
        onset[1:] = np.maximum(np.diff(mel_db, axis=1), 0.0).mean(axis=0)
    floor_db = 10.0 * np.log10(np.maximum(floor_power, lo) / ref)
    lift = (mel_db - floor_db).mean(axis=0)
    k = max(1, int(smooth_frames))
    env = moving_average(lift, k, edges="zero")
    return {"onset": onset, "envelope_db": env, "loud_level_db": float(np.percentile(env, loud_pct))}


def percussion_routes(bank: FeatureBank, params: PercussionParams) -> tuple[str, ...]:
    """The routes a clip's percussion is read on.

    ``("stem",)`` with a separated drum stem; with the dsp fallback the sub/high route,
    plus the low-band route when ``percussion.route_low_hz`` is enabled.
    """
    if bank.separation_backend != "dsp":
        return ("stem",)
    return ("high", "low") if params.route_low_hz is not None else ("high",)


def percussion_curves(bank: FeatureBank, params: PercussionParams, route: str = "high", *,
                      features: FeaturesParams) -> PercussionCurves:
    """Routed onset, envelope, rectified density and presence of a clip's percussion.

    Parameters
    ----------
    bank : FeatureBank
        The clip's feature bank.
    params : PercussionParams
        The ``percussion`` section.
    route : str
        ``high`` (sub/high bands) or ``low`` (low band) with the dsp fallback; ignored
        with a separated drum stem.
    features : FeaturesParams
        The ``features`` section the bank was built with.

    Returns
    -------
    curves : PercussionCurves

    Raises
    ------
    ConfigError
        If the low route is asked for while ``route_low_top_hz`` is switched off.
    ParameterError
        If ``features`` are not the bank's.
    """
    grid = bank.grid
    onset, env, loud, name = _routed_stem(bank, params, route, features)
    floor = float(np.percentile(onset, params.floor_percentile))
    dens = rectified_onset_density(onset, window_frames=grid.frames(params.density_window_s), floor=floor)
    ref = float(np.percentile(dens, params.reference_percentile))
    hi = params.present_rel
    lo = min(params.absent_rel, hi)
    present = hysteresis(dens, high=hi * ref, low=lo * ref) if ref > 0 else np.zeros(dens.size, dtype=bool)
    return PercussionCurves(onset, env, loud, dens, ref, present, name)


def route_curves(bank: FeatureBank, params: PercussionParams, route: str = "high", *,
                 features: FeaturesParams) -> PercussionCurves:
    """:func:`percussion_curves`, memoised per bank under the constants it reads (:data:`CURVE_READS`).

    ``features`` are the bank's own (its identity, so not part of the key); other ones raise.
    """
    return memoised(bank, "percussion-curves", params, CURVE_READS,
                    partial(percussion_curves, bank, route=route, features=features), route)


def curves_key(params: PercussionParams, route: str) -> tuple[Hashable, ...]:
    """The memo key of :func:`route_curves`: an input of a memo computed from those curves."""
    return memo_key("percussion-curves", params, CURVE_READS, (route,))


def detect_percussion(
    bank: FeatureBank, ctx: EventContext, params: PercussionParams, *, features: FeaturesParams,
) -> list[Candidate]:
    """Candidates for a percussion ``instrument_entry`` or ``instrument_exit``.

    Parameters
    ----------
    bank : FeatureBank
        The clip's feature bank (samples, frame grid, drum stem when separated by demucs).
    ctx : EventContext
        The instructed event and its search window.
    params : PercussionParams
        The ``percussion`` section (gate constants under ``percussion.*``).
    features : FeaturesParams
        The ``features`` section the bank was built with (the routes' STFT grid, mel bands
        and level range).

    Returns
    -------
    candidates : list of Candidate
        Empty when the density never crosses inside the window.
    """
    out: list[Candidate] = []
    on_evidence = (params.semantic_with_dsp and bank.stem("drums").backend != "demucs"
                   and ctx.kind == "instrument_entry")
    for route in percussion_routes(bank, params):
        cur = route_curves(bank, params, route, features=features)
        for cand in _route_candidates(bank, cur, ctx, params):
            cand.identity = "family" if route == "low" or on_evidence else "stem"
            out.append(cand)
    return out


def _route_candidates(bank: FeatureBank, cur: PercussionCurves, ctx: EventContext,
                      params: PercussionParams) -> list[Candidate]:
    """Candidates of one route, every gate read on that route's own curves and references."""
    grid = bank.grid
    span = grid.span(ctx.window_lo_s, ctx.window_hi_s)
    lo, hi = span.start, span.stop
    win = grid.frames(params.density_window_s)
    # a demucs drums stem holds no bleed: its first hit is snapped to at a lower share of the local maximum
    rel = params.accent_rel_height_stem if cur.route == "demucs" else params.accent_rel_height
    end_s = bank.duration_s
    out: list[Candidate] = []

    def candidate_at(f: int | None, c: int) -> Candidate | None:
        """The candidate at accent frame ``f`` of the crossing at ``c``; None without one in the window."""
        if f is None:
            return None
        t = grid.time(f)
        if not ctx.window_lo_s <= t <= ctx.window_hi_s:
            return None
        return Candidate(t, stats={"crossing_s": round(grid.time(c), 4), "route": cur.route})

    if ctx.kind == "instrument_entry":
        # a demucs drums stem isolates the kit: its absent density is lower than the dsp routes' bleed
        quiet = (params.snap_quiet_rel_stem if cur.route == "demucs" else params.snap_quiet_rel) * cur.reference
        back = grid.frames(params.snap_lookback_s)
        for c in rising_crossings(cur.present, lo, min(hi + win, grid.n)):
            start = max(_train_start(cur.density, c - win, c, quiet) - back, c - win)
            cand = candidate_at(accent(cur.onset, start, c + 1, rel_height=rel, edges="open"), c)
            if cand is None:
                continue
            t = cand.time_s
            cand.apply("absence_before", _absence_before(bank, cur, grid, t_s=t, params=params))
            cand.apply("persistence", persistence(cur.present, grid, t_s=grid.time(c), clip_end_s=end_s,
                                                  want_present=True, params=params.persistence))
            cand.apply("level_change", level_change(cur.envelope_db, grid, t_s=t, rising=True, params=params.level))
            out.append(cand)
    else:
        for c in falling_crossings(cur.present, lo, min(hi + win, grid.n)):
            # the density falls one window after the last hit: search that window for it
            cand = candidate_at(accent(cur.onset, c - win - 1, c, rel_height=rel, edges="interior", last=True), c)
            if cand is None:
                continue
            t = cand.time_s
            cand.apply("absence_after", absence_after(cur.envelope_db, grid, t_s=t, ref_db=cur.loud_level_db,
                                                      clip_end_s=end_s, params=params.absence))
            cand.apply("persistence", persistence(cur.present, grid, t_s=grid.time(c), clip_end_s=end_s,
                                                  want_present=False, params=params.persistence))
            cand.apply("level_change", level_change(cur.envelope_db, grid, t_s=t, rising=False,
                                                    params=params.level))
            out.append(cand)
    return out


def _train_start(density: F64, lo: int, hi: int, quiet: float) -> int:
    """First frame of the train that crosses at ``hi``: one past the density's last frame under ``quiet`` in
    ``[lo, hi)``.

    ``lo`` (clipped to the grid) when the density never dips under ``quiet`` there.
    """
    lo, hi = max(lo, 0), min(hi, len(density))
    under = np.flatnonzero(density[lo:hi] < quiet)
    return int(under[-1]) + lo + 1 if under.size else lo


def _absence_before(bank: FeatureBank, cur: PercussionCurves, grid: Grid, *, t_s: float,
                    params: PercussionParams) -> GateVerdict:
    """Absence before an entrance: the routed envelope at two scales and the density over the strict window.

    The envelope reads quiet percussion that the rectification would erase; the density
    reads a train that merely paused before the instructed time (its hits are transient,
    so the envelope's percentile can fall between them).
    """
    levels, rels = memoised(bank, "percussion-absence", params, ABSENCE_READS,
                            lambda p: _absence_measures(cur, grid, t_s=t_s, params=p),
                            curves_key(params, cur.route), t_s)
    verdict, ev = judge_absence_before(levels, ref_db=cur.loud_level_db, params=params.absence)
    ev = dict(ev)
    for name, rel in zip(("strict_density_rel", "whole_density_rel"), rels, strict=True):
        ev[name] = None if rel is None else round(rel, 3)
        if rel is not None and rel > params.absence_density_max_rel:
            verdict = FAIL
    return verdict, ev


def _absence_measures(cur: PercussionCurves, grid: Grid, *, t_s: float,
                      params: PercussionParams) -> tuple[Any, list[float | None]]:
    """The envelope levels and the density's share of its reference before ``t_s`` (no threshold applied)."""
    guard = params.absence.absence_guard_s
    win = params.absence.windows.strict_s
    rels: list[float | None] = []
    for t0, q in ((t_s - guard - win, params.absence_density_percentile),
                  (0.0, params.absence_density_whole_percentile)):
        seg = cur.density[grid.span(t0, t_s - guard)]
        rels.append(None if not seg.size or cur.reference <= 0 else float(np.percentile(seg, q)) / cur.reference)
    return absence_levels(cur.envelope_db, grid, t_s=t_s, params=params.absence), rels

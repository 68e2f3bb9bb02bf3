"""Clip tempo from RNN + DBN beat tracking, and scoring against an instructed BPM.

Paper Sec. IV-B: beat times come from madmom's RNN beat processor (an ensemble of
bidirectional LSTMs on a 100 frames/s grid) decoded by its dynamic Bayesian network;
inter-beat intervals (IBIs) are trimmed to their 5-95th percentile range, and the clip
tempo is the mean of their reciprocals, in BPM.

A tempo is reported whenever the clip carries a pulse: at least ``tempo.min_beats``
beats that the network actually hears, with a median beat activation at or above
``tempo.min_beat_activation``. Otherwise ``estimate_bpm`` is ``None`` with a reason, so a
tempo prompt can never be credited by accident on beatless audio (noise, drones, pads).
Beat-to-beat stability is reported beside the estimate (``beat_stability``, with a
``steady`` flag), as in the paper; it never withholds the estimate.

Beside the paper's estimator, :func:`tempo_from_beat_line` gives a second, more precise
one (``precise_bpm``): the slope of a least-squares line through beat time against beat
number. It is reported, never used for credit.

Module layout follows the rest of the package: :func:`beat_times` (the tracker),
:func:`tempo_from_beats`, :func:`tempo_from_beat_line` and :func:`beat_stability` (metric
functions on plain arrays in seconds), :func:`estimate_tempo` (evaluate a clip) and
:func:`score_tempo` (the ``clips.jsonl`` ``tempo`` object, formats §3).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import soxr

from timingbench.audio import MADMOM_SR, level_normalised
from timingbench.convert import frames_to_time
from timingbench.errors import ParameterError
from timingbench.memo import process_cache
from timingbench.params.analysis import AudioParams
from timingbench.params.detectors import TempoParams

#: Reasons for a missing estimate (stable strings; scripts may match on the prefix).
REASON_SILENT = "silent"
REASON_TOO_SHORT = "too short"
REASON_TOO_FEW_BEATS = "too few beats"
REASON_NO_PULSE = "no pulse"


@dataclass(frozen=True)
class TempoEstimate:
    """The tempo of one clip and the beat evidence behind it.

    Attributes
    ----------
    estimate_bpm : float or None
        Clip tempo in beats per minute (paper Sec. IV-B: trimmed-IBI reciprocal mean);
        ``None`` when the clip carries no pulse (see ``reason``).
    beats_s : np.ndarray of float64, shape (n,)
        Beat times in seconds from the start of the clip (possibly empty).
    reason : str or None
        Why there is no estimate (``silent``, ``too short``, ``too few beats: ...``,
        ``no pulse: ...``); ``None`` when ``estimate_bpm`` is a number.
    beat_stability : dict
        ``ibi_cv`` (float or None), ``longest_steady_run_s`` (float, seconds),
        ``steady_run_fraction`` (float, of the beat span), ``beat_activation``
        (median RNN activation at the beats, float or None), ``n_beats`` (int),
        ``n_heard_beats`` (beats with activation >= ``tempo.min_beat_activation``),
        ``has_pulse`` (bool), ``steady`` (bool) and ``unsteady_because`` (list of
        failed checks).
    precise_bpm : float or None
        The beat-line tempo (:func:`tempo_from_beat_line`) in BPM, reported beside
        ``estimate_bpm``; ``None`` whenever ``estimate_bpm`` is.
    """

    estimate_bpm: float | None
    beats_s: npt.NDArray[np.float64]
    reason: str | None
    beat_stability: dict[str, Any] = field(default_factory=dict)
    precise_bpm: float | None = None


@process_cache(maxsize=4)
def _rnn_processor(fps: int, num_threads: int, intra_op_num_threads: int) -> Any:
    from madmom.features.beats import RNNBeatProcessor

    return RNNBeatProcessor(
        fps=fps, num_threads=num_threads, intra_op_num_threads=intra_op_num_threads
    )


@process_cache(maxsize=8)
def _dbn_processor(
    fps: int,
    min_bpm: float,
    max_bpm: float,
    transition_lambda: float,
    observation_lambda: int,
    correct: bool,
) -> Any:
    from madmom.features.beats import DBNBeatTrackingProcessor

    return DBNBeatTrackingProcessor(
        fps=fps,
        min_bpm=min_bpm,
        max_bpm=max_bpm,
        transition_lambda=transition_lambda,
        observation_lambda=observation_lambda,
        correct=correct,
    )


def _validate_samples(samples: np.ndarray, sr: int) -> npt.NDArray[np.float32]:
    x = np.asarray(samples)
    if x.ndim != 1:
        raise ParameterError(
            f"samples must be a mono 1-D array, got shape {x.shape}; decode with "
            "timingbench.audio.load_clip"
        )
    if int(sr) != sr or sr <= 0:
        raise ParameterError(f"sr must be a positive whole number of Hz, got {sr!r}")
    if not np.issubdtype(x.dtype, np.floating):
        raise ParameterError(f"samples must be floating point in [-1, 1], got dtype {x.dtype}")
    if not np.all(np.isfinite(x)):
        raise ParameterError("samples contain NaN or inf")
    return np.ascontiguousarray(x, dtype=np.float32)


def _refine_peaks(
    activation: npt.NDArray[np.float64], frames: npt.NDArray[np.int64]
) -> npt.NDArray[np.float64]:
    """Fractional frame of each activation peak (vertex of the parabola through 3 frames)."""
    out = frames.astype(np.float64)
    inner = (frames > 0) & (frames < len(activation) - 1)
    f = frames[inner]
    left, mid, right = activation[f - 1], activation[f], activation[f + 1]
    denom = left - 2.0 * mid + right
    ok = denom < 0  # a true local maximum (concave)
    delta = np.zeros_like(mid)
    delta[ok] = 0.5 * (left[ok] - right[ok]) / denom[ok]
    out[inner] += np.clip(delta, -0.5, 0.5)
    return out


def beat_times(
    samples: np.ndarray, *, sr: int, tempo: TempoParams, audio: AudioParams
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Beat times of a mono signal from madmom's RNN beat processor and DBN decoding.

    Parameters
    ----------
    samples : np.ndarray of float, shape (n,)
        Mono signal in [-1, 1].
    sr : int
        Sample rate of ``samples`` in Hz (resampled to 44.1 kHz when different).
    tempo : TempoParams
        The tracker: ``beat_fps``, ``min_bpm``, ``max_bpm``, ``dbn_*``, ``beat_refine``,
        ``num_threads``, ``intra_op_num_threads`` and ``input_loud_level_dbfs``.
    audio : AudioParams
        The level normalisation (``level_frame_s``, ``level_percentile``).

    Returns
    -------
    beats_s : np.ndarray of float64, shape (b,)
        Beat times in seconds, increasing.
    beat_activation : np.ndarray of float64, shape (b,)
        The RNN beat activation (0-1) at each beat's frame.

    Raises
    ------
    ParameterError
        If ``samples`` is not a finite 1-D float array or ``sr`` is not positive.
    """
    x = _validate_samples(samples, sr)
    if sr != MADMOM_SR:
        x = soxr.resample(x, sr, MADMOM_SR, quality="VHQ").astype(np.float32)
    # madmom's log spectrogram is not gain-invariant: feed it the clip at a fixed loud level
    x = level_normalised(x, sr=MADMOM_SR, loud_dbfs=tempo.audio.input_loud_level_dbfs,
                         frame_s=audio.level_frame_s,
                         percentile=audio.level_percentile)
    rnn = _rnn_processor(tempo.beat_fps, tempo.num_threads, tempo.intra_op_num_threads)
    dbn = _dbn_processor(
        tempo.beat_fps,
        float(tempo.min_bpm),
        float(tempo.max_bpm),
        float(tempo.dbn_transition_lambda),
        tempo.dbn_observation_lambda,
        tempo.dbn_correct,
    )
    activation = np.asarray(rnn(x), dtype=np.float64)
    # madmom returns seconds on its own grid (frame / fps); recover the frames exactly
    beats_grid = np.asarray(dbn(activation.astype(np.float32)), dtype=np.float64)
    frames = np.rint(beats_grid * tempo.beat_fps).astype(np.int64)
    frames = frames[(frames >= 0) & (frames < len(activation))]
    strength = activation[frames] if frames.size else np.empty(0, dtype=np.float64)
    fractional = (
        _refine_peaks(activation, frames) if tempo.beat_refine == "parabolic" else frames.astype(float)
    )
    hop = MADMOM_SR // tempo.beat_fps
    return frames_to_time(fractional, sr=MADMOM_SR, hop=hop), strength


def trimmed_intervals(
    beats_s: npt.ArrayLike, *, trim_pct: tuple[float, float]
) -> npt.NDArray[np.float64]:
    """Inter-beat intervals kept inside their ``trim_pct`` percentile range.

    Parameters
    ----------
    beats_s : array_like of float, shape (b,)
        Beat times in seconds, increasing.
    trim_pct : (float, float)
        Lower and upper percentile (0-100) of the kept range, inclusive.

    Returns
    -------
    ibi_s : np.ndarray of float64, shape (k,)
        The kept intervals in seconds, in beat order (empty for fewer than two beats).

    Raises
    ------
    ParameterError
        If beats are not finite and strictly increasing, or ``trim_pct`` is not
        ``0 <= lo <= hi <= 100``.
    """
    b = np.asarray(beats_s, dtype=np.float64)
    lo, hi = float(trim_pct[0]), float(trim_pct[1])
    if not 0.0 <= lo <= hi <= 100.0:
        raise ParameterError(f"trim_pct must satisfy 0 <= lo <= hi <= 100, got {trim_pct!r}")
    if b.ndim != 1 or not np.all(np.isfinite(b)):
        raise ParameterError("beats_s must be a 1-D array of finite seconds")
    ibi = np.diff(b)
    if np.any(ibi <= 0):
        raise ParameterError("beats_s must be strictly increasing (seconds, sorted)")
    if ibi.size == 0:
        return ibi
    p_lo, p_hi = np.percentile(ibi, [lo, hi])
    return ibi[(ibi >= p_lo) & (ibi <= p_hi)]


def tempo_from_beats(beats_s: npt.ArrayLike, *, trim_pct: tuple[float, float]) -> float | None:
    """Tempo in BPM: mean reciprocal of the trimmed inter-beat intervals (paper IV-B).

    Parameters
    ----------
    beats_s : array_like of float, shape (b,)
        Beat times in seconds, increasing.
    trim_pct : (float, float)
        Percentile range (0-100) of intervals kept.

    Returns
    -------
    bpm : float or None
        ``None`` (with a warning) when fewer than two beats are given.

    Raises
    ------
    ParameterError
        As :func:`trimmed_intervals`.
    """
    ibi = trimmed_intervals(beats_s, trim_pct=trim_pct)
    if ibi.size == 0:
        warnings.warn("fewer than two beats: no tempo", stacklevel=2)
        return None
    return float(np.mean(60.0 / ibi))


def tempo_from_beat_line(
    beats_s: npt.ArrayLike, *, trim_pct: tuple[float, float]
) -> float | None:
    """Tempo in BPM from the least-squares line through beat time against beat number.

    The span runs from the first to the last inter-beat interval inside the
    ``trim_pct`` percentile range, so pick-up-bar and clip-edge intervals are dropped as
    in :func:`tempo_from_beats`; intervals inside the span are all kept, because every
    beat there still lies on the line. Each interval advances the beat number by
    ``round(interval / median kept interval)`` (a beat the tracker skipped counts two);
    a beat less than half a median interval after the previous one is dropped. The tempo
    is ``60 / slope``. A beat-placement error that repeats along the clip (a fixed lag
    per drum sound, frame-grid quantisation) moves the line, not its slope, which is
    why this estimate is more precise on steady audio than the reciprocal mean, whose
    trimming drops some of the intervals such errors lengthen or shorten.

    Parameters
    ----------
    beats_s : array_like of float, shape (b,)
        Beat times in seconds, increasing.
    trim_pct : (float, float)
        Percentile range (0-100) of the intervals that bound the span.

    Returns
    -------
    bpm : float or None
        ``None`` when fewer than three beats remain on the span.

    Raises
    ------
    ParameterError
        As :func:`trimmed_intervals`.
    """
    b = np.asarray(beats_s, dtype=np.float64)
    kept = trimmed_intervals(b, trim_pct=trim_pct)
    if kept.size == 0:
        return None
    ibi = np.diff(b)
    inside = (ibi >= kept.min()) & (ibi <= kept.max())
    first = int(np.argmax(inside))
    last = int(ibi.size - 1 - np.argmax(inside[::-1]))
    med = float(np.median(kept))
    times, numbers = [float(b[first])], [0.0]
    for t in b[first + 1 : last + 2]:
        step = round((float(t) - times[-1]) / med)
        if step >= 1:  # an extra beat closer than half an interval to the last one is dropped
            times.append(float(t))
            numbers.append(numbers[-1] + step)
    if len(times) < 3:
        return None
    slope = float(np.polyfit(np.asarray(numbers), np.asarray(times), 1)[0])
    return 60.0 / slope if slope > 0 else None


def beat_stability(
    beats_s: npt.ArrayLike,
    *,
    beat_activation: npt.ArrayLike | None,
    tempo: TempoParams,
) -> dict[str, Any]:
    """Beat-to-beat stability statistics, the pulse check and the steady flag.

    A steady run is a maximal sequence of consecutive intervals each within
    ``tempo.steady_ibi_tol_pct`` percent of the median interval, plus one beat frame
    (``1 / tempo.beat_fps`` s) of grid quantisation.

    The pulse check (enough heard beats, median activation above the floor) decides
    whether there is a tempo at all; the steady flag (small IBI coefficient of
    variation, one steady run over most of the beat span) is a statistic reported beside
    the tempo and never withholds it.

    Parameters
    ----------
    beats_s : array_like of float, shape (b,)
        Beat times in seconds, increasing.
    beat_activation : array_like of float, shape (b,), or None
        RNN activation at each beat (``None`` skips the activation check).
    tempo : TempoParams
        Reads ``tempo.ibi_trim_pct``, ``tempo.beat_fps``, ``tempo.min_beats``,
        ``tempo.steady_ibi_tol_pct``, ``tempo.max_ibi_cv``,
        ``tempo.min_steady_run_fraction`` and ``tempo.min_beat_activation`` (the last
        three may be disabled, which skips their check).

    Returns
    -------
    stability : dict
        ``ibi_cv`` (std / mean of the trimmed intervals, or None), ``longest_steady_run_s``
        (seconds), ``steady_run_fraction`` (of the first-to-last beat span),
        ``beat_activation`` (median activation at the beats, or None), ``n_beats``,
        ``n_heard_beats`` (beats at or above ``tempo.min_beat_activation``; all beats
        when no activation is given or the check is disabled), ``has_pulse`` (bool:
        the heard-beat and activation checks pass), ``steady`` (bool: ``has_pulse`` and
        the CV and steady-run checks pass) and ``unsteady_because`` (list of failed
        checks).

    Raises
    ------
    ParameterError
        If beats are malformed or the activation has a different length.
    """
    b = np.asarray(beats_s, dtype=np.float64)
    trim = tuple(float(v) for v in tempo.ibi_trim_pct)
    ibi_kept = trimmed_intervals(b, trim_pct=(trim[0], trim[1]))
    n = int(b.size)
    min_beats = int(tempo.min_beats)
    act_med: float | None = None
    min_act = tempo.min_beat_activation
    n_heard = n
    if beat_activation is not None:
        act = np.asarray(beat_activation, dtype=np.float64)
        if act.shape != b.shape:
            raise ParameterError(
                f"beat_activation must have one value per beat ({b.shape}), got {act.shape}"
            )
        act_med = float(np.median(act)) if act.size else None
        if min_act is not None:
            # the DBN keeps ticking through silence; only beats the network hears count
            n_heard = int(np.count_nonzero(act >= float(min_act)))
    ibi_cv: float | None = None
    if ibi_kept.size >= 2:
        ibi_cv = float(np.std(ibi_kept) / np.mean(ibi_kept))
    run_s, span_s = 0.0, 0.0
    if n >= 2:
        ibi = np.diff(b)
        span_s = float(b[-1] - b[0])
        med = float(np.median(ibi))
        slack = float(tempo.steady_ibi_tol_pct) / 100.0 * med
        slack += 1.0 / float(tempo.beat_fps)
        run_s = _longest_run_s(ibi, np.abs(ibi - med) <= slack)
    fraction = run_s / span_s if span_s > 0 else 0.0
    because: list[str] = []
    if n_heard < min_beats:
        because.append(f"{n_heard} heard beats < tempo.min_beats={min_beats}")
    if min_act is not None and act_med is not None and act_med < float(min_act):
        because.append(f"beat activation {act_med:.3f} < tempo.min_beat_activation={min_act}")
    has_pulse = not because
    max_cv = tempo.max_ibi_cv
    if max_cv is not None and (ibi_cv is None or ibi_cv > float(max_cv)):
        because.append(f"ibi_cv {_fmt(ibi_cv)} > tempo.max_ibi_cv={max_cv}")
    min_frac = tempo.min_steady_run_fraction
    if min_frac is not None and fraction < float(min_frac):
        because.append(
            f"steady run {fraction:.2f} of the beat span < tempo.min_steady_run_fraction={min_frac}"
        )
    return {
        "ibi_cv": ibi_cv,
        "longest_steady_run_s": run_s,
        "steady_run_fraction": fraction,
        "beat_activation": act_med,
        "n_beats": n,
        "n_heard_beats": n_heard,
        "has_pulse": has_pulse,
        "steady": not because,
        "unsteady_because": because,
    }


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.4f}"


def _longest_run_s(ibi: npt.NDArray[np.float64], ok: npt.NDArray[np.bool_]) -> float:
    best = cur = 0.0
    for length, good in zip(ibi, ok, strict=True):
        cur = cur + float(length) if good else 0.0
        best = max(best, cur)
    return best


def estimate_tempo(samples: np.ndarray, *, sr: int, tempo: TempoParams, audio: AudioParams) -> TempoEstimate:
    """Estimate the tempo of a clip, or say why it has none.

    Parameters
    ----------
    samples : np.ndarray of float, shape (n,)
        Mono signal in [-1, 1] (``Clip.samples``).
    sr : int
        Sample rate in Hz.
    tempo : TempoParams
        The ``tempo`` section.
    audio : AudioParams
        ``silent_peak_dbfs`` for the silence check and the level normalisation.

    Returns
    -------
    estimate : TempoEstimate
        ``estimate_bpm`` is ``None`` with a ``reason`` for silent clips, clips too
        short to hold ``tempo.min_beats`` beats at ``tempo.max_bpm``, clips with too
        few heard beats, and clips whose beats the network does not hear (median
        activation below ``tempo.min_beat_activation``: noise, drones, pads). An
        unsteady beat stream still gets an estimate, with ``beat_stability["steady"]``
        false.

    Raises
    ------
    ParameterError
        If ``samples`` is not a finite 1-D float array or ``sr`` is not positive.
    """
    x = _validate_samples(samples, sr)
    empty = np.empty(0, dtype=np.float64)
    no_beats: dict[str, Any] = {
        "ibi_cv": None,
        "longest_steady_run_s": 0.0,
        "steady_run_fraction": 0.0,
        "beat_activation": None,
        "n_beats": 0,
        "n_heard_beats": 0,
        "has_pulse": False,
        "steady": False,
        "unsteady_because": [],
    }
    silent_db = float(audio.silent_peak_dbfs)
    peak = float(np.max(np.abs(x))) if x.size else 0.0
    if peak <= 10.0 ** (silent_db / 20.0):
        return TempoEstimate(None, empty, REASON_SILENT, no_beats)
    min_beats = int(tempo.min_beats)
    max_bpm = float(tempo.max_bpm)
    min_len_s = (min_beats - 1) * 60.0 / max_bpm
    if x.size / float(sr) < min_len_s:
        reason = (
            f"{REASON_TOO_SHORT}: {x.size / float(sr):.2f} s cannot hold {min_beats} beats "
            f"at {max_bpm:g} BPM"
        )
        return TempoEstimate(None, empty, reason, no_beats)
    beats, strength = beat_times(x, sr=sr, tempo=tempo, audio=audio)
    stability = beat_stability(beats, beat_activation=strength, tempo=tempo)
    n_heard = int(stability["n_heard_beats"])
    if n_heard < min_beats:
        reason = f"{REASON_TOO_FEW_BEATS}: {n_heard} heard beats < tempo.min_beats={min_beats}"
        return TempoEstimate(None, beats, reason, stability)
    if not stability["has_pulse"]:
        reason = f"{REASON_NO_PULSE}: " + "; ".join(stability["unsteady_because"])
        return TempoEstimate(None, beats, reason, stability)
    trim = tuple(float(v) for v in tempo.ibi_trim_pct)
    bpm = tempo_from_beats(beats, trim_pct=(trim[0], trim[1]))
    if bpm is None:
        return TempoEstimate(None, beats, REASON_TOO_FEW_BEATS, stability)
    precise = tempo_from_beat_line(beats, trim_pct=(trim[0], trim[1]))
    return TempoEstimate(bpm, beats, None, stability, precise)


def relative_error_pct(estimate_bpm: float, target_bpm: float, *, decimals: int) -> float:
    """Signed relative error ``100 * (estimate - target) / target``, rounded.

    Parameters
    ----------
    estimate_bpm, target_bpm : float
        Tempi in BPM (target > 0).
    decimals : int
        Decimals the percentage is rounded to before any tolerance comparison.

    Returns
    -------
    error_pct : float

    Raises
    ------
    ParameterError
        If the target is not a positive finite number or the estimate is not finite.
    """
    if not math.isfinite(target_bpm) or target_bpm <= 0:
        raise ParameterError(f"target_bpm must be a positive number of BPM, got {target_bpm!r}")
    if not math.isfinite(estimate_bpm):
        raise ParameterError(f"estimate_bpm must be finite, got {estimate_bpm!r}")
    return round(100.0 * (estimate_bpm - target_bpm) / target_bpm, decimals)


def octave_match(
    estimate_bpm: float,
    target_bpm: float,
    *,
    factors: list[float],
    tolerance_pct: float,
    decimals: int,
) -> float | None:
    """The factor ``f`` with ``estimate`` within ``tolerance_pct`` of ``f * target``.

    MIREX octave-equivalent accuracy: the estimate counts when it matches any of the
    target's metrical relatives. When several match, the one with the smallest relative
    error is returned (factor 1 wins ties).

    Parameters
    ----------
    estimate_bpm, target_bpm : float
        Tempi in BPM.
    factors : list of float
        Metrical factors, e.g. ``[1/3, 1/2, 1, 2, 3]``.
    tolerance_pct : float
        Tolerance in percent of ``f * target``.
    decimals : int
        Rounding of the percentage before the comparison.

    Returns
    -------
    factor : float or None
        The matched factor, or ``None``.

    Raises
    ------
    ParameterError
        If a factor is not positive or the tolerance is negative.
    """
    if tolerance_pct < 0 or not math.isfinite(tolerance_pct):
        raise ParameterError(f"tolerance_pct must be a finite percentage >= 0, got {tolerance_pct!r}")
    best: tuple[float, float, float] | None = None
    for f in factors:
        if not f > 0:
            raise ParameterError(f"octave factors must be positive, got {f!r}")
        err = abs(relative_error_pct(estimate_bpm, f * target_bpm, decimals=decimals))
        if err <= tolerance_pct:
            key = (err, abs(math.log(f)), f)
            if best is None or key < best:
                best = key
    return None if best is None else best[2]


def score_tempo(
    estimate: TempoEstimate, *, target_bpm: float, tolerance_pct: float, tempo: TempoParams
) -> dict[str, Any]:
    """The ``tempo`` object of a ``clips.jsonl`` row (formats §3).

    Parameters
    ----------
    estimate : TempoEstimate
        From :func:`estimate_tempo`.
    target_bpm : float
        The instructed tempo in BPM.
    tolerance_pct : float
        The prompt's tolerance in percent (the headline criterion; 3 % in v1).
    tempo : TempoParams
        Reads ``tempo.ladder_pct``, ``tempo.octave_factors`` and
        ``tempo.compare_decimals``.

    Returns
    -------
    row : dict
        ``estimate_bpm``, ``target_bpm``, ``error_pct`` (signed, or None),
        ``within_pct`` (``{"2": bool, "3": bool, "5": bool}``), ``octave_equivalent``
        (matched factor or None, at ``tolerance_pct``), ``beat_stability``,
        ``credited`` (within ``tolerance_pct`` at factor 1), ``reason``, and the
        second estimator beside the headline: ``precise_bpm`` and
        ``precise_error_pct`` (signed; None when there is no estimate). Credit,
        ladder and octave match use ``estimate_bpm`` only.

    Raises
    ------
    ParameterError
        If ``target_bpm`` is not positive or ``tolerance_pct`` is negative.
    """
    if not math.isfinite(target_bpm) or target_bpm <= 0:
        raise ParameterError(f"target_bpm must be a positive number of BPM, got {target_bpm!r}")
    if not math.isfinite(tolerance_pct) or tolerance_pct < 0:
        raise ParameterError(
            f"tolerance_pct must be a finite percentage >= 0, got {tolerance_pct!r}"
        )
    ladder = [float(p) for p in tempo.ladder_pct]
    factors = [float(f) for f in tempo.octave_factors]
    decimals = int(tempo.compare_decimals)
    stability = {k: v for k, v in estimate.beat_stability.items()}
    est = estimate.estimate_bpm
    if est is None:
        return {
            "estimate_bpm": None,
            "target_bpm": float(target_bpm),
            "error_pct": None,
            "within_pct": {f"{p:g}": False for p in ladder},
            "octave_equivalent": None,
            "beat_stability": stability,
            "credited": False,
            "reason": estimate.reason or "no estimate",
            "precise_bpm": None,
            "precise_error_pct": None,
        }
    err = relative_error_pct(est, target_bpm, decimals=decimals)
    return {
        "estimate_bpm": float(est),
        "target_bpm": float(target_bpm),
        "error_pct": err,
        "within_pct": {f"{p:g}": abs(err) <= p for p in ladder},
        "octave_equivalent": octave_match(
            est, target_bpm, factors=factors, tolerance_pct=tolerance_pct, decimals=decimals
        ),
        "beat_stability": stability,
        "credited": abs(err) <= tolerance_pct,
        "reason": None,
        "precise_bpm": None if estimate.precise_bpm is None else float(estimate.precise_bpm),
        "precise_error_pct": (
            None if estimate.precise_bpm is None
            else relative_error_pct(estimate.precise_bpm, target_bpm, decimals=decimals)
        ),
    }

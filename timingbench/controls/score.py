"""Score one clip against its prompt's controls: the ``controls`` object of a ``clips.jsonl`` row."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from timingbench.config import Config
from timingbench.controls import beats as _beats
from timingbench.controls import chance as _chance
from timingbench.controls import chords as _chords
from timingbench.controls import drums as _drums
from timingbench.controls import frames as _frames
from timingbench.controls.dynamics import dynamics_scores
from timingbench.controls.melody import melody_accuracy, melody_scores, produced_pitch_class
from timingbench.controls.salience import predominant_pitch_class, range_prior
from timingbench.controls.schema import Controls
from timingbench.errors import ParameterError
from timingbench.params.analysis import AudioParams, FeaturesParams
from timingbench.params.controls import ControlsParams
from timingbench.params.detectors import ChanceParams, PercussionParams, TempoParams

if TYPE_CHECKING:
    from timingbench.features.bank import FeatureBank

F64 = npt.NDArray[np.float64]
ROUND = 6


def _r(x: float | None) -> float | None:
    return None if x is None else round(float(x), ROUND)


def _rounded(d: dict[str, Any]) -> dict[str, Any]:
    return {k: (_rounded(v) if isinstance(v, dict) else _r(v) if isinstance(v, float) else v) for k, v in d.items()}


@dataclass(frozen=True)
class ControlSections:
    """The configuration sections the controls read, each handed on explicitly.

    Attributes
    ----------
    controls : ControlsParams
        Scoring windows, the chance shifts' seed and range, melody and drum constants.
    chance : ChanceParams
        ``chance.draws``: the number of chance re-scorings, as for events.
    tempo : TempoParams
        The beat tracker's constants (beats and downbeats).
    audio : AudioParams
        Decoding constants the beat tracker's input level reads.
    percussion : PercussionParams
        The percussion route the drum onsets are picked on.
    features : FeaturesParams
        The bank's level range (the produced level curve).
    """

    controls: ControlsParams
    chance: ChanceParams
    tempo: TempoParams
    audio: AudioParams
    percussion: PercussionParams
    features: FeaturesParams

    @classmethod
    def of(cls, config: Config) -> ControlSections:
        """The sections of ``config``."""
        p = config.params
        return cls(controls=p.controls, chance=p.chance, tempo=p.tempo, audio=p.audio, percussion=p.percussion,
                   features=p.features)


def tracked_beats(bank: FeatureBank, *, tempo: TempoParams, audio: AudioParams,
                  controls: ControlsParams) -> tuple[F64, F64]:
    """Tracked beats and downbeats of a clip, computed once per bank and kept with it."""
    c, t = controls, tempo
    key = (f"controls-beats-{t.beat_fps}-{t.min_bpm}-{t.max_bpm}-{t.dbn_transition_lambda}-"
           f"{t.dbn_observation_lambda}-{t.dbn_correct}-{t.audio.input_loud_level_dbfs}-{list(c.beats_per_bar)}")
    return bank.derived(key, lambda bk: _beats.track_beats(bk.samples, sr=bk.sr, tempo=t, audio=audio,
                                                             controls=c))  # type: ignore[no-any-return]


def produced_chords(bank: FeatureBank) -> list[Any]:
    """Recognised chords of a clip, computed once per bank and kept with it."""
    return bank.derived("controls-chords-deepchroma-crf",  # type: ignore[no-any-return]
                        lambda bk: _chords.recognise_chords(bk.samples, sr=bk.sr))


def control_drum_onsets(controls: Controls, sections: ControlSections,
                        control_bank: Callable[[Path], FeatureBank] | None) -> F64:
    """The requested drum onsets: given times, or the onsets extracted from the control audio file.

    ``control_bank(path)`` gives the feature bank of the control audio file.
    """
    if controls.drums_s is not None:
        return controls.drums_s
    if controls.drums_path is None:
        raise ParameterError("controls carry no drum request (neither drums_s times nor a control audio file)")
    if control_bank is None:
        raise ParameterError(f"{controls.drums_path}: no way to analyse the control audio was given (control_bank)")
    return _drums.bank_drum_onsets(control_bank(controls.drums_path), percussion=sections.percussion,
                                   controls=sections.controls, features=sections.features)


def score_controls(bank: FeatureBank, controls: Controls, sections: ControlSections, *, span_s: float, key: str,
                   instructed_bpm: float | None = None, with_chance: bool = True,
                   control_bank: Callable[[Path], FeatureBank] | None = None) -> dict[str, Any]:
    """Score every control given, with its chance control.

    Parameters
    ----------
    bank : FeatureBank
        The clip's feature bank.
    controls : Controls
        The prompt's validated controls.
    sections : ControlSections
        The configuration sections the controls read.
    span_s : float
        The instructed duration in seconds: the span shifts wrap around.
    key : str
        Identifies the clip's audio for the chance draws (:func:`timingbench.scoring.audio_content_key`: a
        renamed copy draws the same shifts).
    instructed_bpm : float, optional
        The prompt's tempo target, reported beside the tempo the beats imply.
    with_chance : bool
        Run the chance re-scorings.
    control_bank : callable, optional
        ``control_bank(path)``: the feature bank of a control audio file (``drums_path``).

    Returns
    -------
    row : dict
        Control name -> its scores and ``chance`` (``mean``, ``p_chance``, ``draws``).
    """
    c = sections.controls
    out: dict[str, Any] = {}

    def shifts(name: str) -> F64:
        if not with_chance:
            return np.empty(0)
        return _chance.draw_shifts(span_s=span_s, draws=sections.chance.draws, min_shift_s=c.chance_min_shift_s,
                                   seed=c.chance_seed, key=f"{key}/{name}")

    def wrap(t: F64, s: float) -> F64:
        return _chance.shift_times(t, s, span_s=span_s)

    if controls.beats_s is not None or controls.downbeats_s is not None:
        beats, downbeats = tracked_beats(bank, tempo=sections.tempo, audio=sections.audio, controls=c)
        if controls.beats_s is not None:
            ref = controls.beats_s
            row = _beats.beat_scores(ref, beats, controls=c)
            row["instructed_bpm"] = instructed_bpm
            row["chance"] = _chance.chance_stats(row["f_measure"], shifts("beats_s"), lambda s: _beats.f_measure(
                wrap(ref, s), beats, window_s=c.beat_window_s))
            out["beats"] = row
        if controls.downbeats_s is not None:
            dref = controls.downbeats_s
            f = _beats.f_measure(dref, downbeats, window_s=c.beat_window_s)
            est = _beats.within_span(downbeats, dref, window_s=c.beat_window_s)
            out["downbeats"] = {"f_measure": f, "n_requested": int(dref.size), "n_tracked": int(est.size),
                                "chance": _chance.chance_stats(f, shifts("downbeats_s"), lambda s: _beats.f_measure(
                                    wrap(dref, s), downbeats, window_s=c.beat_window_s))}
    if controls.dynamics_db is not None or controls.melody_midi is not None:
        fr = _frames.bank_frames(bank, features=sections.features, highpass_hz=c.melody_highpass_hz,
                                 salience=c if controls.melody_midi is not None else None)
    if controls.dynamics_db is not None and controls.dynamics_hop_s is not None:
        req, hop = controls.dynamics_db, controls.dynamics_hop_s
        prod = _frames.level_curve_db(fr["a_ms"], frame_hop_s=fr["hop_s"], hop_s=hop, n=req.size,
                                      range_db=sections.features.level_range_db)
        row = dynamics_scores(req, prod)
        row["hop_s"] = hop
        row["chance"] = _chance.chance_stats(row["pearson_r"], shifts("dynamics"), lambda s: dynamics_scores(
            _chance.shift_curve(req, s, hop_s=hop), prod)["pearson_r"])
        out["dynamics"] = row
    if controls.melody_midi is not None and controls.melody_hop_s is not None:
        mreq, mhop = controls.melody_midi, controls.melody_hop_s
        pc = produced_pitch_class(_frames.pool(fr["chroma"], frame_hop_s=fr["hop_s"], hop_s=mhop, n=mreq.size))
        seed = [c.chance_seed, zlib.crc32(key.encode())]
        row = melody_scores(mreq, pc, rng=np.random.default_rng(np.random.SeedSequence(seed)))
        row["hop_s"] = mhop
        row["chance"] = _chance.chance_stats(row["accuracy"], shifts("melody"), lambda s: melody_accuracy(
            _chance.shift_curve(mreq, s, hop_s=mhop), pc)[0])
        # the predominant-pitch measure: the same frames, the same shuffle and the same shifts
        prior = range_prior(centre_midi=c.melody_prior_centre_midi, width_semitones=c.melody_prior_width_semitones)
        spc = predominant_pitch_class(_frames.pool(fr["salience"], frame_hop_s=fr["hop_s"], hop_s=mhop,
                                                   n=mreq.size), prior)
        sal = melody_scores(mreq, spc, rng=np.random.default_rng(np.random.SeedSequence(seed)))
        del sal["n_frames"]
        sal["chance"] = _chance.chance_stats(sal["accuracy"], shifts("melody"), lambda s: melody_accuracy(
            _chance.shift_curve(mreq, s, hop_s=mhop), spc)[0])
        row["salience"] = sal
        out["melody"] = row
    if controls.names().count("drums_s"):
        dref = control_drum_onsets(controls, sections, control_bank)
        est = _drums.bank_drum_onsets(bank, percussion=sections.percussion, controls=c, features=sections.features)
        row = _drums.onset_scores(dref, est, window_s=c.onset_window_s)
        row["source"] = "audio" if controls.drums_path is not None else "times"
        row["chance"] = _chance.chance_stats(row["f_measure"], shifts("drums_s"), lambda s: _drums.onset_scores(
            wrap(dref, s), est, window_s=c.onset_window_s)["f_measure"])
        out["drums"] = row
    if controls.chords is not None:
        req_chords = controls.chords
        prod_chords = produced_chords(bank)
        row = _chords.chord_accuracy(req_chords, prod_chords)
        row["vocabulary"] = c.chord_vocabulary
        row["chance"] = _chance.chance_stats(row["accuracy"], shifts("chords"), lambda s: _chords.chord_accuracy(
            _chance.shift_chords(req_chords, s, span_s=span_s), prod_chords)["accuracy"])
        out["chords"] = row
    return _rounded(out)

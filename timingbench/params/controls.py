"""Parameter set of time-varying control adherence (:mod:`timingbench.controls`).

Each field is the constant of the same name in the ``controls`` section of
``configs/timingbench-v1.yaml``. The fields' docstring entries (the constant's ``why`` and
provenance) are generated from it by ``tools/params_docs.py --write``;
``tests/test_params_docs.py`` fails when they drift.
"""

from __future__ import annotations

from dataclasses import dataclass

from timingbench.errors import ConfigError
from timingbench.params.base import Params, register


@register
@dataclass(frozen=True)
class ControlsParams(Params):
    """Constants of the ``controls`` section.

    Attributes
    ----------
    beat_window_s : float
        mir_eval.beat.f_measure default (Music ControlNet, MusiConGen): a tracked beat within 70 ms
        of a requested one is a hit (convention)
    continuity_phase_threshold : float
        mir_eval.beat.continuity default phase tolerance (Hainsworth / Klapuri CMLt, AMLt), a
        fraction of the beat period (convention)
    continuity_period_threshold : float
        mir_eval.beat.continuity default period tolerance, a fraction of the beat period
        (convention)
    beats_per_bar : list[int]
        madmom DBNDownBeatTrackingProcessor: bars of 3 or 4 beats, the meters the renderer and the
        v1 styles use (convention)
    onset_window_s : float
        MIREX onset window, mir_eval.onset.f_measure default: a drum onset within 50 ms of a
        requested one is a hit (convention)
    drum_onset_rel : float
        a local maximum of the routed drum onset curve reaching 30 % of the clip's 99th-percentile
        peak is a hit; set on dev renders (never validation), where the first hits of a kit reach
        0.5 and above (few_shot)
    drum_min_ioi_s : float
        two routed peaks closer than the 50 ms onset window are one hit (a flam is one hit at this
        window) (convention)
    melody_highpass_hz : float
        Music ControlNet: the melody chroma is taken above middle C (261.63 Hz, second-order
        high-pass) so bass and kick do not win the per-frame argmax (convention)
    melody_salience_harmonics : int
        Salamon and Gomez 2012 (MELODIA) harmonic summation, Essentia PitchSalienceFunction default:
        every spectral peak votes for the fundamentals f/h, h = 1..20 (convention)
    melody_salience_alpha : float
        MELODIA harmonic weighting (Essentia harmonicWeight default): the vote through harmonic h is
        weighted 0.8^(h-1) (convention)
    melody_salience_beta : float
        MELODIA magnitude compression (Essentia magnitudeCompression default): 1 = peak magnitudes
        sum uncompressed (convention)
    melody_salience_peak_range_db : float
        MELODIA magnitude threshold (Essentia magnitudeThreshold default): spectral peaks more than
        40 dB below the frame's highest peak do not vote (convention)
    melody_salience_max_hz : float
        Essentia PredominantPitchMelodia maxFrequency default: spectral peaks up to 20 kHz vote
        (their high harmonics weigh 0.8^(h-1) little) (convention)
    melody_prior_centre_midi : float
        centre of the melody-range prior on the salience (C5, one octave above middle C, where
        rendered and sung leads lie): set on dev renders only (28 clips with a lead; centres 64, 68,
        72, 76 x widths 6, 9, 12, 18 semitones tried, 72/12 within 0.006 of the best, 0.667 mean
        accuracy against 0.47 without a prior) (few_shot)
    melody_prior_width_semitones : float
        standard deviation of the Gaussian melody-range prior, one octave: the bass two octaves down
        weighs 0.14, a pad an octave down 0.61; set on dev renders with the centre (see
        melody_prior_centre_midi) (few_shot)
    chord_vocabulary : str
        madmom's deep-chroma chord recogniser (Korzeniowski and Widmer 2016) resolves 24 major/minor
        triads and no-chord; scored with mir_eval.chord.majmin (convention)
    chance_seed : int
        fixed seed so the controls' chance control is reproducible (convention)
    chance_min_shift_s : float
        as chance.min_distance_s: a shift under 1 s would re-measure the real alignment; shifts are
        drawn uniformly in [1 s, duration - 1 s], circular (convention)
    render_dynamics_hop_s : float
        the renderer's dynamics curve: 10 values per second resolve crescendi and cuts, about
        DITTO's intensity resolution (convention)
    render_melody_hop_s : float
        the renderer's melody line: 20 frames per second resolves sixteenths at 150 BPM (convention)
    floor_beat_f1 : float | None
        mean over the rendered validation corpus scored against its exact controls (timingbench
        render --corpus validation --controls, --separation dsp;
        validation/reports/validation/controls.json): 127 clips; CMLt 0.80, AMLt 0.95: slow styles
        are tracked at double tempo (calibrated)
    floor_downbeat_f1 : float | None
        mean over the rendered validation corpus scored against its exact controls (timingbench
        render --corpus validation --controls, --separation dsp;
        validation/reports/validation/controls.json): 127 clips (calibrated)
    floor_dynamics_r : float | None
        mean over the rendered validation corpus scored against its exact controls (timingbench
        render --corpus validation --controls, --separation dsp;
        validation/reports/validation/controls.json): 127 clips; the rendered curve is the scorer's
        own level definition, so this checks the scoring path only (calibrated)
    floor_melody_accuracy : float | None
        mean over the rendered validation corpus scored against its exact controls (timingbench
        render --corpus validation --controls, --separation dsp;
        validation/reports/validation/controls.json): 43 clips with a lead part; the argmax chroma
        of a full mix often follows pads or comping, not the lead, and on a lead alone often its
        third harmonic (the fifth) (calibrated)
    floor_melody_salience_accuracy : float | None
        mean over the rendered validation corpus scored against its exact controls (timingbench
        render --corpus validation --controls, --separation dsp; validation/measure_controls.sh;
        validation/reports/validation/controls.json, melody.salience): 43 clips with a lead part;
        the predominant-pitch measure misses where the lead is quieter above middle C than the rest
        of the mix (calibrated)
    floor_drums_f1 : float | None
        mean over the rendered validation corpus scored against its exact controls (timingbench
        render --corpus validation --controls, --separation dsp;
        validation/reports/validation/controls.json): 68 clips with drum parts (calibrated)
    floor_chord_accuracy : float | None
        mean over the rendered validation corpus scored against its exact controls (timingbench
        render --corpus validation --controls, --separation dsp;
        validation/reports/validation/controls.json): 127 clips, majmin (calibrated)
    """

    SECTION = "controls"

    beat_window_s: float
    continuity_phase_threshold: float
    continuity_period_threshold: float
    beats_per_bar: list[int]
    onset_window_s: float
    drum_onset_rel: float
    drum_min_ioi_s: float
    melody_highpass_hz: float
    melody_salience_harmonics: int
    melody_salience_alpha: float
    melody_salience_beta: float
    melody_salience_peak_range_db: float
    melody_salience_max_hz: float
    melody_prior_centre_midi: float
    melody_prior_width_semitones: float
    chord_vocabulary: str
    chance_seed: int
    chance_min_shift_s: float
    render_dynamics_hop_s: float
    render_melody_hop_s: float
    floor_beat_f1: float | None
    floor_downbeat_f1: float | None
    floor_dynamics_r: float | None
    floor_melody_accuracy: float | None
    floor_melody_salience_accuracy: float | None
    floor_drums_f1: float | None
    floor_chord_accuracy: float | None

    def validate(self) -> None:
        """Windows and hops positive, fractions in (0, 1], bar lengths >= 2, majmin vocabulary."""
        super().validate()
        for name in ("beat_window_s", "onset_window_s", "render_dynamics_hop_s", "render_melody_hop_s",
                     "melody_highpass_hz", "melody_salience_peak_range_db", "melody_salience_max_hz",
                     "melody_prior_width_semitones", "melody_salience_harmonics"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"constant 'controls.{name}' field 'value' must be positive")
        for name in ("continuity_phase_threshold", "continuity_period_threshold", "drum_onset_rel",
                     "melody_salience_alpha", "melody_salience_beta"):
            if not 0.0 < getattr(self, name) <= 1.0:
                raise ConfigError(f"constant 'controls.{name}' field 'value' must lie in (0, 1]")
        if not self.beats_per_bar or any(int(b) < 2 for b in self.beats_per_bar):
            raise ConfigError("constant 'controls.beats_per_bar' field 'value' must list bar lengths >= 2")
        if self.chord_vocabulary != "majmin":
            raise ConfigError("constant 'controls.chord_vocabulary' field 'value' must be 'majmin' "
                              "(the recogniser resolves major/minor triads only)")

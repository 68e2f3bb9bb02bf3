"""Parameter set of time-varying control adherence (:mod:`timingbench.controls`).

Each field is the constant of the same name in the ``controls`` section; its docstring
line is the constant's ``why``.
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
        mir_eval.beat.f_measure default: a tracked beat within 70 ms of a requested one is a
        hit (convention)
    continuity_phase_threshold : float
        mir_eval.beat.continuity default phase tolerance, a fraction of the beat period
        (convention)
    continuity_period_threshold : float
        mir_eval.beat.continuity default period tolerance, a fraction of the beat period
        (convention)
    beats_per_bar : list of int
        madmom DBNDownBeatTrackingProcessor: the bar lengths the downbeat decoder may choose
        (convention)
    onset_window_s : float
        MIREX / mir_eval.onset default: a drum onset within 50 ms of a requested one is a hit
        (convention)
    drum_onset_rel : float
        a peak of the routed drum onset curve counts as a hit (few_shot)
    drum_min_ioi_s : float
        two drum hits closer than this are one (convention)
    melody_highpass_hz : float
        Music ControlNet: chroma is taken above middle C so bass and kick do not win the
        argmax (convention)
    chord_vocabulary : str
        the chord recogniser resolves 24 major/minor triads and no-chord (convention)
    chance_draws : int
        re-scorings against the clip's controls circularly shifted in time (convention)
    chance_seed : int
        fixed seed so the chance control is reproducible (convention)
    chance_min_shift_s : float
        a shift smaller than this re-measures the real alignment (convention)
    render_dynamics_hop_s : float
        hop of the dynamics curve the renderer writes (convention)
    render_melody_hop_s : float
        hop of the melody line the renderer writes (convention)
    floor_beat_f1 : float | None
        beat F1 of the renderer's exact controls on its validation corpus (calibrated)
    floor_downbeat_f1 : float | None
        downbeat F1 of exact controls on the validation corpus (calibrated)
    floor_dynamics_r : float | None
        dynamics Pearson r of exact controls on the validation corpus (calibrated)
    floor_melody_accuracy : float | None
        melody accuracy of exact controls on the validation corpus (calibrated)
    floor_drums_f1 : float | None
        drum onset F1 of exact controls on the validation corpus (calibrated)
    floor_chord_accuracy : float | None
        chord accuracy of exact controls on the validation corpus (calibrated)
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
    chord_vocabulary: str
    chance_draws: int
    chance_seed: int
    chance_min_shift_s: float
    render_dynamics_hop_s: float
    render_melody_hop_s: float
    floor_beat_f1: float | None
    floor_downbeat_f1: float | None
    floor_dynamics_r: float | None
    floor_melody_accuracy: float | None
    floor_drums_f1: float | None
    floor_chord_accuracy: float | None

    def validate(self) -> None:
        """Windows and hops positive, fractions in (0, 1], bar lengths >= 2, majmin vocabulary."""
        super().validate()
        for name in ("beat_window_s", "onset_window_s", "render_dynamics_hop_s", "render_melody_hop_s",
                     "melody_highpass_hz"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"constant 'controls.{name}' field 'value' must be positive")
        for name in ("continuity_phase_threshold", "continuity_period_threshold", "drum_onset_rel"):
            if not 0.0 < getattr(self, name) <= 1.0:
                raise ConfigError(f"constant 'controls.{name}' field 'value' must lie in (0, 1]")
        if not self.beats_per_bar or any(int(b) < 2 for b in self.beats_per_bar):
            raise ConfigError("constant 'controls.beats_per_bar' field 'value' must list bar lengths >= 2")
        if self.chord_vocabulary != "majmin":
            raise ConfigError("constant 'controls.chord_vocabulary' field 'value' must be 'majmin' "
                              "(the recogniser resolves major/minor triads only)")
        if self.chance_draws < 1:
            raise ConfigError("constant 'controls.chance_draws' field 'value' must be at least 1")

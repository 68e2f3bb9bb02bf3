"""Time-varying control adherence: beats, downbeats, dynamics, melody, drums and chords.

A prompt may carry a ``controls`` object (:mod:`timingbench.controls.schema`); each
control given is scored on the clip (:func:`timingbench.controls.score.score_controls`)
with the metric its papers use, beside a chance control of the same metric against the
clip's controls shifted in time (:mod:`timingbench.controls.chance`).
"""

from timingbench.controls.schema import CONTROL_NAMES, Chord, Controls, parse_controls

__all__ = ["CONTROL_NAMES", "Chord", "Controls", "parse_controls"]

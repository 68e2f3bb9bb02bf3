"""Parameter set of the evidence-first detection of judged families (:mod:`timingbench.identity.decide`).

Each field is the constant of the same name in the ``presence`` section of
``configs/timingbench-v1.yaml``. The fields' docstring entries (the constant's ``why`` and
provenance) are generated from it by ``tools/params_docs.py --write``;
``tests/test_params_docs.py`` fails when they drift.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from timingbench.params.base import Params, constant_error, register


@register
@dataclass(frozen=True)
class PresenceParams(Params):
    """Constants of the ``presence`` section.

    Attributes
    ----------
    min_side_s : float
        each level of the two-level fit rests on at least 1 s of tagger columns (about three 0.32 s
        columns): one stray column is no level (convention)
    min_pre_roll_s : float
        an entrance near the clip start is decided on the pre-roll that exists, down to one 0.32 s
        column; the row says how much there was (pre_roll_s) when it is under min_side_s
        (convention)
    snap_s : float
        the change point is moved to the strongest onset (entrances) or level fall (exits) of the
        family's route within 0.3 s: the tagger's columns are 0.32 s apart and blur the step
        (convention)
    fall_span_s : float
        an exit's fall is the route's mean level over the 0.1 s before a frame minus the 0.1 s after
        it: a release is over within a few frames (convention)
    prob_clip : float
        providers that give probabilities (network, musicnn, CLAP) are read in log-odds of [0.01,
        0.99]; the tagger gives its logits as they are (convention)
    entry_min_step_by_family : dict[str, Any]
        chosen per family by timingbench calibrate evidence on dev corpora only (real, dev-kits):
        the least step that maximises on-time credits plus off-time located with at most
        calibration.evidence_max_negative_rate of the negatives credited (calibrated)
    exit_min_step_by_family : dict[str, Any]
        chosen per family by timingbench calibrate evidence on dev corpora only (real, dev-kits):
        the least step that maximises on-time credits plus off-time located with at most
        calibration.evidence_max_negative_rate of the negatives credited (calibrated)
    quiet_max_by_family : dict[str, Any]
        most log-odds presence on the quiet side (before an entrance, after an exit); null: not
        checked (convention)
    present_min_by_family : dict[str, Any]
        least log-odds presence on the sounding side (after an entrance, before an exit); null: not
        checked (convention)
    """

    SECTION = "presence"

    min_side_s: float
    min_pre_roll_s: float
    snap_s: float
    fall_span_s: float
    prob_clip: float
    entry_min_step_by_family: dict[str, Any]
    exit_min_step_by_family: dict[str, Any]
    quiet_max_by_family: dict[str, Any]
    present_min_by_family: dict[str, Any]

    def validate(self) -> None:
        """Check value ranges.

        Raises
        ------
        ConfigError
            If a length is not positive, ``prob_clip`` is outside (0, 0.5), or a per-family
            table holds a value that is not a number or null.
        """
        super().validate()
        if not 0.0 < self.prob_clip < 0.5:
            raise constant_error("presence", "prob_clip", "must lie in (0, 0.5)", self.prob_clip)
        if self.min_side_s <= 0 or self.min_pre_roll_s <= 0 or self.min_pre_roll_s > self.min_side_s:
            raise constant_error("presence", "min_pre_roll_s", "must lie in (0, min_side_s]", self.min_pre_roll_s)
        for name in ("entry_min_step_by_family", "exit_min_step_by_family", "quiet_max_by_family",
                     "present_min_by_family"):
            for fam, v in dict(getattr(self, name) or {}).items():
                if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                    raise constant_error("presence", f"{name}.{fam}", "must be a number (log-odds) or null", v)

    @staticmethod
    def threshold(table: dict[str, Any] | None, family: str) -> float | None:
        """The family's entry of a per-family ``table``, else its ``default`` entry (None: off)."""
        t = dict(table or {})
        v = t.get(family, t.get("default"))
        return None if v is None else float(v)

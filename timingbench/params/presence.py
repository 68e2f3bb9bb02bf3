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
    level_span_s : float
        a located candidate of a family judged by its stem or the singing presence is decided by the
        step of that evidence across it: its level over the 1.5 s after minus its level over the 1.5
        s before, each read at level_percentile_by_evidence (the stem detector's own 1.5 s
        reference, stem.step_before_s) (convention)
    level_gap_s : float
        the 50 ms either side of a located candidate belong to neither side of its step: the attack
        itself (a few evidence columns) (convention)
    level_percentile_by_evidence : dict[str, Any]
        a side of a located candidate's step is read at this percentile of its evidence columns: a
        stem at its 90th (drum hits and plucked notes leave the stem near its floor between attacks,
        so a median reads a playing kit as absent; one stray column of bleed in 1.5 s cannot lift
        it, as percussion.absence_strict_percentile), the singing log-odds at their median, any
        other evidence at its median (default) (convention)
    entry_min_step_by_evidence : dict[str, Any]
        least step (after minus before) across an entrance, per evidence then family (default: every
        family). stems, in dB of the stem's level re the mix's loud level: 10 dB (a stem that enters
        at least triples its amplitude; the issue-48 probe's convention, kept by the dev scan: on
        the parts corpus's dev split (real recordings and samples over real backings,
        tools/stem_fit.py, tools/stem_figures.py) true entrances and exits located on time step
        11.7-56 dB, the negatives the detectors locate 1.0-7.4 dB credited ones, 15-17 off-time
        ones). singing: null, not checked: on the vocals stem the singing log-odds step 0.6-10.9
        across true vocal entrances and exits and up to 3.7 across negatives (no threshold separates
        them; the stem's step does) (calibrated)
    exit_min_step_by_evidence : dict[str, Any]
        least fall (before minus after) across an exit, per evidence then family: as
        entry_min_step_by_evidence (the dev figures there are entrances and exits together)
        (calibrated)
    quiet_max_by_evidence : dict[str, Any]
        most level on the quiet side (the 1.5 s before an entrance, after an exit, at
        level_percentile_by_evidence), per evidence then family. stems: -25 dB re the mix's loud
        level, between the parts corpus's dev entrances and exits (quiet side at most -29.7 dB,
        drums and vocals) and its pre-existing parts (-7.7 to -18.9 dB); -30 (the issue-48 probe's
        convention) rejected a vocal exit at -29.7. singing: 0 log-odds (not more likely singing
        than not): dev vocal entrances and exits read at most -0.6 on the vocals stem, pre-existing
        voices 1.3-2.8 (calibrated)
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
    level_span_s: float
    level_gap_s: float
    level_percentile_by_evidence: dict[str, Any]
    entry_min_step_by_evidence: dict[str, Any]
    exit_min_step_by_evidence: dict[str, Any]
    quiet_max_by_evidence: dict[str, Any]

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
        for ev, q in dict(self.level_percentile_by_evidence or {}).items():
            if isinstance(q, bool) or not isinstance(q, (int, float)) or not 0 <= q <= 100:
                raise constant_error("presence", f"level_percentile_by_evidence.{ev}", "must lie in [0, 100]", q)
        if self.level_span_s <= 0 or not 0 <= self.level_gap_s < self.level_span_s:
            raise constant_error("presence", "level_gap_s", "must lie in [0, level_span_s)", self.level_gap_s)
        for name in ("entry_min_step_by_evidence", "exit_min_step_by_evidence", "quiet_max_by_evidence"):
            for ev, table in dict(getattr(self, name) or {}).items():
                if not isinstance(table, dict):
                    raise constant_error("presence", f"{name}.{ev}", "must map families to numbers or null", table)
                for fam, v in table.items():
                    if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                        raise constant_error("presence", f"{name}.{ev}.{fam}", "must be a number or null", v)

    def thresholds(self, evidence: str, family: str, *, entry: bool) -> tuple[float | None, float | None, float | None]:
        """The least step, the quiet side's most and the sounding side's least level of ``family`` under ``evidence``.

        An evidence with its own tables (``*_by_evidence``: ``stems`` in dB, ``singing`` in
        log-odds) reads them (no sounding-side bound); every other (the ``--family-evidence``
        backends) reads the per-family tables.
        """
        steps = self.entry_min_step_by_evidence if entry else self.exit_min_step_by_evidence
        if evidence in dict(steps or {}):
            return (self.threshold(dict(steps)[evidence], family),
                    self.threshold(dict(self.quiet_max_by_evidence or {}).get(evidence), family), None)
        return (self.threshold(self.entry_min_step_by_family if entry else self.exit_min_step_by_family, family),
                self.threshold(self.quiet_max_by_family, family), self.threshold(self.present_min_by_family, family))

    @staticmethod
    def threshold(table: dict[str, Any] | None, family: str) -> float | None:
        """The family's entry of a per-family ``table``, else its ``default`` entry (None: off)."""
        t = dict(table or {})
        v = t.get(family, t.get("default"))
        return None if v is None else float(v)

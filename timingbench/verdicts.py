"""What a detection is made of: gate verdicts, candidates and the scored outcome of an event.

The bottom layer of the scoring core: it imports nothing from timingbench. Gates
(:mod:`timingbench.gates`) return a :data:`GateVerdict` with the statistics it thresholded;
detectors return :class:`Candidate` objects carrying every gate's verdict and statistics;
scoring (:mod:`timingbench.scoring`) picks a candidate and returns an :class:`EventVerdict`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

#: Verdict of one gate on one candidate.
GateOutcome = Literal["pass", "fail", "exempt"]
#: Outcome of an instructed event (formats §3).
Outcome = Literal["on_time", "off_time", "none"]

PASS: Final = "pass"
FAIL: Final = "fail"
EXEMPT: Final = "exempt"

#: A gate's verdict and the statistics it rests on (levels in dB, fractions, seconds).
GateVerdict = tuple[GateOutcome, dict[str, Any]]


@dataclass(frozen=True)
class EventContext:
    """One instructed event as a detector sees it (all times in seconds).

    Attributes
    ----------
    kind : str
        formats §1 event kind.
    family : str
        Coarse target family (formats §1).
    target : str
        Free-text instrument named in the prompt.
    instructed_s : float
        The instructed time.
    window_lo_s, window_hi_s : float
        The search window (already clamped to siblings and to the analysed audio).
    """

    kind: str
    family: str
    target: str
    instructed_s: float
    window_lo_s: float
    window_hi_s: float


@dataclass
class Candidate:
    """A candidate time for an instructed event and the gates it went through.

    Attributes
    ----------
    time_s : float
        Candidate event time in seconds.
    gates : dict of str to str
        Gate name -> ``pass`` | ``fail`` | ``exempt``, in application order.
    stats : dict
        Gate name -> the statistics that gate thresholded, plus the detector's own
        placement numbers (crossing times, step sizes ...).
    identity : str or None
        What the candidate's instrument identity rests on, as its detector says:
        ``family`` (the family evidence), ``stem`` (the separated stem it was found on) or
        None (no identity gate). The scorer applies the ``semantic_family`` gate from it
        (:func:`timingbench.identity.decide.identity_verdict`); detectors never judge
        identity themselves.
    """

    time_s: float
    gates: dict[str, str] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    identity: str | None = None

    def apply(self, name: str, verdict: GateVerdict) -> None:
        """Record gate ``name``'s verdict and its statistics."""
        self.gates[name], self.stats[name] = verdict

    @property
    def rejected_by(self) -> str | None:
        """The first failing gate, or None when every gate passed or was exempt."""
        for name, verdict in self.gates.items():
            if verdict == FAIL:
                return name
        return None


@dataclass(frozen=True)
class EventVerdict:
    """The scored outcome of one instructed event.

    Attributes
    ----------
    outcome : str
        ``on_time`` | ``off_time`` | ``none``.
    detected_s, error_s : float or None
        Detection time and signed error (seconds), None for ``none``.
    gates : dict of str to str
        Verdict of every gate of the chosen (or nearest rejected) candidate.
    rejected_by : str or None
        First failing gate when the outcome is ``none``.
    stats : dict
        The chosen (or nearest rejected) candidate's gate statistics (:attr:`Candidate.stats`).
    """

    outcome: str
    detected_s: float | None
    error_s: float | None
    gates: dict[str, str]
    rejected_by: str | None
    stats: dict[str, Any]

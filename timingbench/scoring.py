"""Event scoring: search windows, outcomes, chance credit, duration and timbre (paper Sec. IV).

For each instructed event the detector of its family proposes candidates inside the
search window (±5 s around the instructed time, clamped to half the gap to the nearest
sibling event and to the analysed audio). Among the candidates that pass every gate the
one nearest the instructed time is the detection: ``on_time`` when ``|error| <= tolerance``
(after rounding to :data:`timingbench.convert.TIME_DECIMALS`), else ``off_time``. When no
candidate passes, the outcome is ``none`` and the first failing gate of the nearest
candidate is reported (``detection`` when there was no candidate at all).

Chance credit re-scores the same event at ``chance.draws`` seeded random instructed times
with identical detectors and gates on the same feature bank; ``p_chance`` is the fraction
of those draws credited ``on_time``.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from timingbench.choices import CHANGE_BACKENDS, DEFAULT_FAMILY_EVIDENCE
from timingbench.config import Config
from timingbench.convert import round_time
from timingbench.detectors.energy import detect_energy
from timingbench.detectors.mix import detect_start, detect_stop
from timingbench.detectors.percussion import detect_percussion
from timingbench.detectors.stem import detect_stem
from timingbench.detectors.tonal import detect_tonal
from timingbench.families import STEM_FAMILIES, TONAL_FAMILIES
from timingbench.identity.decide import (
    identity_verdict,
    judged_by_presence,
    judging,
    located_by_stem,
    located_verdict,
    presence_candidates,
)
from timingbench.memo import object_table
from timingbench.params.analysis import FeaturesParams
from timingbench.params.detectors import (
    ChanceParams,
    EnergyParams,
    MixParams,
    PercussionParams,
    SearchParams,
    StemParams,
    TonalParams,
)
from timingbench.params.presence import PresenceParams
from timingbench.prompts import INSTRUMENT_KINDS, Event, Prompt
from timingbench.verdicts import EXEMPT, FAIL, Candidate, EventContext, EventVerdict

if TYPE_CHECKING:
    from timingbench.features.bank import FeatureBank
    from timingbench.identity.evidence import FamilyEvidence

#: The detector of each whole-mix event kind (instrument events go by family, see
#: :func:`detector_for`).
MIX_DETECTORS = {
    "music_start_after_silence": "mix.start",
    "music_end": "mix.stop",
    "music_pause": "mix.stop",
    "mix_energy_increase": "energy",
}


def detector_for(kind: str, family: str) -> str:
    """The detector that scores an event of ``kind`` and ``family``: ``percussion``, ``stem``,
    ``tonal``, ``mix.start``, ``mix.stop`` or ``energy`` (the ``detector`` field of a row,
    and what :func:`run_detector` dispatches on)."""
    if kind in ("instrument_entry", "instrument_exit"):
        if family == "percussion":
            return "percussion"
        return "stem" if family in STEM_FAMILIES else "tonal"
    return MIX_DETECTORS[kind]


def detector_name(event: Event) -> str:
    """Name of the detector that scores ``event``."""
    return detector_for(event.kind, event.family)


def detector_used(event: Event, family_evidence: FamilyEvidence | None) -> str:
    """The detector that scored ``event`` on a clip with ``family_evidence``: ``presence`` for an entrance or
    exit of a family the evidence judges, else :func:`detector_name` (the ``detector`` field of a row)."""
    return "presence" if presence_evidence(event.kind, event.family, family_evidence) is not None \
        else detector_name(event)


def presence_evidence(kind: str, family: str, family_evidence: FamilyEvidence | None) -> FamilyEvidence | None:
    """The evidence whose presence finds and decides an event of ``kind`` and ``family``
    (:func:`timingbench.identity.decide.presence_candidates`), or None when the family's detector locates it.

    The first of the evidences the registry's ``judged_by`` names for the family on the clip,
    unless its separated stem is among them (the stem detector then locates); else the
    clip's family evidence when it judges the family by its presence.
    """
    if kind not in INSTRUMENT_KINDS:
        return None
    judges = judging(family_evidence, family)
    if judges:
        return None if located_by_stem(judges) else judges[0]
    return family_evidence if judged_by_presence(family_evidence, family) else None


def needs_family_evidence(prompt: Prompt, backend: str = DEFAULT_FAMILY_EVIDENCE, *,
                          percussion_low_route: bool = False) -> bool:
    """True when any event of ``prompt`` may consult the family evidence of ``backend``.

    The trained evidence also serves percussion (absence, persistence and identity); the
    taggers serve the other instrument families, and percussion only for the identity of
    the low route (``percussion_low_route``: ``percussion.route_low_hz`` is enabled).
    """
    return any(
        e.family in TONAL_FAMILIES or (e.family in STEM_FAMILIES and (e.family != "percussion"
                                                                       or backend in CHANGE_BACKENDS
                                                                       or percussion_low_route))
        for e in prompt.events
    )


@dataclass(frozen=True)
class DetectorParams:
    """The parameter sets the detectors and the scoring rules read, picked from one configuration.

    Built once per configuration (:meth:`of`); every detector receives its own set.
    """

    search: SearchParams
    chance: ChanceParams
    percussion: PercussionParams
    stem: StemParams
    tonal: TonalParams
    mix: MixParams
    energy: EnergyParams
    #: The evidence-first detection of judged families.
    presence: PresenceParams
    #: The bank's own analysis constants, for the detectors that read its grid (the percussion routes).
    features: FeaturesParams

    @classmethod
    def of(cls, config: Config) -> DetectorParams:
        """The sets of ``config`` (``config.params.<section>``), built once per configuration.

        Raises
        ------
        ConfigError
            If a section's constants are missing, mistyped or out of range.
        """
        built_table, adopted = object_table("detector-params"), object_table("adopted-variants")
        built: DetectorParams | None = built_table.get(config.params)
        if built is None:
            pending = adopted.pop(config.params, None)
            built = built_table[config.params] = (cls._build(config) if pending is None
                                                  else pending[0]._with(config, pending[1]))
        return built

    def adopt(self, variant: Config, section: str) -> None:
        """Declare ``variant`` a configuration that differs from this one's in ``section`` only.

        When :meth:`of` is first asked for ``variant`` it builds only that section and takes
        the others from these parameters (the sweep builds hundreds of such variants); a
        section that fails to build raises then, as a full build would.
        """
        object_table("adopted-variants")[variant.params] = (self, section)

    def _with(self, variant: Config, section: str) -> DetectorParams:
        """These parameters with ``variant``'s ``section`` put where this set holds that section.

        The place is found by the section's type, in a field or in a field of a nested set;
        a section no detector reads leaves the set as it is.
        """
        new = getattr(variant.params, section)
        return _replaced(self, type(new), new)

    @classmethod
    def _build(cls, config: Config) -> DetectorParams:
        return cls(search=config.params.search, chance=config.params.chance,
                   percussion=config.params.percussion, stem=config.params.stem,
                   tonal=config.params.tonal, mix=config.params.mix,
                   energy=config.params.energy,
                   presence=config.params.presence, features=config.params.features)


T = TypeVar("T")


def _replaced(obj: T, kind: type, new: Any) -> T:
    """``obj`` (a frozen dataclass) with every field of type ``kind`` (at any depth) set to ``new``."""
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(obj):  # type: ignore[arg-type]
        value = getattr(obj, f.name)
        if type(value) is kind:
            changes[f.name] = new
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            inner = _replaced(value, kind, new)
            if inner is not value:
                changes[f.name] = inner
    return dataclasses.replace(obj, **changes) if changes else obj  # type: ignore[type-var]


def search_window(
    events: Sequence[Event], index: int, *, params: SearchParams, analysed_s: float
) -> tuple[float, float]:
    """Search window of event ``index`` in seconds.

    ``±search.window_s`` around the instructed time, each side clamped to
    ``search.sibling_gap_fraction`` of the gap to the nearest sibling event instructed
    earlier (later), and to ``[0, analysed_s]``. Siblings instructed at the same time
    (two instruments brought in together) do not clamp each other: they are different
    transitions, not successive ones.
    """
    w, frac = params.window_s, params.sibling_gap_fraction
    t = events[index].time_s
    lo, hi = t - w, t + w
    earlier = [e.time_s for e in events if e.time_s < t]
    later = [e.time_s for e in events if e.time_s > t]
    if earlier:
        lo = max(lo, t - frac * (t - max(earlier)))
    if later:
        hi = min(hi, t + frac * (min(later) - t))
    return max(lo, 0.0), min(hi, analysed_s)


def run_detector(
    bank: FeatureBank, ctx: EventContext, params: DetectorParams, *, family_evidence: FamilyEvidence | None = None
) -> list[Candidate]:
    """Dispatch ``ctx`` to its family's detector, handing it its parameter set; return the candidates.

    The one place that asks whether an instrument's identity is judged, and by which
    evidence. ``family_evidence`` is the clip's evidence, computed by the caller (the
    runner). An entrance or exit of a family the evidence judges is found and decided by
    the family's own presence (:func:`timingbench.identity.decide.presence_candidates`).
    Every other event keeps its family's detector, which only locates candidates and
    measures their signal gates; their ``semantic_family`` gate, where the detector names
    what their identity rests on, is then
    :func:`timingbench.identity.decide.identity_verdict` (``exempt``, with why).

    A family the registry's ``judged_by`` names evidences for on this clip
    (:attr:`FamilyEvidence.judges`: its demucs stem's level, the singing presence) is decided
    by them: with its stem among them, its events are located by the family's stem detector
    (percussion: the drums stem's rectified onset density; bass and vocals: their stem's
    presence flips) and each candidate's ``semantic_family`` gate is a pass/fail decision of
    those evidences measured across it
    (:func:`timingbench.identity.decide.located_verdict`), which never moves or creates a
    candidate; without its stem (vocals on the mix), the first evidence's presence finds and
    decides them (:func:`~timingbench.identity.decide.presence_candidates`).
    """
    found_by = presence_evidence(ctx.kind, ctx.family, family_evidence)
    if found_by is not None:
        return presence_candidates(bank, ctx, found_by, params=params.presence)
    judges = judging(family_evidence, ctx.family) if ctx.kind in INSTRUMENT_KINDS else ()
    name = detector_for(ctx.kind, ctx.family)
    if name == "percussion":
        cands = detect_percussion(bank, ctx, params.percussion, features=params.features)
    elif name == "stem":
        cands = detect_stem(bank, ctx, params.stem)
    elif name == "tonal":
        cands = detect_tonal(bank, ctx, params.tonal)
    elif name == "mix.start":
        return detect_start(bank, ctx, params.mix)
    elif name == "mix.stop":
        return detect_stop(bank, ctx, params.mix)
    else:
        return detect_energy(bank, ctx, params.energy, mix=params.mix)
    entry = ctx.kind == "instrument_entry"
    for c in cands:
        if judges:
            c.apply("semantic_family", located_verdict(judges, ctx.family, c.time_s, entry=entry,
                                                       params=params.presence))
        elif c.identity is not None:
            c.apply("semantic_family", identity_verdict(family_evidence, ctx.family, entry=entry, source=c.identity))
    return cands


def _effective(c: Candidate, disabled: Collection[str]) -> dict[str, str]:
    return {k: (EXEMPT if k in disabled and v == FAIL else v) for k, v in c.gates.items()}


def decide(
    candidates: Sequence[Candidate], *, instructed_s: float, tolerance_s: float,
    disabled_gates: Collection[str] = (),
) -> EventVerdict:
    """Turn candidates into an outcome.

    Parameters
    ----------
    candidates : sequence of Candidate
        The detector's candidates with their gate verdicts.
    instructed_s : float
        Instructed time in seconds.
    tolerance_s : float
        On-time tolerance in seconds.
    disabled_gates : collection of str
        Gates switched off (ablation): their failures count as ``exempt``.

    Returns
    -------
    verdict : EventVerdict
    """
    if not candidates:
        return EventVerdict("none", None, None, {"detection": FAIL}, "detection", {})
    by_distance = sorted(candidates, key=lambda c: (abs(c.time_s - instructed_s), c.time_s))
    for c in by_distance:
        gates = _effective(c, disabled_gates)
        if FAIL not in gates.values():
            t = float(round_time(c.time_s))
            err = float(round_time(t - instructed_s))
            on = abs(err) <= float(round_time(tolerance_s))
            return EventVerdict("on_time" if on else "off_time", t, err,
                                {"detection": "pass", **gates}, None, c.stats)
    c = by_distance[0]
    gates = _effective(c, disabled_gates)
    first = next(k for k, v in gates.items() if v == FAIL)
    return EventVerdict("none", None, None, {"detection": "pass", **gates}, first,
                        {"nearest_candidate_s": float(round_time(c.time_s)), **c.stats})


def event_tolerance(event: Event, config: Config | SearchParams) -> float:
    """The event's tolerance in seconds (the row's, else ``search.default_tolerance_s``)."""
    search = config if isinstance(config, SearchParams) else config.params.search
    return event.tolerance_s if event.tolerance_s is not None else search.default_tolerance_s


def audio_content_key(samples: np.ndarray, *, sr: int) -> str:
    """Identity of decoded audio: SHA-256 (hex, first 16 digits) of the samples and their rate.

    Parameters
    ----------
    samples : np.ndarray of float32, shape (n,)
        The analysed mono signal (a feature bank's ``samples``).
    sr : int
        Its sample rate in Hz.

    Returns
    -------
    key : str
        Equal for equal audio whatever the file's name, extension or container.
    """
    h = hashlib.sha256(np.ascontiguousarray(samples, dtype=np.float32).tobytes())
    h.update(f"|{int(sr)}".encode())
    return h.hexdigest()[:16]


def chance_times(
    *, audio_key: str, event_id: str, instructed_s: float, lo_s: float, hi_s: float, params: ChanceParams
) -> np.ndarray:
    """Seeded random instructed times for the chance-credit re-scoring, in seconds.

    The generator is seeded from ``chance.seed`` and a hash of (audio, event id), so the
    draws depend on the audio content (:func:`audio_content_key`), not on the clip's file name, nor
    on the order or the process in which clips are scored. The ``chance.draws`` times are
    stratified: the span ``[lo_s, hi_s]`` without the ``chance.min_distance_s`` either side
    of the real instruction is cut into ``chance.draws`` equal strata and one time is drawn
    uniformly in each, so every time is uniform over the span and the spread of ``p_chance``
    is at most the binomial one of independent draws.

    Parameters
    ----------
    audio_key : str
        :func:`audio_content_key` of the clip's analysed audio.
    event_id : str
        The instructed event.
    instructed_s, lo_s, hi_s : float
        The real instructed time and the span the draws lie in, in seconds.
    params : ChanceParams

    Returns
    -------
    times : np.ndarray of float, shape (chance.draws,) or (0,)
        Empty when the span is at most twice ``chance.min_distance_s`` long.
    """
    n, gap = params.draws, params.min_distance_s
    if hi_s - lo_s <= 2 * gap:
        return np.zeros(0)
    digest = hashlib.sha256(f"{audio_key}\x00{event_id}".encode()).digest()
    rng = np.random.default_rng([params.seed, int.from_bytes(digest[:8], "little")])
    # the excluded interval, clipped to the span (the instruction may lie past a short clip's end)
    cut_lo = min(max(lo_s, instructed_s - gap), hi_s)
    cut_hi = max(min(hi_s, instructed_s + gap), lo_s)
    below = cut_lo - lo_s  # allowed seconds before the excluded interval
    allowed = below + (hi_s - cut_hi)
    u = (np.arange(n) + rng.uniform(0.0, 1.0, n)) / n * allowed
    return np.where(u < below, lo_s + u, cut_hi + (u - below))


def event_candidates(
    bank: FeatureBank, prompt: Prompt, index: int, params: DetectorParams, *,
    family_evidence: FamilyEvidence | None = None,
) -> tuple[list[Candidate], float]:
    """The candidates of event ``index`` at its instructed time, inside its search window, and its tolerance.

    :func:`decide` on them gives the event's verdict (for any set of disabled gates).
    """
    ev = prompt.events[index]
    lo, hi = search_window(prompt.events, index, params=params.search, analysed_s=float(bank.duration_s))
    ctx = EventContext(ev.kind, ev.family, ev.target, ev.time_s, lo, hi)
    return _inside(run_detector(bank, ctx, params, family_evidence=family_evidence), lo, hi), \
        event_tolerance(ev, params.search)


def _inside(cands: list[Candidate], lo_s: float, hi_s: float) -> list[Candidate]:
    """The candidates inside ``[lo_s, hi_s]`` (rounded): one snapped past an edge belongs to the neighbouring search."""
    if not cands:
        return cands
    lo, hi = float(round_time(lo_s)), float(round_time(hi_s))
    times = round_time([c.time_s for c in cands])
    return [c for c, t in zip(cands, times, strict=True) if lo <= t <= hi]


def score_event(
    bank: FeatureBank, prompt: Prompt, index: int, config: Config, *, family_evidence: FamilyEvidence | None = None,
    disabled_gates: Collection[str] = (), clip: str = "", with_chance: bool = True,
) -> tuple[EventVerdict, float | None]:
    """Score event ``index`` of ``prompt`` on a clip's feature bank.

    ``p_chance`` depends on the bank's audio and the event (:func:`chance_times`), never on
    ``clip``, the file's name (kept for the callers that pass it).

    Returns
    -------
    verdict : EventVerdict
    p_chance : float or None
        Fraction of chance re-scorings credited ``on_time`` (None when not computed or
        the clip is too short for any draw).
    """
    ev = prompt.events[index]
    p = DetectorParams.of(config)
    analysed = float(bank.duration_s)
    lo, hi = search_window(prompt.events, index, params=p.search, analysed_s=analysed)
    tol = event_tolerance(ev, p.search)

    def verdict_at(t: float, lo_s: float, hi_s: float) -> EventVerdict:
        ctx = EventContext(ev.kind, ev.family, ev.target, t, lo_s, hi_s)
        cands = _inside(run_detector(bank, ctx, p, family_evidence=family_evidence), lo_s, hi_s)
        return decide(cands, instructed_s=t, tolerance_s=tol, disabled_gates=disabled_gates)

    verdict = verdict_at(ev.time_s, lo, hi)
    if not with_chance:
        return verdict, None
    w = p.search.window_s
    times = chance_times(audio_key=audio_content_key(bank.samples, sr=bank.sr), event_id=ev.id, instructed_s=ev.time_s,
                         lo_s=0.0, hi_s=min(analysed, prompt.duration_s), params=p.chance)
    if not times.size:
        return verdict, None
    credited = sum(
        verdict_at(float(t), max(t - w, 0.0), min(t + w, analysed)).outcome == "on_time" for t in times
    )
    return verdict, credited / len(times)

"""Parameter sets of the event detectors, the rejection gates and the scoring rules.

(Fields and their generated docstrings: :mod:`timingbench.params`.)
"""

from __future__ import annotations

from dataclasses import dataclass

from timingbench.errors import ConfigError
from timingbench.params.analysis import AudioParams
from timingbench.params.base import Params, register


@register
@dataclass(frozen=True)
class SearchParams(Params):
    """Constants of the ``search`` section.

    Attributes
    ----------
    window_s : float
        paper Sec. IV-A: search window of +-5 s around the instructed time (convention)
    sibling_gap_fraction : float
        paper Sec. IV-A: window clamped to half the gap to the nearest sibling event (convention)
    default_tolerance_s : float
        on-time tolerance when a prompt row gives none; sync work needs a few hundred ms
        (convention)
    """

    SECTION = "search"

    window_s: float
    sibling_gap_fraction: float
    default_tolerance_s: float


@register
@dataclass(frozen=True)
class ChanceParams(Params):
    """Constants of the ``chance`` section.

    Attributes
    ----------
    draws : int
        stratified random instructed times per event (paper Sec. IV-E draws 16): binomial s.e. of
        one p_chance <= 0.044, of the discounted rate over n events <= 0.044/sqrt(n) (stratified
        draws spread less); ~0.6 ms of detector time a draw (convention)
    seed : int
        fixed seed so p_chance is reproducible; each event's draws are seeded from it, the decoded
        audio and the event id (never the file name) (convention)
    min_distance_s : float
        a chance draw closer than 1 s to the true instruction would re-measure the real event
        (convention)
    """

    SECTION = "chance"

    draws: int
    seed: int
    min_distance_s: float


@register
@dataclass(frozen=True)
class DurationParams(Params):
    """Constants of the ``duration`` section.

    Attributes
    ----------
    tolerance_s : float
        a clip within 1 s of the instructed length complies (container padding, fades) (convention)
    """

    SECTION = "duration"

    tolerance_s: float


@register
@dataclass(frozen=True)
class TempoParams(Params):
    """Constants of the ``tempo`` section.

    Attributes
    ----------
    tolerance_pct : float
        paper Sec. IV-B: credited within +-3 % of target (convention)
    ladder_pct : list[float]
        paper Sec. IV-B: {2,3,5} % tolerance ladder (convention)
    octave_factors : list[float]
        MIREX octave-equivalent factors {1/3,1/2,1,2,3} (convention)
    ibi_trim_pct : list[float]
        paper Sec. IV-B: inter-beat intervals trimmed to the 5-95th percentile range (convention)
    audio : AudioParams
        the ``audio`` section, whose ``input_loud_level_dbfs`` is the one loud level every model
        input is brought to (its own section)
    min_bpm : float
        DBN tempo range floor: below the 50 BPM benchmark floor so half-time renderings near it stay
        in range (convention)
    max_bpm : float
        DBN tempo range ceiling: above the 174 BPM benchmark ceiling so double-time renderings of
        mid tempos stay in range (convention)
    beat_fps : int
        frame rate the madmom beat RNNs were trained at (Boeck et al.); other rates change what the
        network sees (convention)
    dbn_transition_lambda : float
        madmom DBNBeatTrackingProcessor default: strongly prefers a constant tempo from beat to beat
        (convention)
    dbn_observation_lambda : int
        madmom DBNBeatTrackingProcessor default: 1/16 of a beat period is the beat state
        (convention)
    dbn_correct : bool
        madmom default: snap each decoded beat to the activation peak inside its beat range
        (convention)
    beat_refine : str
        place each beat at the parabolic vertex of the activation peak (sub-frame), removing most of
        the 10 ms grid quantisation (convention)
    num_threads : int
        madmom ensemble worker processes per clip; clips are parallelised by --jobs instead
        (convention)
    intra_op_num_threads : int
        onnxruntime threads per RNN; 1 so --jobs workers do not oversubscribe the cores (convention)
    min_beats : int
        fewer than 5 beats (4 intervals, one 4/4 bar) cannot support a tempo estimate (convention)
    compare_decimals : int
        percent errors are rounded to 6 decimals before tolerance comparisons, so edge cases compare
        as on the edge (convention)
    steady_ibi_tol_pct : float
        an interval further than the strictest ladder rung (2 %) from the median, plus one beat
        frame of quantisation, breaks a steady run (convention)
    max_ibi_cv : float | None
        steady flag only (never withholds the estimate); trimmed-IBI coefficient of variation: exact
        click references <= 0.005, 808 kick 0.005; solo singing (vocadito) 0.044, 20 ms-jittered
        clicks 0.040, a 100->130 BPM change 0.13 (few_shot)
    min_steady_run_fraction : float | None
        steady flag only (never withholds the estimate); longest steady run over the beat span:
        references and the 808 kick ~1.0; solo singing 0.19, jittered clicks 0.15, half-and-half
        tempo change 0.50 (few_shot)
    min_beat_activation : float | None
        pulse floor (below it: no estimate); median RNN activation at the decoded beats: clicks and
        the 808 kick >= 0.55, solo singing 0.30; sine drone 0.022, white noise 0.039, chord pad
        0.013 (whose DBN beats are otherwise regular) (few_shot)
    reference_max_error_pct : float
        paper Sec. IV-B/V-A: estimator error on exact-tempo references is at most 0.06 % of target;
        tempo-check fails above it (convention)
    reference_max_precise_error_pct : float
        target for the beat-line estimator reported beside the paper's: half the paper's 0.06 %
        bound on exact-tempo references; tempo-check fails above it (convention)
    reference_tempi_bpm : list[float]
        tempo-check grid: 50-174 BPM as in the paper, with the off-grid targets 97.3 and 143.7
        (convention)
    reference_half_time_bpm : list[float]
        tempo-check half-time targets: rendered at 45-72 BPM, inside the tracker range (convention)
    reference_double_time_bpm : list[float]
        tempo-check double-time targets: rendered at 120-195 BPM, inside the tracker range
        (convention)
    """

    SECTION = "tempo"

    tolerance_pct: float
    ladder_pct: list[float]
    octave_factors: list[float]
    ibi_trim_pct: list[float]
    audio: AudioParams
    min_bpm: float
    max_bpm: float
    beat_fps: int
    dbn_transition_lambda: float
    dbn_observation_lambda: int
    dbn_correct: bool
    beat_refine: str
    num_threads: int
    intra_op_num_threads: int
    min_beats: int
    compare_decimals: int
    steady_ibi_tol_pct: float
    max_ibi_cv: float | None
    min_steady_run_fraction: float | None
    min_beat_activation: float | None
    reference_max_error_pct: float
    reference_max_precise_error_pct: float
    reference_tempi_bpm: list[float]
    reference_half_time_bpm: list[float]
    reference_double_time_bpm: list[float]


    def validate(self) -> None:
        """Check the beat tracker's settings.

        Raises
        ------
        ConfigError
            If ``0 < min_bpm < max_bpm`` fails, ``beat_refine`` is not ``none`` or
            ``parabolic``, ``beat_fps`` does not divide madmom's 44.1 kHz, or a thread
            count is below 1.
        """
        super().validate()
        if not 0 < self.min_bpm < self.max_bpm:
            raise _fail(self, "min_bpm", f"and '{self.section}.max_bpm' ({self.max_bpm}) must satisfy 0 < min < max")
        if self.beat_refine not in ("none", "parabolic"):
            raise _fail(self, "beat_refine", "must be 'none' or 'parabolic'")
        if self.beat_fps <= 0 or 44100 % self.beat_fps:
            raise _fail(self, "beat_fps", "must divide madmom's 44100 Hz")
        for name in ("num_threads", "intra_op_num_threads"):
            if getattr(self, name) < 1:
                raise _fail(self, name, "must be >= 1")

@register
@dataclass(frozen=True)
class WindowsParams(Params):
    """Constants of the ``windows`` section: the paper's spans, declared once for every detector.

    Attributes
    ----------
    strict_s : float
        paper Sec. IV-B: the strict immediate window: the 3 s before an entrance (or a start) must
        be absent, and the 3 s after an exit (convention)
    persistence_s : float
        a new state (an instrument in or out, music started) must hold 2 s to be an instructed
        change rather than a fill (convention)
    """

    SECTION = "windows"
    #: Embedded in every detector's set that reads a window: one value for all.
    OWN_SECTION = True

    strict_s: float
    persistence_s: float

    def validate(self) -> None:
        """Check ranges.

        Raises
        ------
        ConfigError
            If a span is not positive.
        """
        super().validate()
        _positive(self, "strict_s", "persistence_s")


@register
@dataclass(frozen=True)
class MixParams(Params):
    """Constants of the ``mix`` section.

    Attributes
    ----------
    silence_below_loud_db : float
        paper Sec. IV-B: silence is 35 dB below the clip's loud level (convention)
    fade_point_below_loud_db : float
        paper Sec. IV-B: a gradual fade ends where audio falls 23 dB below the loud level; measured
        from the fitted level the fade falls from, which is the loud level when music fades from
        full level (convention)
    decay_budget_s : float
        paper Sec. IV-B: the mix must be gone within 3 s of the first edge (convention)
    pause_quiet_s : float
        paper Sec. IV-B: a pause needs a bounded 3 s quiet interval (from its first edge; the mix is
        gone from the gone point to its end) (convention)
    silence_hysteresis_db : float | None
        music returns only 3 dB above the silence line, so level ripple near it does not toggle
        (few_shot)
    quiet_min_fraction : float | None
        share of frames below the silence line for a span to count as quiet (calibrated)
    cut_max_fall_s : float | None
        an abrupt cut falls to silence within ~5 frames (few_shot)
    cut_from_below_loud_db : float | None
        a cut falls from musical level: dev cuts start <= 10.6 dB under the loud level, the short
        fades that end ring-outs >= 18.2 dB under (calibrated)
    accent_rel_height : float | None
        an accent is an onset peak of at least 30 % of the local maximum (few_shot)
    start_prefix_min_fraction : float | None
        'silence until t' needs the span before the start to be quiet this often (calibrated)
    snap_back_s : float | None
        the first attack is searched this far before the level crossing (few_shot)
    start_guard_s : float
        the start's own attack (a few frames) is left out of the quiet measured before it
        (convention)
    persistence_min_fraction : float | None
        share of frames present after a start (calibrated)
    last_accent_rel_height : float | None
        an ending's last accent reaches a quarter of the largest onset in the decay budget (dev
        accents >= 0.46 of it; flux blips of a bare decay far under) (few_shot)
    accent_min_ratio_after : float | None
        the last accent stands 1.5x above every onset after it until the mix is gone (ring-out flux
        stays under it) (few_shot)
    accent_min_ratio_floor : float | None
        the last accent stands 2x above the median onset of the decay budget (sustained notes leave
        a flux floor) (few_shot)
    fade_max_slope_db_per_s : float | None
        a fall faster than 25 dB/s is the release of the last sound, not a fade: dev fades fall <=
        14 dB/s, ring-out releases >= 38 dB/s (few_shot)
    accent_guard_s : float
        the accent's own attack (a few frames) is not compared with itself (convention)
    fade_fit_window_s : float
        a fade is fitted (plateau + linear fall in dB) over the 12 s before the mix is gone: long
        fades plus a stretch of unfaded music (convention)
    level_smooth_s : float
        ending levels are smoothed over 100 ms so single notes do not steer the fade fit
        (convention)
    windows : WindowsParams
        the ``windows`` section (its own): the strict window and the persistence span
    start_snap_forward_s : float
        a start's onset accent may lie one frame (11.6 ms) after the level crossing, where the
        attack has lifted the frame RMS (convention)
    cut_reference_s : float
        a cut's pre-fall level is the median mean square over the 4 frames (46 ms) before the fall:
        one frame could be a note's decay (convention)
    fade_fit_min_s : float
        a plateau-plus-fall fit needs at least 8 frames (93 ms) of level to tell a fall from noise
        (convention)
    fade_hinge_margin_s : float
        the fitted fall starts at least 2 frames (23 ms) inside the fit span, so plateau and fall
        each have two points (convention)
    """

    SECTION = "mix"

    silence_below_loud_db: float
    fade_point_below_loud_db: float
    decay_budget_s: float
    pause_quiet_s: float
    silence_hysteresis_db: float | None
    quiet_min_fraction: float | None
    cut_max_fall_s: float | None
    cut_from_below_loud_db: float | None
    accent_rel_height: float | None
    start_prefix_min_fraction: float | None
    snap_back_s: float | None
    start_guard_s: float
    persistence_min_fraction: float | None
    last_accent_rel_height: float | None
    accent_min_ratio_after: float | None
    accent_min_ratio_floor: float | None
    fade_max_slope_db_per_s: float | None
    accent_guard_s: float
    fade_fit_window_s: float
    level_smooth_s: float
    windows: WindowsParams
    start_snap_forward_s: float
    cut_reference_s: float
    fade_fit_min_s: float
    fade_hinge_margin_s: float


@dataclass(frozen=True)
class AbsenceParams(Params):
    """The absence gates' constants (:func:`timingbench.gates.absence_before`, ``absence_after``).

    Built from the section of the detector that applies the gates (``stem.absence_guard_s``,
    ``percussion.absence_guard_s``); a detector may tune its own copy.

    Attributes
    ----------
    absence_guard_s : float
        Seconds before (after) the candidate left out of the absence span (the attack itself).
    absence_strict_below_ref_db : float | None
        How far under its reference the source must sit in the strict window (and after an
        exit), dB; None switches the strict check (and the exit check) off.
    absence_strict_percentile : float
        Percentile of the level over the strict window (and the exit window).
    absence_whole_below_ref_db : float | None
        Whole-clip bound: how far under its reference the source sits from the clip start to
        the candidate, dB; None switches it off.
    absence_whole_percentile : float | None
        Percentile of the level over the whole span before the entrance; None switches the
        whole-clip check off.
    windows : WindowsParams
        the ``windows`` section (its own): the strict window and the persistence span
    """

    absence_guard_s: float
    absence_strict_below_ref_db: float | None
    absence_strict_percentile: float
    absence_whole_below_ref_db: float | None
    absence_whole_percentile: float | None
    windows: WindowsParams

    def validate(self) -> None:
        """Check ranges.

        Raises
        ------
        ConfigError
            If a window or the guard is negative, or a percentile is outside [0, 100].
        """
        super().validate()
        _non_negative(self, "absence_guard_s")
        _percentile(self, "absence_strict_percentile", "absence_whole_percentile")


@dataclass(frozen=True)
class PersistenceParams(Params):
    """The persistence gate's constants (:func:`timingbench.gates.persistence`).

    Attributes
    ----------
    persistence_min_fraction : float | None
        Share of frames of that span in the new state; None switches the gate off.
    persistence_min_span_fraction : float
        A candidate with less than this share of the span left before the end of the audio
        fails (nothing shows that its new state holds).
    windows : WindowsParams
        the ``windows`` section (its own): the strict window and the persistence span
    """

    persistence_min_fraction: float | None
    persistence_min_span_fraction: float
    windows: WindowsParams

    def validate(self) -> None:
        """Check ranges.

        Raises
        ------
        ConfigError
            If the span is not positive, ``persistence_min_fraction`` is negative (a share
            above 1 is allowed: nothing then holds, which the sweep uses to tighten past it) or
            ``persistence_min_span_fraction`` is outside [0, 1].
        """
        super().validate()
        _non_negative(self, "persistence_min_fraction")
        _fraction(self, "persistence_min_span_fraction")


@dataclass(frozen=True)
class LevelChangeParams(Params):
    """The level-change gate's constants (:func:`timingbench.gates.level_change`).

    Attributes
    ----------
    level_window_s : float
        Window either side of the candidate whose mean levels are compared, seconds.
    level_min_change_db : float | None
        Minimum rise (entrances) or fall (exits) of the mean level, dB; None switches the
        gate off.
    """

    level_window_s: float
    level_min_change_db: float | None

    def validate(self) -> None:
        """Check ranges.

        Raises
        ------
        ConfigError
            If the window is not positive.
        """
        super().validate()
        _positive(self, "level_window_s")


def _fail(params: Params, name: str, what: str) -> ConfigError:
    sec = f"{params.section}." if params.section else ""
    return ConfigError(f"constant '{sec}{name}' {what}, got {getattr(params, name)!r}")


def _positive(params: Params, *names: str) -> None:
    for n in names:
        v = getattr(params, n)
        if v is not None and not v > 0:
            raise _fail(params, n, "must be positive")


def _non_negative(params: Params, *names: str) -> None:
    for n in names:
        v = getattr(params, n)
        if v is not None and v < 0:
            raise _fail(params, n, "must not be negative")


def _fraction(params: Params, *names: str) -> None:
    for n in names:
        v = getattr(params, n)
        if v is not None and not 0.0 <= v <= 1.0:
            raise _fail(params, n, "must lie in [0, 1]")


def _percentile(params: Params, *names: str) -> None:
    for n in names:
        v = getattr(params, n)
        if v is not None and not 0.0 <= v <= 100.0:
            raise _fail(params, n, "must be a percentile in [0, 100]")



@register
@dataclass(frozen=True)
class PercussionParams(Params):
    """Constants of the ``percussion`` section.

    Attributes
    ----------
    density_window_s : float
        paper Sec. IV-B: trailing 1 s mean of the rectified onset curve (convention)
    floor_percentile : float
        leading-window noise floor of the routed onset curve (few_shot)
    reference_percentile : float
        the density's own loud level, robust to single bursts (convention)
    present_rel : float
        a percussion train is present when its routed density exceeds 60 % of its loud level; dev
        bleed before kit entries reaches 0.3-0.4 (few_shot)
    absent_rel : float
        hysteresis: present until the routed density falls under 45 % of its loud level (above the
        0.3-0.4 bleed) (few_shot)
    accent_rel_height : float
        the snapped accent is a routed onset peak of at least half the local maximum; at 0.3 dev
        entries snapped to bleed 0.4-0.65 s before the first hit (few_shot)
    semantic_with_dsp : bool
        the HPSS percussive stem is identity evidence enough; the family gate is not applied to
        drums (convention)
    route_margin : float
        dsp route: a bin counts as drums as far as its percussive median exceeds the harmonic one by
        this factor (few_shot)
    route_band_floor_percentile : float
        dsp route: each mel band's flux counts only above this percentile of the band's own level
        (steady bleed adds nothing) (few_shot)
    envelope_smooth_s : float
        routed envelope averaged over 2x the absence guard (0.15 s each side), so gaps between hits
        do not read as absence and nothing leaks across the guard (convention)
    route_sub_hz : float
        dsp route: kick and floor toms below this; tonal attacks (bass, cello, piano) mostly above
        (few_shot)
    route_high_hz : float
        dsp route: cymbals, hats and snare wires above this; pitched attacks mostly below (few_shot)
    route_low_hz : float | None
        dsp low route (kick, toms, timpani body) from this frequency (40 Hz when enabled); null
        disables it until its identity gate is measured on dev. Dev cinematic hits peak at 3.4-5.2
        in 43-237 Hz flux vs <= 2.0 before (few_shot)
    route_low_top_hz : float | None
        dsp low route up to 240 Hz, under the piano/guitar fundamentals the sub/high route avoids
        (few_shot)
    absence_density_percentile : float
        the rectified density over the strict window is read at the same high percentile as the
        envelope (convention)
    absence_density_whole_percentile : float
        whole-clip bound on the rectified density over [0, t): dev pre-existing trains with a 3.5 s
        gap read 0.72-0.86 of the reference at p75, kit entries <= 0.48 (few_shot)
    absence_density_max_rel : float
        before an entrance the density stays under the presence level (present_rel); dev kit entries
        <= 0.49 (strict p90) and <= 0.48 (whole p75), pre-existing 0.59-0.87 and 0.72-0.86
        (few_shot)
    snap_lookback_s : float
        a first hit that alone lifts the density only to 0.32-0.42 (dev rock kit) is searched this
        far before the last quiet frame (few_shot)
    snap_quiet_rel : float
        an entry train starts after the density's last frame under this share of its reference (the
        absent level); dev bleed before kit entries sits at 0.2-0.41 and made snaps land 0.4-0.75 s
        early (few_shot)
    snap_quiet_rel_stem : float
        on a demucs drums stem (the stem route) the absent level is lower: the stem isolates the
        kit, so its density before an entrance sits at 0.04-0.06 of the reference, and a sparse
        loop's first hit lifts it only to 0.26-0.36 until the next hits (dev real-001: the snap at
        0.45 landed on the third hit, 0.86 s late); 0.15 lies between them. With
        accent_rel_height_stem, the parts corpus's dev percussion entrances over real backings are
        on time 7/7 (2/7 at 0.45 and 0.5) (few_shot)
    accent_rel_height_stem : float
        on a demucs drums stem the snapped accent is a stem onset peak of at least 20 % of the local
        maximum: the stem holds no bleed to snap to (dev real-001: onsets <= 0.51 before the
        entrance, its first hit 8.6 and a later accent 18.1, which 0.5 took instead, 0.86 s late)
        (few_shot)
    absence : AbsenceParams
        The absence gates' copy of the ``percussion`` section (``percussion.absence_*``).
    persistence : PersistenceParams
        The persistence gate's copy (``percussion.persistence_*``).
    level : LevelChangeParams
        The level-change gate's copy (``percussion.level_*``).
    """

    SECTION = "percussion"

    # Every number the detector cannot run without is typed ``float``: switching one off
    # fails when the parameters are built (ConfigError naming it), before any clip is read.

    density_window_s: float
    floor_percentile: float
    reference_percentile: float
    present_rel: float
    absent_rel: float
    accent_rel_height: float
    semantic_with_dsp: bool
    route_margin: float
    route_band_floor_percentile: float
    envelope_smooth_s: float
    route_sub_hz: float
    route_high_hz: float
    route_low_hz: float | None
    route_low_top_hz: float | None
    absence_density_percentile: float
    absence_density_whole_percentile: float
    absence_density_max_rel: float
    snap_lookback_s: float
    snap_quiet_rel: float
    snap_quiet_rel_stem: float
    accent_rel_height_stem: float
    absence: AbsenceParams
    persistence: PersistenceParams
    level: LevelChangeParams


@register
@dataclass(frozen=True)
class StemParams(Params):
    """Constants of the ``stem`` section.

    Attributes
    ----------
    smooth_s : float
        envelopes are smoothed over 100 ms so note gaps inside a phrase do not flip presence
        (convention)
    step_before_s : float
        the stem's own preceding level is its mean (dB) over the 1.5 s before a frame (convention)
    step_after_s : float
        the level a stem steps to is its mean (dB) over the 1 s after a frame (the gates' 1 s scale)
        (convention)
    step_gap_s : float
        a few frames around the transition itself belong to neither side (convention)
    step_separation_s : float
        level steps closer than 1 s are one transition; the stronger one is kept (convention)
    step_min_db : float | None
        a stem level step (mean after minus mean before) must reach 3 dB to be a candidate
        (calibrated)
    snap_back_s : float | None
        the attack is searched this far before the level step (few_shot)
    snap_forward_s : float | None
        and this far after it (the step peaks a few frames into the new level) (few_shot)
    accent_rel_height : float | None
        the snapped attack is an onset peak of at least 30 % of the local maximum (few_shot)
    present_below_ref_db : float | None
        a stem is present while within 6 dB of its level on the near side of the flip (calibrated)
    exit_drop_db : float | None
        an exit is placed where the stem falls 6 dB under its level of the preceding 1.5 s
        (few_shot)
    exit_search_s : float | None
        the exit point is searched this far either side of the level step (few_shot)
    absence : AbsenceParams
        The absence gates' copy of the ``stem`` section (``stem.absence_*``).
    persistence : PersistenceParams
        The persistence gate's copy (``stem.persistence_*``).
    level : LevelChangeParams
        The level-change gate's copy (``stem.level_*``).
    """

    SECTION = "stem"

    smooth_s: float
    step_before_s: float
    step_after_s: float
    step_gap_s: float
    step_separation_s: float
    step_min_db: float | None
    snap_back_s: float | None
    snap_forward_s: float | None
    accent_rel_height: float | None
    present_below_ref_db: float | None
    exit_drop_db: float | None
    exit_search_s: float | None
    absence: AbsenceParams
    persistence: PersistenceParams
    level: LevelChangeParams


@register
@dataclass(frozen=True)
class TonalParams(Params):
    """Constants of the ``tonal`` section.

    Attributes
    ----------
    novelty_peak_rel : float | None
        a novelty peak counts when it reaches 20 % of the clip's novelty maximum (few_shot)
    register_source : str
        tonal_dev (72 events): on-time 16/24 vs 11/24 from the mix, off-time 5/18 vs 1/18. Register
        levels from the HPSS harmonic part ('harmonic') or the full mix ('mix'): drum hits raise
        every register at once and hide a new layer's rise in dense mixes (few_shot)
    register_width_bands : int
        a register is 8 adjacent mel bands (of 128): about a third of an octave to an octave, the
        span of one section's notes (convention)
    rise_window_s : float
        register levels compared over 1 s either side of the candidate (convention)
    guard_s : float
        the transition itself (attack or release, ~9 frames) is left out of the before/after windows
        (convention)
    snap_s : float | None
        the register step is searched this far either side of the novelty peak (the 1.5 s kernel
        blurs its centre) (few_shot)
    step_window_s : float
        the register step is located with 250 ms windows either side: a note or two of the new layer
        (convention)
    onset_back_s : float | None
        the harmonic attack is searched this far before the register step (few_shot)
    onset_rel_height : float | None
        the attack is the earliest harmonic-onset peak of at least half the local maximum (few_shot)
    min_rise_db : float | None
        a new tonal layer raises its register by 3 dB (calibrated)
    whole_rise_db : float | None
        the register after an entrance stands this far above its bulk level over the whole clip
        before; dev+tonal_dev (harmonic registers): 4 dB rejects 7/13 pre-existing vs 5/13 at 3 dB
        with on-time credit unchanged (23/33, semantic gate on woodwinds/plucked); 5 dB loses 3
        synth entrances (calibrated)
    whole_percentile : float
        the bulk of the span before the entrance (paper's whole-clip absence bound), robust to short
        bleed (convention)
    min_fall_db : float | None
        an exiting layer lowers its register by 3 dB (calibrated)
    windows : WindowsParams
        the ``windows`` section (its own): the strict window and the persistence span
    absent_after_db : float | None
        over the 3 s after an exit the register stays this far under its level before (calibrated)
    absent_after_percentile : float
        a high percentile, not the max, so one frame of bleed cannot veto (convention)
    """

    SECTION = "tonal"

    novelty_peak_rel: float | None
    register_source: str
    register_width_bands: int
    rise_window_s: float
    guard_s: float
    snap_s: float | None
    step_window_s: float
    onset_back_s: float | None
    onset_rel_height: float | None
    min_rise_db: float | None
    whole_rise_db: float | None
    whole_percentile: float
    min_fall_db: float | None
    windows: WindowsParams
    absent_after_db: float | None
    absent_after_percentile: float


@register
@dataclass(frozen=True)
class EnergyParams(Params):
    """Constants of the ``energy`` section.

    Attributes
    ----------
    smooth_s : float
        mix level smoothed over 0.5 s: energy changes are section-scale (convention)
    before_s : float
        the preceding window the rise is measured against (convention)
    after_s : float
        the rise must be sustained over the following 2 s (convention)
    min_rise_db : float | None
        an instructed energy increase lifts the mix by at least 4 dB (prompts ask for clearly
        bigger) (calibrated)
    min_density_ratio : float | None
        after the rise the mix keeps >= 80 % of its onset density before it: dev rises with
        sustained new layers keep >= 0.9x, so only a thin swell fails (few_shot)
    min_music_before_fraction : float
        the rise is measured against music: 90 % of the preceding window sounds above the silence
        line, else it is a start out of silence (convention)
    snap_s : float
        the rise peak of 0.5 s-smoothed levels lies within half a second of the change; the attack
        is searched there (convention)
    max_candidates : int
        only the strongest rises in the window are candidates: a section change shows as one
        dominant rise (convention)
    accent_rel_height : float | None
        the rise is snapped to the first onset peak of at least 60 % of the strongest within snap_s
        (at 30 % a bed note 0.5 s early won on dev) (few_shot)
    """

    SECTION = "energy"

    smooth_s: float
    before_s: float
    after_s: float
    min_rise_db: float | None
    min_density_ratio: float | None
    min_music_before_fraction: float
    snap_s: float
    max_candidates: int
    accent_rel_height: float | None

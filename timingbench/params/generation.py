"""Parameter sets of the renderers and generators (corpora, MGBench, prompt sets).

(Fields and their generated docstrings: :mod:`timingbench.params`.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from timingbench.params.base import Params, register
from timingbench.params.base import constant_error as _fail


def _check_range(section: str, name: str, value: Sequence[float], *, lo: float | None = None) -> None:
    """A ``[lo, hi]`` pair with ``lo <= hi`` (and ``lo >= lo`` bound when given)."""
    if len(value) != 2 or value[0] > value[1]:
        raise _fail(section, name, "must be a [low, high] pair with low <= high", value)
    if lo is not None and value[0] < lo:
        raise _fail(section, name, f"must not go below {lo:g}", value)


@register
@dataclass(frozen=True)
class RenderParams(Params):
    """Constants of the ``render`` section.

    Attributes
    ----------
    soundfont_path : str
        Debian fluid-soundfont-gm; any GM .sf2/.sf3 can be given instead (--soundfont) (convention)
    sample_rate_hz : int
        reference audio is written at the analysis rate so no resampling moves an onset (convention)
    synth_gain : float
        FluidSynth master gain; low enough that six-part mixes do not clip before normalisation
        (convention)
    peak_dbfs : float
        every 0 dB clip is scaled to a -1 dBFS peak; gain variants are exact scaled copies of it
        (convention)
    gain_variants_db : list[float]
        paper Sec. IV-A: scoring must be invariant under -12 and -20 dB gain (convention)
    midi_ticks_per_beat : int
        at 120 BPM one tick is 0.52 ms, far below one 11.6 ms analysis frame (convention)
    off_time_offset_s : list[float]
        issue 3: off-time deliveries are displaced by a signed 0.3-4 s (convention)
    pause_gap_s : list[float]
        issue 3: a pause is a 3-5 s break after which the music resumes (convention)
    fade_depth_db : float
        a rendered fade falls linearly in dB to -60 dB and is then cut to digital silence
        (convention)
    accent_ring_s : float
        a final accent rings for 2.5 s, inside the paper's 3 s decay budget (convention)
    fluidsynth_timeout_s : float
        a FluidSynth run longer than this is treated as hung (convention)
    observed_gap_s : float
        a part's note after 2 s of that part's silence is a new observed entrance (Layer-2 rows)
        (convention)
    """

    SECTION = "render"

    soundfont_path: str
    sample_rate_hz: int
    synth_gain: float
    peak_dbfs: float
    gain_variants_db: list[float]
    midi_ticks_per_beat: int
    off_time_offset_s: list[float]
    pause_gap_s: list[float]
    fade_depth_db: float
    accent_ring_s: float
    fluidsynth_timeout_s: float
    observed_gap_s: float

    def validate(self) -> None:
        """Check value ranges.

        Raises
        ------
        ConfigError
            Naming ``render.<field>`` when a rate, tick count, timeout or gap is not
            positive, the peak level is above 0 dBFS, a gain variant is positive or a
            ``[low, high]`` range is malformed.
        """
        super().validate()
        sec = self.SECTION
        for name in ("sample_rate_hz", "midi_ticks_per_beat", "synth_gain", "fluidsynth_timeout_s",
                     "accent_ring_s", "fade_depth_db", "observed_gap_s"):
            if getattr(self, name) <= 0:
                raise _fail(sec, name, "must be positive", getattr(self, name))
        if self.peak_dbfs > 0.0:
            raise _fail(sec, "peak_dbfs", "must be at most 0 dBFS", self.peak_dbfs)
        if any(g > 0.0 for g in self.gain_variants_db):
            raise _fail(sec, "gain_variants_db", "must hold gains of at most 0 dB", self.gain_variants_db)
        _check_range(sec, "off_time_offset_s", self.off_time_offset_s, lo=0.0)
        _check_range(sec, "pause_gap_s", self.pause_gap_s, lo=0.0)


@register
@dataclass(frozen=True)
class MgbenchGenParams(Params):
    """Constants of the ``mgbench_gen`` section.

    Attributes
    ----------
    split_sizes_3n : dict[str, Any]
        MGBench Sec. 3.2.1: 4,200/900/900 clips (convention)
    split_sizes_2b : dict[str, Any]
        MGBench Sec. 3.3.1: 9,007/1,128/1,124 excerpts (convention)
    queries_per_clip_3n : dict[str, Any]
        MGBench Sec. 3.2.2: 20 grounding queries per clip in train/val, one in test (102,900 in all,
        Table 1) (convention)
    qa_per_excerpt_2b : dict[str, Any]
        MGBench Sec. 3.3.2 / Table 1: ~6 grounding and 8 understanding pairs per train/val excerpt
        (63,240 / 82,204 in all), one of each in test (convention)
    empty_ratio : float
        MGBench Sec. 3.2.2: 15 % of grounding queries have an empty answer (applied to 2B grounding
        too) (convention)
    clip_duration_3n_s : list[float]
        MGBench Sec. 3.2.1: clips are 1.5-5.0 s long (convention)
    edge_3n_s : list[float]
        silence before the first and after the last note: a model must locate the note, not the clip
        edge (convention)
    min_note_3n_s : float
        13 analysis frames: every note is long enough to have an attack and a pitch (convention)
    max_gap_3n_s : float
        notes follow each other with at most 0.4 s of silence, from legato to detached (convention)
    max_interval_3n : int
        MGBench Sec. 3.2.1: two-note clips span repeated notes through octave leaps (convention)
    velocity : list[int]
        mezzo-piano to forte: every note well above the soundfont's noise, none clipped (convention)
    meters_2b : list[str]
        MGBench Sec. 3.3.1: multiple meters, simple duple/triple/quadruple and compound duple
        (convention)
    tempo_2b_bpm : list[int]
        slow to fast; two 4/4 bars below ~53 BPM, with their edges, can exceed the 10 s limit and
        are then dropped (convention)
    articulation_2b : list[float]
        each note sounds 80-97 % of its metric length: strictly monophonic, with note offsets the
        audio can show (convention)
    edge_2b_s : list[float]
        silence before the first beat and after the last note (convention)
    max_excerpt_2b_s : float
        MGBench Sec. 3.3.1: samples longer than 10 s are removed (convention)
    max_attempts_2b : int
        redraws of a control set until an excerpt validates (a few are needed on average)
        (convention)
    render_batch_clips : int
        excerpts per FluidSynth run: soundfont loading (0.2-1.4 s) is paid once per 32 clips; fixed
        so output does not depend on --jobs (convention)
    release_gap_s : float
        silence between batched excerpts: longer than the piano release, so no excerpt hears its
        neighbour (convention)
    onset_check_frames : int
        issue 19: every annotated onset must have its onset-curve peak within one analysis frame
        (convention)
    """

    SECTION = "mgbench_gen"

    split_sizes_3n: dict[str, Any]
    split_sizes_2b: dict[str, Any]
    queries_per_clip_3n: dict[str, Any]
    qa_per_excerpt_2b: dict[str, Any]
    empty_ratio: float
    clip_duration_3n_s: list[float]
    edge_3n_s: list[float]
    min_note_3n_s: float
    max_gap_3n_s: float
    max_interval_3n: int
    velocity: list[int]
    meters_2b: list[str]
    tempo_2b_bpm: list[int]
    articulation_2b: list[float]
    edge_2b_s: list[float]
    max_excerpt_2b_s: float
    max_attempts_2b: int
    render_batch_clips: int
    release_gap_s: float
    onset_check_frames: int

    def validate(self) -> None:
        """Check value ranges.

        Raises
        ------
        ConfigError
            Naming ``mgbench_gen.<field>`` when a ``[low, high]`` range is malformed, the
            empty ratio is outside [0, 1], a count is not positive or a split size is
            missing.
        """
        super().validate()
        sec = self.SECTION
        for name in ("clip_duration_3n_s", "edge_3n_s", "velocity", "tempo_2b_bpm", "articulation_2b",
                     "edge_2b_s"):
            _check_range(sec, name, getattr(self, name), lo=0.0)
        if not 0.0 <= self.empty_ratio <= 1.0:
            raise _fail(sec, "empty_ratio", "must lie in [0, 1]", self.empty_ratio)
        for name in ("min_note_3n_s", "max_excerpt_2b_s", "max_attempts_2b", "render_batch_clips",
                     "release_gap_s", "onset_check_frames"):
            if getattr(self, name) <= 0:
                raise _fail(sec, name, "must be positive", getattr(self, name))
        if self.max_gap_3n_s < 0 or self.max_interval_3n < 0:
            raise _fail(sec, "max_gap_3n_s" if self.max_gap_3n_s < 0 else "max_interval_3n",
                        "must not be negative", min(self.max_gap_3n_s, self.max_interval_3n))
        for name in ("split_sizes_3n", "split_sizes_2b", "queries_per_clip_3n", "qa_per_excerpt_2b"):
            table = getattr(self, name)
            missing = [k for k in ("train", "val", "test") if k not in table]
            if missing:
                raise _fail(sec, name, f"needs an entry for every split (missing {missing})", table)


@register
@dataclass(frozen=True)
class MgbenchBaselineParams(Params):
    """Constants of the ``mgbench_baseline`` section.

    Attributes
    ----------
    onset_threshold : float | None
        onset-curve peaks above 25 % of the clip's largest peak are note attacks; set by inspecting
        6 generated 3N train clips (FluidR3), where every attack cleared it (few_shot)
    min_ioi_s : float
        two attacks closer than 100 ms are one note (the shortest generated note is 150 ms)
        (convention)
    offset_drop_db : float | None
        a note ends where the level falls 30 dB below its attack peak; of 6-40 dB on 40 generated
        train clips per subset (FluidR3) the best on 2B (offset MAE 60 ms), 3N 0.50 s (40 dB: 0.40
        s) (few_shot)
    pyin_fmin_hz : float
        just below A0 (27.5 Hz), the lowest piano key (convention)
    pyin_fmax_hz : float
        just above C8 (4186 Hz), the highest piano key (convention)
    pyin_frame_length : int
        93 ms at 44.1 kHz holds more than two periods of A0 (convention)
    pitch_window_s : list[float]
        pitch is read from 30-250 ms after the attack: past the hammer noise, before the decay
        (convention)
    """

    SECTION = "mgbench_baseline"

    onset_threshold: float | None
    min_ioi_s: float
    offset_drop_db: float | None
    pyin_fmin_hz: float
    pyin_fmax_hz: float
    pyin_frame_length: int
    pitch_window_s: list[float]

    def validate(self) -> None:
        """Check value ranges.

        Raises
        ------
        ConfigError
            Naming ``mgbench_baseline.<field>`` when the onset threshold is outside
            [0, 1], a drop, interval, frequency or frame length is not positive, or the
            pitch window is malformed.
        """
        super().validate()
        sec = self.SECTION
        if self.onset_threshold is not None and not 0.0 <= self.onset_threshold <= 1.0:
            raise _fail(sec, "onset_threshold", "must lie in [0, 1]", self.onset_threshold)
        if self.offset_drop_db is not None and self.offset_drop_db <= 0:
            raise _fail(sec, "offset_drop_db", "must be positive", self.offset_drop_db)
        for name in ("min_ioi_s", "pyin_fmin_hz", "pyin_frame_length"):
            if getattr(self, name) <= 0:
                raise _fail(sec, name, "must be positive", getattr(self, name))
        if self.pyin_fmax_hz <= self.pyin_fmin_hz:
            raise _fail(sec, "pyin_fmax_hz", f"must be above '{sec}.pyin_fmin_hz' ({self.pyin_fmin_hz!r:.40})",
                        self.pyin_fmax_hz)
        _check_range(sec, "pitch_window_s", self.pitch_window_s, lo=0.0)


@register
@dataclass(frozen=True)
class PromptsParams(Params):
    """Constants of the ``prompts`` section.

    Attributes
    ----------
    seed : int
        fixed seed: the committed prompts/timingbench-v1.jsonl is regenerated byte-identically
        (convention)
    id_prefix : str
        prompt ids tb1-0001 ... tb1-0250 name the set version (convention)
    duration_s : float
        paper Sec. III-A: every prompt requests exactly 30 s of instrumental audio (convention)
    family_counts : dict[str, Any]
        paper Table I: 100 single-event, 100 event-sequence, 50 tempo prompts (convention)
    kind_counts : dict[str, Any]
        paper Sec. III-A: 399 timed events = 287 entries, 59 exits, 27 silence-starts, 19
        ends/pauses, 7 energy increases (convention)
    instrument_families : list[str]
        paper Sec. III-A: nine instrument families; vocals excluded (instrumental audio),
        organ/e-piano 'keys' not targeted in v1 (convention)
    time_range_s : list[float]
        instructed times at least search.window_s (5 s) from both clip edges so the +-5 s window
        fits inside 30 s (convention)
    min_sibling_gap_s : float
        sibling gap >= 6 s keeps each clamped search window >= +-3 s, above the 3 s decay/pause
        budgets (convention)
    time_grid_s : float
        instructed times on a 0.5 s grid read naturally in text (6 s, 12.5 s) (convention)
    bpm_choices : list[int]
        common production tempi 60-174 BPM, the range of the paper's tempo references (convention)
    """

    SECTION = "prompts"

    seed: int
    id_prefix: str
    duration_s: float
    family_counts: dict[str, Any]
    kind_counts: dict[str, Any]
    instrument_families: list[str]
    time_range_s: list[float]
    min_sibling_gap_s: float
    time_grid_s: float
    bpm_choices: list[int]

    def validate(self) -> None:
        """Check value ranges.

        Raises
        ------
        ConfigError
            Naming ``prompts.<field>`` when the duration is not positive, the time range
            does not satisfy ``0 <= low < high <= duration_s``, the time grid is not
            positive, the sibling gap is negative or a count is negative.
        """
        super().validate()
        sec = self.SECTION
        if self.duration_s <= 0:
            raise _fail(sec, "duration_s", "must be positive", self.duration_s)
        tr = self.time_range_s
        if len(tr) != 2 or not 0.0 <= tr[0] < tr[1] <= self.duration_s:
            raise _fail(sec, "time_range_s", f"must satisfy 0 <= low < high <= '{sec}.duration_s' "
                        f"({self.duration_s!r:.40})", tr)
        if self.time_grid_s <= 0:
            raise _fail(sec, "time_grid_s", "must be positive", self.time_grid_s)
        if self.min_sibling_gap_s < 0:
            raise _fail(sec, "min_sibling_gap_s", "must not be negative", self.min_sibling_gap_s)
        for name in ("family_counts", "kind_counts"):
            if any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in getattr(self, name).values()):
                raise _fail(sec, name, "must hold counts >= 0", getattr(self, name))
        if not self.bpm_choices or any(b <= 0 for b in self.bpm_choices):
            raise _fail(sec, "bpm_choices", "must hold positive tempi", self.bpm_choices)

"""Parameter sets of the labelling server, system comparison, calibration and annotations.

(Fields and their generated docstrings: :mod:`timingbench.params`.)
"""

from __future__ import annotations

from dataclasses import dataclass

from timingbench.params.base import Params, register
from timingbench.params.base import constant_error as _fail


@register
@dataclass(frozen=True)
class LabelParams(Params):
    """Constants of the ``label`` section.

    Attributes
    ----------
    host : str
        the page edits local files: loopback only unless --host is given explicitly (convention)
    port : int
        an unprivileged port unlikely to clash with common dev servers (convention)
    default_split : str
        new labels are quarantined unless the annotator says --split dev (validation rows can never
        leak into fitting) (convention)
    max_body_bytes : int
        1 MiB bounds a request body; the largest legitimate one is an Audacity label file of a 35 s
        clip (convention)
    seek_step_s : float
        arrow keys seek by 1 s (shift+arrow by one analysis frame) (convention)
    zoom_px_per_s : list[int]
        zoom ladder from a whole 35 s clip on a laptop screen down to ~7 px per 11.6 ms frame
        (convention)
    default_zoom_index : int
        40 px/s shows about 25 s of a clip at once on a 1080p screen (convention)
    spectrogram_cache_clips : int
        log-mels of the 8 most recent clips stay in memory (~0.4 MB each) so going back and forth is
        instant (convention)
    """

    SECTION = "label"

    host: str
    port: int
    default_split: str
    max_body_bytes: int
    seek_step_s: float
    zoom_px_per_s: list[int]
    default_zoom_index: int
    spectrogram_cache_clips: int

    def validate(self) -> None:
        """Check value ranges.

        Raises
        ------
        ConfigError
            Naming ``label.<field>`` when the port is outside [0, 65535], a size, step or
            zoom is not positive, the zoom index is outside the ladder or the default split
            is unknown.
        """
        super().validate()
        sec = self.SECTION
        if not 0 <= self.port <= 65535:
            raise _fail(sec, "port", "must lie in [0, 65535]", self.port)
        for name in ("max_body_bytes", "seek_step_s", "spectrogram_cache_clips"):
            if getattr(self, name) <= 0:
                raise _fail(sec, name, "must be positive", getattr(self, name))
        if not self.zoom_px_per_s or any(z <= 0 for z in self.zoom_px_per_s):
            raise _fail(sec, "zoom_px_per_s", "must hold positive zoom levels", self.zoom_px_per_s)
        if not 0 <= self.default_zoom_index < len(self.zoom_px_per_s):
            raise _fail(sec, "default_zoom_index",
                        f"must index '{sec}.zoom_px_per_s' ({len(self.zoom_px_per_s)} levels)",
                        self.default_zoom_index)
        if self.default_split not in ("dev", "validation"):
            raise _fail(sec, "default_split", "must be 'dev' or 'validation'", self.default_split)


@register
@dataclass(frozen=True)
class CompareParams(Params):
    """Constants of the ``compare`` section.

    Attributes
    ----------
    low_p_chance_max : float
        low-p_chance credits: at most 1 in 8 chance re-scorings credited (2 of the paper's 16), so a
        credit is unlikely to be luck (convention)
    bootstrap_n : int
        2000 resamples give stable 95 % percentile intervals (Efron & Tibshirani) in well under a
        second (convention)
    bootstrap_seed : int
        fixed seed: the same results folders give the same intervals (convention)
    ci_level : float
        95 % intervals, the usual reporting level (convention)
    time_decimals : int
        round seconds before comparing with tolerances and floors (STYLE 5, sed_scores_eval
        time_decimals=6) (convention)
    min_prompts : int
        a bootstrap over fewer than 10 prompts gives degenerate intervals; such differences are not
        resolved (convention)
    """

    SECTION = "compare"

    low_p_chance_max: float
    bootstrap_n: int
    bootstrap_seed: int
    ci_level: float
    time_decimals: int
    min_prompts: int

    def validate(self) -> None:
        """Check value ranges.

        Raises
        ------
        ConfigError
            Naming ``compare.<field>`` when ``bootstrap_n`` or ``min_prompts`` is below 1,
            ``ci_level`` is outside (0, 1), ``low_p_chance_max`` outside [0, 1] or
            ``time_decimals`` negative.
        """
        super().validate()
        sec = self.SECTION
        if self.bootstrap_n < 1:
            raise _fail(sec, "bootstrap_n", "must be at least 1", self.bootstrap_n)
        if not 0.0 < self.ci_level < 1.0:
            raise _fail(sec, "ci_level", "must lie in (0, 1)", self.ci_level)
        if not 0.0 <= self.low_p_chance_max <= 1.0:
            raise _fail(sec, "low_p_chance_max", "must lie in [0, 1]", self.low_p_chance_max)
        if self.time_decimals < 0:
            raise _fail(sec, "time_decimals", "must not be negative", self.time_decimals)
        if self.min_prompts < 1:
            raise _fail(sec, "min_prompts", "must be at least 1", self.min_prompts)


@register
@dataclass(frozen=True)
class CalibrationParams(Params):
    """Constants of the ``calibration`` section.

    Attributes
    ----------
    offset_match_s : float
        an off-time report is right when its detected onset is within 0.25 s of the annotated one
        (convention)
    evidence_max_negative_rate : float
        calibrate evidence keeps only points that credit at most 3 % of the dev negatives (the bar
        users hold a judged family to) and among them maximises on-time credited + off-time located;
        with none, the point crediting fewest negatives (convention)
    presence_step_floor : float
        calibrate evidence: the least step threshold (log-odds) the presence fit may choose: a rise
        of half a log-odds is the tagger columns' own jitter (convention)
    judge_min_on_time : float
        a family is judged by an evidence when its audible dev events on real material (entrances
        and exits at calibration.judge_min_level_db or louder re the backing) are credited on time
        at 80 % or more (issue 48's bar; calibration/judging.py) (convention)
    judge_min_events : int
        over at least 8 audible on-time dev events: fewer cannot show 80 % (convention)
    judge_min_level_db : float
        an event counts toward the bar when its part sits at -12 dB or louder relative to the
        backing: judged means audible; quieter events are reported by level band, not held against
        the bar (convention)
    judge_max_negative_rate : float
        and at most 5 % of the dev negatives (absent targets, parts that never stop, busy decoys,
        pre-existing parts) credited on time (was: none credited, which one decoy in a small set
        decides) (convention)
    judge_min_negatives : int
        over at least 10 dev negatives: fewer cannot show a false-credit rate (convention)
    judge_level_bands_db : list[list[float]]
        on-time recall is recorded per level band of the part re the backing (-18...-12, -12...-6,
        -6...0 dB; each [lo, hi), the last closed): the quietest band heard at 80 % is 'the quietest
        entrance it hears' (docs/families.md) (convention)
    """

    SECTION = "calibration"

    offset_match_s: float
    evidence_max_negative_rate: float
    presence_step_floor: float
    judge_min_on_time: float
    judge_min_events: int
    judge_min_level_db: float
    judge_max_negative_rate: float
    judge_min_negatives: int
    judge_level_bands_db: list[list[float]]

    def validate(self) -> None:
        """Check value ranges.

        Raises
        ------
        ConfigError
            Naming ``calibration.offset_match_s`` when it is not positive.
        """
        super().validate()
        if self.offset_match_s <= 0:
            raise _fail(self.SECTION, "offset_match_s", "must be positive", self.offset_match_s)
        if not 0 <= self.judge_max_negative_rate <= 1:
            raise _fail(self.SECTION, "judge_max_negative_rate", "must lie in [0, 1]", self.judge_max_negative_rate)
        bands = self.judge_level_bands_db
        if not bands or any(not isinstance(b, list | tuple) or len(b) != 2 or not b[0] < b[1] for b in bands) \
                or any(a[1] > b[0] for a, b in zip(bands, bands[1:], strict=False)):
            raise _fail(self.SECTION, "judge_level_bands_db", "must be increasing [lo, hi] bands (dB), lo < hi", bands)


@register
@dataclass(frozen=True)
class AnnotationsParams(Params):
    """Constants of the ``annotations`` section.

    Attributes
    ----------
    onset_within_s : list[float]
        shares of inter-annotator onset |delta| within 25 / 50 / 100 ms: below, at and above the
        MIREX 50 ms onset window (convention)
    inventory_window_s : float
        two annotators' Layer-2 onsets agree within +-50 ms (MIREX onset window, mir_eval
        onset.f_measure default) (convention)
    displacement_bins_s : list[float]
        histogram edges of annotated onset minus instructed time: the +-5 s search window, finer
        near the 0.5 s default tolerance; values beyond the ends get their own open bins
        (convention)
    human_band_quantiles : list[float]
        the human spread is the interquartile range of inter-annotator onset |delta|; a detector
        median error at or below its upper edge is within human disagreement (convention)
    """

    SECTION = "annotations"

    onset_within_s: list[float]
    inventory_window_s: float
    displacement_bins_s: list[float]
    human_band_quantiles: list[float]

    def validate(self) -> None:
        """Check value ranges.

        Raises
        ------
        ConfigError
            Naming ``annotations.<field>`` when a window is not positive, the histogram
            edges are not increasing or the band quantiles are not an increasing pair in
            [0, 1].
        """
        super().validate()
        sec = self.SECTION
        if not self.onset_within_s or any(w <= 0 for w in self.onset_within_s):
            raise _fail(sec, "onset_within_s", "must hold positive windows", self.onset_within_s)
        if self.inventory_window_s <= 0:
            raise _fail(sec, "inventory_window_s", "must be positive", self.inventory_window_s)
        e = self.displacement_bins_s
        if len(e) < 2 or any(b <= a for a, b in zip(e, e[1:], strict=False)):
            raise _fail(sec, "displacement_bins_s", "must be increasing histogram edges", e)
        q = self.human_band_quantiles
        if len(q) != 2 or not 0.0 <= q[0] < q[1] <= 1.0:
            raise _fail(sec, "human_band_quantiles", "must be quantiles 0 <= low < high <= 1", q)


@register
@dataclass(frozen=True)
class RuntimeParams(Params):
    """Constants of the ``runtime`` section.

    Attributes
    ----------
    default_jobs_max : int
        --jobs defaults to the cores available to the process, at most 4: past 4 processes the
        per-clip memory (feature bank, stems) grows faster than the time saved on a laptop; results
        are identical for any value (convention)
    """

    SECTION = "runtime"

    default_jobs_max: int

    def validate(self) -> None:
        """Check value ranges.

        Raises
        ------
        ConfigError
            Naming ``runtime.default_jobs_max`` when it is below 1.
        """
        super().validate()
        if self.default_jobs_max < 1:
            raise _fail(self.SECTION, "default_jobs_max", "must be at least 1", self.default_jobs_max)

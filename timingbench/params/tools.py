"""Parameter sets of the labelling server, system comparison, calibration and annotations.

Generated field by field from ``configs/timingbench-v1.yaml``: each field is the constant
of the same name in the class's section; its docstring line is the constant's ``why``.
"""

from __future__ import annotations

from dataclasses import dataclass

from timingbench.params.base import Params, register


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
        new labels are quarantined unless the annotator says --split dev (validation rows can
        never leak into fitting) (convention)
    max_body_bytes : int
        1 MiB bounds a request body; the largest legitimate one is an Audacity label file of a
        35 s clip (convention)
    seek_step_s : float
        arrow keys seek by 1 s (shift+arrow by one analysis frame) (convention)
    zoom_px_per_s : list[int]
        zoom ladder from a whole 35 s clip on a laptop screen down to ~7 px per 11.6 ms frame
        (convention)
    default_zoom_index : int
        40 px/s shows about 25 s of a clip at once on a 1080p screen (convention)
    spectrogram_cache_clips : int
        log-mels of the 8 most recent clips stay in memory (~0.4 MB each) so going back and
        forth is instant (convention)
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


@register
@dataclass(frozen=True)
class CompareParams(Params):
    """Constants of the ``compare`` section.

    Attributes
    ----------
    low_p_chance_max : float
        low-p_chance subset: at most 2 of the 16 chance re-scorings credited, so a credit is
        unlikely to be luck (convention)
    bootstrap_n : int
        2000 resamples give stable 95 % percentile intervals (Efron & Tibshirani) in well under
        a second (convention)
    bootstrap_seed : int
        fixed seed: the same results folders give the same intervals (convention)
    ci_level : float
        95 % intervals, the usual reporting level (convention)
    time_decimals : int
        round seconds before comparing with tolerances and floors (STYLE 5, sed_scores_eval
        time_decimals=6) (convention)
    min_prompts : int
        a bootstrap over fewer than 10 prompts gives degenerate intervals; such differences are
        not resolved (convention)
    """

    SECTION = "compare"

    low_p_chance_max: float
    bootstrap_n: int
    bootstrap_seed: int
    ci_level: float
    time_decimals: int
    min_prompts: int


@register
@dataclass(frozen=True)
class CalibrationParams(Params):
    """Constants of the ``calibration`` section.

    Attributes
    ----------
    offset_match_s : float
        an off-time report is right when its detected onset is within 0.25 s of the annotated
        one (convention)
    """

    SECTION = "calibration"

    offset_match_s: float


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

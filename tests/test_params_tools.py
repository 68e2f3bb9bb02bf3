"""Range checks of the generator and tool parameter sets (params/generation.py, params/tools.py)."""

from __future__ import annotations

import dataclasses

import pytest

from timingbench.config import load_config
from timingbench.errors import ConfigError


@pytest.mark.parametrize(("section", "field", "value"), [
    ("render", "sample_rate_hz", 0),
    ("render", "peak_dbfs", 1.0),
    ("render", "gain_variants_db", [0.0, 6.0]),
    ("render", "off_time_offset_s", [4.0, 0.3]),
    ("render", "pause_gap_s", [3.0]),
    ("mgbench_gen", "empty_ratio", 1.5),
    ("mgbench_gen", "edge_3n_s", [0.5, 0.1]),
    ("mgbench_gen", "render_batch_clips", 0),
    ("mgbench_gen", "split_sizes_3n", {"train": 1, "val": 1}),
    ("mgbench_baseline", "onset_threshold", 1.5),
    ("mgbench_baseline", "offset_drop_db", -3.0),
    ("mgbench_baseline", "pyin_fmax_hz", 10.0),
    ("prompts", "time_range_s", [5.0, 31.0]),
    ("prompts", "time_grid_s", 0.0),
    ("prompts", "min_sibling_gap_s", -1.0),
    ("label", "port", 70000),
    ("label", "default_zoom_index", 99),
    ("label", "default_split", "train"),
    ("compare", "ci_level", 1.0),
    ("compare", "bootstrap_n", 0),
    ("compare", "low_p_chance_max", -0.1),
    ("calibration", "offset_match_s", 0.0),
    ("annotations", "displacement_bins_s", [0.0, -1.0]),
    ("annotations", "human_band_quantiles", [0.75, 0.25]),
])
def test_out_of_range_value_names_section_and_field(section: str, field: str, value: object) -> None:
    params = getattr(load_config().params, section)
    with pytest.raises(ConfigError, match=f"'{section}.{field}'"):
        dataclasses.replace(params, **{field: value})


@pytest.mark.parametrize("section", ["render", "mgbench_gen", "mgbench_baseline", "prompts", "label",
                                     "compare", "calibration", "annotations"])
def test_shipped_values_pass(section: str) -> None:
    params = getattr(load_config().params, section)
    assert dataclasses.replace(params) == params


def test_switched_off_baseline_thresholds_are_accepted() -> None:
    p = load_config().params.mgbench_baseline
    off = dataclasses.replace(p, onset_threshold=None, offset_drop_db=None)
    assert off.onset_threshold is None and off.offset_drop_db is None

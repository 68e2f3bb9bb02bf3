"""``timingbench compare``: floor-aware comparison of scored systems (paper Sec. I, IV-E, V-A).

Read results folders (:func:`load_results`), compare them (:func:`compare_systems`), and
write the tables (:func:`write_report`) and plots (:func:`write_plots`).
"""

from timingbench.compare.core import (
    CompareSettings,
    Comparison,
    PairRow,
    compare_systems,
    metric_info,
    settings_from_config,
    system_estimates,
)
from timingbench.compare.plots import write_plots
from timingbench.compare.report import format_text, to_json, write_report
from timingbench.compare.results import SystemResults, load_results, mixed_reasons
from timingbench.compare.stats import Estimate

__all__ = [
    "CompareSettings",
    "Comparison",
    "Estimate",
    "PairRow",
    "SystemResults",
    "compare_systems",
    "format_text",
    "load_results",
    "metric_info",
    "mixed_reasons",
    "settings_from_config",
    "system_estimates",
    "to_json",
    "write_plots",
    "write_report",
]

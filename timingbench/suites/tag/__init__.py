"""TAG-Bench scoring: temporal audio grounding answers against ground-truth intervals.

Modules: :mod:`~timingbench.suites.tag.answers` (the TAG-Bench layer of the time-span
parsing core), :mod:`~timingbench.suites.tag.io` (files), :mod:`~timingbench.suites.tag.metrics`
(per-query scores, group means) and :mod:`~timingbench.suites.tag.report` (a whole file).

Metrics follow the TAG-Bench paper (Sec. 4.2, Tables 2-5), macro-averaged over queries
(each query counts once, whatever its audio length or number of intervals):

- **mIoU**: mean union-based IoU (:func:`timingbench.intervals.union_iou`) of the
  predicted and ground-truth interval sets.
- **R@t**: percentage of queries with union-IoU >= t, t in ``tag.recall_iou_thresholds``.
- **gIoU**: mean generalized IoU of the unions scaled to [-100, 100]; a parsing failure
  scores -100. ``gIoU_parsed`` is the same mean over parsed answers only.
- **MAE**: midpoint absolute error in seconds (each ground-truth interval to the nearest
  predicted midpoint, averaged per query), over parsed answers only, with its coverage
  **Cvg** = parsed / all = 1 - Fail.
- **Fail**: percentage of answers without a recoverable interval.
- **Count diagnostics**: count accuracy (predicted count equals ground-truth count),
  under- and over-reporting rates, mean number of predicted intervals (0 for a failure).

A parsing failure is replaced by the empty-prediction sentinel ``0s~0s``: IoU 0, a miss
at every threshold, gIoU -1, zero predicted intervals. All rates are percentages.
Groups: ``overall``, ``one_to_one`` (one ground-truth interval), ``one_to_many``
(``tag.one_to_many_min_intervals`` or more) and one group per subset.
"""

from timingbench.suites.tag.answers import SENTINEL, parse_interval_list, parse_response, parse_responses
from timingbench.suites.tag.io import TagPrediction, TagQuery, load_ground_truth, load_predictions
from timingbench.suites.tag.metrics import TagScores, score_queries, summarize
from timingbench.suites.tag.report import TagReport, evaluate, format_table

__all__ = [
    "SENTINEL", "TagQuery", "TagPrediction", "TagScores", "TagReport", "load_ground_truth", "load_predictions",
    "parse_response", "parse_interval_list", "parse_responses", "score_queries", "summarize", "evaluate",
    "format_table",
]

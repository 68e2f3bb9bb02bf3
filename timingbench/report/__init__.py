"""``timingbench report``: a self-contained static HTML report of one scored run (or several).

:func:`build_report` writes ``index.html`` (overview with bootstrap intervals, per-family
and per-kind outcome shares and signed-error distributions against the measurement
floors, the systems side by side with ``--compare``, and a sortable, filterable,
paginated clip table) and one page per clip (log-mel with every event's times, audio
player, gate tables and explain plots), with no network requests.
"""

from timingbench.report.run import Run, load_run
from timingbench.report.writer import ReportResult, build_report

__all__ = ["ReportResult", "Run", "build_report", "load_run"]

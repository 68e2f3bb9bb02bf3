"""Files shipped inside the package, found with :mod:`importlib.resources`.

The default configuration and the v1 prompt set are package data under
``timingbench/data/``, so an installed wheel needs no repository. In the repository those
two entries are committed symbolic links to the files docs/formats.md names (``configs/*.yaml`` and
``prompts/*.jsonl``), which stay the one copy that people edit; a wheel build copies the
files they point to (``tests/test_wheel.py`` checks that the wheel's bytes equal them).
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

#: The package's data folder (a real folder for a wheel or a checkout; see ``data_path``).
DATA: Traversable = resources.files("timingbench") / "data"


def data_path(*parts: str) -> Path:
    """The path of a packaged data file, e.g. ``data_path("prompts", "timingbench-v1.jsonl")``.

    pip unpacks wheels, so package data is a real file. The path is resolved: in the
    repository it is the file the link points to (``configs/timingbench-v1.yaml``, as
    ``summary.json`` has always recorded it). It is returned without checking that it
    exists (readers report a missing file naming it).
    """
    return Path(str(DATA.joinpath(*parts))).resolve()


#: The v1 prompt set (``prompts/timingbench-v1.jsonl``, formats §1).
DEFAULT_PROMPTS_PATH = data_path("prompts", "timingbench-v1.jsonl")
#: The label page's static files (``index.html``, ``app.js``, ``style.css``).
LABEL_ASSETS: Traversable = DATA / "label"
#: The run report's static files (``report.css``, ``index.js``, ``clip.js``).
REPORT_ASSETS: Traversable = DATA / "report"

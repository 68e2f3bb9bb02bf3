"""The demo's rows are a regression fixture: scoring the demo corpus gives the committed rows, byte for byte.

``tests/data/demo_rows`` holds ``events.jsonl`` and ``clips.jsonl`` of ``timingbench demo`` (``--separation dsp``)
and the summary's rates, as scored by the release before the identity path was made one. A change that moves any
verdict, gate, statistic or rate of the demo fails here; one that means to must regenerate the fixture on purpose
(``timingbench demo --out DIR``, then copy ``DIR/results/events.jsonl`` and ``clips.jsonl``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from timingbench.config import Config

FIXTURE = Path(__file__).resolve().parent / "data" / "demo_rows"
FLUID = Path("/usr/share/sounds/sf2/FluidR3_GM.sf2")
#: Summary fields compared with the fixture (paths, the configuration's hash and the disclosures of newer
#: evidence are not rates).
RATE_FIELDS = ("counts", "rates_identity_verified", "rates", "rates_excluding_errors", "by_kind", "by_family",
               "identity_not_verified", "p_chance_discounted_on_time_rate",
               "p_chance_discounted_on_time_rate_identity_verified", "p_chance_discounted_on_time_rate_chance_se",
               "tempo", "duration_compliance", "timbre_match_rate", "errors", "identity_judged", "chance_credit")


@pytest.fixture(scope="module")
def demo_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not FLUID.is_file() or not shutil.which("fluidsynth"):
        pytest.skip("FluidSynth and FluidR3_GM are installed by `make setup`")
    from timingbench.config import load_config
    from timingbench.render import render_corpus
    from timingbench.runner import ScoreOptions, score_folder

    out = tmp_path_factory.mktemp("demo")
    corpus = Path(render_corpus("demo", out_dir=out / "corpus", jobs=1))
    score_folder(corpus / "clips", corpus / "prompts.jsonl", out / "results", load_config(),
                 opts=ScoreOptions(separation="dsp"), jobs=1)
    return out / "results"


@pytest.mark.parametrize("name", ["events.jsonl", "clips.jsonl"])
def test_demo_rows_are_byte_identical(demo_results: Path, name: str) -> None:
    got = (demo_results / name).read_bytes().splitlines()
    want = (FIXTURE / name).read_bytes().splitlines()
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g == w, f"{name} row {i + 1} differs:\n got  {g.decode()}\n want {w.decode()}"


def test_demo_rates_are_unchanged(demo_results: Path, config: Config) -> None:
    summary = json.loads((demo_results / "summary.json").read_text(encoding="utf-8"))
    want = json.loads((FIXTURE / "summary_rates.json").read_text(encoding="utf-8"))
    assert {k: summary[k] for k in RATE_FIELDS} == want

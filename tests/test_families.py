"""The family registry (``families`` section, :mod:`timingbench.families`): one table every consumer reads."""

from __future__ import annotations

import ast
import copy
import csv
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from timingbench import families
from timingbench.config import Config, load_config
from timingbench.errors import ConfigError, ParameterError

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "timingbench"
CONFIG = ROOT / "configs" / "timingbench-v1.yaml"
#: The AudioSet labels the pretrained tagger reads (beside the repository).
LABELS = ROOT.parent / "shared" / "models" / "efficientat-mn04" / "class_labels_indices.csv"
#: The shipped evidence network's output rows: the registry must keep this order.
NETWORK_ROWS = ("percussion", "bass", "guitar", "piano", "vocals", "strings", "brass", "woodwinds", "keys",
                "plucked", "synth")


def _table(config: Config) -> list[dict[str, Any]]:
    return copy.deepcopy(config.params.families.table)


def test_the_order_is_the_shipped_networks() -> None:
    import torch

    from timingbench.models.family_net_infer import WEIGHTS

    assert families.FAMILY_NAMES == NETWORK_ROWS
    blob = torch.load(WEIGHTS, map_location="cpu", weights_only=True)
    assert tuple(blob["families"]) == families.FAMILY_NAMES
    assert families.EVENT_FAMILIES == (*NETWORK_ROWS, "mix")


def test_back_compatible_names_are_the_registry() -> None:
    from timingbench.families import FAMILY_NAMES
    from timingbench.families import FAMILY_NAMES as RENDERED
    from timingbench.identity.training.programs import FAMILIES
    from timingbench.prompts import EVENT_FAMILIES, STEM_FAMILIES, TONAL_FAMILIES

    assert FAMILY_NAMES == FAMILIES == RENDERED == families.FAMILY_NAMES
    assert EVENT_FAMILIES == families.EVENT_FAMILIES
    assert set(STEM_FAMILIES) | set(TONAL_FAMILIES) == set(families.FAMILY_NAMES)
    assert all(families.family(f).stem is not None for f in STEM_FAMILIES)


def test_row_access(config: Config) -> None:
    piano = families.family("piano", config)
    assert piano.gm_programs == (0, 1, 2, 3) and "Piano" in piano.audioset_classes and piano.stem == "piano"
    assert piano.judged == (piano.exempt_reason is None)
    perc = families.family("percussion")
    assert perc.gm_drum_kits and 47 in perc.gm_programs
    assert families.judged_families(config) == tuple(f for f in NETWORK_ROWS if families.family(f).judged)
    assert set(families.exempt_families(config)) == set(NETWORK_ROWS) - set(families.judged_families(config))
    assert families.floor_s("mix", config) == config.params.families.floor_of("mix")
    assert "Speech" in families.speech_classes() and "Animal" in families.animal_classes()
    with pytest.raises(ParameterError, match="'mix' is not an instrument family"):
        families.family("mix")


def test_exempt_state_is_one_edit_and_reaches_the_evidence(config: Config) -> None:
    table = _table(config)
    row = next(r for r in table if "exempt" in r)
    del row["exempt"]
    row["judged"] = True
    cfg = config.with_value("families.table", table)
    assert cfg.content_hash != config.content_hash  # the registry is part of the hashed configuration
    assert row["name"] in families.judged_families(cfg) and row["name"] not in families.exempt_families(cfg)
    assert row["name"] not in cfg.params.evidence.families.exempt  # what the trained evidence reads
    assert row["name"] in config.params.evidence.families.exempt


def test_audioset_classes_are_the_taggers_display_names() -> None:
    if not LABELS.is_file():
        pytest.skip(f"{LABELS} is not present beside the repository")
    with LABELS.open(encoding="utf-8") as fh:
        names = {r["display_name"] for r in csv.DictReader(fh)}
    reg = families.registry()
    for f in reg.rows:
        assert set(f.audioset_classes) <= names, (f.name, set(f.audioset_classes) - names)
    assert set(reg.speech_classes) <= names and set(reg.animal_classes) <= names


def test_stems_are_separation_stems() -> None:
    from timingbench.features.separation import STEMS_4, STEMS_6_EXTRA

    for f in families.registry().rows:
        assert f.stem is None or f.stem in STEMS_4 + STEMS_6_EXTRA, f


def test_renderer_and_evidence_programs_are_the_registrys() -> None:
    from timingbench.identity.training.programs import CHOIR_PROGRAMS, PROGRAMS
    from timingbench.render.instruments import INSTRUMENTS

    for spec in INSTRUMENTS.values():
        row = families.family(spec.family)
        assert spec.program in (row.gm_drum_kits if spec.is_drum else row.gm_programs), spec
    for f in families.registry().rows:
        assert any(s.family == f.name for s in INSTRUMENTS.values()), f"the renderer has no {f.name} instrument"
        assert [p.program for p in PROGRAMS[f.name]] == [*f.gm_drum_kits, *(p for p in f.gm_programs
                                                                              if p not in CHOIR_PROGRAMS)]


@pytest.mark.parametrize(("edit", "needle"), [
    (lambda t: t.append(dict(t[0])), "names a family twice"),
    (lambda t: t[1].update(gm_programs=[*t[1]["gm_programs"], 0]), "0 to both 'bass' and 'piano'"),
    (lambda t: t[0].update(judged=True, exempt="x"), "either 'judged: true' or 'exempt: <reason>'"),
    (lambda t: t[0].update(dev_on_time=[9, 8]), "two whole numbers"),
    (lambda t: t[2].pop("exempt", None) or t[2].pop("judged", None), "either 'judged: true' or 'exempt: <reason>'"),
    (lambda t: t[0].update(colour="red"), "unknown field"),
    (lambda t: t[0].update(name="mix"), "other than 'mix'"),
    (lambda t: t[0].pop("audioset_classes"), "lacks field"),
    (lambda t: t[0].update(gm_programs=[128]), "0-127"),
])
def test_a_malformed_row_is_refused_naming_the_constant(config: Config, edit: Any, needle: str) -> None:
    table = _table(config)
    edit(table)
    with pytest.raises(ConfigError, match=rf"families\.table.*({needle})"):
        config.with_value("families.table", table).params.families  # noqa: B018


def test_a_floor_of_no_family_is_refused(config: Config) -> None:
    with pytest.raises(ConfigError, match="families.floors_s.*'harp'"):
        config.with_value("families.floors_s", {"harp": 0.1}).params.families  # noqa: B018


def test_a_configuration_may_not_change_the_list(config: Config) -> None:
    table = _table(config)
    table[0], table[1] = table[1], table[0]
    cfg = config.with_value("families.table", table)
    with pytest.raises(ConfigError, match="not the list"):
        families.judged_families(cfg)


def test_no_module_writes_the_family_list_out() -> None:
    """A literal naming every family is a second copy of the registry. The corpus definitions'
    exit order (``render/corpus.py``) is a fixed choice of the committed corpora, not a copy."""
    allowed = {("render/corpus.py", "_EXIT_FAMILIES")}
    hits = []
    for p in PKG.rglob("*.py"):
        tree = ast.parse(p.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
            name = target.id if isinstance(target, ast.Name) else ""
            value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
            if value is None:
                continue
            strings = {n.value for n in ast.walk(value) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
            if set(NETWORK_ROWS) <= strings and (str(p.relative_to(PKG)), name) not in allowed:
                hits.append(f"{p.relative_to(PKG)}:{node.lineno}")
    assert not hits, f"family lists written out in code (read timingbench.families instead): {hits}"


def _docs_tool() -> Any:
    spec = importlib.util.spec_from_file_location("families_docs", ROOT / "tools" / "families_docs.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_readme_and_docs_tables_are_the_registry() -> None:
    tool = _docs_tool()
    drifts = tool.check()
    assert not drifts, "run tools/families_docs.py --write:\n" + "\n".join(
        f"{d.path.name} families:{d.kind}: {d.have!r:.120} != {d.want!r:.120}" for d in drifts)
    assert "table" in tool.kinds(ROOT / "docs" / "families.md")
    assert {"judged", "exempt"} <= set(tool.kinds(ROOT / "README.md"))
    assert {"detector:stem", "detector:tonal"} <= set(tool.kinds(ROOT / "docs" / "scoring.md"))


def test_a_drifted_docs_table_is_caught(tmp_path: Path) -> None:
    tool = _docs_tool()
    page = tmp_path / "page.md"
    page.write_text("Judged: <!-- families:judged -->percussion<!-- /families -->.\n", encoding="utf-8")
    text, drifts = tool.generate(page)
    assert [d.kind for d in drifts] == ["judged"]
    assert f"<!-- families:judged -->{', '.join(families.judged_families()) or 'none'}<!-- /families -->" in text


# ----------------------------------------------------------------------------- a twelfth family

HARP = {"name": "harp", "exempt": "not_in_the_evidence_network", "gm_programs": [46],
        "audioset_classes": ["Harp"], "prompt_targets": ["a concert harp"]}

#: Run in a fresh interpreter whose packaged configuration is the planted copy: every module
#: reads its family list when first imported.
PLANTED_CHECKS = r'''
import json, sys
from pathlib import Path
import timingbench.config as tc
tc.DEFAULT_CONFIG_PATH = Path(sys.argv[1])
out = {}
from timingbench import families
cfg = tc.load_config()
out["registry"] = list(families.FAMILY_NAMES)
from timingbench.prompts import EVENT_FAMILIES, parse_prompt
out["prompt_families"] = list(EVENT_FAMILIES)
row = {"id": "p1", "family": "single_event", "text": "Bring in a harp at 6 s.", "style": "s", "duration_s": 30.0,
       "events": [{"id": "p1/e1", "kind": "instrument_entry", "target": "a harp", "family": "harp", "time_s": 6.0}],
       "tempo": None}
out["prompt_accepted"] = parse_prompt(row).events[0].family
from timingbench.families import FAMILY_NAMES
out["identity"] = list(FAMILY_NAMES)
from timingbench.render.instruments import INSTRUMENTS, styles_with_family
from timingbench.families import FAMILY_NAMES as RENDER_FAMILIES
out["render_families"] = list(RENDER_FAMILIES)
out["render_harp"] = [INSTRUMENTS["harp"].family, INSTRUMENTS["harp"].program]
out["render_styles"] = styles_with_family("harp")
from timingbench.identity.training.programs import FAMILIES, PROGRAMS, programs_for
out["evidence_families"] = list(FAMILIES)
out["evidence_programs"] = [p.program for p in PROGRAMS["harp"]]
out["evidence_plucked_has_46"] = any(p.program == 46 for p in programs_for("synth")["plucked"])
from timingbench.models.family_net import NetShape
out["network_rows"] = NetShape().n_families
from timingbench.scoring import detector_for
out["detector"] = detector_for("instrument_entry", "harp")
out["exempt"] = families.exempt_families(cfg)
from timingbench.runner import floor_of
out["floor"] = floor_of("harp", cfg)
from timingbench.calibration.confusion import confusion_profile
from timingbench.calibration.groups import GROUPS, family_report, group_report
out["tonal_group"] = list(GROUPS["tonal families"])
r = {"clip": "a.wav", "family": "harp", "kind": "instrument_entry", "outcome": "on_time", "truth_occurred": True,
     "truth_onset_s": 6.0, "instructed_s": 6.0, "tolerance_s": 0.5, "abs_error_to_truth_s": 0.01,
     "class": "correct_credit"}
out["confusion"] = sorted(confusion_profile([r])["by_family"])
groups = group_report([r], exempt=["harp"], scenarios={}, offset_match_s=0.25)
out["group_report"] = groups["tonal families"]["exempt_families"]
out["family_report"] = sorted(family_report([r], exempt=["harp"], scenarios={}, offset_match_s=0.25))
from timingbench.compare.results import load_results
from timingbench.compare.core import family_floors, system_estimates
from timingbench.compare.synthetic import SyntheticSystem, write_synthetic_results
res = write_synthetic_results(Path(sys.argv[2]), prompts=[parse_prompt(row)], system=SyntheticSystem(), seed=1)
system = load_results(res, name="s")
out["report_estimates"] = sorted(k for k in system_estimates(system, config=cfg) if "family=harp" in k)
out["report_floors"] = sorted(family_floors([system]))
print(json.dumps(out))
'''


def test_a_planted_twelfth_family_shows_up_everywhere(tmp_path: Path) -> None:
    data = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    fam = data["constants"]["families"]
    plucked = next(r for r in fam["table"]["value"] if r["name"] == "plucked")
    plucked["gm_programs"].remove(46)  # a program belongs to one family
    fam["table"]["value"].append(HARP)
    fam["floors_s"]["value"]["harp"] = 0.04
    planted = tmp_path / "planted.yaml"
    planted.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    script = tmp_path / "checks.py"
    script.write_text(textwrap.dedent(PLANTED_CHECKS), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(script), str(planted), str(tmp_path / "results")], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    twelve = [*NETWORK_ROWS, "harp"]
    assert out["registry"] == out["identity"] == out["render_families"] == out["evidence_families"] == twelve
    assert out["prompt_families"] == [*twelve, "mix"] and out["prompt_accepted"] == "harp"
    assert out["render_harp"] == ["harp", 46] and out["render_styles"] == ["cinematic", "orchestral"]
    assert out["evidence_programs"] == [46] and not out["evidence_plucked_has_46"]
    assert out["network_rows"] == 12 and out["detector"] == "tonal"
    assert out["exempt"]["harp"] == "not_in_the_evidence_network" and out["floor"] == 0.04
    assert "harp" in out["tonal_group"] and out["group_report"] == ["harp"]
    assert out["confusion"] == ["harp"] and out["family_report"] == ["harp"]
    assert "on_time_rate|family=harp" in out["report_estimates"] and "harp" in out["report_floors"]
    # the packaged list is untouched in this process
    assert "harp" not in families.FAMILY_NAMES
    assert load_config(planted).params.families.names[-1] == "harp"


def test_judging_every_family_judges_every_row_and_changes_nothing_else(config: Config) -> None:
    every = families.judging_every_family(config)
    assert families.judged_families(every) == families.FAMILY_NAMES and families.exempt_families(every) == {}
    for a, b in zip(families.registry(config).rows, families.registry(every).rows, strict=True):
        assert (a.name, a.gm_programs, a.audioset_classes, a.stem) == \
            (b.name, b.gm_programs, b.audioset_classes, b.stem)
    assert families.exempt_families(config)  # the shipped registry is left as it is


def test_judging_some_families_leaves_the_other_rows_as_they_are(config: Config) -> None:
    one = families.judging(config, ["bass"])
    assert families.judged_families(one) == tuple(f for f in families.FAMILY_NAMES
                                                  if f == "bass" or f in families.judged_families(config))
    assert {k: v for k, v in families.exempt_families(config).items() if k != "bass"} == \
        families.exempt_families(one)

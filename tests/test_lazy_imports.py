"""Heavy modules are imported only where they are needed: torch stays out of a run that reads no tagger."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def _modules_after(code: str) -> set[str]:
    """The names in ``sys.modules`` after ``code`` ran in a fresh interpreter."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("code", [
    "import timingbench.models.tagger",
    # what `timingbench score` does before it scores: the parser of every command, the config
    # with --tagger-weights applied
    "from timingbench.cli import build_parser\n"
    "from timingbench.commands.score_cmd import scoring_config\n"
    "scoring_config(build_parser().parse_args(['score', 'c', '--prompts', 'p', '--out', 'o']))",
])
def test_the_tagger_module_and_the_score_command_set_up_import_no_torch(code):
    assert "torch" not in _modules_after(code)


def test_resolving_auto_separation_without_demucs_weights_imports_no_torch(tmp_path):
    # an empty torch hub cache: `auto` falls back to dsp, and finding that out needs neither
    # demucs nor torch (the default scoring run of a clip of whole-mix events imports neither)
    code = ("import os\n"
            f"os.environ['TORCH_HOME'] = {str(tmp_path)!r}\n"
            "from timingbench.config import load_config\n"
            "from timingbench.features.separation import resolve\n"
            "r = resolve('auto', cfg=load_config())\n"
            f"assert (r.backend, r.note.startswith('demucs weights for')) == ('dsp', True), r\n"
            f"assert {str(tmp_path / 'hub' / 'checkpoints')!r} in r.note, r.note")
    assert "torch" not in _modules_after(code)

"""Regenerate ``real_corpus_fingerprints.json``: one SHA-256 per clip of the real corpus.

A clip's fingerprint covers everything the renderer reads of it (the spec with its seed,
levels and layers, the split, every recording it uses, the prompt row and the corpus's
name and onset character of its families) as canonical JSON, floats written exactly.
``tests/test_real_corpus_table.py`` checks the packaged tables against it, so an edit of
``timingbench/data/real_corpus/`` that would change a clip's audio or prompt fails there.
Regenerate only for an intended change of the corpus, and say in the commit which clips
changed and why. Run from the repository root:
``.venv/bin/python tests/data/real_corpus_make_fingerprints.py``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

from timingbench.config import load_config
from timingbench.render.real_corpus import prompt_row
from timingbench.render.real_corpus_table import FAMILIES, REAL_CORPUS, REAL_SOURCES, RealClipSpec
from timingbench.render.scenarios import ScenarioParams

OUT = Path(__file__).resolve().parent / "real_corpus_fingerprints.json"


def clip_fingerprint(spec: RealClipSpec, *, tolerance_s: float) -> str:
    """SHA-256 (hex) of the canonical JSON of everything the renderer reads of ``spec``."""
    fams = sorted({spec.family} | {f for k in spec.source_keys if (f := REAL_SOURCES[k].family)})
    doc = {"spec": dataclasses.asdict(spec), "split": spec.split,
           "sources": [dataclasses.asdict(REAL_SOURCES[k]) for k in spec.source_keys],
           "prompt": prompt_row(spec, tolerance_s=tolerance_s),
           "names": {f: FAMILIES[f].target for f in fams}, "character": FAMILIES[spec.family].character}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def fingerprints() -> dict[str, str]:
    """Clip id -> fingerprint for every clip of the packaged corpus, in corpus order."""
    tol = ScenarioParams.from_config(load_config()).default_tolerance_s
    return {spec.clip_id: clip_fingerprint(spec, tolerance_s=tol) for spec in REAL_CORPUS}


if __name__ == "__main__":
    OUT.write_text(json.dumps(fingerprints(), indent=0) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(REAL_CORPUS)} clips")

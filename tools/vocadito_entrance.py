"""A real vocal entrance: vocadito's singing entering over a rendered backing, scored end to end.

Usage: .venv/bin/python tools/vocadito_entrance.py OUT_DIR [--family-evidence tagger|trained|musicnn|none]

The start of ``shared/realdata/vocadito/Audio/vocadito_1.wav`` (solo singing) is delayed
so that its first annotated note onset (annotators A1 and A2 agree: 0.662 s) lands at
8.0 s, over a FluidR3 backing (piano comp and bass guitar, throughout). The evidence
model trains only on vocadito after ``evidence.vocadito_train_from_s`` (12 s); the
entrance and the 4 s after it come from the part it never saw. The clip is scored with
``timingbench score --separation dsp`` for a prompt "bring in vocals at 8 s", and the
detected entrance is printed against both annotators' first onsets.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import soundfile as sf

from timingbench.choices import DEFAULT_FAMILY_EVIDENCE
from timingbench.config import load_config
from timingbench.identity.training.dataset import DataParams, render_stems
from timingbench.identity.training.layouts import ClipLayout, PartLayout
from timingbench.identity.training.programs import PROGRAMS, instrument_spec
from timingbench.render.arrangement import Grid, generate_part, random_harmony

ROOT = Path(__file__).resolve().parents[1]
VOC = ROOT.parent / "shared" / "realdata" / "vocadito"
SR = 44100
ENTRY_S = 8.0
DUR = 20.0


def _first_onset(path: Path) -> float:
    with path.open() as fh:
        return min(float(r[0]) for r in csv.reader(fh) if r)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--family-evidence", default=DEFAULT_FAMILY_EVIDENCE)
    args = ap.parse_args()
    out: Path = args.out
    (out / "clips").mkdir(parents=True, exist_ok=True)
    a1 = _first_onset(VOC / "Annotations" / "Notes" / "vocadito_1_notesA1.csv")
    a2 = _first_onset(VOC / "Annotations" / "Notes" / "vocadito_1_notesA2.csv")
    y, sr = sf.read(str(VOC / "Audio" / "vocadito_1.wav"), dtype="float64", always_2d=True)
    y = y.mean(axis=1)
    assert sr == SR
    shift = ENTRY_S - a1
    vocals = np.zeros(int(DUR * SR))
    seg = y[: int((DUR - shift) * SR)]
    vocals[int(shift * SR): int(shift * SR) + seg.size] = seg
    cfg = load_config()
    p = DataParams.from_config(cfg)
    p = DataParams(**{**p.__dict__, "clip_s": DUR})
    rng = np.random.default_rng(3)
    grid, harmony = Grid(bpm=96.0, origin_s=0.0), random_harmony(rng)
    parts = []
    for fam, prog_no, role in (("piano", 0, "comp"), ("bass", 33, "bass")):
        prog = next(q for q in PROGRAMS[fam] if q.program == prog_no)
        spec = instrument_spec(fam, prog, role=role, shift=0)
        notes = generate_part(spec, grid=grid, harmony=harmony, rng=rng, t0=0.0, t1=DUR, level=0.9)
        parts.append(PartLayout(fam, prog, role, [(0.0, DUR)], 0.0, notes))
    stems = render_stems([ClipLayout(0, DUR, 96.0, parts)], "/usr/share/sounds/sf2/FluidR3_GM.sf2", p, None,
                         render=cfg.params.render)[0]
    mix = sum(s / (np.max(np.abs(s)) or 1.0) * 10 ** (-8 / 20) for s in stems.values())
    mix = mix + vocals / (np.max(np.abs(vocals)) or 1.0) * 10 ** (-3 / 20)
    sf.write(str(out / "clips" / "vocadito-entry.wav"), 0.7 * mix / np.max(np.abs(mix)), SR, subtype="PCM_24")
    prompt = {"id": "vocadito-entry", "family": "single_event",
              "text": "A gentle piano ballad for exactly 20 seconds. Bring in vocals at exactly the 8th second.",
              "style": "piano ballad", "duration_s": DUR,
              "events": [{"id": "vocadito-entry/e1", "kind": "instrument_entry", "target": "vocals",
                          "family": "vocals", "time_s": ENTRY_S, "tolerance_s": 0.5}], "tempo": None}
    (out / "prompts.jsonl").write_text(json.dumps(prompt) + "\n")
    cmd = [sys.executable, "-m", "timingbench.cli", "score", str(out / "clips"), "--prompts",
           str(out / "prompts.jsonl"), "--out", str(out / "results"), "--separation", "dsp",
           "--family-evidence", args.family_evidence, "--no-chance"]
    subprocess.run(cmd, check=False, capture_output=True)
    row = json.loads((out / "results" / "events.jsonl").read_text().splitlines()[0])
    truth = {"A1": ENTRY_S, "A2": a2 + shift}
    det = row["detected_s"]
    errs = {k: None if det is None else round(1000 * (det - v), 1) for k, v in truth.items()}
    print(json.dumps({"family_evidence": args.family_evidence, "outcome": row["outcome"], "detected_s": det,
                      "error_ms_vs": errs, "rejected_by": row["rejected_by"], "gates": row["gates"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

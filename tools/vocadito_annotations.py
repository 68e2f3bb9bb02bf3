"""Write the vocadito note onsets of its two annotators as formats §5 annotations.

vocadito (CC BY 4.0) ships note transcriptions of ``vocadito_1.wav`` by two independent
annotators, ``A1`` and ``A2`` (``onset_s,Hz,duration_s`` per line). This writes

- ``OUT/annotations.jsonl``: every note onset as a Layer-2 row (source ``voice``, family
  ``vocals``) of annotator ``A1`` or ``A2``, and each annotator's first onset as the
  Layer-1 row of a one-event prompt (the voice enters);
- ``OUT/prompts.jsonl``: that prompt (``vocadito_1``: voice enters at 1 s, tolerance 0.5 s).

Usage (from the repository root)::

    .venv/bin/python tools/vocadito_annotations.py ../shared/realdata/vocadito /tmp/vocadito
    .venv/bin/timingbench annotations agreement /tmp/vocadito/annotations.jsonl
    .venv/bin/timingbench floors --annotations /tmp/vocadito/annotations.jsonl \\
        --clips ../shared/realdata/vocadito/Audio --separation dsp --family-evidence none --out /tmp/vocadito/f
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path
from typing import Any

PROMPT = {
    "id": "vocadito_1", "family": "single_event", "style": "a cappella", "duration_s": 33.0,
    "text": "Create an a cappella song for exactly 33 seconds. Bring in the voice at 1 second.",
    "events": [{"id": "vocadito_1/e1", "kind": "instrument_entry", "target": "voice",
                "family": "vocals", "time_s": 1.0, "tolerance_s": 0.5}],
    "tempo": None,
}


def rows_of(vocadito: Path, annotator: str) -> list[dict[str, Any]]:
    """The Layer-1 and Layer-2 rows of one annotator (``A1`` or ``A2``)."""
    path = vocadito / "Annotations" / "Notes" / f"vocadito_1_notes{annotator}.csv"
    with open(path, newline="") as fh:
        onsets = [float(r[0]) for r in csv.reader(fh) if r]
    rows: list[dict[str, Any]] = [{
        "clip": "vocadito_1.wav", "event_id": "vocadito_1/e1", "occurred": True, "onset_s": onsets[0],
        "onset_character": "soft", "salience": 3, "annotator": annotator, "split": "validation"}]
    rows += [{"clip": "vocadito_1.wav", "source": "voice", "family": "vocals", "onset_s": t,
              "salience": 2, "annotator": annotator, "split": "validation", "id": f"{annotator}-{i}"}
             for i, t in enumerate(onsets)]
    return rows


def main() -> None:
    """Parse the arguments and write the two files."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("vocadito", type=Path, help="the vocadito folder (Annotations/Notes inside)")
    ap.add_argument("out", type=Path, help="output folder")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows = rows_of(args.vocadito, "A1") + rows_of(args.vocadito, "A2")
    (args.out / "annotations.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (args.out / "prompts.jsonl").write_text(json.dumps(PROMPT) + "\n")
    print(f"wrote {len(rows)} rows to {args.out / 'annotations.jsonl'} and {args.out / 'prompts.jsonl'}")


if __name__ == "__main__":
    main()

"""Annotation sets of two annotators with known differences, for the agreement tests.

- :func:`vocadito_rows`: the real two-annotator note onsets of vocadito (Layer 2) and its
  first vocal onset as a Layer-1 ``instrument_entry`` (vocals) of a one-event prompt.
- :func:`render_two_annotator_set`: rendered clips whose truth two simulated annotators
  label with designed offsets (:data:`LAYER1_DESIGN`, :data:`LAYER2_JITTER_S`), so that
  kappa, ``|Δ|`` and the matches are known exactly.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

VOCADITO_CLIP = "vocadito_1.wav"
VOCADITO_PROMPT = {
    "id": "vocadito_1", "family": "single_event", "style": "a cappella", "duration_s": 33.0,
    "text": "Create an a cappella song for exactly 33 seconds. Bring in the voice at 1 second.",
    "events": [{"id": "vocadito_1/e1", "kind": "instrument_entry", "target": "voice",
                "family": "vocals", "time_s": 1.0, "tolerance_s": 0.5}],
    "tempo": None,
}


def vocadito_onsets(realdata: Path, annotator: str) -> list[float]:
    """Note onsets (s) of one vocadito annotator (``A1`` or ``A2``), in file order."""
    path = realdata / "vocadito" / "Annotations" / "Notes" / f"vocadito_1_notes{annotator}.csv"
    with open(path, newline="") as fh:
        return [float(r[0]) for r in csv.reader(fh) if r]


def vocadito_rows(realdata: Path) -> list[dict[str, Any]]:
    """formats §5 rows of both vocadito annotators (Layer 2 notes, Layer 1 first onset)."""
    rows: list[dict[str, Any]] = []
    for a in ("A1", "A2"):
        onsets = vocadito_onsets(realdata, a)
        rows.append({"clip": VOCADITO_CLIP, "event_id": "vocadito_1/e1", "occurred": True,
                     "onset_s": onsets[0], "onset_character": "soft", "salience": 3,
                     "annotator": a, "split": "validation"})
        rows += [{"clip": VOCADITO_CLIP, "source": "voice", "family": "vocals", "onset_s": t,
                  "salience": 2, "annotator": a, "split": "validation", "id": f"{a}-{i}"}
                 for i, t in enumerate(onsets)]
    return rows


#: recipe, seed, params, then per annotator (occurred, onset offset from truth in s, character).
LAYER1_DESIGN: tuple[tuple[str, int, dict[str, Any], tuple[Any, ...], tuple[Any, ...]], ...] = (
    ("entry_on_time", 2211, {"family": "percussion"}, (True, 0.0, "hard"), (True, 0.020, "hard")),
    ("silence_then_start", 2212, {}, (True, -0.030, "hard"), (True, 0.030, "soft")),
    ("end_cut", 2213, {}, (True, 0.0, "hard"), (True, 0.150, "hard")),
    ("entry_on_time", 2214, {"family": "bass"}, (True, 0.0, "hard"), (True, 0.001, "hard")),
    ("never_delivered", 2215, {"kind": "music_end"}, (True, 0.5, "gradual"), (False, None, None)),
    ("never_delivered", 2216, {"kind": "music_end"}, (False, None, None), (False, None, None)),
)
#: Layer-2 offsets of annotator b from the truth, cycled over the observed events in order.
LAYER2_JITTER_S = (0.010, -0.030, 0.080, 0.0, -0.045)
#: Observed events closer than this to another of their family in the clip are left out, so
#: that every jitter of :data:`LAYER2_JITTER_S` matches (or misses) only its own onset.
LAYER2_MIN_SPACING_S = 0.25
ANNOTATORS = ("ann_a", "ann_b")


@dataclass
class TwoAnnotatorSet:
    """A rendered corpus labelled by two simulated annotators."""

    root: Path
    clips: Path
    prompts: Path
    annotations: Path
    prompt_rows: list[dict[str, Any]]
    truth: list[dict[str, Any]]
    layer2_truth: list[dict[str, Any]]
    rows: list[dict[str, Any]]


def render_two_annotator_set(root: Path) -> TwoAnnotatorSet:
    """Render :data:`LAYER1_DESIGN` (14 s clips) and write both annotators' rows."""
    from timingbench.render import render_recipe

    prompts, truth, observed = [], [], []
    rows: list[dict[str, Any]] = []
    for recipe, seed, params, da, db in LAYER1_DESIGN:
        rc = render_recipe(recipe, seed=seed, out_dir=root, duration_s=14.0, split="validation", **params)
        prompts.append(rc.prompt)
        (t,) = rc.truth
        truth.append(t)
        instructed = rc.prompt["events"][0]["time_s"]
        base = t["onset_s"] if t["onset_s"] is not None else instructed
        for name, (occ, off, ch) in zip(ANNOTATORS, (da, db), strict=True):
            rows.append({"clip": t["clip"], "event_id": t["event_id"], "occurred": occ,
                         "onset_s": round(base + off, 6) if occ else None, "onset_character": ch,
                         "salience": 3 if occ else None, "annotator": name, "split": "validation"})
        kept = [o for o in rc.observed
                if all(o is p or p["family"] != o["family"]
                       or abs(p["onset_s"] - o["onset_s"]) >= LAYER2_MIN_SPACING_S for p in rc.observed)]
        observed += kept
    for i, o in enumerate(observed):
        jit = LAYER2_JITTER_S[i % len(LAYER2_JITTER_S)]
        rows.append(dict(o, annotator="ann_a", id=f"a-{i}"))
        rows.append(dict(o, annotator="ann_b", id=f"b-{i}", onset_s=round(max(0.0, o["onset_s"] + jit), 6)))
    (root / "prompts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in prompts))
    ann = root / "two_annotators.jsonl"
    ann.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return TwoAnnotatorSet(root, root / "clips", root / "prompts.jsonl", ann, prompts, truth, observed, rows)


_SHARED: dict[str, TwoAnnotatorSet] = {}


def shared_two_annotator_set(tmp_path_factory: Any) -> TwoAnnotatorSet:
    """:func:`render_two_annotator_set`, rendered once per test session (read-only use)."""
    if "set" not in _SHARED:
        _SHARED["set"] = render_two_annotator_set(tmp_path_factory.mktemp("two_annotators"))
    return _SHARED["set"]

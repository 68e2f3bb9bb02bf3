"""Fuzzing of the prompt-set loader (formats §1) and of ``prompts stats`` on what it loads.

Files mix valid prompt rows with mutated ones (see ``fuzz_support``). Properties: only
:class:`~timingbench.errors.TimingbenchError` escapes, every valid row loads, each rejected
row's message names the file, its line and a field, and no input takes longer than the
per-input bound.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any

from fuzz_support import (
    SEEDS,
    Line,
    bounded,
    check_errors,
    dumps,
    field_mutation,
    junk,
    line_damage,
    wild_text,
    write_lines,
)
from hypothesis import given

from timingbench.prompts import EVENT_KINDS, MIX_KINDS, STEM_FAMILIES, TONAL_FAMILIES, load_prompts
from timingbench.promptset import composition, format_composition

TOP_FIELDS = ("id", "family", "text", "style", "duration_s", "events", "tempo")
EVENT_FIELDS = ("id", "kind", "family", "target", "time_s", "tolerance_s")
FIELD_NAMES = TOP_FIELDS + ("events[", "tempo.")
INSTRUMENTS = STEM_FAMILIES + TONAL_FAMILIES


def valid_prompt(rng: random.Random, index: int) -> dict[str, Any]:
    """A valid prompt row whose ids start with ``p<index>`` (unique within a file)."""
    suffix = wild_text(rng, 0, 8).replace("_", "-").replace("/", "-")
    pid = f"p{index}{suffix}"
    fam = rng.choice(["single_event", "event_sequence", "tempo"])
    dur = rng.choice([rng.uniform(1.0, 600.0), 30.0, 1e-3, 1e6])
    n = {"single_event": 1, "event_sequence": rng.randint(2, 5), "tempo": rng.randint(0, 2)}[fam]
    times = sorted(rng.choice([rng.uniform(0.0, dur), 0.0, dur]) for _ in range(n))
    events = []
    for j, t in enumerate(times):
        kind = rng.choice(EVENT_KINDS)
        efam = "mix" if kind in MIX_KINDS else rng.choice(INSTRUMENTS)
        ev: dict[str, Any] = {"id": f"{pid}/e{j}", "kind": kind, "target": wild_text(rng, 0, 8),
                              "family": efam, "time_s": t}
        if rng.random() < 0.7:
            ev["tolerance_s"] = rng.choice([None, 0.0, rng.uniform(0.0, 5.0)])
        events.append(ev)
    tempo = None
    if fam == "tempo" or rng.random() < 0.3:
        tempo = {"bpm": rng.uniform(1.0, 400.0), "tolerance_pct": rng.uniform(0.1, 20.0)}
    row: dict[str, Any] = {"id": pid, "family": fam, "text": "t" + wild_text(rng, 0, 20),
                           "style": wild_text(rng, 0, 8), "duration_s": dur, "events": events,
                           "tempo": tempo}
    if rng.random() < 0.3:
        row["x_extra"] = junk(rng)  # unknown keys are kept
    return row


def nested_mutation(rng: random.Random, row: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Change one event or tempo field (wrong type, NaN, negative, reversed order)."""
    out = dict(row, events=[dict(e) for e in row["events"]])
    what = rng.choice(["tempo"] + (["event", "event", "reverse", "outside"] if out["events"] else []))
    if what == "tempo":
        out["tempo"] = {"bpm": junk(rng), "tolerance_pct": junk(rng)}
        return out, "tempo"
    j = rng.randrange(len(out["events"]))
    if what == "reverse" and len(out["events"]) >= 2:
        a, b = out["events"][0], out["events"][-1]
        a["time_s"], b["time_s"] = b["time_s"], a["time_s"]
        return out, "events["
    if what == "outside":
        out["events"][j]["time_s"] = rng.choice([-1.0, -1e-9, row["duration_s"] * 2 + 1])
        return out, "events["
    out["events"][j], _ = field_mutation(rng, out["events"][j], EVENT_FIELDS)
    return out, "events["


def prompt_file(seed: int) -> tuple[list[Line], bool, bool]:
    """Lines of a prompt file (valid, field-mutated, damaged, duplicate), BOM and CRLF flags."""
    rng = random.Random(seed)
    lines: list[Line] = []
    valid_ids: list[str] = []
    for i in range(rng.randint(1, 8)):
        row = valid_prompt(rng, i)
        kind = rng.choice(["valid", "valid", "field", "nested", "damage", "duplicate", "blank"])
        if kind == "valid":
            lines.append(Line(dumps(row), True, key=row["id"]))
            valid_ids.append(row["id"])
        elif kind == "field":
            mutated, name = field_mutation(rng, row, TOP_FIELDS)
            lines.append(Line(dumps(mutated), False, name))
        elif kind == "nested":
            mutated, name = nested_mutation(rng, row)
            lines.append(Line(dumps(mutated), False, name))
        elif kind == "duplicate" and valid_ids:
            dup = dict(row, id=valid_ids[0], events=[dict(e, id=f"dup{i}/{k}") for k, e in enumerate(row["events"])])
            lines.append(Line(dumps(dup), False, "id"))
        elif kind == "blank":
            lines.append(Line(rng.choice(["", "   ", "\t"]), False))
        else:
            lines.append(Line(line_damage(rng, dumps(row)), False))
    return lines, rng.random() < 0.3, rng.random() < 0.3


@given(SEEDS)
def test_prompt_loader_keeps_valid_rows_and_names_bad_ones(seed: int) -> None:
    lines, bom, crlf = prompt_file(seed)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "prompts.jsonl"
        write_lines(path, [ln.text for ln in lines], bom=bom, crlf=crlf)
        with bounded():
            ps = load_prompts(path)  # anything but a TimingbenchError fails the test
            comp = composition(ps.prompts.values(), default_tolerance_s=0.5)
            table = format_composition(comp, source=str(path))
    want = [ln.key for ln in lines if ln.valid]
    assert [k for k in ps.prompts if k in want] == want
    assert comp.n_prompts == len(ps.prompts)
    assert f"{comp.n_prompts} prompts" in table
    check_errors([str(e) for e in ps.errors], lines, path, field_names=FIELD_NAMES)

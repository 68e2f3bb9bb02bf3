"""The ``controls`` object of ``summary.json`` and its lines in the stdout table."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from timingbench.config import Config
from timingbench.params.controls import ControlsParams

#: control -> (metric inside its row, label, floor key of :func:`floors`).
METRICS = (
    ("beats", "f_measure", "beat F1", "beat_f1"),
    ("downbeats", "f_measure", "downbeat F1", "downbeat_f1"),
    ("dynamics", "pearson_r", "dynamics r", "dynamics_r"),
    ("melody", "accuracy", "melody accuracy", "melody_accuracy"),
    ("drums", "f_measure", "drum onset F1", "drums_f1"),
    ("chords", "accuracy", "chord accuracy (majmin)", "chord_accuracy"),
)


def floors(c: ControlsParams) -> dict[str, float | None]:
    """The published floor of each metric (``controls.floor_*``; None when not measured)."""
    return {"beat_f1": c.floor_beat_f1, "downbeat_f1": c.floor_downbeat_f1, "dynamics_r": c.floor_dynamics_r,
            "melody_accuracy": c.floor_melody_accuracy, "melody_salience_accuracy": c.floor_melody_salience_accuracy,
            "drums_f1": c.floor_drums_f1,
            "chord_accuracy": c.floor_chord_accuracy}


def _mean(xs: list[float]) -> float | None:
    return round(float(np.mean(xs)), 4) if xs else None


def _salience_entry(rows: list[dict[str, Any]], floor: float | None) -> dict[str, Any]:
    """Summary of the predominant-pitch melody measure (the ``salience`` object of melody rows)."""
    vals = [float(g["accuracy"]) for g in rows]
    pairs = [(float(g["accuracy"]), float(g["chance"]["mean"])) for g in rows
             if (g.get("chance") or {}).get("mean") is not None]
    pc = [float(g["chance"]["p_chance"]) for g in rows if (g.get("chance") or {}).get("p_chance") is not None]
    return {"metric": "accuracy", "n": len(rows), "mean": _mean(vals), "chance_mean": _mean([b for _, b in pairs]),
            "above_chance": _mean([a - b for a, b in pairs]), "p_chance": _mean(pc),
            "shuffled": _mean([float(g["shuffled_accuracy"]) for g in rows if g.get("shuffled_accuracy") is not None]),
            "floor": floor}


def summarise_controls(clips: Iterable[dict[str, Any]], *, config: Config) -> dict[str, Any]:
    """Per control: clips scored, mean metric, mean chance score, above chance, floor.

    ``above_chance`` is the mean metric minus the mean chance score (over clips with
    both); ``p_chance`` the mean share of chance draws scoring at least the clip's own
    score; ``floor`` the metric of the renderer's exact controls on its validation
    corpus (``controls.floor_*``), the best the evaluator measures on a perfect rendition.
    """
    floor_of = floors(config.params.controls)
    rows = [cl["controls"] for cl in clips if cl.get("controls")]
    out: dict[str, Any] = {}
    for name, metric, _, floor_field in METRICS:
        got = [r[name] for r in rows if name in r and r[name].get(metric) is not None]
        if not got:
            continue
        vals = [float(g[metric]) for g in got]
        pairs = [(float(g[metric]), float(g["chance"]["mean"])) for g in got
                 if (g.get("chance") or {}).get("mean") is not None]
        pc = [float(g["chance"]["p_chance"]) for g in got if (g.get("chance") or {}).get("p_chance") is not None]
        entry: dict[str, Any] = {"metric": metric, "n": len(got), "mean": _mean(vals),
                                 "chance_mean": _mean([b for _, b in pairs]),
                                 "above_chance": _mean([a - b for a, b in pairs]),
                                 "p_chance": _mean(pc), "floor": floor_of[floor_field]}
        if name == "beats":
            entry["cmlt"] = _mean([float(g["cmlt"]) for g in got])
            entry["amlt"] = _mean([float(g["amlt"]) for g in got])
        if name == "melody":
            entry["shuffled"] = _mean([float(g["shuffled_accuracy"]) for g in got
                                       if g.get("shuffled_accuracy") is not None])
            sal = [g["salience"] for g in got if (g.get("salience") or {}).get("accuracy") is not None]
            if sal:
                entry["salience"] = _salience_entry(sal, floor_of["melody_salience_accuracy"])
        if name == "dynamics":
            entry["mae_db"] = _mean([float(g["mae_db"]) for g in got if g.get("mae_db") is not None])
        out[name] = entry
    return out


def _f(x: float | None) -> str:
    return "  -  " if x is None else f"{x:5.3f}"


def _line(label: str, e: dict[str, Any], extra: str) -> str:
    return (f"  {label:<24}{e['n']:>5}  {_f(e['mean'])}  {_f(e['chance_mean']):>6}  "
            f"{_f(e['above_chance']):>6}  {_f(e['p_chance']):>8}  {_f(e['floor'])}{extra}")


def control_rows(controls: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], list[tuple[str, Any, str]]]]:
    """The rows of a ``controls`` summary, in table order: ``(label, entry, extras)``.

    One row per control present (and the melody's salience measure after it); ``extras`` are
    the side figures as ``(name, value, unit)``: CMLt and AMLt of beats, the shuffled baseline
    of melody, the MAE of dynamics.
    """
    for name, _, label, _ in METRICS:
        e = controls.get(name)
        if not e:
            continue
        extras = {"beats": [("CMLt", e.get("cmlt"), ""), ("AMLt", e.get("amlt"), "")],
                  "melody": [("shuffled", e.get("shuffled"), "")],
                  "dynamics": [("MAE", e.get("mae_db"), " dB")]}.get(name, [])
        yield label, e, extras
        if name == "melody" and e.get("salience"):
            sal = e["salience"]
            yield "melody salience accuracy", sal, [("shuffled", sal.get("shuffled"), "")]


def format_controls(summary: dict[str, Any]) -> list[str]:
    """Table lines of the ``controls`` summary (none when no clip carried controls)."""
    ctl = summary.get("controls") or {}
    if not ctl:
        return []
    lines = ["", f"{'control adherence':<26}{'n':>5}  {'mean':>5}  {'chance':>6}  {'above':>6}  "
             f"{'p_chance':>8}  {'floor':>5}"]
    for label, e, extras in control_rows(ctl):
        lines.append(_line(label, e, "".join(f"{'   ' if i == 0 else '  '}{n} {_f(v)}{u}"
                                             for i, (n, v, u) in enumerate(extras))))
    return lines

"""Synthetic results folders in the formats §3 format, for tests and documentation.

A :class:`SyntheticSystem` describes how a made-up system behaves (how late it delivers,
how often it omits an entrance, its tempo and duration habits); :func:`write_synthetic_results`
turns a prompt set into the ``events.jsonl``/``clips.jsonl``/``summary.json`` that
``timingbench score`` would write for such a system. The rows are derived from the
prompts, not from audio: they exercise the comparison, never the detectors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from timingbench.errors import ParameterError
from timingbench.families import EVENT_FAMILIES, TONAL_FAMILIES
from timingbench.jsonio import write_json, write_jsonl
from timingbench.prompts import Prompt

#: Made-up floor (seconds) of a family :data:`SYNTHETIC_FLOORS_S` does not list.
SYNTHETIC_DEFAULT_FLOOR_S = 0.1
#: Made-up per-family floors (seconds) written into synthetic rows, shaped like paper Fig. 2:
#: these, and :data:`SYNTHETIC_DEFAULT_FLOOR_S` for every other family of the registry.
SYNTHETIC_FLOORS_S: Mapping[str, float] = {
    **dict.fromkeys(EVENT_FAMILIES, SYNTHETIC_DEFAULT_FLOOR_S),
    "percussion": 0.008, "bass": 0.218, "guitar": 0.12, "piano": 0.09, "strings": 0.15, "brass": 0.13,
    "woodwinds": 0.14, "synth": 0.16, "mix": 0.06,
}

#: Families whose events get a made-up timbre match: the tonal layers (no stem of their own),
#: but synths, which the paper exempts from the family check (``semantic.exempt_families``).
TIMBRE_FAMILIES: tuple[str, ...] = tuple(f for f in TONAL_FAMILIES if f != "synth")


@dataclass(frozen=True)
class SyntheticSystem:
    """Behaviour of a made-up system.

    Attributes
    ----------
    offset_s : float
        Signed delivery offset in seconds (positive = late).
    jitter_s : float
        Standard deviation of the per-event timing noise in seconds.
    omit_entry_fraction : float
        Fraction of ``instrument_entry`` events never delivered (outcome ``none``).
    omit_fraction : float
        Fraction of every other event never delivered.
    p_chance_mean : float
        Mean p_chance of the events (0 = sparse music).
    tempo_error_pct : float
        Signed tempo error in percent.
    duration_s : float
        Length of the returned clips in seconds.
    timbre_match_fraction : float
        Fraction of tonal-layer events whose family evidence matches.
    missing_fraction : float
        Fraction of prompts with no clip at all (provider failures).
    """

    offset_s: float = 0.0
    jitter_s: float = 0.05
    omit_entry_fraction: float = 0.0
    omit_fraction: float = 0.0
    p_chance_mean: float = 0.05
    tempo_error_pct: float = 0.5
    duration_s: float = 30.0
    timbre_match_fraction: float = 0.8
    missing_fraction: float = 0.0


def write_synthetic_results(
    out: str | Path, *, prompts: Sequence[Prompt], system: SyntheticSystem, samples: int = 1,
    seed: int, config_version: str = "timingbench-v1.0", config_hash: str = "synthetic",
    tolerance_s: float = 0.5, duration_tolerance_s: float = 1.0,
    exempt_families: Mapping[str, str] | None = None,
) -> Path:
    """Write a results folder for a synthetic system.

    Parameters
    ----------
    out : str or Path
        Results folder (created).
    prompts : sequence of Prompt
        The prompt set the system answered.
    system : SyntheticSystem
    samples : int
        Samples per prompt (clips named ``<id>__<k>.wav`` when > 1).
    seed : int
    config_version, config_hash : str
        Written into ``summary.json``.
    tolerance_s : float
        On-time tolerance in seconds for events whose prompt gives none.
    duration_tolerance_s : float
        Duration compliance tolerance in seconds.
    exempt_families : mapping of str to str, optional
        Families recorded as not judged by the family evidence (family -> why), so that
        their events fall outside the identity-verified rates (default: none).

    Returns
    -------
    path : Path
        The results folder.

    Raises
    ------
    ParameterError
        If ``samples`` < 1.
    """
    if samples < 1:
        raise ParameterError(f"samples must be >= 1, got {samples}")
    rng = np.random.default_rng(seed)
    d = Path(out)
    events: list[dict[str, Any]] = []
    clips: list[dict[str, Any]] = []
    missing: list[str] = []
    for p in prompts:
        if rng.random() < system.missing_fraction:
            missing.append(p.id)
            continue
        for k in range(1, samples + 1):
            clip = f"{p.id}.wav" if samples == 1 else f"{p.id}__{k}.wav"
            timbre: dict[str, bool] = {}
            for e in p.events:
                tol = e.tolerance_s if e.tolerance_s is not None else tolerance_s
                omit = system.omit_entry_fraction if e.kind == "instrument_entry" else system.omit_fraction
                pch = float(np.clip(rng.normal(system.p_chance_mean, 0.03), 0.0, 1.0))
                pch = round(round(pch * 16) / 16, 6)
                row: dict[str, Any] = {
                    "clip": clip, "prompt_id": p.id, "sample": k if samples > 1 else 0,
                    "event_id": e.id, "kind": e.kind, "family": e.family, "instructed_s": e.time_s,
                    "tolerance_s": tol,
                }
                if rng.random() < omit:
                    row |= {"outcome": "none", "detected_s": None, "error_s": None,
                            "gates": {"absence_before": "fail"}, "rejected_by": "absence_before"}
                else:
                    err = round(float(system.offset_s + rng.normal(0.0, system.jitter_s)), 6)
                    row |= {"outcome": "on_time" if abs(err) <= tol else "off_time",
                            "detected_s": round(e.time_s + err, 6), "error_s": err,
                            "gates": {"absence_before": "pass"}, "rejected_by": None}
                row |= {"detector": "synthetic", "p_chance": pch, "floor_s": SYNTHETIC_FLOORS_S[e.family]}
                events.append(row)
                if e.family in TIMBRE_FAMILIES:
                    timbre[e.id] = bool(rng.random() < system.timbre_match_fraction)
            tempo = None
            if p.tempo_bpm is not None:
                est = p.tempo_bpm * (1.0 + (system.tempo_error_pct + rng.normal(0.0, 0.2)) / 100.0)
                dev = abs(est - p.tempo_bpm) / p.tempo_bpm * 100.0
                tempo = {"estimate_bpm": round(est, 3), "target_bpm": p.tempo_bpm,
                         "within_pct": {"2": dev <= 2, "3": dev <= 3, "5": dev <= 5},
                         "octave_equivalent": 1.0 if dev <= 3 else None, "beat_stability": 0.99}
            dur = round(system.duration_s + float(rng.normal(0.0, 0.1)), 3)
            clips.append({"clip": clip, "prompt_id": p.id, "sample": k if samples > 1 else 0,
                          "duration_s": dur, "duration_ok": abs(dur - p.duration_s) <= duration_tolerance_s,
                          "tempo": tempo, "timbre_match": timbre or None, "error": None})
    write_jsonl(d / "events.jsonl", events)
    write_jsonl(d / "clips.jsonl", clips)
    write_json(d / "summary.json", {
        "config_version": config_version, "config_hash": config_hash, "package_version": "synthetic",
        "counts": {"clips": len(clips), "events": len(events)},
        "missing": missing, "unmatched": [], "errors": [],
        "separation_backend": "none", "family_evidence_backend": "none",
        "family_evidence": {"exempt_families": dict(exempt_families or {})},
    })
    return d

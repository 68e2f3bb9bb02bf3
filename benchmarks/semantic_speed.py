"""Family evidence (musicnn): cost per 35-s clip, and tag->family accuracy on rendered entrances.

Two measurements::

    .venv/bin/python benchmarks/semantic_speed.py speed
    .venv/bin/python benchmarks/semantic_speed.py accuracy --out /tmp/semacc

``speed`` times :func:`timingbench.features.semantic.family_evidence` (musicnn backend,
default config) on a 35-s rendered clip: cold (model load included) and warm, median of
repeats.

``accuracy`` renders, with the reference renderer's instrument catalogue, part generator
and FluidSynth (``timingbench.render``), one 20-s mix per catalogue instrument E and
split: a bed instrument of another family plays throughout, and E enters alone at 10 s
(its isolated stem is rendered separately and mixed at an equal peak level). Each mix is a
*true entrance* for E's family and a *decoy entrance* for every other family that the
bed does not belong to. The semantic gate (:func:`family_rise`) is evaluated at the exact
entrance time; reported per family: pass rate at true entrances and at decoy entrances.
Two disjoint splits are rendered with different seeds: ``dev`` (the only split thresholds
may be chosen on) and ``validation`` (reported). The raw evidence of every mix is saved so
the analysis can be re-run with other thresholds (``--reuse``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from timingbench.config import Config, load_config

CLIP_S = 20.0
ENTER_S = 10.0
SPLIT_SEEDS = {"dev": 101, "validation": 202}


def _render(parts: list[Any], n: int, cfg: Config, workdir: Path, name: str) -> np.ndarray:
    from timingbench.render.synth import render_midi, resolve_soundfont, write_midi

    midi = workdir / f"{name}.mid"
    write_midi(parts, midi, ticks_per_beat=int(cfg.value("render.midi_ticks_per_beat")))
    return render_midi(midi, n_samples=n, soundfont=resolve_soundfont(None, cfg), cfg=cfg)


def _stem(spec: Any, *, t0: float, t1: float, seed: int, bpm: float, harmony: Any, cfg: Config,
          workdir: Path, name: str) -> np.ndarray:
    from timingbench.render.arrangement import Grid, Part, generate_part

    rng = np.random.default_rng(seed)
    grid = Grid(bpm=bpm, origin_s=0.0)
    notes = generate_part(spec, grid=grid, harmony=harmony, rng=rng, t0=t0, t1=t1)
    sr = int(cfg.value("render.sample_rate_hz"))
    return _render([Part(name=name, spec=spec, notes=notes)], int(CLIP_S * sr), cfg, workdir, name)


def _peak_norm(x: np.ndarray) -> np.ndarray:
    peak = float(np.max(np.abs(x)))
    return x / peak if peak > 0 else x


def render_split(split: str, cfg: Config, workdir: Path) -> list[dict[str, Any]]:
    """Render the entrance mixes of one split; returns rows with the samples."""
    from timingbench.render.arrangement import random_harmony
    from timingbench.render.instruments import INSTRUMENTS

    rng = np.random.default_rng(SPLIT_SEEDS[split])
    specs = [s for s in INSTRUMENTS.values() if s.role != "click"]
    rows = []
    for k, enter in enumerate(sorted(specs, key=lambda s: s.name)):
        others = [s for s in specs if s.family != enter.family and not (s.is_drum and enter.is_drum)]
        bed = others[int(rng.integers(len(others)))]
        bpm = float(rng.integers(80, 140))
        harmony = random_harmony(rng)
        seed = int(rng.integers(1 << 31))
        a = _stem(bed, t0=0.0, t1=CLIP_S, seed=seed, bpm=bpm, harmony=harmony, cfg=cfg,
                  workdir=workdir, name=f"{split}{k}_bed")
        b = _stem(enter, t0=ENTER_S, t1=CLIP_S, seed=seed + 1, bpm=bpm, harmony=harmony, cfg=cfg,
                  workdir=workdir, name=f"{split}{k}_enter")
        mix = 0.5 * _peak_norm(a) + 0.5 * _peak_norm(b)
        rows.append({"split": split, "enter": enter.name, "enter_family": enter.family,
                     "bed": bed.name, "bed_family": bed.family, "samples": mix.astype(np.float32)})
    return rows


def accuracy(args: argparse.Namespace) -> dict[str, Any]:
    """Run (or reuse) the entrance renders and score the gate per family."""
    from timingbench.features.semantic import FamilyEvidence, family_evidence, family_rise

    cfg = load_config(args.config)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    store = out / "evidence.json"
    if args.reuse and store.exists():
        records = json.loads(store.read_text())
    else:
        records = []
        sr = int(cfg.value("render.sample_rate_hz"))
        with tempfile.TemporaryDirectory() as tmp:
            for split in SPLIT_SEEDS:
                for row in render_split(split, cfg, Path(tmp)):
                    ev = family_evidence(row.pop("samples"), sr=sr, config=cfg)
                    row.update(times=ev.times.tolist(), window_s=ev.window_s,
                               curves={f: c.tolist() for f, c in ev.curves.items()},
                               exempt=ev.exempt)
                    records.append(row)
                    print(split, row["enter"], "over", row["bed"], flush=True)
        store.write_text(json.dumps(records))

    table: dict[str, dict[str, dict[str, list[int]]]] = {}
    for r in records:
        ev = FamilyEvidence(times=np.asarray(r["times"]), backend="musicnn", exempt=r["exempt"],
                            window_s=r["window_s"],
                            curves={f: np.asarray(c) for f, c in r["curves"].items()})
        for fam in sorted(ev.curves):
            if fam == r["bed_family"]:
                continue
            verdict, _ = family_rise(ev, fam, candidate_s=ENTER_S, config=cfg)
            kind = "true" if fam == r["enter_family"] else "decoy"
            cell = table.setdefault(r["split"], {}).setdefault(fam, {"true": [0, 0], "decoy": [0, 0]})
            cell[kind][0] += verdict == "pass"
            cell[kind][1] += 1
    summary = {"config_hash": cfg.content_hash, "splits": table}
    (out / "accuracy.json").write_text(json.dumps(summary, indent=1))
    for split, fams in table.items():
        print(f"\n{split}: family  pass@true-entrance  pass@decoy-entrance")
        for fam, cell in sorted(fams.items()):
            (tp, tn), (dp, dn) = cell["true"], cell["decoy"]
            print(f"  {fam:10s} {tp:3d}/{tn:<3d} ({tp / max(tn, 1):5.1%})   {dp:3d}/{dn:<3d} ({dp / max(dn, 1):5.1%})")
    return summary


def speed(args: argparse.Namespace) -> dict[str, Any]:
    """Time the musicnn family evidence on a 35-s rendered clip."""
    from timingbench.features import musicnn
    from timingbench.features.semantic import family_evidence
    from timingbench.render.instruments import INSTRUMENTS

    cfg = load_config(args.config)
    sr = int(cfg.value("render.sample_rate_hz"))
    global CLIP_S
    CLIP_S = 35.0
    from timingbench.render.arrangement import random_harmony

    with tempfile.TemporaryDirectory() as tmp:
        y = _stem(INSTRUMENTS["piano"], t0=0.0, t1=CLIP_S, seed=1, bpm=100.0,
                  harmony=random_harmony(np.random.default_rng(1)), cfg=cfg, workdir=Path(tmp), name="s")
    y = y.astype(np.float32)
    musicnn.load_musicnn.cache_clear()
    t = time.perf_counter()
    ev = family_evidence(y, sr=sr, config=cfg)
    cold = time.perf_counter() - t
    warm = []
    for _ in range(args.repeats):
        t = time.perf_counter()
        family_evidence(y, sr=sr, config=cfg)
        warm.append(time.perf_counter() - t)
    import torch

    res = {"clip_s": CLIP_S, "windows": int(ev.times.size), "hop_s": cfg.value("semantic.hop_s"),
           "cold_s": round(cold, 3), "warm_median_s": round(statistics.median(warm), 3),
           "torch_threads": torch.get_num_threads()}
    print(json.dumps(res))
    return res


def main() -> None:
    """Command-line entry point."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("speed")
    s.add_argument("--repeats", type=int, default=3)
    s.add_argument("--config", default=None)
    a = sub.add_parser("accuracy")
    a.add_argument("--out", default="/tmp/semantic_accuracy")
    a.add_argument("--reuse", action="store_true", help="re-score the saved evidence only")
    a.add_argument("--config", default=None)
    args = p.parse_args()
    (speed if args.cmd == "speed" else accuracy)(args)


if __name__ == "__main__":
    main()

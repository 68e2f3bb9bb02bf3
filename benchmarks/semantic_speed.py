"""Family evidence (musicnn): cost per 35-s clip, and tag->family accuracy on rendered entrances.

Two measurements::

    .venv/bin/python benchmarks/semantic_speed.py speed
    .venv/bin/python benchmarks/semantic_speed.py accuracy --out /tmp/semacc

``speed`` times :func:`timingbench.identity.providers.family_evidence` (musicnn backend,
default config) on a 35-s rendered clip: cold (model load included) and warm, median of
repeats, wall and process CPU time (CPU time is the fairer figure on a shared machine;
the 1-minute load average is recorded). Baseline, same process and patches: the
straightforward per-patch network (``MusicnnTagger.logits``) against the shared-timbral
path used in production (``MusicnnTagger.logits_at``).

``accuracy`` renders, with the reference renderer's instrument catalogue, part generator
and FluidSynth (``timingbench.render``), one 20-s mix per catalogue instrument E and
split: a bed instrument of another family plays throughout, and E enters alone at 10 s
(its isolated stem is rendered separately and mixed at an equal peak level). Each mix is a
*true entrance* for E's family and a *decoy entrance* for every other family that the
bed does not belong to. The semantic gate (:func:`family_rise`) is evaluated at the exact
entrance time; reported per family: pass rate at true entrances and at decoy entrances.
Two disjoint splits are rendered with different seeds: ``dev`` (the only split thresholds
may be chosen on) and ``validation`` (reported). The raw evidence of every mix is saved so
the analysis can be re-run with other thresholds (``--reuse``); an interrupted run resumes.
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
    write_midi(parts, midi, ticks_per_beat=int(cfg.params.render.midi_ticks_per_beat))
    return render_midi(midi, n_samples=n, soundfont=resolve_soundfont(None, cfg.params.render),
                       params=cfg.params.render)


def _stem(spec: Any, *, t0: float, t1: float, seed: int, bpm: float, harmony: Any, cfg: Config,
          workdir: Path, name: str) -> np.ndarray:
    from timingbench.render.arrangement import Grid, Part, generate_part

    rng = np.random.default_rng(seed)
    grid = Grid(bpm=bpm, origin_s=0.0)
    notes = generate_part(spec, grid=grid, harmony=harmony, rng=rng, t0=t0, t1=t1)
    sr = int(cfg.params.render.sample_rate_hz)
    return _render([Part(name=name, spec=spec, notes=notes)], int(CLIP_S * sr), cfg, workdir, name)


def _peak_norm(x: np.ndarray) -> np.ndarray:
    peak = float(np.max(np.abs(x)))
    return x / peak if peak > 0 else x


def split_plan(split: str) -> list[dict[str, Any]]:
    """The entrance mixes of one split: entering instrument, bed, tempo, harmony, seed."""
    from timingbench.render.arrangement import random_harmony
    from timingbench.render.instruments import INSTRUMENTS

    rng = np.random.default_rng(SPLIT_SEEDS[split])
    specs = [s for s in INSTRUMENTS.values() if s.role != "click"]
    plan = []
    for k, enter in enumerate(sorted(specs, key=lambda s: s.name)):
        others = [s for s in specs if s.family != enter.family and not (s.is_drum and enter.is_drum)]
        bed = others[int(rng.integers(len(others)))]
        plan.append({"split": split, "k": k, "enter": enter, "bed": bed, "bpm": float(rng.integers(80, 140)),
                     "harmony": random_harmony(rng), "seed": int(rng.integers(1 << 31))})
    return plan


def render_mix(item: dict[str, Any], cfg: Config, workdir: Path) -> np.ndarray:
    """Bed throughout + the entering instrument from ENTER_S, equal peak levels."""
    common = {"bpm": item["bpm"], "harmony": item["harmony"], "cfg": cfg, "workdir": workdir}
    tag = f"{item['split']}{item['k']}"
    a = _stem(item["bed"], t0=0.0, t1=CLIP_S, seed=item["seed"], name=f"{tag}_bed", **common)
    b = _stem(item["enter"], t0=ENTER_S, t1=CLIP_S, seed=item["seed"] + 1, name=f"{tag}_enter", **common)
    return (0.5 * _peak_norm(a) + 0.5 * _peak_norm(b)).astype(np.float32)


def accuracy(args: argparse.Namespace) -> dict[str, Any]:
    """Run (or reuse) the entrance renders and score the gate per family."""
    from timingbench.identity.evidence import FamilyEvidence
    from timingbench.identity.providers import family_evidence
    from timingbench.identity.rules import family_rise

    cfg = load_config(args.config)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    store = out / "evidence.jsonl"
    done = set()
    if store.exists():
        done = {(r["split"], r["enter"]) for r in map(json.loads, store.read_text().splitlines())}
    if not args.reuse:
        sr = int(cfg.params.render.sample_rate_hz)
        with tempfile.TemporaryDirectory() as tmp, store.open("a") as fh:
            for split in SPLIT_SEEDS:
                for item in split_plan(split):
                    if (split, item["enter"].name) in done:
                        continue
                    ev = family_evidence(render_mix(item, cfg, Path(tmp)), sr=sr, semantic=cfg.params.semantic,
                                         evidence_params=cfg.params.evidence, audio=cfg.params.audio)
                    row = {"split": split, "enter": item["enter"].name,
                           "enter_family": item["enter"].family, "bed": item["bed"].name,
                           "bed_family": item["bed"].family, "times": ev.times.tolist(),
                           "window_s": ev.window_s, "exempt": ev.exempt,
                           "curves": {f: c.tolist() for f, c in ev.curves.items()}}
                    fh.write(json.dumps(row) + "\n")
                    fh.flush()
                    print(split, row["enter"], "over", row["bed"], flush=True)
    records = [json.loads(line) for line in store.read_text().splitlines()]

    table: dict[str, dict[str, dict[str, list[int]]]] = {}
    for r in records:
        ev = FamilyEvidence(times=np.asarray(r["times"]), backend="musicnn", exempt=r["exempt"],
                            window_s=r["window_s"],
                            curves={f: np.asarray(c) for f, c in r["curves"].items()})
        for fam in sorted(ev.curves):
            if fam == r["bed_family"]:
                continue
            verdict, _ = family_rise(ev, fam, candidate_s=ENTER_S, semantic=cfg.params.semantic,
                                     evidence_params=cfg.params.evidence)
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
    from timingbench.identity.providers import family_evidence
    from timingbench.models import musicnn
    from timingbench.render.instruments import INSTRUMENTS

    cfg = load_config(args.config)
    sr = int(cfg.params.render.sample_rate_hz)
    global CLIP_S
    CLIP_S = 35.0
    from timingbench.render.arrangement import random_harmony

    with tempfile.TemporaryDirectory() as tmp:
        y = _stem(INSTRUMENTS["piano"], t0=0.0, t1=CLIP_S, seed=1, bpm=100.0,
                  harmony=random_harmony(np.random.default_rng(1)), cfg=cfg, workdir=Path(tmp), name="s")
    y = y.astype(np.float32)
    musicnn.load_musicnn.cache_clear()
    t, c = time.perf_counter(), time.process_time()
    ev = family_evidence(y, sr=sr, semantic=cfg.params.semantic, evidence_params=cfg.params.evidence,
                         audio=cfg.params.audio)
    cold = time.perf_counter() - t
    warm, cpu = [], []
    for _ in range(args.repeats):
        t, c = time.perf_counter(), time.process_time()
        family_evidence(y, sr=sr, semantic=cfg.params.semantic, evidence_params=cfg.params.evidence,
                        audio=cfg.params.audio)
        warm.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    # baseline in the same process: the straightforward per-patch network on the same patches
    tagger = musicnn.load_musicnn()
    spec = musicnn.log_mel(musicnn.resample_to_model(y, sr=sr))
    starts = musicnn.patch_starts(spec.shape[0], hop_frames=float(cfg.params.semantic.hop_s) * 16000 / 256)
    shared, per_patch = [], []
    for _ in range(args.repeats):
        t = time.process_time()
        fast = tagger.logits_at(spec, starts)
        shared.append(time.process_time() - t)
        t = time.process_time()
        slow = np.concatenate([tagger.logits(np.stack([spec[s : s + 187] for s in starts[i : i + 16]]))
                               for i in range(0, starts.size, 16)])
        per_patch.append(time.process_time() - t)
    import os

    import torch

    res = {"clip_s": CLIP_S, "windows": int(ev.times.size), "hop_s": cfg.params.semantic.hop_s,
           "cold_wall_s": round(cold, 3), "warm_wall_median_s": round(statistics.median(warm), 3),
           "warm_cpu_median_s": round(statistics.median(cpu), 3),
           "network_shared_cpu_median_s": round(statistics.median(shared), 3),
           "network_per_patch_cpu_median_s": round(statistics.median(per_patch), 3),
           "speedup_vs_per_patch": round(statistics.median(per_patch) / statistics.median(shared), 2),
           "max_abs_logit_diff": float(np.abs(fast - slow).max()),
           "torch_threads": torch.get_num_threads(), "load_avg_1min": os.getloadavg()[0]}
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
    a.add_argument("--reuse", action="store_true",
                   help="re-score the saved evidence only (a plain run resumes where it stopped)")
    a.add_argument("--config", default=None)
    args = p.parse_args()
    (speed if args.cmd == "speed" else accuracy)(args)


if __name__ == "__main__":
    main()

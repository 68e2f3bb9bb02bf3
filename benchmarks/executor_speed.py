"""Clips per second of `timingbench score` on the local pool and on Ray, and CPU-seconds per clip.

1. Executor overhead: the same rendered corpus is scored (``--separation dsp``, musicnn
   default family evidence, chance credit on, a fresh feature cache each run so every bank is
   computed) with ``LocalExecutor(jobs)`` -- the baseline -- and with ``RayExecutor`` on
   a local Ray instance of ``jobs`` CPUs started afterwards in the same process (a Ray
   driver must not fork, so the local runs come first), ``--repeats`` times each, after
   one serial warm-up run in this process (so the forked local workers inherit compiled
   kernels and loaded weights, as Ray's reused workers hold them). Ray's first run
   includes its worker start-up and is reported apart. The outputs of every run are checked byte-identical.
2. Cost model (one process, serial, ``time.process_time`` so every thread counts): CPU
   seconds per clip of the dsp pipeline without family evidence, the family evidence on
   its own (the trained presence model and musicnn, model loading excluded), and demucs separation of one analysis
   window by a full-size, randomly initialised HTDemucs (``HTDemucs(sources)`` with demucs's default
   architecture; a random model costs what the trained one costs).

Usage::

    .venv/bin/python benchmarks/executor_speed.py --clips 12 --jobs 2 --repeats 2
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from timingbench.config import load_config
from timingbench.executors import LocalExecutor, RayExecutor, RayOptions
from timingbench.runner import ScoreOptions, score_folder

RECIPES = ("silence_then_start", "end_cut", "energy_increase", "entry_off_time")


def render(root: Path, n: int, duration_s: float) -> Path:
    from timingbench.render import render_recipe

    rows = []
    for i in range(n):
        rc = render_recipe(RECIPES[i % len(RECIPES)], seed=7000 + i, out_dir=root, duration_s=duration_s)
        rows.append(rc.prompt)
    (root / "prompts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def score_once(corpus: Path, work: Path, tag: str, executor: object) -> tuple[float, bytes]:
    out = work / tag
    cache = work / f"{tag}-cache"
    opts = ScoreOptions(separation="dsp", cache_dir=str(cache))
    t = time.perf_counter()
    score_folder(corpus / "clips", corpus / "prompts.jsonl", out, load_config(), opts=opts,
                 executor=executor)  # type: ignore[arg-type]
    wall = time.perf_counter() - t
    data = (out / "events.jsonl").read_bytes() + (out / "clips.jsonl").read_bytes()
    shutil.rmtree(out)
    shutil.rmtree(cache, ignore_errors=True)
    return wall, data


def cost_model(corpus: Path, n: int) -> dict[str, float]:
    from timingbench.audio import load_clip
    from timingbench.features import compute_bank
    from timingbench.features import separation as sep
    from timingbench.prompts import load_prompts, match_clips
    from timingbench.runner import score_bank

    cfg = load_config()
    ps = load_prompts(corpus / "prompts.jsonl")
    refs = match_clips(corpus / "clips", ps.prompts).clips[:n]
    none = ScoreOptions(separation="dsp", family_evidence="none")
    t = time.process_time()
    banks = []
    for ref in refs:
        bank = compute_bank(load_clip(ref.path, cfg), cfg, separation="dsp")
        score_bank(bank, ps.prompts[ref.prompt_id], ref, cfg, none)
        banks.append(bank)
    dsp = (time.process_time() - t) / len(refs)
    from timingbench.identity.providers import family_evidence

    evid = {}
    for backend in ("trained", "musicnn"):
        # load the model once
        family_evidence(banks[0], sr=banks[0].sr, semantic=cfg.params.semantic, evidence_params=cfg.params.evidence,
                        audio=cfg.params.audio, backend=backend)
        t = time.process_time()
        for bank in banks[1:]:
            family_evidence(bank, sr=bank.sr, semantic=cfg.params.semantic,
                            evidence_params=cfg.params.evidence, audio=cfg.params.audio, backend=backend)
        evid[backend] = (time.process_time() - t) / max(1, len(banks) - 1)
    import torch
    from demucs.htdemucs import HTDemucs

    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = HTDemucs(sources=["drums", "bass", "other", "vocals"]).eval()
    x = banks[0].samples
    t = time.process_time()
    w = time.perf_counter()
    sep.separate_demucs(np.asarray(x, dtype=np.float32), sr=banks[0].sr, model=model,
                        overlap=float(cfg.params.separation.demucs_overlap), shifts=0)
    demucs = time.process_time() - t
    return {"dsp_cpu_s": dsp, "trained_cpu_s": evid["trained"], "musicnn_cpu_s": evid["musicnn"],
            "demucs_cpu_s": demucs,
            "demucs_wall_s": time.perf_counter() - w, "window_s": x.size / banks[0].sr,
            "torch_threads": torch.get_num_threads()}


def report_cost(cm: dict[str, float]) -> None:
    say(f"cost model (CPU-seconds per {cm['window_s']:.0f} s clip, serial): dsp pipeline "
        f"{cm['dsp_cpu_s']:.2f}; family evidence: trained (presence) model {cm['trained_cpu_s']:.2f}, "
        f"musicnn {cm['musicnn_cpu_s']:.2f}; demucs (random-init HTDemucs, {cm['torch_threads']} "
        f"torch threads) {cm['demucs_cpu_s']:.1f} CPU-s ({cm['demucs_wall_s']:.1f} s wall)")


def say(line: str) -> None:
    print(line, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=None, help="rendered corpus (clips/, prompts.jsonl); default: render one")
    ap.add_argument("--clips", type=int, default=12, help="clips to render (default 12)")
    ap.add_argument("--duration", type=float, default=30.0, help="rendered clip length, s (default 30)")
    ap.add_argument("--jobs", type=int, default=2, help="local workers = Ray CPUs (default 2)")
    ap.add_argument("--repeats", type=int, default=2, help="runs of each executor (default 2)")
    ap.add_argument("--cost-clips", type=int, default=4, help="clips for the cost model (default 4)")
    ap.add_argument("--cost-only", action="store_true", help="only the cost model (part 2)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tb-exec-bench-"))
    try:
        corpus = Path(args.corpus) if args.corpus else render(work / "corpus", args.clips, args.duration)
        n = len(list((corpus / "clips").glob("*.wav")))
        if args.cost_only:
            report_cost(cost_model(corpus, min(args.cost_clips, n)))
            return
        # warm this process first (numba kernels compiled, musicnn weights loaded), so the
        # forked local workers start as warm as Ray's reused ones
        serial, ref_bytes = score_once(corpus, work, "serial", LocalExecutor(1))
        say(f"machine: {os.cpu_count()} cores, 1-min load {os.getloadavg()[0]:.1f} at the start")
        say(f"corpus: {n} clips; jobs / Ray CPUs: {args.jobs}")
        say(f"serial warm-up run (jobs 1, includes compiling and loading): {serial:.1f} s = {n / serial:.2f} clips/s")
        local_t = []
        for k in range(args.repeats):
            w, b = score_once(corpus, work, f"local{k}", LocalExecutor(args.jobs))
            assert b == ref_bytes, "local pool and serial outputs differ"
            local_t.append(w)
            say(f"local --jobs {args.jobs} run {k + 1}: {w:.1f} s")
        import ray

        t = time.perf_counter()
        ray.init(address="local", num_cpus=args.jobs, include_dashboard=False, log_to_driver=False)
        ray_start = time.perf_counter() - t
        ray_ex = RayExecutor(RayOptions())
        cold, b = score_once(corpus, work, "ray-cold", ray_ex)
        assert b == ref_bytes, "ray and serial outputs differ"
        say(f"ray.init: {ray_start:.1f} s; first Ray run (worker start-up): {cold:.1f} s = {n / cold:.2f} clips/s")
        ray_t = []
        for k in range(args.repeats):
            w, b = score_once(corpus, work, f"ray{k}", ray_ex)
            assert b == ref_bytes, "ray outputs differ between runs"
            ray_t.append(w)
            say(f"ray {args.jobs} CPUs run {k + 1}: {w:.1f} s")
        ray.shutdown()
        lo, ra = min(local_t), min(ray_t)
        say("outputs byte-identical in every run (serial, local pool, Ray)")
        say(f"local --jobs {args.jobs}: best {lo:.1f} s = {n / lo:.2f} clips/s")
        say(f"ray {args.jobs} CPUs (warm): best {ra:.1f} s = {n / ra:.2f} clips/s")
        say(f"ratio ray / local throughput: {lo / ra:.2f}x; 1-min load {os.getloadavg()[0]:.1f} now")
        report_cost(cost_model(corpus, min(args.cost_clips, n)))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

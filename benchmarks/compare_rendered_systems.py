"""Compare three synthetic "systems" rendered by the Reference renderer.

One shared prompt set; every system answers every prompt with rendered audio:

- ``on-time``: each event is delivered at its instructed time;
- ``late-0.8s``: the same recipes with ``offset_s=+0.8`` (every event 0.8 s late);
- ``omits-half``: the music-start prompts (half of the set) are rendered with
  ``never_delivered`` (the music plays from 0 s, no silence); the other prompts are the
  on-time clips;
- optionally ``on-time+20ms``: the on-time clips with 20 ms of leading silence (a tiny
  made-up difference that the comparison must not resolve).

The prompts alternate ``music_start_after_silence`` (``silence_then_start``) and
``music_end`` with an abrupt cut (``end_cut``): whole-mix events, whose detectors are
reliable on rendered audio. Each system's clip of a prompt is rendered until its prompt
row (id, text, style, instructed times) equals the on-time system's row; the shared
``prompts.jsonl`` is the on-time system's. Each folder is scored with
``score_folder(..., opts=ScoreOptions(separation="dsp"))`` and the folders are compared
with ``timingbench compare``.

    .venv/bin/python benchmarks/compare_rendered_systems.py --prompts 30 --duration 20 \\
        --out /tmp/cmp-rendered [--jobs 2] [--shifted] [--no-plots]
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from timingbench.cli import main as cli_main
from timingbench.config import DEFAULT_CONFIG_PATH, load_config
from timingbench.errors import ParameterError, TimingbenchError
from timingbench.render import RenderedClip, render_recipe
from timingbench.runner import ScoreOptions, score_folder

ON_TIME, LATE, OMITS, SHIFTED = "on-time", "late-0.8s", "omits-half", "on-time+20ms"
LATE_OFFSET_S = 0.8
SHIFT_S = 0.02
#: Styles with hard-onset foundations (pads and bowed strings blur a start).
STYLES = ("rock_pop", "electronic", "jazz", "cinematic")
#: Seeds tried per system before a prompt slot moves on to the next reference seed.
VARIANT_TRIES = 12
WORDING_TRIES = 4
REFERENCE_TRIES = 8
RENDER_ATTEMPTS = 3


@dataclass(frozen=True)
class PromptSlot:
    """One prompt of the shared set.

    Attributes
    ----------
    prompt_id : str
        Prompt and clip id.
    recipe : str
        Renderer recipe of the on-time delivery (``silence_then_start`` or ``end_cut``).
    kind : str
        event kind (formats §1) the recipe's prompt instructs.
    time_s : float
        Instructed time in seconds.
    style : str
        Renderer style.
    bpm : float
        Tempo of the arrangement (the same for every system).
    seed : int
        First reference seed.
    omitted : bool
        Whether ``omits-half`` never delivers the event.
    """

    prompt_id: str
    recipe: str
    kind: str
    time_s: float
    style: str
    bpm: float
    seed: int
    omitted: bool


def prompt_slots(n: int, *, duration_s: float, seed: int) -> list[PromptSlot]:
    """The shared prompt set: ``n`` prompts alternating music starts and cut endings.

    Instructed times are non-integer (the renderer words them "at exactly 6.5 seconds",
    with no seeded choice of wording). Starts lie in [1.5, 0.3 * duration]; endings in
    [0.55, 0.85] * duration, so that a 0.8 s late cut still falls inside the clip.

    Parameters
    ----------
    n : int
        Number of prompts (>= 2).
    duration_s : float
        Clip length in seconds (12-30).
    seed : int
        Seed of the times, styles and tempi.

    Returns
    -------
    slots : list of PromptSlot
    """
    if n < 2 or not 12.0 <= duration_s <= 30.0:
        raise ValueError(f"need n >= 2 prompts and 12 <= duration_s <= 30, got {n}, {duration_s}")
    rng = np.random.default_rng(seed)
    slots = []
    for k in range(n):
        start = k % 2 == 0
        lo, hi = (1.5, 0.3 * duration_s) if start else (0.55 * duration_s, 0.85 * duration_s)
        t = float(np.floor(rng.uniform(lo, hi))) + 0.5
        st = STYLES[k % len(STYLES)]
        slots.append(PromptSlot(
            prompt_id=f"cmp-{k:03d}", recipe="silence_then_start" if start else "end_cut",
            kind="music_start_after_silence" if start else "music_end", time_s=t, style=st,
            bpm=float(rng.integers(96, 129)), seed=seed * 1000 + k, omitted=start))
    return slots


def _render(recipe: str, slot: PromptSlot, *, seed: int, out_dir: Path, duration_s: float,
            **params: Any) -> RenderedClip:
    kw = dict(seed=seed, out_dir=out_dir, clip_id=slot.prompt_id, duration_s=duration_s,
              time_s=slot.time_s, style=slot.style, bpm=slot.bpm, **params)
    for _ in range(RENDER_ATTEMPTS - 1):
        try:
            return render_recipe(recipe, **kw)
        except ParameterError:
            raise
        except TimingbenchError:  # FluidSynth timing out on a loaded machine: try again
            pass
    return render_recipe(recipe, **kw)


def _instructions(text: str) -> str:
    """The prompt text after its first sentence ("Create a <style phrase> track for ...")."""
    return text.split(". ", 1)[-1]


def _matching(recipe: str, slot: PromptSlot, reference: dict[str, Any], *, first_seed: int,
              out_dir: Path, duration_s: float, **params: Any) -> RenderedClip | None:
    """Render until the clip's prompt row equals ``reference``; None when no seed does.

    A seed changes the style phrase freely, but the instruction wording only where the
    recipe draws it: when WORDING_TRIES renders all give the same wording, other than the
    reference's, the wording is fixed and the reference is given up rather than rendered
    VARIANT_TRIES times in vain.
    """
    other_wordings: list[str] = []
    for k in range(VARIANT_TRIES):
        rc = _render(recipe, slot, seed=first_seed + 7919 * k, out_dir=out_dir, duration_s=duration_s,
                     **params)
        if rc.prompt == reference:
            return rc
        wording = _instructions(rc.prompt["text"])
        if wording != _instructions(reference["text"]):
            other_wordings.append(wording)
            if len(other_wordings) >= WORDING_TRIES and len(set(other_wordings)) == 1:
                return None
    return None


def render_slot(slot: PromptSlot, *, root: Path, duration_s: float,
                systems: Sequence[str]) -> dict[str, RenderedClip]:
    """Render one prompt for every system so that all prompt rows agree.

    Writes ``root/<system>/clips/<prompt_id>.wav``.

    Returns
    -------
    clips : dict of str to RenderedClip
        System name -> its rendered clip (``on-time`` always included).

    Raises
    ------
    TimingbenchError
        If no reference seed gives prompt rows that every system can match.
    """
    for r in range(REFERENCE_TRIES):
        seed = slot.seed + 104729 * r
        out: dict[str, RenderedClip] = {}
        if OMITS in systems and slot.omitted:
            # never_delivered words its instruction one way only: its row is the reference.
            omit = _render("never_delivered", slot, seed=seed, out_dir=root / OMITS, duration_s=duration_s,
                           kind=slot.kind)
            out[OMITS] = omit
            found = _matching(slot.recipe, slot, omit.prompt, first_seed=seed, out_dir=root / ON_TIME,
                              duration_s=duration_s)
            if found is None:
                continue
            ref = found
        else:
            ref = _render(slot.recipe, slot, seed=seed, out_dir=root / ON_TIME, duration_s=duration_s)
        out[ON_TIME] = ref
        if OMITS in systems and not slot.omitted:
            dest = root / OMITS / "clips" / ref.audio_path.name
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ref.audio_path, dest)
            out[OMITS] = ref
        if LATE in systems:
            late = _matching(slot.recipe, slot, ref.prompt, first_seed=seed, out_dir=root / LATE,
                             duration_s=duration_s, offset_s=LATE_OFFSET_S)
            if late is None:
                continue
            out[LATE] = late
        return out
    raise TimingbenchError(f"{slot.prompt_id}: no seed gave prompt rows that agree for {list(systems)}")


def shift_clips(src: Path, dest: Path, *, shift_s: float) -> None:
    """Copy every WAV of ``src`` to ``dest`` delayed by ``shift_s`` (leading silence, same length)."""
    dest.mkdir(parents=True, exist_ok=True)
    for path in sorted(src.glob("*.wav")):
        y, sr = sf.read(path, dtype="float64", always_2d=False)
        n = int(round(shift_s * sr))
        shifted = np.concatenate([np.zeros(n), y[:len(y) - n]])
        sf.write(dest / path.name, shifted, sr, subtype="PCM_24")


def build_systems(root: Path, *, n_prompts: int, duration_s: float, seed: int = 1,
                  systems: Sequence[str] = (ON_TIME, LATE, OMITS, SHIFTED)) -> dict[str, Any]:
    """Render the systems' clip folders and the shared prompt set under ``root``.

    Returns
    -------
    build : dict
        ``prompts`` (path of the shared ``prompts.jsonl``), ``clips`` (system -> clips
        folder), ``rows`` (system -> prompt rows of its clips, in prompt order) and
        ``truth`` (system -> renderer truth rows).
    """
    root = Path(root)
    rendered = [s for s in systems if s != SHIFTED]
    rows: dict[str, list[dict[str, Any]]] = {s: [] for s in rendered}
    truth: dict[str, list[dict[str, Any]]] = {s: [] for s in rendered}
    for slot in prompt_slots(n_prompts, duration_s=duration_s, seed=seed):
        clips = render_slot(slot, root=root, duration_s=duration_s, systems=rendered)
        for s in rendered:
            rows[s].append(clips[s].prompt)
            truth[s].extend(clips[s].truth)
    prompts = root / "prompts.jsonl"
    prompts.write_text("".join(json.dumps(p) + "\n" for p in rows[ON_TIME]))
    folders = {s: root / s / "clips" for s in rendered}
    if SHIFTED in systems:
        shift_clips(folders[ON_TIME], root / SHIFTED / "clips", shift_s=SHIFT_S)
        folders[SHIFTED] = root / SHIFTED / "clips"
    return {"prompts": prompts, "clips": folders, "rows": rows, "truth": truth}


def score_systems(build: dict[str, Any], results_root: Path, *, jobs: int = 1) -> dict[str, Path]:
    """Score each system's clips with the dsp separation; system -> results folder."""
    config = load_config(DEFAULT_CONFIG_PATH)
    out = {}
    for name, clips in build["clips"].items():
        out[name] = Path(results_root) / name
        score_folder(clips, build["prompts"], out[name], config,
                     opts=ScoreOptions(separation="dsp"), jobs=jobs)
    return out


def compare_args(results: dict[str, Path], out: Path, *, plots: bool = True) -> list[str]:
    """The ``timingbench compare`` argument list for these results folders."""
    args = ["compare", *(str(p) for p in results.values()), "--names", ",".join(results),
            "--out", str(out)]
    return args if plots else args + ["--no-plots"]


def main(argv: Sequence[str] | None = None) -> int:
    """Render, score and compare; prints the comparison tables."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=30, help="prompts in the shared set")
    ap.add_argument("--duration", type=float, default=30.0, help="clip length in seconds")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True, help="working folder (clips, results, comparison)")
    ap.add_argument("--jobs", type=int, default=2, help="scoring worker processes")
    ap.add_argument("--shifted", action="store_true",
                    help=f"add {SHIFTED!r}: the on-time clips delayed by {SHIFT_S * 1000:g} ms")
    ap.add_argument("--no-plots", action="store_true")
    a = ap.parse_args(argv)
    root = Path(a.out)
    systems = (ON_TIME, LATE, OMITS) + ((SHIFTED,) if a.shifted else ())
    t0 = time.perf_counter()
    build = build_systems(root / "systems", n_prompts=a.prompts, duration_s=a.duration, seed=a.seed,
                          systems=systems)
    t1 = time.perf_counter()
    results = score_systems(build, root / "results", jobs=a.jobs)
    t2 = time.perf_counter()
    rc = cli_main(compare_args(results, root / "comparison", plots=not a.no_plots))
    print(f"rendered in {t1 - t0:.0f} s, scored in {t2 - t1:.0f} s, compared in "
          f"{time.perf_counter() - t2:.0f} s")
    return rc


if __name__ == "__main__":
    raise SystemExit(main())

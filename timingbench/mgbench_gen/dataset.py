"""Generate one MGBench split: excerpts, questions, MIDI, annotations and rendered audio.

Output folder layout::

    DIR/manifest.json       subset, split, seed, soundfont, sizes, counts, config version
    DIR/mgbench.jsonl       questions in the scorer's ground-truth format (formats §7),
                            plus clip, audio_path, template (and evidence spans for
                            understanding questions)
    DIR/notes.jsonl         one row per clip: duration, audio/MIDI paths, notes (onset,
                            offset, pitch, velocity and per-note labels), clip labels
    DIR/midi/<clip>.mid     the MIDI the audio was rendered from (truth = these ticks)
    DIR/audio/<clip>.wav    44.1 kHz mono 24-bit piano audio

Determinism: every clip draws from its own generator seeded by (seed, subset, split,
clip index), the question mix from generators seeded the same way, and the audio is
rendered in fixed batches of clips; the same seed and soundfont give byte-identical
files whatever ``jobs``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from timingbench.config import Config
from timingbench.errors import ParameterError
from timingbench.jsonio import write_json, write_jsonl
from timingbench.mgbench_gen import three_note, two_bar, two_bar_qa
from timingbench.mgbench_gen.batch_render import render_batch, write_excerpt_midi
from timingbench.mgbench_gen.excerpt import Candidate, Excerpt, seconds
from timingbench.params.generation import MgbenchGenParams, RenderParams
from timingbench.render.synth import fluidsynth_binary, resolve_soundfont, write_wav
from timingbench.version import __version__

SUBSETS = {"3n": "3N", "2b": "2B"}
SPLITS = ("train", "val", "test")
_SUBSET_CODE = {"3N": 3, "2B": 2}
_SPLIT_CODE = {"train": 0, "val": 1, "test": 2}
T = TypeVar("T")
_MIX_STREAM = 1_000_003  # seed word of the split-level draws (question mix), beyond any clip index


@dataclass(frozen=True)
class SplitRequest:
    """What to generate.

    Attributes
    ----------
    subset : str
        ``3N`` or ``2B``.
    split : str
        ``train`` | ``val`` | ``test``.
    seed : int
    n_clips : int
    soundfont : Path
    """

    subset: str
    split: str
    seed: int
    n_clips: int
    soundfont: Path


def _rng(req: SplitRequest, *words: int) -> np.random.Generator:
    return np.random.default_rng([int(req.seed), _SUBSET_CODE[req.subset], _SPLIT_CODE[req.split], *words])


def default_size(params: MgbenchGenParams, subset: str, split: str) -> int:
    """Configured number of clips of a split (``mgbench_gen.split_sizes_3n|2b``)."""
    sizes = params.split_sizes_3n if subset.lower() == "3n" else params.split_sizes_2b
    return int(sizes[split])


def make_request(subset: str, split: str, *, seed: int, n_clips: int | None, soundfont: str | Path | None,
                 params: MgbenchGenParams, render: RenderParams) -> SplitRequest:
    """Validate the options of ``mgbench generate``.

    ``params`` gives the default split size, ``render`` the default soundfont.

    Raises
    ------
    ParameterError
        If the subset, split, seed or size is invalid.
    ConfigError
        If the soundfont does not exist.
    """
    sub = SUBSETS.get(str(subset).lower())
    if sub is None:
        raise ParameterError(f"--subset must be 3n or 2b, got {subset!r}")
    if split not in SPLITS:
        raise ParameterError(f"--split must be one of {', '.join(SPLITS)}, got {split!r}")
    if int(seed) != seed or seed < 0:
        raise ParameterError(f"--seed must be a non-negative integer, got {seed!r}")
    n = default_size(params, sub, split) if n_clips is None else int(n_clips)
    if n < 1:
        raise ParameterError(f"--clips must be at least 1, got {n_clips!r}")
    sf2 = resolve_soundfont(soundfont, render)
    return SplitRequest(sub, split, int(seed), n, sf2)


# ----------------------------------------------------------------------------- excerpts


def _pair(xs: Sequence[T]) -> tuple[T, T]:
    """A configured ``[lo, hi]`` range (two elements: :meth:`MgbenchGenParams.validate`)."""
    return xs[0], xs[1]


def _three_note_params(params: MgbenchGenParams) -> three_note.ThreeNoteParams:
    return three_note.ThreeNoteParams(
        duration_s=_pair(params.clip_duration_3n_s), velocity=_pair(params.velocity),
        min_note_s=params.min_note_3n_s, edge_s=_pair(params.edge_3n_s),
        max_gap_s=params.max_gap_3n_s, max_interval=params.max_interval_3n,
    )


def _two_bar_params(params: MgbenchGenParams) -> two_bar.TwoBarParams:
    meters = tuple(str(m) for m in params.meters_2b)
    bad = [m for m in meters if m not in two_bar.BEATS_PER_BAR]
    if bad:
        raise ParameterError(f"mgbench_gen.meters_2b has unknown meters {bad}; "
                             f"use {sorted(two_bar.BEATS_PER_BAR)}")
    return two_bar.TwoBarParams(
        meters=meters, tempo_bpm=_pair(params.tempo_2b_bpm),
        articulation=_pair(params.articulation_2b), edge_s=_pair(params.edge_2b_s),
        velocity=_pair(params.velocity), max_duration_s=params.max_excerpt_2b_s,
    )


def clip_id(req: SplitRequest, i: int) -> str:
    """Id of clip ``i`` of a split (``3n-test-00007``)."""
    return f"{req.subset.lower()}-{req.split}-{i:05d}"


def make_excerpts(req: SplitRequest, params: MgbenchGenParams) -> tuple[list[Excerpt], dict[str, int]]:
    """Sample every excerpt of the split.

    Returns
    -------
    excerpts : list of Excerpt
    dropped : dict
        2B: rejected draws by validation reason (empty for 3N).
    """
    out: list[Excerpt] = []
    dropped: dict[str, int] = {}
    if req.subset == "3N":
        p3 = _three_note_params(params)
        # one-, two- and three-note clips balanced: counts 1-3 dealt over a seeded permutation
        perm = _rng(req, _MIX_STREAM).permutation(req.n_clips)
        for i in range(req.n_clips):
            out.append(three_note.sample_clip(_rng(req, i), clip_id=clip_id(req, i), n_notes=1 + int(perm[i]) % 3,
                                              params=p3))
        return out, dropped
    p2 = _two_bar_params(params)
    attempts = params.max_attempts_2b
    for i in range(req.n_clips):
        seed_words = [int(req.seed), _SUBSET_CODE[req.subset], _SPLIT_CODE[req.split], i]
        ex, drops = two_bar.sample_excerpt(seed_words, p2, clip_id=clip_id(req, i), max_attempts=attempts)
        for k, v in drops.items():
            dropped[k] = dropped.get(k, 0) + v
        out.append(ex)
    return out, dropped


# ----------------------------------------------------------------------------- questions


def _rotated(names: tuple[str, ...], start: int) -> list[str]:
    k = start % len(names)
    return list(names[k:] + names[:k])


def _empty_slots(req: SplitRequest, n_slots: int, ratio: float, stream: int) -> set[int]:
    """Exactly ``round(ratio * n_slots)`` slots, drawn by a seeded permutation."""
    perm = _rng(req, _MIX_STREAM + stream).permutation(n_slots)
    return {int(s) for s in perm[: int(round(ratio * n_slots))]}


def _row(ex: Excerpt, qid: str, c: Candidate, audio_rel: str) -> dict[str, Any]:
    row: dict[str, Any] = {"id": qid, "subset": ex.subset, "task": c.task, "category": c.category,
                           "question": c.question}
    if c.task == "grounding":
        row["intervals"] = ex.spans(c.targets, merge_runs=c.merge_runs)
    else:
        row["answer"] = c.answer
        row["evidence"] = ex.spans(c.targets, merge_runs=c.merge_runs)
    row.update({"clip": ex.id, "audio_path": audio_rel, "template": c.template})
    return row


def _pick_or_fail(pick: Candidate | None, ex: Excerpt, what: str) -> Candidate:
    if pick is None:
        raise ParameterError(f"{ex.id}: no {what} question left to sample (clip supports too few questions)")
    return pick


def make_questions(req: SplitRequest, excerpts: list[Excerpt], params: MgbenchGenParams) -> list[dict[str, Any]]:
    """Sample the questions of every excerpt in the scorer's ground-truth row format.

    3N: ``queries_per_clip_3n`` grounding queries per clip, the four families in rotation,
    exactly ``empty_ratio`` of them with an empty answer. 2B: ``qa_per_excerpt_2b``
    grounding and understanding pairs per excerpt, the seven concept groups in rotation
    (so the split is balanced across groups), ``empty_ratio`` of grounding answers empty
    where the group allows it.

    Raises
    ------
    ParameterError
        If a clip supports fewer distinct questions than asked for.
    """
    ratio = params.empty_ratio
    rows: list[dict[str, Any]] = []
    n = len(excerpts)
    if req.subset == "3N":
        q = int(params.queries_per_clip_3n[req.split])
        empty = _empty_slots(req, n * q, ratio, 1)
        fam = _rng(req, _MIX_STREAM + 2).permutation(n)
        for i, ex in enumerate(excerpts):
            rng = _rng(req, i, 1)
            cands = three_note.candidates(ex, rng)
            used: set[str] = set()
            for j in range(q):
                order = _rotated(three_note.FAMILIES, int(fam[i]) + j)
                c = _pick_or_fail(three_note.pick(cands, rng, family_order=order, empty=(i * q + j) in empty,
                                                  exclude=used), ex, "grounding")
                used.add(c.question)
                rows.append(_row(ex, f"{ex.id}-q{j:02d}", c, f"audio/{ex.id}.wav"))
        return rows
    n_g, n_u = (int(v) for v in params.qa_per_excerpt_2b[req.split])
    empty = _empty_slots(req, n * n_g, ratio, 1)
    gperm = _rng(req, _MIX_STREAM + 2).permutation(n)
    uperm = _rng(req, _MIX_STREAM + 3).permutation(n)
    groups = two_bar_qa.CONCEPTS
    for i, ex in enumerate(excerpts):
        rng = _rng(req, i, 1)
        gc = two_bar_qa.grounding_candidates(ex)
        uc = two_bar_qa.understanding_candidates(ex)
        used: set[str] = set()  # type: ignore[no-redef]
        for j in range(n_g):
            order = _rotated(groups, int(gperm[i]) + j)
            want_empty = (i * n_g + j) in empty
            found = (three_note.pick(gc, rng, family_order=order[:1], empty=want_empty, exclude=used)
                     or three_note.pick(gc, rng, family_order=order[:1], empty=not want_empty, exclude=used)
                     or three_note.pick(gc, rng, family_order=order, empty=want_empty, exclude=used))
            c = _pick_or_fail(found, ex, "grounding")
            used.add(c.question)
            rows.append(_row(ex, f"{ex.id}-g{j}", c, f"audio/{ex.id}.wav"))
        for j in range(n_u):
            order = _rotated(groups, int(uperm[i]) + j)
            c = _pick_or_fail(three_note.pick(uc, rng, family_order=order, empty=False, exclude=used), ex,
                              "understanding")
            used.add(c.question)
            rows.append(_row(ex, f"{ex.id}-u{j}", c, f"audio/{ex.id}.wav"))
    return rows


# ----------------------------------------------------------------------------- files


def note_row(ex: Excerpt, split: str) -> dict[str, Any]:
    """The ``notes.jsonl`` row of an excerpt."""
    notes = []
    for k, n in enumerate(ex.notes):
        row: dict[str, Any] = {"onset_s": seconds(n.onset_s), "offset_s": seconds(n.offset_s), "pitch": n.pitch,
                               "velocity": n.velocity}
        if k < len(ex.note_labels):
            row.update(ex.note_labels[k])
        notes.append(row)
    labels: dict[str, Any] = {k: (seconds(v) if isinstance(v, float) and k.endswith("_s") else v)
                              for k, v in ex.labels.items()}
    if "bars" in labels:
        labels["bars"] = [[seconds(a), seconds(b)] for a, b in labels["bars"]]
    return {"clip": ex.id, "subset": ex.subset, "split": split, "duration_s": ex.duration_s,
            "audio_path": f"audio/{ex.id}.wav", "midi_path": f"midi/{ex.id}.mid", "labels": labels, "notes": notes}


def _render_and_write(excerpts: list[Excerpt], out_dir: Path, soundfont: Path, gen: MgbenchGenParams,
                      render: RenderParams) -> int:
    clips = render_batch(excerpts, soundfont=soundfont, params=render, release_s=gen.release_gap_s,
                         peak_dbfs=render.peak_dbfs)
    for ex, x in zip(excerpts, clips, strict=True):
        write_wav(out_dir / "audio" / f"{ex.id}.wav", x, sr=render.sample_rate_hz)
    return len(excerpts)


def render_audio(excerpts: list[Excerpt], *, out_dir: Path, soundfont: Path, gen: MgbenchGenParams,
                 render: RenderParams, jobs: int = 1, on_done: Callable[[int], None] | None = None) -> None:
    """Render every excerpt to ``out_dir/audio`` in fixed batches (``render_batch_clips``).

    Parameters
    ----------
    excerpts : list of Excerpt
    out_dir : Path
    soundfont : Path
    gen : MgbenchGenParams
        ``render_batch_clips`` and ``release_gap_s``.
    render : RenderParams
        Sample rate, synthesiser gain and peak level.
    jobs : int
        Worker processes (one FluidSynth run at a time each).
    on_done : callable, optional
        Called with the number of clips of each finished batch.

    Raises
    ------
    ParameterError
        If ``jobs`` is not positive.
    """
    if int(jobs) != jobs or jobs < 1:
        raise ParameterError(f"--jobs must be a positive number of processes, got {jobs!r}")
    fluidsynth_binary()
    size = gen.render_batch_clips
    batches = [excerpts[k:k + size] for k in range(0, len(excerpts), size)]
    if jobs == 1 or len(batches) == 1:
        for b in batches:
            done = _render_and_write(b, out_dir, soundfont, gen, render)
            if on_done is not None:
                on_done(done)
        return
    with ProcessPoolExecutor(max_workers=int(jobs)) as pool:
        for done in pool.map(_render_and_write, batches, [out_dir] * len(batches), [soundfont] * len(batches),
                             [gen] * len(batches), [render] * len(batches)):
            if on_done is not None:
                on_done(done)


def generate_split(req: SplitRequest, out_dir: str | Path, cfg: Config, *, jobs: int = 1, audio: bool = True,
                   on_done: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Generate a whole split into ``out_dir`` (layout in the module docstring).

    Parameters
    ----------
    req : SplitRequest
    out_dir : str or Path
    cfg : Config
        Its ``mgbench_gen`` and ``render`` parameter sets; its version goes into the manifest.
    jobs : int
        Rendering processes.
    audio : bool
        Render the audio (False: MIDI, annotations and questions only; the audio can be
        rendered later from the MIDI files and gives the same annotations).
    on_done : callable, optional
        Progress callback, called with the number of clips of each rendered batch.

    Returns
    -------
    manifest : dict
        What ``manifest.json`` holds, plus ``render_s`` (wall seconds spent rendering;
        not written, so that the files stay byte-identical).

    Raises
    ------
    ParameterError
        If ``jobs`` is invalid or a clip supports too few questions.
    TimingbenchError
        If FluidSynth fails.
    """
    out = Path(out_dir)
    gen = cfg.params.mgbench_gen
    excerpts, dropped = make_excerpts(req, gen)
    rows = make_questions(req, excerpts, gen)
    for ex in excerpts:
        write_excerpt_midi(ex, out / "midi" / f"{ex.id}.mid")
    write_jsonl(out / "notes.jsonl", [note_row(ex, req.split) for ex in excerpts])
    write_jsonl(out / "mgbench.jsonl", rows)
    t0 = time.perf_counter()
    if audio:
        render_audio(excerpts, out_dir=out, soundfont=req.soundfont, gen=gen,
                     render=cfg.params.render, jobs=jobs, on_done=on_done)
    render_s = time.perf_counter() - t0
    grounding = [r for r in rows if r["task"] == "grounding"]
    manifest: dict[str, Any] = {
        "benchmark": "MGBench", "subset": req.subset, "split": req.split, "seed": req.seed,
        "soundfont": req.soundfont.name if audio else None, "audio": bool(audio), "n_clips": len(excerpts),
        "n_notes": sum(len(e.notes) for e in excerpts),
        "audio_s": round(sum(e.duration_s for e in excerpts), 2),
        "n_questions": len(rows), "n_grounding": len(grounding), "n_understanding": len(rows) - len(grounding),
        "n_empty_grounding": sum(1 for r in grounding if not r["intervals"]),
        "dropped_draws": dict(sorted(dropped.items())),
        "generator": "timingbench.mgbench_gen", "timingbench_version": __version__,
        "config_version": cfg.version,
    }
    write_json(out / "manifest.json", manifest)
    return {**manifest, "render_s": render_s}

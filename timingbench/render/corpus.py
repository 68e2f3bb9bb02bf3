"""Fixed corpus definitions (dev, validation, demo, tempo) and parallel corpus rendering.

A corpus is a list of :class:`ClipSpec`; nothing of it is committed as audio: rendering a
corpus again gives byte-identical audio and identical truth. A rendered corpus folder
holds ``clips/<clip_id>.wav``, ``midi/<clip_id>.mid``, ``prompts.jsonl`` (formats §1),
``truth.jsonl`` (formats §5 Layer 1), ``observed.jsonl`` (Layer 2: every part's
entrances) and ``manifest.jsonl`` (one row per clip: split, soundfont file name, recipe,
seed, scenario and the recipe's meta: delivered times, offsets, bpm, decoys, parts; in a
kit corpus also ``kit``, the real drum kit that played the clip's drum-kit part).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from timingbench.errors import ParameterError
from timingbench.families import FAMILY_NAMES
from timingbench.jsonio import write_jsonl
from timingbench.render.lookup import lookup
from timingbench.render.pipeline import RenderedClip, render_recipe


@dataclass(frozen=True)
class ClipSpec:
    """One clip of a corpus: a recipe, its seed and parameters.

    Attributes
    ----------
    recipe : str
        Recipe name.
    seed : int
        Seed.
    params : dict
        Recipe parameters.
    duration_s : float
        Rendered length in seconds.
    gain_db : float
        Gain variant in dB.
    humanize_ms : float
        Timing jitter of the non-target parts (ms).
    clip_id : str or None
        Explicit id; the recipe's default id when None.
    stem_parts : tuple of str or None
        Only these parts' stems when stems are rendered (all when None).
    kit : str or None
        A real drum kit (a :data:`KIT_SPLITS` name) that plays the
        drum-kit part (:func:`timingbench.render.kit_mix.render_kit_recipe`); the soundfont's
        kit when None.
    """

    recipe: str
    seed: int
    params: dict[str, Any] = field(default_factory=dict)
    duration_s: float = 30.0
    gain_db: float = 0.0
    humanize_ms: float = 0.0
    clip_id: str | None = None
    stem_parts: tuple[str, ...] | None = None
    kit: str | None = None


#: The order in which the event corpus' repetitions take the families' exits (half each time). Like
#: every family named below, a fixed choice of the corpus definitions (the committed corpora are
#: rendered from them), not a list of the registry's families.
_EXIT_FAMILIES = ("bass", "guitar", "strings", "brass", "percussion", "vocals", "piano", "woodwinds",
                  "keys", "synth", "plucked")
_NEG_KINDS = ("instrument_entry", "instrument_exit", "music_end", "music_pause",
              "music_start_after_silence", "mix_energy_increase")


def _event_corpus(base_seed: int, *, reps: int) -> list[ClipSpec]:
    """Every scenario, every instrument family; ``reps`` repeats with fresh seeds."""
    specs: list[ClipSpec] = []
    seed = base_seed

    def add(recipe: str, **kw: Any) -> None:
        nonlocal seed
        seed += 1
        specs.append(ClipSpec(recipe, seed, **kw))

    for r in range(reps):
        for k, fam in enumerate(FAMILY_NAMES):
            add("entry_on_time", params={"family": fam}, humanize_ms=8.0 if k % 2 else 0.0)
            add("entry_off_time", params={"family": fam})
        for fam in (_EXIT_FAMILIES[:6], _EXIT_FAMILIES[6:])[r % 2]:
            add("exit_on_time", params={"family": fam})
            add("exit_off_time", params={"family": fam})
        for kind in _NEG_KINDS:
            add("never_delivered", params={"kind": kind})
        for fam in (("percussion", "strings", "piano", "synth"), ("bass", "brass", "vocals", "keys"))[r % 2]:
            add("busy_decoy", params={"family": fam})
        for fam in (("percussion", "bass", "vocals", "plucked"), ("guitar", "strings", "woodwinds", "piano"))[r % 2]:
            add("pre_existing", params={"family": fam})
        add("pause")
        add("pause", params={"offset_s": 1.5 if r % 2 == 0 else -1.2})
        for recipe in ("end_cut", "end_decay", "end_fade"):
            add(recipe)
            add(recipe, params={"offset_s": -2.0 if r % 2 == 0 else 1.0})
        add("energy_increase")
        add("energy_increase", params={"offset_s": 2.5 if r % 2 == 0 else -1.5})
        add("silence_then_start")
        add("silence_then_start", params={"offset_s": 1.0 if r % 2 == 0 else 3.0})
        add("sequence")
        add("sequence", params={"offsets_s": [0.0, 1.5 if r % 2 == 0 else -1.0, 0.0]})
    # gain variants of two clips and one mix longer than the instructed 30 s
    for recipe, params in (("entry_on_time", {"family": "percussion"}), ("end_fade", {})):
        seed += 1
        for g in (-12.0, -20.0):
            specs.append(ClipSpec(recipe, seed, params=params, gain_db=g))
    add("entry_on_time", params={"family": "strings"}, duration_s=42.0)
    return specs


#: The families the identity corpus covers: those the trained evidence judged when the corpus was
#: defined. A fixed corpus: it does not follow the registry's ``judged`` column (``families.table``).
_JUDGED = ("percussion", "bass", "piano", "vocals")


def _identity_corpus(base_seed: int, *, reps: int) -> list[ClipSpec]:
    """Entrances, exits, busy decoys and pre-existing targets of the judged families, ``reps`` times with fresh
    seeds."""
    specs: list[ClipSpec] = []
    seed = base_seed
    for r in range(reps):
        for k, fam in enumerate(_JUDGED):
            for recipe in ("entry_on_time", "entry_off_time", "exit_on_time", "exit_off_time", "busy_decoy",
                           "pre_existing"):
                seed += 1
                specs.append(ClipSpec(recipe, seed, params={"family": fam}, humanize_ms=8.0 if (k + r) % 2 else 0.0))
    return specs


#: Kit names (SF2 file name or Hydrogen folder name) of the rendered kit corpora by split: a
#: fixed corpus definition. The avldrums Black Pearl SF2 and Hydrogen's "The Black Pearl 1.0" are
#: one kit in two formats, and the three Millo kits share an author and sample names, so each
#: group sits in one split.
KIT_SPLITS: dict[str, tuple[str, ...]] = {
    "dev": ("Black_Pearl_4_LV2.sf2", "The Black Pearl 1.0", "Millo-Drums_v.1", "Millo_MultiLayered2",
            "Millo_MultiLayered3", "ColomboAcousticDrumkit", "HardElectro1"),
    "validation": ("Red_Zeppelin_4_LV2.sf2", "Audiophob", "BJA_Pacific", "ElectricEmpireKit", "ForzeeStereo",
                   "VariBreaks", "rumpf_kit_z01_h2"),
}


#: The kit corpora's recipes and their extra parameters (the dev-identity design plus both negatives
#: of ``never_delivered``), all for the percussion family.
_KIT_RECIPES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("entry_on_time", {}), ("entry_off_time", {}), ("exit_on_time", {}), ("exit_off_time", {}),
    ("busy_decoy", {}), ("pre_existing", {}), ("never_delivered", {"kind": "instrument_entry"}),
    ("never_delivered", {"kind": "instrument_exit"}),
)
#: Drum-kit targets the kit corpora cycle through; an electronic kit plays the drum machine.
_KIT_TARGETS = ("drums", "jazz_drums", "cinematic_drums")
_ELECTRONIC_KITS = ("HardElectro1", "ElectricEmpireKit", "VariBreaks")


def _kits_corpus(base_seed: int, *, reps: int, kits: Sequence[str]) -> list[ClipSpec]:
    """The percussion scenarios of the identity corpus and both ``never_delivered`` negatives, ``reps`` times with
    fresh seeds; the drum-kit part is played by ``kits`` in turn (a clip without one, such as a busy decoy or an
    absent target, keeps its kit name in the spec and renders without it)."""
    specs: list[ClipSpec] = []
    seed = base_seed
    k = 0
    for r in range(reps):
        for j, (recipe, extra) in enumerate(_KIT_RECIPES):
            seed += 1
            kit = kits[k % len(kits)]
            k += 1
            target = "drum_machine" if kit in _ELECTRONIC_KITS else _KIT_TARGETS[(r + j) % len(_KIT_TARGETS)]
            specs.append(ClipSpec(recipe, seed, params={"family": "percussion", "target": target, **extra},
                                  humanize_ms=8.0 if (j + r) % 2 else 0.0, kit=kit))
    return specs


def _demo_corpus() -> list[ClipSpec]:
    items: list[tuple[str, dict[str, Any]]] = [
        ("entry_on_time", {"family": "percussion", "time_s": 6.0}),
        ("entry_off_time", {"family": "strings", "time_s": 5.0, "offset_s": 1.5}),
        ("exit_on_time", {"family": "bass", "time_s": 7.0}),
        ("never_delivered", {"kind": "instrument_entry", "family": "brass", "time_s": 6.0}),
        ("pre_existing", {"family": "piano", "time_s": 7.0}),
        ("busy_decoy", {"family": "synth", "time_s": 6.0}),
        ("pause", {"time_s": 5.0, "gap_s": 3.5}),
        ("end_cut", {"time_s": 10.0}),
        ("end_fade", {"time_s": 10.0, "fade_s": 5.0}),
        ("energy_increase", {"time_s": 6.0}),
        ("silence_then_start", {"time_s": 3.0}),
        ("tempo_drums", {"bpm": 97.3}),
    ]
    return [ClipSpec(r, 9001 + i, params=p, duration_s=12.0) for i, (r, p) in enumerate(items)]


#: BPM values of the tempo corpus: 50-174 including off-grid targets.
TEMPO_BPMS = (50.0, 60.0, 72.0, 84.5, 90.0, 97.3, 100.0, 110.0, 120.0, 128.0, 136.0, 143.7, 150.0,
              160.0, 174.0)


def _tempo_corpus() -> list[ClipSpec]:
    specs: list[ClipSpec] = []
    seed = 7000
    for recipe in ("tempo_click", "tempo_drums"):
        for bpm in TEMPO_BPMS:
            seed += 1
            specs.append(ClipSpec(recipe, seed, params={"bpm": bpm}))
    for bpm in (97.3, 120.0, 143.7, 160.0, 174.0):
        seed += 1
        specs.append(ClipSpec("tempo_half_time", seed, params={"bpm": bpm}))
    for bpm in (50.0, 60.0, 72.0, 84.5, 97.3):
        seed += 1
        specs.append(ClipSpec("tempo_double_time", seed, params={"bpm": bpm}))
    return specs


@dataclass(frozen=True)
class CorpusDef:
    """A named corpus: its clips and the ``split`` its truth rows carry."""

    name: str
    split: str
    specs: tuple[ClipSpec, ...]
    description: str


CORPORA: dict[str, CorpusDef] = {
    "dev": CorpusDef("dev", "dev", tuple(_event_corpus(1000, reps=1)),
                     "every scenario and instrument family once (may influence thresholds)"),
    "validation": CorpusDef("validation", "validation",
                            tuple(_event_corpus(5000, reps=2)),
                            "the same design twice over with different seeds (never tunes anything)"),
    "dev-identity": CorpusDef("dev-identity", "dev", tuple(_identity_corpus(3000, reps=3)),
                              "entrances, exits, busy decoys and pre-existing targets of the judged families "
                              "(percussion, bass, piano, vocals), three seeds each (may influence thresholds)"),
    "dev-kits": CorpusDef("dev-kits", "dev", tuple(_kits_corpus(3400, reps=6, kits=KIT_SPLITS["dev"])),
                          "percussion entrances, exits, busy decoys, pre-existing kits and never-delivered "
                          "entrances and exits, six seeds each, the drum kit played by the real kits "
                          f"{', '.join(KIT_SPLITS['dev'])} over FluidR3 backings (may influence thresholds; "
                          f"the kits {', '.join(KIT_SPLITS['validation'])} are held back for validation-kits)"),
    "validation-kits": CorpusDef("validation-kits", "validation",
                                 tuple(_kits_corpus(6400, reps=6, kits=KIT_SPLITS["validation"])),
                                 "the dev-kits design with other seeds and the held-back real kits "
                                 f"{', '.join(KIT_SPLITS['validation'])} (never tunes anything)"),
    "demo": CorpusDef("demo", "dev", tuple(_demo_corpus()),
                      "12 short clips spanning every event kind, a negative and an off-time delivery"),
    "tempo": CorpusDef("tempo", "dev", tuple(_tempo_corpus()),
                       "exact-tempo click tracks and drum patterns, 50-174 BPM, half/double-time feels"),
}


def _render_one(spec: ClipSpec, out_dir: Path, split: str, stems: bool,
                soundfont: Path | None, controls: bool = False) -> RenderedClip:
    if spec.kit is not None:
        from timingbench.render.kit_mix import render_kit_recipe

        return render_kit_recipe(spec.recipe, kit=spec.kit, seed=spec.seed, out_dir=out_dir, clip_id=spec.clip_id,
                                 duration_s=spec.duration_s, gain_db=spec.gain_db, soundfont=soundfont, split=split,
                                 humanize_ms=spec.humanize_ms, **spec.params)
    return render_recipe(spec.recipe, seed=spec.seed, out_dir=out_dir, clip_id=spec.clip_id,
                         duration_s=spec.duration_s, gain_db=spec.gain_db, stems=stems,
                         soundfont=soundfont, split=split, humanize_ms=spec.humanize_ms,
                         stem_parts=spec.stem_parts, controls=controls, **spec.params)


def render_specs(
    specs: Sequence[ClipSpec],
    *,
    out_dir: Path,
    split: str = "dev",
    jobs: int = 1,
    stems: bool = False,
    soundfont: Path | None = None,
    on_done: Callable[[RenderedClip], None] | None = None,
    controls: bool = False,
) -> list[RenderedClip]:
    """Render clips (in a process pool when ``jobs > 1``) and write the corpus files.

    Parameters
    ----------
    specs : sequence of ClipSpec
        The clips.
    out_dir : Path
        Output folder (see the module docstring for its layout).
    split : str
        ``dev`` | ``validation``.
    jobs : int
        Worker processes.
    stems : bool
        Also write per-part stems.
    soundfont : Path, optional
        General MIDI soundfont; the configured one when omitted.
    on_done : callable, optional
        Called with each finished clip (in completion order), e.g. to advance a progress bar.
    controls : bool
        Write each clip's exact time-varying controls into its prompt row.

    Returns
    -------
    clips : list of RenderedClip
        In the order of ``specs``; the JSONL files follow the same order whatever ``jobs``.

    Raises
    ------
    ParameterError
        If ``jobs`` is not positive or two specs share a clip id.
    """
    if jobs < 1:
        raise ParameterError(f"jobs must be a positive number of processes, got {jobs!r}")
    if (stems or controls) and any(s.kit is not None for s in specs):
        raise ParameterError("a corpus whose drum kits are real kits (dev-kits, validation-kits) is rendered "
                             "without --stems and --controls")
    out_dir = Path(out_dir)
    results: list[RenderedClip | None] = [None] * len(specs)
    if jobs == 1:
        for i, spec in enumerate(specs):
            results[i] = _render_one(spec, out_dir, split, stems, soundfont, controls)
            if on_done is not None:
                on_done(results[i])  # type: ignore[arg-type]
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(_render_one, spec, out_dir, split, stems, soundfont, controls): i
                       for i, spec in enumerate(specs)}
            for fut in as_completed(futures):
                rc = fut.result()
                results[futures[fut]] = rc
                if on_done is not None:
                    on_done(rc)
    clips = [r for r in results if r is not None]
    ids = [c.clip_id for c in clips]
    if len(set(ids)) != len(ids):
        raise ParameterError("two clips of the corpus share a clip id; give distinct seeds or clip ids")
    write_jsonl(out_dir / "prompts.jsonl", [c.prompt for c in clips])
    write_jsonl(out_dir / "truth.jsonl", [row for c in clips for row in c.truth])
    write_jsonl(out_dir / "observed.jsonl", [row for c in clips for row in c.observed])
    sf_name = _soundfont_name(soundfont)
    write_jsonl(out_dir / "manifest.jsonl", [
        {"clip": c.audio_path.name, "prompt_id": c.clip_id, "scenario": c.scenario, "split": split,
         "soundfont": sf_name, "midi": str(c.midi_path.relative_to(out_dir)),
         "stems": {k: str(v.relative_to(out_dir)) for k, v in c.stem_paths.items()},
         **({"kit": c.meta["kit"]} if "kit" in c.meta else {}), "meta": c.meta}
        for c in clips])
    return clips


def _soundfont_name(soundfont: Path | None) -> str:
    """File name of the soundfont a corpus is rendered with (the configured one when None)."""
    if soundfont is not None:
        return Path(soundfont).name
    from timingbench.config import load_config
    from timingbench.params.generation import RenderParams

    rp: RenderParams = load_config().params.render  # type: ignore[assignment]
    return Path(rp.soundfont_path).name


def render_corpus(name: str, *, out_dir: Path, jobs: int = 1, progress: bool = True,
                  stems: bool = False, soundfont: Path | None = None) -> Path:
    """Render a named corpus of :data:`CORPORA` into ``out_dir``.

    Parameters
    ----------
    name : str
        ``dev`` | ``validation`` | ``dev-identity`` | ``dev-kits`` | ``validation-kits`` | ``demo`` | ``tempo``.
    out_dir : Path
        Output folder.
    jobs : int
        Worker processes (one FluidSynth process each).
    progress : bool
        Show a progress bar with the rendering rate (clips/s) on stderr.
    stems : bool
        Also write per-part stems.
    soundfont : Path, optional
        General MIDI soundfont.

    Returns
    -------
    out_dir : Path

    Raises
    ------
    ParameterError
        If the corpus name is unknown.
    """
    corpus = lookup(CORPORA, name, "corpus")
    with ProgressBar(len(corpus.specs), f"render {name}", enabled=progress) as advance:
        render_specs(corpus.specs, out_dir=Path(out_dir), split=corpus.split, jobs=jobs, stems=stems,
                     soundfont=soundfont, on_done=advance)
    return Path(out_dir)


class ProgressBar:
    """A rich progress bar with a clips/s column; yields an ``advance(clip)`` callable."""

    def __init__(self, total: int, label: str, *, enabled: bool = True) -> None:
        self.total = total
        self.label = label
        self.enabled = enabled
        self.start = 0.0
        self.done = 0
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> Callable[[RenderedClip], None]:
        self.start = time.perf_counter()
        if self.enabled:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )
            self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                      TextColumn("{task.fields[rate]}"), TimeElapsedColumn(),
                                      transient=False)
            self._progress.start()
            self._task = self._progress.add_task(self.label, total=self.total, rate="")
        return self.advance

    def advance(self, clip: RenderedClip) -> None:
        """Count one finished clip."""
        self.done += 1
        if self._progress is not None:
            rate = self.done / max(time.perf_counter() - self.start, 1e-9)
            self._progress.update(self._task, advance=1, rate=f"{rate:.2f} clips/s")

    @property
    def elapsed_s(self) -> float:
        """Seconds since the bar started."""
        return time.perf_counter() - self.start

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

"""The ``parts`` corpus: bass, percussion and vocals parts played by real recordings or real
samples, entering and leaving over real backings, with sample-exact truth and explicit levels.

The clips are drawn from the tables of :mod:`timingbench.render.parts_corpus_table` (96 a
split: 32 a family). A part is one of

- a **real recording** of ``shared/realdata`` (a drum recording, a singing voice), decoded and
  placed exactly as the real corpus places it (:mod:`timingbench.render.real_corpus`);
- a **seeded bass line** on a sampled bass (a freepats patch through TiMidity++, or an SF2
  program through FluidSynth), or a **seeded groove** on a real drum kit (avldrums SF2 or a
  Hydrogen WAV kit, :func:`timingbench.render.kits.render_kit`). Its first note-on is at the
  part's sample 0; it is rendered ``duration_s + 3`` s long and then placed like a
  recording. A rendered part whose first audible sample lies more than
  :data:`NOTE_ON_MAX_LAG_S` after that note-on (a silent or missing first hit) is refused.

The mix is :func:`timingbench.render.real_corpus.mix_clip`: the backing cut from a real
recording, each layer's active RMS set to its ``level_db`` relative to the backing's, an
entrance's truth the layer's first audible sample, an exit's the first sample after its
last audible one before the cut, 5 ms fades, the mix scaled to the configured peak. An
on-time exit whose cut falls in a silence of the part (its truth more than 50 ms early) is
redrawn by moving the part's source position on by :data:`RETRY_STEP_S`, at most
:data:`RETRY_MAX` times (the manifest records ``attempt``).

The corpus folder has the real corpus's layout: ``clips/``, ``prompts.jsonl``,
``truth.jsonl`` (with ``split``), ``observed.jsonl``, ``manifest.jsonl`` (the real corpus's
row plus ``corpus``, ``level_db``, ``level_band`` and ``parts``: what played each rendered
part) and ``stems/<clip_id>/<part>.wav`` with ``stems``.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from timingbench.config import Config, load_config
from timingbench.errors import ClipError, ParameterError, TimingbenchError
from timingbench.jsonio import write_jsonl
from timingbench.params.generation import RenderParams
from timingbench.prompts import parse_prompt
from timingbench.render.parts_corpus_table import (
    PARTS_CORPUS,
    PARTS_TABLES,
    SPLITS,
    PartSource,
    PartsTables,
    check_part_spec,
    clip_rng,
    level_band,
)
from timingbench.render.real_corpus import (
    AUDIBLE_BELOW_PEAK_DB,
    DecodedSource,
    MixedClip,
    decode_source,
    manifest_row,
    mix_clip,
)
from timingbench.render.real_corpus_table import REAL_SOURCES, RealClipSpec, RealSource
from timingbench.render.scenarios import DELIVERY_SENTENCES, ScenarioParams, _at
from timingbench.render.synth import write_wav

F64 = npt.NDArray[np.float64]

#: A rendered part's first audible sample may lie at most this long after its first note-on, in seconds (the
#: on-time rule's 50 ms: an SF2 bass's attack takes up to 40 ms to reach the audible threshold).
NOTE_ON_MAX_LAG_S = 0.05
#: A rendered part is this much longer than its clip, in seconds (room for the retries' shifts).
RENDER_EXTRA_S = 3.0
#: Step of the source position between attempts at an on-time exit, in seconds.
RETRY_STEP_S = 0.173
#: Attempts after the first at a clip whose cut falls in a silence of its part.
RETRY_MAX = 12
#: How the prompts name each family, and the onset character of an entrance from a part's start.
TARGETS = {"bass": ("bass", "hard"), "percussion": ("drums", "hard"), "vocals": ("vocals", "soft")}
#: The name of the corpus in the manifest.
CORPUS_NAME = "parts"


# ----------------------------------------------------------------------------- rendered parts

def bass_line(seed: int, *, length_s: float) -> tuple[float, list[tuple[float, float, int, int]]]:
    """A seeded two-bar bass riff repeated over ``length_s`` seconds.

    Parameters
    ----------
    seed : int
        The clip's seed.
    length_s : float
        Length to cover, in seconds.

    Returns
    -------
    bpm : float
        Tempo in beats per minute (84-132).
    notes : list of (onset_s, end_s, pitch, velocity)
        Eighth-note grid, legato (each note lasts 95 % of the gap to the next), no pitch twice in
        a row, minor
        pentatonic pitches from an A1-A2 root; the first note at 0 s, the root at velocity 127 (the others
        80-105), so that it reaches the audible threshold of the whole line.
    """
    rng = clip_rng(seed, "bass")
    bpm = round(float(rng.uniform(84.0, 132.0)), 1)
    step = 30.0 / bpm
    root = int(rng.integers(33, 46))
    scale = (0, 3, 5, 7, 10, 12)
    riff = [(0, root)]
    for i in range(1, 16):
        if rng.random() < 0.7:
            # never the previous pitch (nor the root at the riff's end): TiMidity++ silences a note
            # that the same pitch follows at once
            avoid = {riff[-1][1], root} if i == 15 else {riff[-1][1]}
            choices = [root + d for d in scale if root + d not in avoid]
            riff.append((i, choices[int(rng.integers(len(choices)))]))
    if riff[-1][1] == root and len(riff) > 1:
        riff.pop()
    onsets: list[tuple[float, int]] = []
    bar = 0
    while True:
        base = bar * 16 * step
        if base >= length_s:
            break
        onsets.extend((base + i * step, p) for i, p in riff if base + i * step < length_s)
        bar += 1
    notes = []
    for j, (t, p) in enumerate(onsets):
        nxt = onsets[j + 1][0] if j + 1 < len(onsets) else t + 2 * step
        vel = 127 if j == 0 else int(rng.integers(80, 106))
        notes.append((t, t + 0.95 * (nxt - t), p, vel))
    return bpm, notes


def drum_groove(seed: int, *, length_s: float) -> tuple[float, list[tuple[float, float, int, int]]]:
    """A seeded rock groove (kick, snare, closed hi-hat) over ``length_s`` seconds.

    Returns
    -------
    bpm : float
        84-132.
    notes : list of (onset_s, end_s, pitch, velocity)
        General MIDI drum notes 36, 38, 42: hi-hat on every eighth, kick on beats 1 and 3
        (and a seeded extra eighth), snare on 2 and 4; kick and hat at 0 s.
    """
    rng = clip_rng(seed, "groove")
    bpm = round(float(rng.uniform(84.0, 132.0)), 1)
    step = 30.0 / bpm
    extra = int(rng.choice([3, 5, 7]))
    notes = []
    i = 0
    while i * step < length_s:
        t = i * step
        pos = i % 8
        notes.append((t, t + 0.1, 42, int(rng.integers(70, 91))))
        if pos in (0, 4, extra):
            notes.append((t, t + 0.1, 36, 118 if i == 0 else int(rng.integers(100, 121))))
        if pos in (2, 6):
            notes.append((t, t + 0.1, 38, int(rng.integers(100, 121))))
        i += 1
    return bpm, notes


def _write_midi(notes: list[tuple[float, float, int, int]], program: int, path: Path) -> None:
    import pretty_midi

    pm = pretty_midi.PrettyMIDI(resolution=960, initial_tempo=120.0)
    inst = pretty_midi.Instrument(program=program, is_drum=False, name="part")
    inst.notes = [pretty_midi.Note(velocity=v, pitch=p, start=s, end=e) for s, e, p, v in notes]
    pm.instruments.append(inst)
    pm.write(str(path))


def render_part(part: PartSource, *, seed: int, length_s: float, render: RenderParams) -> tuple[F64, dict[str, Any]]:
    """Play a rendered part (a bass line or a kit groove) from its first note-on at sample 0.

    Parameters
    ----------
    part : PartSource
        A ``timidity``, ``fluidsynth`` or ``kit`` part.
    seed : int
        The clip's seed (draws the notes).
    length_s : float
        Output length in seconds.
    render : RenderParams
        The renderer's configuration (rate, gain, timeout).

    Returns
    -------
    audio : np.ndarray of float64, shape (round(length_s * sr),)
    info : dict
        ``player``, ``instrument``, ``sound_set``, ``bpm`` and ``n_notes``.

    Raises
    ------
    ConfigError
        If the renderer, patch set, soundfont or kit is missing.
    TimingbenchError
        If the kit plays none of the groove's first notes or a renderer fails.
    """
    from timingbench.render.kits import find_kit, kit_pitches, render_kit, render_timidity
    from timingbench.render.synth import render_midi

    sr = render.sample_rate_hz
    n = int(round(length_s * sr))
    if part.player == "kit":
        kit = find_kit(part.instrument)
        bpm, notes = drum_groove(seed, length_s=length_s)
        playable = kit_pitches(kit, render)
        if not {36, 42} <= playable:
            raise TimingbenchError(f"kit {part.instrument} lacks the kick or hi-hat the groove opens with")
        y = render_kit(kit, [x for x in notes if x[2] in playable], n_samples=n, render=render)
    else:
        bpm, notes = bass_line(seed, length_s=length_s)
        with tempfile.TemporaryDirectory(prefix="tb-parts-") as tmp:
            midi = Path(tmp) / "part.mid"
            _write_midi(notes, int(part.instrument), midi)
            if part.player == "timidity":
                y = render_timidity(midi, n_samples=n, cfg_path=part.sound_set, sr=sr,
                                    timeout_s=render.fluidsynth_timeout_s)
            else:
                y = render_midi(midi, n_samples=n, soundfont=part.sound_set, params=render)
    return y, {"player": part.player, "instrument": part.instrument, "sound_set": part.sound_set, "bpm": bpm,
               "n_notes": len(notes)}


def rendered_source(part: PartSource, audio: F64, *, sr: int) -> DecodedSource:
    """A rendered part as a decoded source the real corpus's mixer places (its whole length usable)."""
    src = RealSource(part.key, f"{part.player}/{part.instrument}", part.split, "music", part.family,
                     (part.family,), (0.0, audio.size / sr), loop=False)
    peak = float(np.max(np.abs(audio)))
    if peak <= 0.0:
        raise TimingbenchError(f"part {part.key}: the rendered part is digital silence")
    name = Path(part.sound_set).name if part.sound_set else part.instrument
    return DecodedSource(src, Path(name), audio, sr, peak * 10.0 ** (-AUDIBLE_BELOW_PEAK_DB / 20.0))


# ----------------------------------------------------------------------------- one clip

_DECODED: dict[tuple[str, str], DecodedSource] = {}


def _decoded(sources_dir: Path, key: str, config: Config) -> DecodedSource:
    """A real recording, decoded once per process."""
    k = (str(sources_dir), key)
    if k not in _DECODED:
        _DECODED[k] = decode_source(sources_dir, key, config)
    return _DECODED[k]


def _shifted(spec: RealClipSpec, attempt: int) -> RealClipSpec:
    """The clip with its laid-in layer's source position moved on by ``attempt`` steps."""
    if attempt == 0 or not spec.layers:
        return spec
    ly = spec.layers[0]
    return dataclasses.replace(spec, layers=(dataclasses.replace(
        ly, from_s=round(ly.from_s + attempt * RETRY_STEP_S, 3)), *spec.layers[1:]))


def mix_part_clip(spec: RealClipSpec, *, sources_dir: Path, config: Config,
                  tables: PartsTables = PARTS_TABLES) -> tuple[MixedClip, int, dict[str, dict[str, Any]]]:
    """Decode or render a clip's sources and mix it, redrawing an on-time exit whose cut falls in a silence.

    Parameters
    ----------
    spec : RealClipSpec
        A parts clip.
    sources_dir : Path
        The ``shared/realdata`` folder.
    config : Config
        Configuration (``audio.*`` decoding, ``render.*``).
    tables : PartsTables
        The tables the clip was drawn from.

    Returns
    -------
    mixed : MixedClip
    attempt : int
        0 for the first placement, else the number of :data:`RETRY_STEP_S` steps taken.
    parts : dict of str to dict
        Layer source key -> what played it (rendered parts only), with ``note_on_lag_samples``.

    Raises
    ------
    ClipError
        If a recording is missing or cannot be decoded.
    TimingbenchError
        If a rendered part's first audible sample lies more than :data:`NOTE_ON_MAX_LAG_S`
        after its first note-on, or no attempt gives an exact, on-rule truth.
    """
    check_part_spec(spec, tables.parts)
    rp: RenderParams = config.params.render  # type: ignore[assignment]
    sr = int(rp.sample_rate_hz)
    sources: dict[str, DecodedSource] = {}
    info: dict[str, dict[str, Any]] = {}
    for key in dict.fromkeys(spec.source_keys):
        part = tables.parts.get(key)
        if part is not None and part.rendered:
            audio, meta = render_part(part, seed=spec.seed, length_s=spec.duration_s + RENDER_EXTRA_S, render=rp)
            src = rendered_source(part, audio, sr=sr)
            lag = int(np.flatnonzero(np.abs(audio) >= src.threshold)[0])
            if lag > NOTE_ON_MAX_LAG_S * sr:
                raise TimingbenchError(f"parts clip {spec.clip_id!r}: part {key} is first audible {lag / sr:.3f} s "
                                       "after its first note-on; its first hit is missing")
            info[key] = {**meta, "note_on_lag_samples": lag}
            sources[key] = src
        else:
            sources[key] = _decoded(sources_dir, key, config)
    last: Exception | None = None
    for attempt in range(RETRY_MAX + 1):
        try:
            mixed = mix_clip(_shifted(spec, attempt), sources, peak_dbfs=float(rp.peak_dbfs))
        except ParameterError as err:
            last = err
            continue
        mixed.spec = spec
        return mixed, attempt, info
    raise TimingbenchError(f"parts clip {spec.clip_id!r}: no placement in {RETRY_MAX + 1} attempts gives an exact "
                           f"truth ({last})")


def _level(spec: RealClipSpec) -> float | None:
    return spec.layers[0].level_db if spec.layers else None


def prompt_row(spec: RealClipSpec, *, tolerance_s: float) -> dict[str, Any]:
    """The formats §1 prompt of a parts clip (the real corpus's wording rules).

    Raises
    ------
    PromptError
        If the row breaks a rule of formats §1 (it never should).
    """
    rng = clip_rng(spec.seed, "wording")
    target = TARGETS[spec.family][0]
    phrase = REAL_SOURCES[spec.backing].phrase
    at = _at(spec.time_s, rng)
    dur = f"{spec.duration_s:g}"
    if spec.kind == "instrument_entry":
        first = f"Create a {phrase} track for exactly {dur} seconds."
    else:
        first = f"Create a {phrase} track featuring {target} for exactly {dur} seconds."
    if phrase[:1].lower() in "aeiou":
        first = "Create an " + first[len("Create a "):]
    wordings = DELIVERY_SENTENCES[spec.kind]
    sentence = wordings[int(rng.integers(len(wordings)))]
    event = {"id": f"{spec.clip_id}/e1", "kind": spec.kind, "target": target, "family": spec.family,
             "time_s": round(spec.time_s, 3), "tolerance_s": tolerance_s}
    row: dict[str, Any] = {"id": spec.clip_id, "family": "single_event",
                           "text": f"{first} {sentence.format(t=target, at=at)}", "style": phrase,
                           "duration_s": spec.duration_s, "events": [event], "tempo": None}
    parse_prompt(row, where=f"parts clip {spec.clip_id}: ")
    return row


def truth_row(mixed: MixedClip) -> dict[str, Any]:
    """The formats §5 Layer-1 row (``annotator: "renderer"``); salience 1 below -12 dB."""
    spec = mixed.spec
    onset = None if mixed.truth_sample is None else round(mixed.truth_sample / mixed.sr, 6)
    level = _level(spec)
    character = "hard" if spec.kind == "instrument_exit" else TARGETS[spec.family][1]
    salience = 1 if level is not None and level < -12.0 else (3 if spec.family == "percussion" else 2)
    return {"clip": f"{spec.clip_id}.wav", "event_id": f"{spec.clip_id}/e1", "occurred": onset is not None,
            "onset_s": onset, "onset_character": character, "salience": salience, "annotator": "renderer",
            "split": spec.split}


def observed_rows(mixed: MixedClip, tables: PartsTables) -> list[dict[str, Any]]:
    """formats §5 Layer-2 rows: the entrance of every laid-in layer of a family."""
    from timingbench.render.real_corpus_table import FAMILIES

    spec = mixed.spec
    rows = []
    for p in mixed.parts:
        if p.spec is None:
            continue
        fam = p.source.source.family
        if fam is None:
            continue
        source = TARGETS[fam][0] if fam in TARGETS else FAMILIES[fam].target
        rows.append({"clip": f"{spec.clip_id}.wav", "source": source, "family": fam,
                     "onset_s": round(p.clip_start / mixed.sr, 6), "salience": 3 if fam == "percussion" else 2,
                     "annotator": "renderer", "split": spec.split})
    rows.sort(key=lambda r: (r["onset_s"], r["source"]))
    return rows


def render_part_clip(spec: RealClipSpec, *, out_dir: Path, sources_dir: Path, stems: bool = False,
                     config: Config | None = None) -> dict[str, Any]:
    """Render one parts clip and write its WAV (and stems).

    Returns
    -------
    rows : dict
        ``prompt``, ``truth`` (list), ``observed`` (list) and ``manifest``.

    Raises
    ------
    ClipError, TimingbenchError
        As for :func:`mix_part_clip`.
    """
    cfg = config if config is not None else load_config()
    sp = ScenarioParams.from_config(cfg)
    mixed, attempt, info = mix_part_clip(spec, sources_dir=sources_dir, config=cfg)
    out_dir = Path(out_dir)
    write_wav(out_dir / "clips" / f"{spec.clip_id}.wav", mixed.samples, sr=mixed.sr)
    stem_paths: dict[str, Path] = {}
    if stems:
        for p in mixed.parts:
            stem_paths[p.name] = out_dir / "stems" / spec.clip_id / f"{p.name}.wav"
            write_wav(stem_paths[p.name], p.signal, sr=mixed.sr)
    manifest = manifest_row(mixed, stem_paths, out_dir)
    level = _level(spec)
    manifest.update(corpus=CORPUS_NAME, level_db=level, level_band=level_band(level), attempt=attempt,
                    parts=info)
    return {"prompt": prompt_row(spec, tolerance_s=sp.default_tolerance_s), "truth": [truth_row(mixed)],
            "observed": observed_rows(mixed, PARTS_TABLES), "manifest": manifest}


def render_parts_corpus(
    *,
    out_dir: Path,
    sources_dir: Path,
    splits: Sequence[str] = SPLITS,
    specs: Sequence[RealClipSpec] | None = None,
    jobs: int = 1,
    stems: bool = False,
    on_done: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Render the parts corpus (one or both splits, or the given clips) and write the corpus files.

    Parameters
    ----------
    out_dir : Path
        Output folder (see the module docstring for its layout).
    sources_dir : Path
        The ``shared/realdata`` folder.
    splits : sequence of str
        The splits to render (both by default; each row carries its ``split``).
    specs : sequence of RealClipSpec, optional
        These clips instead of the splits' (tests).
    jobs : int
        Worker processes.
    stems : bool
        Also write every part alone to ``stems/<clip_id>/<part>.wav``.
    on_done : callable, optional
        Called with each finished clip's rows (completion order).

    Returns
    -------
    clips : list of dict
        Each clip's rows (:func:`render_part_clip`), in corpus order.

    Raises
    ------
    ParameterError
        If ``jobs`` is not positive, a split is unknown or two clips share an id.
    ClipError
        If ``sources_dir`` lacks a recording.
    TimingbenchError
        If a clip cannot be rendered with an exact truth.
    """
    if jobs < 1:
        raise ParameterError(f"jobs must be a positive number of processes, got {jobs!r}")
    for s in splits:
        if s not in SPLITS:
            raise ParameterError(f"split must be one of {SPLITS}, got {s!r}")
    chosen = tuple(specs) if specs is not None else tuple(c for s in splits for c in PARTS_CORPUS[s])
    ids = [c.clip_id for c in chosen]
    if len(set(ids)) != len(ids):
        raise ParameterError("two clips of the parts corpus share a clip id")
    if not Path(sources_dir).is_dir():
        raise ClipError(f"{sources_dir}: not a folder; --sources must be the shared/realdata folder")
    cfg = load_config()
    if int(cfg.params.audio.sample_rate_hz) != int(cfg.params.render.sample_rate_hz):
        raise ParameterError("audio.sample_rate_hz must equal render.sample_rate_hz so that no resampling moves "
                             "a truth sample")
    out_dir = Path(out_dir)
    results: list[dict[str, Any] | None] = [None] * len(chosen)
    if jobs == 1:
        for i, spec in enumerate(chosen):
            results[i] = render_part_clip(spec, out_dir=out_dir, sources_dir=Path(sources_dir), stems=stems,
                                          config=cfg)
            if on_done is not None:
                on_done(results[i])  # type: ignore[arg-type]
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(render_part_clip, spec, out_dir=out_dir, sources_dir=Path(sources_dir),
                                   stems=stems): i for i, spec in enumerate(chosen)}
            for fut in as_completed(futures):
                results[futures[fut]] = fut.result()
                if on_done is not None:
                    on_done(results[futures[fut]])  # type: ignore[arg-type]
    clips = [r for r in results if r is not None]
    write_jsonl(out_dir / "prompts.jsonl", [c["prompt"] for c in clips])
    write_jsonl(out_dir / "truth.jsonl", [row for c in clips for row in c["truth"]])
    write_jsonl(out_dir / "observed.jsonl", [row for c in clips for row in c["observed"]])
    write_jsonl(out_dir / "manifest.jsonl", [c["manifest"] for c in clips])
    return clips

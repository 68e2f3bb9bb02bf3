"""The rendering pipeline: :func:`render_recipe` turns a scenario into files with exact truth.

It builds the scenario's plan (:mod:`timingbench.render.scenarios`), writes the MIDI,
reads it back, derives the truth rows from the notes it holds
(:mod:`timingbench.render.truth_rules`), renders the mix (and stems) with FluidSynth
(:mod:`timingbench.render.synth`), applies the gain envelope sample-accurately and scales
the clip to ``render.peak_dbfs`` plus the requested gain.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from timingbench.config import Config, load_config
from timingbench.errors import ParameterError
from timingbench.prompts import parse_prompt
from timingbench.render.arrangement import humanize
from timingbench.render.lookup import lookup
from timingbench.render.scenarios import (
    MAX_PROMPT_S,
    RECIPE_PARAMS,
    RECIPES,
    Ctx,
    ScenarioParams,
    recipe_rng,
)
from timingbench.render.synth import (
    gain_envelope,
    read_midi_notes,
    render_midi,
    resolve_soundfont,
    write_midi,
    write_wav,
)
from timingbench.render.truth_rules import beat_times, observed_entrances, truth_rows

SPLITS = ("dev", "validation")


@dataclass
class RenderedClip:
    """Everything rendered for one clip.

    Attributes
    ----------
    clip_id : str
        Clip and prompt id.
    audio_path : Path
        Mono 24-bit PCM WAV at ``render.sample_rate_hz`` (44.1 kHz).
    midi_path : Path
        The MIDI file the audio was rendered from (the source of the truth).
    prompt : dict
        formats §1 prompt row (valid under :func:`timingbench.prompts.parse_prompt`).
    truth : list of dict
        formats §5 Layer-1 rows, one per instructed event.
    stem_paths : dict of str to Path
        Part name -> WAV of that part rendered alone (same gain and envelope), when stems
        were requested; the stems sum to the mix.
    scenario : str
        The scenario (``entry_off_time``, ``never_delivered:music_end`` ...).
    meta : dict
        Recipe details: seed, style, bpm, instructed and delivered times, offset, target,
        decoys, parts with their first/last note times ...
    observed : list of dict
        formats §5 Layer-2 rows (instruction-independent): every audible entrance of
        every part, i.e. its first note and each note after ``render.observed_gap_s`` of
        silence of that part, with ``source`` the instrument as a prompt would name it.
    """

    clip_id: str
    audio_path: Path
    midi_path: Path
    prompt: dict[str, Any]
    truth: list[dict[str, Any]]
    stem_paths: dict[str, Path]
    scenario: str
    meta: dict[str, Any]
    observed: list[dict[str, Any]] = field(default_factory=list)


def default_clip_id(name: str, *, seed: int, gain_db: float = 0.0) -> str:
    """The clip id :func:`render_recipe` uses when none is given (``entry_on_time-s7``,
    ``entry_on_time-s7-m12db`` for a -12 dB variant)."""
    cid = f"{name}-s{int(seed)}"
    if gain_db != 0.0:
        cid += f"-{'m' if gain_db < 0 else 'p'}{abs(gain_db):g}db".replace(".", "p")
    return cid


def render_recipe(
    name: str,
    *,
    seed: int,
    out_dir: Path,
    clip_id: str | None = None,
    duration_s: float = 30.0,
    gain_db: float = 0.0,
    stems: bool = False,
    stem_parts: tuple[str, ...] | list[str] | None = None,
    soundfont: Path | None = None,
    split: str = "dev",
    humanize_ms: float = 0.0,
    reverb: bool = False,
    config: Config | None = None,
    controls: bool = False,
    **params: Any,
) -> RenderedClip:
    """Render one seeded scenario with exact truth.

    Writes ``out_dir/clips/<clip_id>.wav``, ``out_dir/midi/<clip_id>.mid`` and, when
    ``stems`` is true, ``out_dir/stems/<clip_id>/<part>.wav``.

    Parameters
    ----------
    name : str
        Recipe name, a key of :data:`~timingbench.render.scenarios.RECIPES`.
    seed : int
        Seed; the same seed and parameters give byte-identical audio and identical truth.
    out_dir : Path
        Output folder.
    clip_id : str, optional
        Clip and prompt id; :func:`default_clip_id` when omitted.
    duration_s : float
        Rendered length in seconds. The prompt asks for ``min(duration_s, 30)`` seconds, so
        longer renders are mixes whose tail lies beyond the instructed duration.
    gain_db : float
        Gain in dB applied after the clip is scaled to ``render.peak_dbfs``; variants of one
        seed are scaled copies of each other (to the 24-bit quantisation).
    stems : bool
        Also render each part alone (same envelope and scale: the stems sum to the mix).
    stem_parts : sequence of str, optional
        Render only these parts' stems (e.g. ``["target"]``); every part when omitted.
    soundfont : Path, optional
        A General MIDI .sf2/.sf3; ``render.soundfont_path`` when omitted.
    split : str
        ``dev`` or ``validation`` (formats §5 ``split`` of the truth rows).
    humanize_ms : float
        Standard deviation in ms of a timing jitter applied to the non-target parts.
    reverb : bool
        Switch on FluidSynth's reverb (stems then carry reverb tails).
    config : Config, optional
        Configuration; the packaged one when omitted.
    controls : bool
        Write the clip's exact time-varying controls into the prompt row
        (:mod:`timingbench.render.controls`).
    **params
        Recipe parameters (see :data:`~timingbench.render.scenarios.RECIPE_PARAMS`): ``family``, ``target``, ``style``,
        ``time_s``, ``offset_s``, ``bpm``, ``kind``, ``gap_s`` ...

    Returns
    -------
    clip : RenderedClip

    Raises
    ------
    ParameterError
        For an unknown recipe, an unknown or out-of-range parameter.
    ConfigError
        If FluidSynth or the soundfont is missing.
    TimingbenchError
        If FluidSynth fails.
    """
    build = lookup(RECIPES, name, "recipe")
    unknown = sorted(set(params) - set(RECIPE_PARAMS[name]))
    if unknown:
        raise ParameterError(f"recipe {name!r} takes no parameter(s) {unknown}; "
                             f"it accepts {list(RECIPE_PARAMS[name])}")
    if split not in SPLITS:
        raise ParameterError(f"split must be one of {list(SPLITS)}, got {split!r}")
    if not math.isfinite(duration_s) or not 4.0 <= duration_s <= 600.0:
        raise ParameterError(f"duration_s must lie in [4, 600] seconds, got {duration_s!r}")
    if not math.isfinite(gain_db) or gain_db > 0.0 or gain_db < -60.0:
        raise ParameterError(f"gain_db must lie in [-60, 0] dB, got {gain_db!r}")
    if humanize_ms < 0 or humanize_ms > 50:
        raise ParameterError(f"humanize_ms must lie in [0, 50] ms, got {humanize_ms!r}")
    cfg = config if config is not None else load_config()  # the packaged file, parsed once per process
    sp = ScenarioParams.from_config(cfg)
    rp = sp.render
    sr = rp.sample_rate_hz
    sf2 = resolve_soundfont(soundfont, rp)
    cid = clip_id if clip_id is not None else default_clip_id(name, seed=seed, gain_db=gain_db)
    if "__" in cid or "/" in cid or not cid:
        raise ParameterError(f"clip_id {cid!r} must be non-empty without '__' or '/'")
    rng = recipe_rng(name, seed)
    ctx = Ctx(rng=rng, params=sp, duration_s=float(duration_s),
              prompt_s=min(float(duration_s), MAX_PROMPT_S), sr=sr)
    plan = build(ctx, **params)
    if humanize_ms > 0:
        jitter_rng = recipe_rng(name + "/humanize", seed)
        for part in plan.parts:
            if part.name != "target" and part.name not in plan.keep_exact:
                part.notes = humanize(part.notes, rng=jitter_rng, sd_s=humanize_ms / 1000.0)
    plan.parts = [p for p in plan.parts if p.notes]

    out_dir = Path(out_dir)
    audio_path = out_dir / "clips" / f"{cid}.wav"
    midi_path = out_dir / "midi" / f"{cid}.mid"
    ticks = rp.midi_ticks_per_beat
    write_midi(plan.parts, midi_path, ticks_per_beat=ticks)
    notes = read_midi_notes(midi_path)

    # prompt row (formats §1)
    intro = plan.intro or "Create a {phrase} track for exactly {dur} seconds."
    first = intro.format(phrase=plan.phrase, dur=f"{ctx.prompt_s:g}")
    if first.startswith("Create a ") and plan.phrase[:1].lower() in "aeiou":
        first = "Create an " + first[len("Create a "):]
    text = " ".join([first] + plan.sentences)
    events = [dict(ev, id=f"{cid}/e{k + 1}") for k, ev in enumerate(plan.events)]
    events = [{"id": e["id"], **{k: v for k, v in e.items() if k != "id"}} for e in events]
    prompt: dict[str, Any] = {"id": cid, "family": plan.prompt_family if len(events) < 2 else
                              "event_sequence", "text": text, "style": plan.phrase,
                              "duration_s": ctx.prompt_s, "events": events, "tempo": plan.tempo}
    parse_prompt(prompt, where=f"recipe {name} seed {seed}: ")

    truth = truth_rows(events, plan.rules, notes, clip=audio_path.name, split=split)

    # audio
    n = int(round(ctx.duration_s * sr))
    env = gain_envelope(plan.envelope, n=n, sr=sr)
    mix = render_midi(midi_path, n_samples=n, soundfont=sf2, params=rp, reverb=reverb) * env
    peak = float(np.max(np.abs(mix)))
    if peak <= 0.0:
        raise ParameterError(f"recipe {name} seed {seed} rendered digital silence")
    scale = 10.0 ** (rp.peak_dbfs / 20.0) / peak * 10.0 ** (gain_db / 20.0)
    write_wav(audio_path, mix * scale, sr=sr)
    if controls:
        from timingbench.render.controls import rendered_controls

        prompt["controls"] = rendered_controls(
            parts=plan.parts, notes=notes, grid=plan.grid, harmony=plan.harmony, envelope=env, mix=mix * scale,
            sr=sr, prompt_s=ctx.prompt_s, controls=cfg.params.controls, features=cfg.params.features)
        parse_prompt(prompt, where=f"recipe {name} seed {seed}: ")
    stem_paths: dict[str, Path] = {}
    if stems and stem_parts is not None:
        unknown_parts = sorted(set(stem_parts) - {p.name for p in plan.parts})
        if unknown_parts:
            raise ParameterError(f"stem_parts {unknown_parts} are not parts of this clip; parts: "
                                 f"{[p.name for p in plan.parts]}")
    if stems:
        stem_dir = out_dir / "stems" / cid
        for part in plan.parts:
            if stem_parts is not None and part.name not in stem_parts:
                continue
            stem_midi = stem_dir / f"{part.name}.mid"
            write_midi([part], stem_midi, ticks_per_beat=ticks)
            stem = render_midi(stem_midi, n_samples=n, soundfont=sf2, params=rp, reverb=reverb) * env
            stem_midi.unlink()
            stem_paths[part.name] = stem_dir / f"{part.name}.wav"
            write_wav(stem_paths[part.name], stem * scale, sr=sr)

    observed = observed_entrances(plan.parts, notes, env, sr=sr, gap_s=rp.observed_gap_s,
                                  clip=audio_path.name, split=split)

    part_info = []
    for part in plan.parts:
        pn = notes.get(part.name, [])
        part_info.append({"part": part.name, "instrument": part.spec.name, "family": part.spec.family,
                          "program": part.spec.program, "is_drum": part.spec.is_drum,
                          "first_on_s": round(min(x.start for x in pn), 6) if pn else None,
                          "last_off_s": round(max(x.end for x in pn), 6) if pn else None,
                          "n_notes": len(pn)})
    meta: dict[str, Any] = {"recipe": name, "seed": int(seed), "style": plan.style,
                            "duration_s": ctx.duration_s, "prompt_duration_s": ctx.prompt_s,
                            "gain_db": float(gain_db), "humanize_ms": float(humanize_ms),
                            "reverb": bool(reverb), "params": dict(params)}
    meta.update(plan.meta)
    if "decoys" in meta:
        for d in meta["decoys"]:
            dn = notes.get(d["part"], [])
            d["onset_s"] = round(min(x.start for x in dn), 6) if dn else None
    if plan.prompt_family == "tempo":
        meta["beats_s"] = beat_times(notes.get(plan.parts[0].name, []), bpm=float(meta["bpm"]),
                                     first_beat_s=float(meta["first_beat_s"]))
    meta["parts"] = part_info
    meta["envelope"] = [{"kind": op.kind, "t0": op.t0, "t1": op.t1, "depth_db": op.depth_db}
                        for op in plan.envelope]
    return RenderedClip(clip_id=cid, audio_path=audio_path, midi_path=midi_path, prompt=prompt,
                        truth=truth, stem_paths=stem_paths, scenario=plan.scenario, meta=meta,
                        observed=observed)

"""Rendered clips whose drum-kit part is played by a real multi-sampled kit.

:func:`render_kit_recipe` renders a recipe as :func:`~timingbench.render.pipeline.render_recipe`
does (the same MIDI file, prompt, truth and Layer-2 rows), then rebuilds the mix: every
part but the drum kit is rendered by FluidSynth with the General MIDI soundfont, the
drum-kit part's notes are played by a real kit (:func:`timingbench.render.kits.render_kit`:
an avldrums SF2 kit or a Hydrogen WAV kit), and the kit is set to the RMS (over the clip) of the
soundfont's own kit playing the same notes, so the recipe's levels (a quiet target, a
quiet pre-existing part) carry over. The gain envelope and the peak scaling are those of
the pipeline.

Truth stays exact: it is read from the MIDI notes, and each hit of a Hydrogen kit starts
at the sample ``round(onset_s * sr)`` (an SF2 kit: where FluidSynth starts the note). A kit
lacks some notes (:func:`timingbench.render.kits.kit_pitches`); they stay silent, and a
clip whose truth onset or Layer-2 entrance falls on a drum-kit instant with no note the kit
plays is refused.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pretty_midi

from timingbench.config import Config, load_config
from timingbench.errors import ParameterError, TimingbenchError
from timingbench.params.generation import RenderParams
from timingbench.render.arrangement import Note
from timingbench.render.kits import find_kit, kit_name, kit_pitches, render_kit
from timingbench.render.pipeline import RenderedClip, render_recipe
from timingbench.render.synth import (
    GainOp,
    gain_envelope,
    read_midi_notes,
    render_midi,
    resolve_soundfont,
    write_wav,
)

#: Onsets closer than this are one instant (seconds): below the MIDI tick at any tempo.
_SAME_INSTANT_S = 1e-6


def _midi_subset(src: Path, dst: Path, *, drums: bool) -> bool:
    """Write ``src``'s drum-kit tracks (``drums``) or its other tracks to ``dst``; False when
    there are none."""
    pm = pretty_midi.PrettyMIDI(str(src))
    pm.instruments = [inst for inst in pm.instruments if inst.is_drum == drums]
    if not pm.instruments:
        return False
    pm.write(str(dst))
    return True


def _drum_part(midi_path: Path) -> str | None:
    """Name of the drum-kit track of a rendered clip's MIDI file (at most one), or None."""
    pm = pretty_midi.PrettyMIDI(str(midi_path))
    names = [inst.name for inst in pm.instruments if inst.is_drum]
    return names[0] if names else None


def _rms(y: npt.NDArray[np.float64]) -> float:
    return float(np.sqrt(np.mean(y * y)))


def unplayed_instants(times_s: Iterable[float], kit_notes: list[Note], playable: frozenset[int]) -> list[float]:
    """The instants among ``times_s`` at which the kit part holds notes but none the kit plays.

    Parameters
    ----------
    times_s : iterable of float
        Truth onsets or entrances in seconds.
    kit_notes : list of Note
        The drum-kit part's notes.
    playable : frozenset of int
        General MIDI drum notes the kit plays.

    Returns
    -------
    times : list of float
        Those instants (an instant where the kit part holds no note is not one).
    """
    out = []
    for t in times_s:
        at = [n for n in kit_notes if abs(n.start - t) < _SAME_INSTANT_S]
        if at and not any(n.pitch in playable for n in at):
            out.append(float(t))
    return out


def _envelope(meta: Mapping[str, Any], *, n: int, sr: int) -> npt.NDArray[np.float64]:
    ops = [GainOp(op["kind"], float(op["t0"]), float(op["t1"]), float(op["depth_db"])) for op in meta["envelope"]]
    return gain_envelope(ops, n=n, sr=sr)


def kit_layers(rc: RenderedClip, kit_path: str, notes: list[Note], *, soundfont: Path | None,
               render: RenderParams) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], float]:
    """The two layers of a kit clip before its envelope: the other parts (FluidSynth, the soundfont)
    and the drum-kit part's ``notes`` on the real kit, set to the RMS of the soundfont's kit.

    Parameters
    ----------
    rc : RenderedClip
        The clip as the pipeline rendered it (its MIDI file and ``meta["duration_s"]``).
    kit_path : str
        The kit (:func:`timingbench.render.kits.find_kit`).
    notes : list of Note
        The drum-kit part's notes as the MIDI file holds them.
    soundfont : Path, optional
        The General MIDI soundfont; ``render.soundfont_path`` when None.
    render : RenderParams
        The renderer's configuration.

    Returns
    -------
    backing, kit : np.ndarray of float64, shape (n,)
        Each ``duration_s * sr`` samples long.
    gain : float
        The linear gain applied to the kit.

    Raises
    ------
    TimingbenchError
        If the kit part is silent on the kit or on the soundfont, or FluidSynth fails.
    """
    n = int(round(rc.meta["duration_s"] * render.sample_rate_hz))
    sf2 = resolve_soundfont(soundfont, render)
    with tempfile.TemporaryDirectory(prefix="tb-kitmix-") as tmp:
        others, gm_kit = Path(tmp) / "others.mid", Path(tmp) / "kit.mid"
        backing = (render_midi(others, n_samples=n, soundfont=sf2, params=render)
                   if _midi_subset(rc.midi_path, others, drums=False) else np.zeros(n))
        _midi_subset(rc.midi_path, gm_kit, drums=True)
        reference = render_midi(gm_kit, n_samples=n, soundfont=sf2, params=render)
    real = render_kit(kit_path, [(x.start, x.end, x.pitch, x.velocity) for x in notes], n_samples=n, render=render)
    if _rms(real) <= 0.0 or _rms(reference) <= 0.0:
        raise TimingbenchError(f"clip {rc.clip_id}: the drum-kit part is silent on kit {kit_name(kit_path)} "
                               f"or on {sf2.name}")
    gain = _rms(reference) / _rms(real)
    return backing, gain * real, gain


def render_kit_recipe(name: str, *, kit: str, seed: int, out_dir: Path, clip_id: str | None = None,
                      duration_s: float = 30.0, gain_db: float = 0.0, soundfont: Path | None = None,
                      split: str = "dev", humanize_ms: float = 0.0, config: Config | None = None,
                      **params: Any) -> RenderedClip:
    """Render one seeded scenario with its drum-kit part on a real kit.

    Parameters
    ----------
    name : str
        Recipe name.
    kit : str
        Kit name (a :data:`timingbench.render.corpus.KIT_SPLITS` entry: an SF2 file name or a
        Hydrogen folder name).
    seed, out_dir, clip_id, duration_s, gain_db, soundfont, split, humanize_ms, config, **params
        As for :func:`~timingbench.render.pipeline.render_recipe`; ``soundfont`` renders the
        other parts and the level reference.

    Returns
    -------
    clip : RenderedClip
        ``meta`` gains ``kit`` (the kit name, or None when the clip has no drum-kit part and the
        soundfont's render stands), ``kit_part`` and ``kit_gain_db`` (the gain that sets the
        real kit to the soundfont kit's RMS).

    Raises
    ------
    ConfigError
        If the kit, FluidSynth or the soundfont is missing.
    ParameterError
        As for ``render_recipe``.
    TimingbenchError
        If a truth onset or Layer-2 entrance of the kit part has no note the kit plays, or the
        kit is silent.
    """
    cfg = config if config is not None else load_config()
    kit_path = find_kit(kit)
    rc = render_recipe(name, seed=seed, out_dir=out_dir, clip_id=clip_id, duration_s=duration_s, gain_db=gain_db,
                       soundfont=soundfont, split=split, humanize_ms=humanize_ms, config=cfg, **params)
    part = _drum_part(rc.midi_path)
    rc.meta.update({"kit": None, "kit_part": part, "kit_gain_db": None})
    if part is None:
        return rc
    rp: RenderParams = cfg.params.render  # type: ignore[assignment]
    sr = rp.sample_rate_hz
    notes = read_midi_notes(rc.midi_path)[part]
    playable = kit_pitches(kit_path, rp)
    onsets = [r["onset_s"] for r in rc.truth if r["occurred"]] + [r["onset_s"] for r in rc.observed
                                                                   if r["family"] == "percussion"]
    bad = unplayed_instants(onsets, notes, playable)
    if bad:
        raise TimingbenchError(f"clip {rc.clip_id}: kit {kit} plays none of the drum notes at {bad} s, where the "
                               "truth or an entrance lies; choose another kit or seed")
    backing, real, gain = kit_layers(rc, kit_path, notes, soundfont=soundfont, render=rp)
    n = backing.size
    mix = (backing + real) * _envelope(rc.meta, n=n, sr=sr)
    peak = float(np.max(np.abs(mix)))
    if peak <= 0.0:
        raise ParameterError(f"recipe {name} seed {seed} rendered digital silence")
    scale = 10.0 ** (rp.peak_dbfs / 20.0) / peak * 10.0 ** (gain_db / 20.0)
    write_wav(rc.audio_path, mix * scale, sr=sr)
    rc.meta.update({"kit": kit_name(kit_path), "kit_gain_db": round(20.0 * float(np.log10(gain)), 3)})
    return rc

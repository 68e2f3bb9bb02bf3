"""Training and test data of the family evidence model, made by the reference renderer.

``make_dataset`` draws seeded clip layouts (:mod:`timingbench.identity.training.layouts`), renders
every family's stem under one of several sound sets (GM soundfonts through FluidSynth,
freepats through TiMidity++; some drum-kit parts by real kits, :mod:`timingbench.render.kits`),
applies real audio
effects (pedalboard: gain, EQ, reverb, compression, chorus, distortion on guitars, pitch
shift; soxr band-limiting through 16/22.05/32 kHz; mp3/ogg round trips through ffmpeg;
noise), mixes, and stores per clip:

- ``logmel``: the feature bank's log-mel of the mix
  (:func:`timingbench.features.bank.log_mel`; float16, shape (n_mels, n_frames), dB re the
  clip maximum, on the bank's 512-sample hop at 44.1 kHz);
- ``labels``: per family and bank frame, whether the family's stem sounds (uint8,
  shape (11, n_frames)): its frame level is within ``evidence.label_present_db`` dB of the
  mix's loudest frame.

``timingbench evidence make-data`` then writes the folder's memory-mapped training arrays
(:mod:`timingbench.identity.training.arrays`). To keep FluidSynth's start-up cost out of the loop, the stems of one
family
under one soundfont are rendered as one long MIDI timeline (clips laid end to end with a silent
gap that lets release tails die out) and cut apart afterwards.

Real singing comes from ``../shared/realdata/vocadito``: training and dev sets use its
part after ``evidence.vocadito_train_from_s``, test sets (``allow_held_out``) only the part
before it (the first vocal entrance), so no test excerpt is ever trained on.

``manifest.json`` records the recipe (:data:`RECIPE`, the recipe constants, the seed and
the soundfonts); :func:`read_manifest` refuses a folder of another recipe for training,
and :func:`make_dataset` refuses to resume into one.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mido
import numpy as np
import numpy.typing as npt
import soundfile as sf

from timingbench.config import Config
from timingbench.errors import ConfigError, ParameterError
from timingbench.features import spectral as _sp
from timingbench.features.bank import log_mel as bank_log_mel
from timingbench.identity.training.layouts import HARD_NEGATIVE_P, ClipLayout, sample_layout
from timingbench.identity.training.programs import (
    DEFAULT_CHOIR_FAMILY,
    FAMILIES,
    check_choir_family,
    programs_for,
)
from timingbench.params.generation import RenderParams
from timingbench.render.kits import (
    FREEPATS_CFG,
    available_programs,
    is_sf2_kit,
    is_timidity_set,
    real_kits,
    render_hydrogen,
    render_timidity,
)
from timingbench.render.synth import render_midi

SR = 44100
#: Identifier of the data recipe, written into every manifest. 2: vocals are a human voice
#: (synth voices are synths, the choirs' family is ``choir_family``, real singing is the
#: positive source), pads / strings / organs are hard negatives of vocals, and test sets
#: sing vocadito's first part. A manifest without one is recipe 1.
RECIPE = "evidence-data-2"
F32 = npt.NDArray[np.float32]

#: Soundfonts (Debian packages) the shipped model is trained on. MuseScore General in any
#: variant is held out: it is only ever used to measure.
TRAIN_SOUNDFONTS = (
    "/usr/share/sounds/sf2/FluidR3_GM.sf2",
    "/usr/share/sounds/sf2/TimGM6mb.sf2",
    "/usr/share/sounds/sf2/sf_GMbank.sf2",
    "/usr/share/sounds/sf3/FluidR3Mono_GM.sf3",
)
#: The sound sets ``make-data`` renders training data with by default: the four GM
#: soundfonts and freepats (Gravis patches, rendered by TiMidity++).
TRAIN_SOURCES = (*TRAIN_SOUNDFONTS, FREEPATS_CFG)
#: The held-out soundfont of the out-of-distribution test set.
HELD_OUT_SOUNDFONT = "/usr/share/sounds/sf3/MuseScore_General.sf3"
VOCADITO = Path(__file__).resolve().parents[2] / ".." / "shared" / "realdata" / "vocadito" / "Audio" / "vocadito_1.wav"


def is_held_out(soundfont: str | Path) -> bool:
    """True for a MuseScore General soundfont (any variant), which may never be trained on."""
    return "musescore" in Path(soundfont).name.lower()


@dataclass(frozen=True)
class DataParams:
    """Data recipe constants (``evidence`` section of the configuration, and the recipe's
    own choices ``choir_family`` and ``hard_negative_p``: see
    :func:`~timingbench.identity.training.layouts.sample_layout`)."""

    clip_s: float
    edge_s: float
    gap_s: float
    label_present_db: float
    real_vocals_p: float
    vocadito_train_from_s: float
    n_fft: int
    hop: int
    n_mels: int
    db_range: float
    choir_family: str = DEFAULT_CHOIR_FAMILY
    hard_negative_p: float = HARD_NEGATIVE_P

    @classmethod
    def from_config(cls, cfg: Config, *, choir_family: str = DEFAULT_CHOIR_FAMILY) -> DataParams:
        """Read the recipe from ``evidence.*`` and the bank's STFT from ``features.*``.

        Raises
        ------
        ParameterError
            If ``choir_family`` is not one of the choir families.
        """
        ev = cfg.params.evidence
        feat = cfg.params.features
        return cls(clip_s=float(ev.clip_s), edge_s=float(ev.edge_s), gap_s=float(ev.render_gap_s),
                   label_present_db=float(ev.label_present_db), real_vocals_p=float(ev.real_vocals_p),
                   vocadito_train_from_s=float(ev.vocadito_train_from_s),
                   n_fft=int(feat.n_fft), hop=int(feat.hop), n_mels=int(feat.n_mels),
                   db_range=float(feat.db_range), choir_family=check_choir_family(choir_family))


def frame_labels(stems: dict[str, npt.NDArray[np.float64]], mix: npt.NDArray[np.float64],
                 p: DataParams) -> npt.NDArray[np.uint8]:
    """Presence per family and bank frame (see module docstring)."""
    ref = _sp.frame_rms(mix, n_fft=p.n_fft, hop=p.hop)
    n = ref.size
    ref_ms = max(float(np.max(ref)) ** 2, 1e-20)
    out = np.zeros((len(FAMILIES), n), dtype=np.uint8)
    for fam, y in stems.items():
        r = _sp.frame_rms(y, n_fft=p.n_fft, hop=p.hop)[:n]
        db = 10.0 * np.log10(np.maximum(r * r, 1e-20) / ref_ms)
        out[FAMILIES.index(fam), : r.size] = db >= p.label_present_db
    return out


# --------------------------------------------------------------------------- rendering


def played_program(part: Any, available: frozenset[int] | None, choir_family: str) -> int:
    """The program ``part`` is played with: its own, or, where a sound set lacks it
    (``available``, the set's melodic programs), another program of the same family that
    the set has (chosen by the part's program number, so the choice is fixed)."""
    prog = int(part.program.program)
    if available is None or part.program.is_drum or part.real_vocals or prog in available:
        return prog
    alts = sorted({q.program for q in programs_for(choir_family)[part.family] if not q.is_drum} & available)
    return alts[prog % len(alts)] if alts else prog


def _timeline_midi(layouts: Sequence[ClipLayout], family: str, path: Path, *, stride_s: float,
                   melodic_kit: bool = False, available: frozenset[int] | None = None,
                   choir_family: str = DEFAULT_CHOIR_FAMILY) -> list[int]:
    """One MIDI file holding ``family``'s part of every layout that has one, end to end.

    The ``k``-th such clip starts at ``k * stride_s``. Returns the indices (into
    ``layouts``) of those clips, in timeline order. With ``melodic_kit`` drum parts play
    program 0 on a melodic channel (an SF2 holding one kit, as avldrums does); with
    ``available`` programs the sound set lacks are replaced (:func:`played_program`).
    """
    mid = mido.MidiFile(ticks_per_beat=480)
    track = mido.MidiTrack()
    mid.tracks.append(track)
    track.append(mido.MetaMessage("set_tempo", tempo=500000, time=0))  # 120 BPM: 960 ticks/s
    events: list[tuple[int, int, mido.Message]] = []
    used: list[int] = []
    tps = 960.0
    for i, lay in enumerate(layouts):
        part = next((q for q in lay.parts if q.family == family and not q.real_vocals), None)
        if part is None:
            continue
        drum = part.program.is_drum and not melodic_kit
        ch = 9 if drum else 0
        prog = 0 if part.program.is_drum and melodic_kit else played_program(part, available, choir_family)
        t0 = int(round(len(used) * stride_s * tps))
        used.append(i)
        events.append((t0, 0, mido.Message("program_change", channel=ch, program=prog)))
        events.append((t0, 0, mido.Message("control_change", channel=ch, control=7, value=100)))
        for n in part.notes:
            s = t0 + int(round(n.start * tps))
            e = t0 + max(int(round(n.end * tps)), int(round(n.start * tps)) + 1)
            events.append((s, 2, mido.Message("note_on", channel=ch, note=n.pitch, velocity=n.velocity)))
            events.append((e, 1, mido.Message("note_off", channel=ch, note=n.pitch, velocity=0)))
    events.sort(key=lambda x: (x[0], x[1]))
    now = 0
    for t, _, msg in events:
        track.append(msg.copy(time=t - now))
        now = t
    mid.save(str(path))
    return used


def choose_kit(layout: ClipLayout, *, seed: int, kits: Sequence[str], real_kit_p: float) -> str | None:
    """The real kit (:func:`timingbench.render.kits.real_kits`) that plays ``layout``'s drum-kit
    part, or None for the soundfont's own kit (seeded per clip; no kit part, no kit)."""
    if not kits or real_kit_p <= 0 or not any(q.program.is_drum for q in layout.parts):
        return None
    rng = np.random.default_rng([seed, layout.index, 41])
    if rng.random() >= real_kit_p:
        return None
    return kits[int(rng.integers(len(kits)))]


def _render_timeline(midi: Path, *, n_total: int, source: str, render: RenderParams) -> npt.NDArray[np.float64]:
    timeout = 60.0 + 0.05 * n_total / SR
    if is_timidity_set(source):
        return render_timidity(midi, n_samples=n_total, cfg_path=source, sr=SR, timeout_s=timeout)
    return render_midi(midi, n_samples=n_total, soundfont=source, params=render, timeout_s=timeout, polyphony=1024)


def render_stems(layouts: Sequence[ClipLayout], soundfont: str, p: DataParams,
                 vocals: npt.NDArray[np.float64] | None, *, render: RenderParams,
                 kit_of: dict[int, str] | None = None) -> list[dict[str, npt.NDArray[np.float64]]]:
    """Dry stems (family -> mono float64, ``clip_s`` long) of every layout under one sound set.

    ``soundfont`` is a General MIDI soundfont (rendered by
    :func:`timingbench.render.synth.render_midi` at 44.1 kHz with ``render.synth_gain``, a
    voice limit of 1024) or a TiMidity++ configuration such as freepats'
    (:func:`timingbench.render.kits.render_timidity`); each family's timeline has a
    timeout of 60 s plus 5 % of its length. ``kit_of`` maps a layout's index to the real
    kit that plays its drum-kit part (:func:`choose_kit`): an SF2 kit is rendered on its
    own timeline, a Hydrogen kit by :func:`timingbench.render.kits.render_hydrogen`.
    """
    synth = dataclasses.replace(render, sample_rate_hz=SR)
    kit_of = kit_of or {}
    n = int(round(p.clip_s * SR))
    stride = p.clip_s + p.gap_s
    available = available_programs(soundfont) if is_timidity_set(soundfont) else None
    out: list[dict[str, npt.NDArray[np.float64]]] = [{} for _ in layouts]

    def timeline(group: list[int], fam: str, source: str, tmp: str, *, melodic_kit: bool = False) -> None:
        midi = Path(tmp) / f"{fam}-{len(group)}.mid"
        sub = [layouts[i] for i in group]
        used = _timeline_midi(sub, fam, midi, stride_s=stride, melodic_kit=melodic_kit,
                              available=None if melodic_kit else available, choir_family=p.choir_family)
        if not used:
            return
        audio = _render_timeline(midi, n_total=int(round(stride * len(used) * SR)) + n, source=source, render=synth)
        for k, j in enumerate(used):
            s0 = int(round(k * stride * SR))
            out[group[j]][fam] = audio[s0 : s0 + n].copy()

    with tempfile.TemporaryDirectory(prefix="tb-evid-mid-") as tmp:
        for fam in FAMILIES:
            own = [i for i, lay in enumerate(layouts) if fam != "percussion" or lay.index not in kit_of]
            timeline(own, fam, soundfont, tmp)
        for kit in sorted(set(kit_of.values())):
            group = [i for i, lay in enumerate(layouts) if kit_of.get(lay.index) == kit]
            if is_sf2_kit(kit):
                timeline(group, "percussion", kit, tmp, melodic_kit=True)
                continue
            for i in group:
                part = next(q for q in layouts[i].parts if q.family == "percussion")
                out[i]["percussion"] = render_hydrogen(kit, [(nt.start, nt.pitch, nt.velocity) for nt in part.notes],
                                                       n_samples=n, sr=SR)
    for i, lay in enumerate(layouts):
        for part in lay.parts:
            if part.real_vocals and vocals is not None:
                out[i]["vocals"] = _real_vocals(vocals, part.spans, p, seed=lay.index)
    return out


def load_vocadito(p: DataParams, *, test: bool = False, path: Path = VOCADITO) -> npt.NDArray[np.float64] | None:
    """A part of the vocadito recording (mono 44.1 kHz), or None when it is absent.

    The training part lies after ``p.vocadito_train_from_s``; with ``test`` the part
    before it.
    """
    if not path.is_file():
        return None
    y, sr = sf.read(str(path), dtype="float64", always_2d=True)
    y = y.mean(axis=1)
    if sr != SR:
        import soxr

        y = np.asarray(soxr.resample(y, sr, SR), dtype=np.float64)
    cut = int(p.vocadito_train_from_s * SR)
    return y[:cut] if test else y[cut:]


def _real_vocals(src: npt.NDArray[np.float64], spans: list[tuple[float, float]], p: DataParams,
                 *, seed: int) -> npt.NDArray[np.float64]:
    rng = np.random.default_rng([7, seed])
    n = int(round(p.clip_s * SR))
    start = int(rng.integers(0, max(src.size - n, 1)))
    seg = np.zeros(n)
    piece = src[start : start + n]
    seg[: piece.size] = piece
    gate = np.zeros(n)
    fade = int(0.01 * SR)
    for t0, t1 in spans:
        a, b = int(t0 * SR), min(int(t1 * SR), n)
        gate[a:b] = 1.0
        gate[a : a + fade] = np.linspace(0.0, 1.0, min(fade, b - a))
    return seg * gate


# --------------------------------------------------------------------------- effects


def _stem_effects(y: npt.NDArray[np.float64], family: str, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    import pedalboard as pb

    fx: list[Any] = []
    if rng.random() < 0.5:
        fx.append(pb.PeakFilter(cutoff_frequency_hz=float(np.exp(rng.uniform(np.log(150), np.log(8000)))),
                                gain_db=float(rng.uniform(-8, 8)), q=float(rng.uniform(0.5, 2.0))))
    if rng.random() < 0.3:
        fx.append(pb.LowShelfFilter(cutoff_frequency_hz=float(rng.uniform(80, 400)), gain_db=float(rng.uniform(-8, 6))))
    if rng.random() < 0.3:
        fx.append(pb.HighShelfFilter(cutoff_frequency_hz=float(rng.uniform(2000, 9000)),
                                     gain_db=float(rng.uniform(-10, 6))))
    if rng.random() < (0.45 if family == "guitar" else 0.04):
        fx.append(pb.Distortion(drive_db=float(rng.uniform(8, 30))))
    if rng.random() < 0.3:
        fx.append(pb.Compressor(threshold_db=float(rng.uniform(-30, -10)), ratio=float(rng.uniform(2, 8))))
    if rng.random() < 0.1:
        fx.append(pb.Chorus(rate_hz=float(rng.uniform(0.3, 2.0)), depth=float(rng.uniform(0.1, 0.4)), mix=0.4))
    if rng.random() < 0.35:
        fx.append(pb.Reverb(room_size=float(rng.uniform(0.1, 0.9)), wet_level=float(rng.uniform(0.05, 0.35)),
                            dry_level=1.0))
    if not fx:
        return y
    board = pb.Pedalboard(fx)
    return np.asarray(board(y.astype(np.float32)[None, :], SR)[0][: y.size], dtype=np.float64)


def _lossy(y: npt.NDArray[np.float64], rng: np.random.Generator) -> npt.NDArray[np.float64]:
    fmt = "mp3" if rng.random() < 0.6 else "ogg"
    rate = str(int(rng.choice([48, 64, 96, 128, 192]))) + "k"
    with tempfile.TemporaryDirectory(prefix="tb-evid-lossy-") as tmp:
        src, enc = Path(tmp) / "in.wav", Path(tmp) / f"enc.{fmt}"
        sf.write(str(src), np.clip(y, -1, 1), SR, subtype="PCM_16")
        codec = ["-c:a", "libmp3lame"] if fmt == "mp3" else ["-c:a", "libvorbis"]
        proc = subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", str(src), *codec, "-b:a", rate, str(enc)],
                              capture_output=True, check=False)
        if proc.returncode != 0:
            return y
        dec = subprocess.run(["ffmpeg", "-v", "error", "-i", str(enc), "-f", "f32le", "-ac", "1", "-ar", str(SR),
                              "-"], capture_output=True, check=False)
        if dec.returncode != 0:
            return y
    z = np.zeros_like(y)
    s = np.frombuffer(dec.stdout, dtype=np.float32).astype(np.float64)[: y.size]
    z[: s.size] = s
    return z


def _mix_effects(y: npt.NDArray[np.float64], rng: np.random.Generator) -> npt.NDArray[np.float64]:
    import soxr

    if rng.random() < 0.06:
        import pedalboard as pb

        y = np.asarray(pb.PitchShift(semitones=float(rng.uniform(-1.5, 1.5)))(y.astype(np.float32)[None, :], SR)[0],
                       dtype=np.float64)[: y.size]
    if rng.random() < 0.2:
        mid = int(rng.choice([16000, 22050, 32000]))
        y = np.asarray(soxr.resample(soxr.resample(y, SR, mid), mid, SR), dtype=np.float64)
    if rng.random() < 0.12:
        y = _lossy(y, rng)
    if rng.random() < 0.2:
        rms = float(np.sqrt(np.mean(y * y)) + 1e-12)
        y = y + rng.normal(0.0, rms * 10 ** (float(rng.uniform(-55, -30)) / 20.0), y.size)
    return y


def mix_clip(stems: dict[str, npt.NDArray[np.float64]], layout: ClipLayout, *, augment: bool,
             seed: int) -> tuple[npt.NDArray[np.float64], dict[str, npt.NDArray[np.float64]]]:
    """Effects, gains and sum: the mix and the processed stems (labels are read from these)."""
    rng = np.random.default_rng([seed, layout.index, 99])
    gains = {p.family: p.gain_db for p in layout.parts}
    wet: dict[str, npt.NDArray[np.float64]] = {}
    for fam, y in stems.items():
        z = _stem_effects(y, fam, rng) if augment else y
        peak = float(np.max(np.abs(z))) or 1.0
        wet[fam] = z / peak * 10 ** (gains.get(fam, 0.0) / 20.0)
    n = next(iter(stems.values())).size if stems else int(round(layout.duration_s * SR))
    mix = np.zeros(n)
    for z in wet.values():
        mix[: z.size] += z[:n]
    if augment:
        mix = _mix_effects(mix, rng)
    return mix, wet


# --------------------------------------------------------------------------- data set


def read_manifest(folder: Path, *, for_training: bool) -> dict[str, Any]:
    """The ``manifest.json`` of a data set folder, checked for its use.

    Parameters
    ----------
    folder : Path
        A folder written by :func:`make_dataset`.
    for_training : bool
        Training or model selection: the folder must be of this :data:`RECIPE` and
        rendered without the held-out soundfont.

    Returns
    -------
    manifest : dict
        With ``recipe`` filled in (``"evidence-data-1"`` for a manifest that names none).

    Raises
    ------
    ParameterError
        If the manifest is missing or unreadable, or (``for_training``) the folder is of
        another recipe or was rendered with the held-out soundfont.
    """
    path = folder / "manifest.json"
    try:
        man = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ParameterError(f"{folder}: no readable manifest.json ({exc}); make it with "
                             "`timingbench evidence make-data`") from None
    man.setdefault("recipe", "evidence-data-1")
    if for_training:
        if man["recipe"] != RECIPE:
            raise ParameterError(f"{folder}: made by data recipe {man['recipe']}, this version trains on "
                                 f"{RECIPE}; remake it with `timingbench evidence make-data`")
        bad = [s for s in man.get("soundfonts", []) if is_held_out(s)]
        if bad:
            raise ParameterError(f"{folder}: rendered with the held-out soundfont {bad[0]}; it may not be "
                                 "trained on or used to select a model")
    return man


def training_sources(folders: Sequence[Path]) -> list[dict[str, Any]]:
    """The recipe records of the training and dev folders of one run, checked together.

    Every folder must pass :func:`read_manifest` for training, and all must share one
    set of recipe constants (``params``: labels, vocals, hard negatives), so one network
    never learns two meanings of a family.

    Returns
    -------
    sources : list of dict
        Per folder: ``folder``, ``recipe``, ``seed``, ``n_clips``, ``soundfonts`` (file
        names), ``params``.

    Raises
    ------
    ParameterError
        As :func:`read_manifest`, or if two folders' recipe constants differ.
    """
    sources: list[dict[str, Any]] = []
    for folder in folders:
        man = read_manifest(folder, for_training=True)
        sources.append({"folder": str(folder), "recipe": man["recipe"], "seed": man.get("seed"),
                        "n_clips": man.get("n_clips"),
                        "soundfonts": [Path(s).name for s in man.get("soundfonts", [])],
                        "params": man.get("params", {})})
    for src in sources[1:]:
        diff = sorted(k for k in set(src["params"]) | set(sources[0]["params"])
                      if src["params"].get(k) != sources[0]["params"].get(k))
        if diff:
            raise ParameterError(f"{src['folder']} and {sources[0]['folder']} were made with different "
                                 f"recipe constants ({', '.join(diff)}); train on folders of one recipe")
    return sources


def make_dataset(out: Path, *, cfg: Config, n_clips: int, seed: int, soundfonts: Sequence[str],
                 augment: bool = True, allow_held_out: bool = False, chunk: int = 64,
                 choir_family: str = DEFAULT_CHOIR_FAMILY,
                 real_kit_p: float | None = None,
                 progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Render, augment and label ``n_clips`` clips into ``out`` (shards ``part-XXXX.npz``).

    ``timingbench evidence make-data`` then writes the folder's memory-mapped training
    arrays (:func:`timingbench.identity.training.arrays.write_arrays`), so training decodes nothing.

    Clip ``i`` is rendered with ``soundfonts[i % len(soundfonts)]`` (a GM soundfont or a
    TiMidity++ configuration such as freepats'); its drum-kit part, with probability
    ``real_kit_p`` (default ``evidence.real_kit_p``; 0 for a test set), by a real kit
    (:func:`choose_kit`), recorded in the clip's metadata (``kit``). A shard already on
    disk is kept (a killed run resumes, when its manifest matches). ``manifest.json``
    records the recipe: :data:`RECIPE`, :class:`DataParams` (with ``choir_family``), the
    seed, the soundfonts and the vocadito part sung. A test set (``allow_held_out``)
    sings only vocadito's test part.

    Raises
    ------
    ParameterError
        If a held-out (MuseScore General) soundfont is given without ``allow_held_out``
        (test sets only), ``n_clips`` is not positive, ``choir_family`` is not one of the
        choir families, or ``out`` holds shards of another recipe, seed or setting.
    ConfigError
        If a soundfont file is missing, or real kits are asked for and none is installed.
    """
    if n_clips <= 0:
        raise ParameterError(f"n_clips must be positive, got {n_clips}")
    for s in soundfonts:
        if not Path(s).is_file():
            raise ConfigError(f"soundfont {s} not found; install it (Debian packages fluid-soundfont-gm, "
                              "timgm6mb-soundfont, csound-soundfont, fluidr3mono-gm-soundfont, freepats "
                              "with timidity)")
        if is_held_out(s) and not allow_held_out:
            raise ParameterError(f"{s}: MuseScore General is the held-out soundfont; it may only be used "
                                 "to make a test set (--test)")
    p = DataParams.from_config(cfg, choir_family=choir_family)
    vocals = load_vocadito(p, test=allow_held_out)
    kit_p = 0.0 if allow_held_out else float(cfg.params.evidence.real_kit_p if real_kit_p is None else real_kit_p)
    kits = real_kits() if kit_p > 0 else []
    if kit_p > 0 and not kits:
        raise ConfigError("real drum kits asked for (evidence.real_kit_p / --real-kit-p > 0) but none is installed; "
                          "install the Debian packages avldrums.lv2-soundfont and hydrogen-drumkits, or pass 0")
    manifest = {"recipe": RECIPE, "seed": seed, "n_clips": n_clips, "soundfonts": [str(s) for s in soundfonts],
                "augment": augment, "families": list(FAMILIES), "params": dict(p.__dict__),
                "real_vocals": vocals is not None,
                "real_vocals_part": None if vocals is None else ("test" if allow_held_out else "train"),
                "chunk": chunk, "kits": {"real_kit_p": kit_p, "kits": kits}}
    _check_resume(out, manifest)
    out.mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    done = 0
    t_start = time.perf_counter()
    for c0 in range(0, n_clips, chunk):
        shard = out / f"part-{c0 // chunk:04d}.npz"
        idx = list(range(c0, min(c0 + chunk, n_clips)))
        if shard.is_file():
            done += len(idx)
            continue
        layouts = [sample_layout(i, seed=seed, duration_s=p.clip_s, edge_s=p.edge_s,
                                 real_vocals_p=p.real_vocals_p if vocals is not None else 0.0,
                                 choir_family=p.choir_family, hard_negative_p=p.hard_negative_p) for i in idx]
        mels: list[Any] = []
        labs: list[Any] = []
        meta: list[dict[str, Any]] = []
        for k, sfont in enumerate(soundfonts):
            group = [lay for lay in layouts if lay.index % len(soundfonts) == k]
            if not group:
                continue
            kit_of = {lay.index: kit for lay in group
                      if (kit := choose_kit(lay, seed=seed, kits=kits, real_kit_p=kit_p)) is not None}
            available = available_programs(sfont) if is_timidity_set(sfont) else None
            stems_all = render_stems(group, sfont, p, vocals, render=cfg.params.render,
                                     kit_of=kit_of)
            for lay, stems in zip(group, stems_all, strict=True):
                mix, wet = mix_clip(stems, lay, augment=augment, seed=seed)
                mel = bank_log_mel(mix, sr=SR, p=cfg.params.features)
                lab = frame_labels(wet, mix, p)[:, : mel.shape[1]]
                mels.append(mel.astype(np.float16))
                labs.append(lab)
                meta.append({"index": lay.index, "soundfont": Path(sfont).name, "bpm": round(lay.bpm, 2),
                             "kit": Path(kit_of[lay.index]).name if lay.index in kit_of else None,
                             "parts": [{"family": q.family, "program": q.program.program, "role": q.role,
                                        "played_program": played_program(q, available, p.choir_family),
                                        "spans": [[round(a, 4), round(b, 4)] for a, b in q.spans],
                                        "real_vocals": q.real_vocals, "hard_negative": q.hard_negative}
                                       for q in lay.parts]})
        order = np.argsort([int(m["index"]) for m in meta])
        tmp = shard.with_suffix(".tmp.npz")
        np.savez(tmp, logmel=np.stack([mels[j] for j in order]), labels=np.stack([labs[j] for j in order]),
                 meta=np.array(json.dumps([meta[j] for j in order])))
        tmp.replace(shard)
        done += len(idx)
        if progress is not None:
            progress(done, n_clips)
        else:
            rate = done / max(time.perf_counter() - t_start, 1e-9)
            print(f"  {done}/{n_clips} clips ({rate:.1f} clips/s)", file=sys.stderr, flush=True)
    return manifest


def _check_resume(out: Path, manifest: dict[str, Any]) -> None:
    """Refuse to add shards to a folder whose shards were made by another recipe or setting."""
    if not any(out.glob("part-*.npz")):
        return
    try:
        old = json.loads((out / "manifest.json").read_text())
    except (OSError, ValueError):
        old = {}
    old.setdefault("recipe", "evidence-data-1")
    keys = ("recipe", "seed", "soundfonts", "augment", "params", "real_vocals", "chunk", "kits")
    diff = [k for k in keys if json.dumps(old.get(k), sort_keys=True) != json.dumps(manifest[k], sort_keys=True)]
    if diff:
        raise ParameterError(f"{out} holds shards of another data set ({', '.join(diff)} differ; recipe "
                             f"{old['recipe']}); write to an empty folder")


def shard_paths(folder: Path) -> list[Path]:
    """The finished shards of a data set folder, in clip order.

    Raises
    ------
    ParameterError
        If the folder holds no shard.
    """
    shards = [s for s in sorted(folder.glob("part-*.npz")) if not s.name.endswith(".tmp.npz")]
    if not shards:
        raise ParameterError(f"{folder}: no data shards (part-*.npz); run `timingbench evidence make-data`")
    return shards


def load_dataset(folder: Path) -> tuple[npt.NDArray[np.float16], npt.NDArray[np.uint8], list[dict[str, Any]]]:
    """All shards of a data set folder: log-mels, labels and clip metadata (in clip order).

    Raises
    ------
    ParameterError
        If the folder holds no shard.
    """
    shards = shard_paths(folder)
    mels, labs, meta = [], [], []
    for s in shards:
        with np.load(s) as z:
            mels.append(z["logmel"])
            labs.append(z["labels"])
            meta.extend(json.loads(str(z["meta"])))
    return np.concatenate(mels), np.concatenate(labs), meta

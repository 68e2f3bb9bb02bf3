"""Sound sources of the evidence data beyond the General MIDI soundfonts.

- **Real drum kits**: the multi-sampled acoustic kits of the Debian package
  ``avldrums.lv2-soundfont`` (SF2, one kit per file on bank 0 program 0, General MIDI
  drum notes; rendered by FluidSynth on a melodic channel) and the WAV kits of
  ``hydrogen-drumkits`` (played by :func:`render_hydrogen`, a small sampler: each General
  MIDI drum note is mapped to a kit instrument by its name, the velocity picks the
  sample layer). A kit counts when it has a kick, a snare and a closed hi-hat.
- **Kits by name**: :func:`find_kit` resolves a kit name (as the rendered kit corpora,
  :data:`timingbench.render.corpus.KIT_SPLITS`, name them), :func:`render_kit` plays either
  format, :func:`kit_pitches` says which General MIDI drum notes a kit plays.
- **freepats** (Debian package ``freepats``): a General MIDI set of Gravis patches,
  rendered by TiMidity++ (:func:`render_timidity`); a program the set lacks is played
  by another program of the same family that it has (:func:`available_programs`).
"""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import numpy.typing as npt
import soundfile as sf

from timingbench.errors import ConfigError, TimingbenchError
from timingbench.params.generation import RenderParams
from timingbench.render.synth import render_midi, run_renderer

#: The avldrums kits (SF2).
AVL_KITS = ("/usr/share/sounds/sf2/Black_Pearl_4_LV2.sf2", "/usr/share/sounds/sf2/Red_Zeppelin_4_LV2.sf2")
#: Where hydrogen-drumkits installs its kits.
HYDROGEN_ROOT = Path("/usr/share/hydrogen/data/drumkits")
#: The TiMidity++ configuration of freepats.
FREEPATS_CFG = "/etc/timidity/freepats.cfg"

#: General MIDI drum note -> kit-instrument kind.
GM_DRUM_KIND = {35: "kick", 36: "kick", 37: "stick", 38: "snare", 40: "snare", 39: "clap", 42: "hat_closed",
                44: "hat_pedal", 46: "hat_open", 49: "crash", 57: "crash", 51: "ride", 59: "ride",
                41: "tom", 43: "tom", 45: "tom", 47: "tom", 48: "tom", 50: "tom"}
#: Kinds a kit must have to be used.
REQUIRED_KINDS = ("kick", "snare", "hat_closed")


def _kind_of(name: str) -> str | None:
    """The kind of a Hydrogen instrument from its name (None when it is none of GM_DRUM_KIND's)."""
    n = name.lower()
    hat = bool(re.search(r"hi.?hat|\bhh\b|\bhat\b|hihat", n))
    if hat:
        if "open" in n:
            return "hat_open"
        if "pedal" in n or "foot" in n:
            return "hat_pedal"
        return "hat_closed" if re.search(r"clos|\bcl\b|tight", n) or "semi" not in n else None
    if re.search(r"kick|bass ?drum|\bbd\b", n):
        return "kick"
    if "snare" in n:
        return None if re.search(r"roll|rim|brush", n) else "snare"
    if re.search(r"stick|rim", n):
        return "stick"
    if "clap" in n:
        return "clap"
    if "tom" in n:
        return "tom"
    if "crash" in n:
        return "crash"
    if "ride" in n:
        return None if re.search(r"bell|cup", n) else "ride"
    return None


@dataclass(frozen=True)
class Layer:
    """One velocity layer of a kit instrument."""

    path: Path
    low: float
    high: float
    gain: float


@dataclass(frozen=True)
class Instrument:
    """A kit instrument: its name, gain and velocity layers."""

    name: str
    gain: float
    layers: tuple[Layer, ...]


@dataclass(frozen=True)
class HydrogenKit:
    """A Hydrogen kit: instruments by kind (tom: all toms, in kit order)."""

    name: str
    folder: Path
    by_kind: dict[str, tuple[Instrument, ...]]


def _text(el: ET.Element, tag: str, default: str) -> str:
    found = el.find(tag)
    return found.text if found is not None and found.text is not None else default


def parse_hydrogen_kit(folder: Path) -> HydrogenKit:
    """Read ``folder/drumkit.xml``.

    Raises
    ------
    ConfigError
        If the file is missing or not a Hydrogen drumkit description.
    """
    path = folder / "drumkit.xml"
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise ConfigError(f"{path}: not a readable Hydrogen drumkit ({exc})") from None
    ns = root.tag[: root.tag.index("}") + 1] if root.tag.startswith("{") else ""
    by_kind: dict[str, list[Instrument]] = {}
    for inst in root.iter(f"{ns}instrument"):
        name = _text(inst, f"{ns}name", "")
        kind = _kind_of(name)
        if kind is None or _text(inst, f"{ns}isMuted", "false") == "true":
            continue
        layers = []
        for lay in inst.iter(f"{ns}layer"):
            f = folder / _text(lay, f"{ns}filename", "")
            if f.is_file():
                layers.append(Layer(f, float(_text(lay, f"{ns}min", "0")), float(_text(lay, f"{ns}max", "1")),
                                    float(_text(lay, f"{ns}gain", "1"))))
        if not layers:
            f = folder / _text(inst, f"{ns}filename", "")  # kits of the older one-sample format
            if not f.is_file():
                continue
            layers.append(Layer(f, 0.0, 1.0, 1.0))
        gain = float(_text(inst, f"{ns}volume", "1")) * float(_text(inst, f"{ns}gain", "1"))
        by_kind.setdefault(kind, []).append(Instrument(name, gain, tuple(sorted(layers, key=lambda x: x.low))))
    return HydrogenKit(_text(root, f"{ns}name", folder.name), folder, {k: tuple(v) for k, v in by_kind.items()})


def hydrogen_kits(root: Path = HYDROGEN_ROOT) -> list[Path]:
    """Folders of the installed Hydrogen kits that have every :data:`REQUIRED_KINDS` (sorted)."""
    if not root.is_dir():
        return []
    out = []
    for folder in sorted(p for p in root.iterdir() if (p / "drumkit.xml").is_file()):
        try:
            kit = parse_hydrogen_kit(folder)
        except ConfigError:
            continue
        if all(k in kit.by_kind for k in REQUIRED_KINDS):
            out.append(folder)
    return out


def real_kits() -> list[str]:
    """Every installed real kit: avldrums SF2 paths, then Hydrogen kit folders."""
    return [k for k in AVL_KITS if Path(k).is_file()] + [str(p) for p in hydrogen_kits()]


def is_sf2_kit(kit: str) -> bool:
    """True for an SF2 kit (rendered by FluidSynth), False for a Hydrogen folder."""
    return kit.lower().endswith((".sf2", ".sf3"))


def kit_name(kit: str) -> str:
    """The name of a kit path: the SF2 file name or the Hydrogen folder name."""
    return Path(kit).name


def find_kit(name: str) -> str:
    """The installed kit (a :func:`real_kits` entry) called ``name``.

    Raises
    ------
    ConfigError
        If no installed kit has that name.
    """
    for kit in real_kits():
        if kit_name(kit) == name:
            return kit
    raise ConfigError(f"drum kit {name!r} is not installed; run `make setup` (Debian packages hydrogen-drumkits "
                      "and avldrums.lv2-soundfont)")


def _kit_midi(notes: list[tuple[float, float, int, int]], path: Path) -> None:
    """A MIDI file playing drum notes (onset_s, end_s, pitch, velocity) on melodic channel 0,
    program 0: the avldrums kits' bank-0 program-0 preset."""
    import pretty_midi

    pm = pretty_midi.PrettyMIDI(resolution=960, initial_tempo=120.0)
    inst = pretty_midi.Instrument(program=0, is_drum=False, name="kit")
    inst.notes = [pretty_midi.Note(velocity=int(v), pitch=int(p), start=float(s), end=float(e))
                  for s, e, p, v in notes]
    pm.instruments.append(inst)
    pm.write(str(path))


def render_kit(kit: str, notes: list[tuple[float, float, int, int]], *, n_samples: int,
               render: RenderParams) -> npt.NDArray[np.float64]:
    """Play General MIDI drum notes on a real kit (mono float64 at ``render.sample_rate_hz``).

    Parameters
    ----------
    kit : str
        An SF2 kit path (FluidSynth, with ``render``'s gain and timeout) or a Hydrogen kit
        folder (:func:`render_hydrogen`).
    notes : list of (onset_s, end_s, pitch, velocity)
        Drum hits in seconds; a Hydrogen kit ignores ``end_s``.
    n_samples : int
        Output length.
    render : RenderParams
        The renderer's configuration.

    Returns
    -------
    audio : np.ndarray of float64, shape (n_samples,)

    Raises
    ------
    TimingbenchError
        If FluidSynth fails.
    """
    sr = render.sample_rate_hz
    if not is_sf2_kit(kit):
        return render_hydrogen(kit, [(s, p, v) for s, _, p, v in notes], n_samples=n_samples, sr=sr)
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tb-kit-") as tmp:
        midi = Path(tmp) / "kit.mid"
        _kit_midi(notes, midi)
        return render_midi(midi, n_samples=n_samples, soundfont=kit, params=render)


_KIT_PITCHES: dict[str, frozenset[int]] = {}


def kit_pitches(kit: str, render: RenderParams) -> frozenset[int]:
    """The General MIDI drum notes (of :data:`GM_DRUM_KIND`) that sound on ``kit``.

    A Hydrogen kit plays a note whose kind it has (a pedal hat falls back to the closed hat,
    as in :func:`render_hydrogen`); an SF2 kit is asked by rendering every note once,
    0.5 s apart, and keeping those whose stretch is not digital silence.

    Raises
    ------
    TimingbenchError
        If FluidSynth fails or the kit plays none of the notes.
    """
    if kit in _KIT_PITCHES:
        return _KIT_PITCHES[kit]
    pitches = sorted(GM_DRUM_KIND)
    if not is_sf2_kit(kit):
        kinds = set(_parsed(kit).by_kind)
        out = {p for p in pitches if GM_DRUM_KIND[p] in kinds or (GM_DRUM_KIND[p] == "hat_pedal"
                                                                    and "hat_closed" in kinds)}
    else:
        sr = render.sample_rate_hz
        y = render_kit(kit, [(0.5 * i, 0.5 * i + 0.1, p, 127) for i, p in enumerate(pitches)],
                       n_samples=int(round(0.5 * sr * (len(pitches) + 1))), render=render)
        step = int(round(0.5 * sr))
        out = {p for i, p in enumerate(pitches) if np.any(y[i * step:(i + 1) * step] != 0.0)}
    if not out:
        raise TimingbenchError(f"drum kit {kit} plays none of the General MIDI drum notes")
    _KIT_PITCHES[kit] = frozenset(out)
    return _KIT_PITCHES[kit]


@lru_cache(maxsize=256)
def _sample(path: str, sr: int) -> npt.NDArray[np.float64]:
    y, file_sr = sf.read(path, dtype="float64", always_2d=True)
    y = y.mean(axis=1)
    if file_sr != sr:
        import soxr

        y = np.asarray(soxr.resample(y, file_sr, sr), dtype=np.float64)
    return y


def render_hydrogen(folder: Path | str, notes: list[tuple[float, int, int]], *, n_samples: int,
                    sr: int) -> npt.NDArray[np.float64]:
    """Play General MIDI drum notes on a Hydrogen kit (mono float64, ``n_samples`` long).

    Parameters
    ----------
    folder : Path or str
        The kit's folder (with ``drumkit.xml``).
    notes : list of (onset_s, pitch, velocity)
        Drum hits; a pitch whose kind the kit lacks is skipped.
    n_samples : int
        Output length.
    sr : int
        Output rate in Hz (samples are resampled with soxr).

    Returns
    -------
    audio : np.ndarray of float64
        Each hit is its layer's sample (the first layer whose velocity range holds
        ``velocity / 127``, else the nearest) scaled by the velocity and the instrument's
        and layer's gains, summed. Toms are assigned by pitch (lower GM note, earlier tom).
    """
    kit = _parsed(str(folder))
    out = np.zeros(n_samples)
    toms = kit.by_kind.get("tom", ())
    for onset, pitch, velocity in notes:
        kind = GM_DRUM_KIND.get(int(pitch))
        if kind == "hat_pedal" and kind not in kit.by_kind:
            kind = "hat_closed"
        group = kit.by_kind.get(kind or "", ())
        if not group:
            continue
        inst = group[0] if kind != "tom" else toms[(int(pitch) - 41) // 2 % len(toms)]
        v = min(max(int(velocity) / 127.0, 0.0), 1.0)
        layer = next((x for x in inst.layers if x.low <= v <= x.high),
                     min(inst.layers, key=lambda x: min(abs(x.low - v), abs(x.high - v))))
        y = _sample(str(layer.path), sr)
        s = int(round(onset * sr))
        if s >= n_samples or s < 0:
            continue
        e = min(n_samples, s + y.size)
        out[s:e] += y[: e - s] * v * inst.gain * layer.gain
    return out


@lru_cache(maxsize=32)
def _parsed(folder: str) -> HydrogenKit:
    return parse_hydrogen_kit(Path(folder))


def is_timidity_set(source: str) -> bool:
    """True for a TiMidity++ configuration (a ``.cfg`` file) given in place of a soundfont."""
    return str(source).lower().endswith(".cfg")


@lru_cache(maxsize=8)
def available_programs(cfg_path: str) -> frozenset[int]:
    """Melodic programs (bank 0) a TiMidity++ configuration defines.

    Raises
    ------
    ConfigError
        If the file cannot be read.
    """
    try:
        lines = Path(cfg_path).read_text(errors="replace").splitlines()
    except OSError as exc:
        raise ConfigError(f"{cfg_path}: cannot read the TiMidity++ configuration ({exc}); install freepats") from None
    progs: set[int] = set()
    section = None
    for line in lines:
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if words[0] in ("bank", "drumset"):
            section = (words[0], words[1] if len(words) > 1 else "0")
        elif section == ("bank", "0") and words[0].isdigit() and len(words) > 1:
            progs.add(int(words[0]))
    return frozenset(progs)


def render_timidity(midi_path: Path, *, n_samples: int, cfg_path: str, sr: int,
                    timeout_s: float) -> npt.NDArray[np.float64]:
    """Render a MIDI file with TiMidity++ (reverb and chorus off, leading silence kept) to mono
    float64 of ``n_samples``.

    Raises
    ------
    ConfigError
        If ``timidity`` is not installed.
    TimingbenchError
        If it fails or hangs.
    """
    exe = shutil.which("timidity")
    if exe is None:
        raise ConfigError("timidity not found; install the Debian package timidity (it renders freepats)")

    def cmd(wav: Path) -> list[str]:
        return [exe, "-c", cfg_path, "-idq", "--preserve-silence", "-Ow", "-s", str(sr), "-EFreverb=0",
                "-EFchorus=0", "-o", str(wav), str(midi_path)]

    return run_renderer(cmd, name="timidity", midi_path=midi_path, timeout_s=timeout_s, sr=sr, n_samples=n_samples)

"""MIDI writing, FluidSynth rendering and the sample-accurate gain envelope.

The mix and every stem are rendered by the ``fluidsynth`` command-line tool with chorus
and reverb off by default, so that the output is a deterministic function of the MIDI
file and the soundfont (and a stem is exactly silent before its first note). The gain
envelope (cuts, pauses, fades) is then applied in numpy, sample-accurately, to the mix
and to every stem alike; the mix is scaled to a fixed peak and by the requested gain.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pretty_midi
import soundfile as sf

from timingbench.errors import ConfigError, ParameterError, TimingbenchError
from timingbench.params.generation import RenderParams
from timingbench.render.arrangement import Note, Part


@dataclass(frozen=True)
class GainOp:
    """One step of the gain envelope (times in seconds).

    Attributes
    ----------
    kind : str
        ``cut`` (silence from ``t0`` on), ``mute`` (silence in ``[t0, t1)``) or ``fade``
        (gain falls linearly in dB from 0 dB at ``t0`` to ``-depth_db`` at ``t1``, then
        silence).
    t0 : float
        Start in seconds.
    t1 : float
        End in seconds (``mute``, ``fade``).
    depth_db : float
        Depth of a fade in dB.
    """

    kind: str
    t0: float
    t1: float = 0.0
    depth_db: float = 60.0

    def fade_time_at(self, below_db: float) -> float:
        """Seconds at which a ``fade`` reaches ``below_db`` dB of attenuation."""
        if self.kind != "fade":
            raise ParameterError(f"fade_time_at needs a 'fade' gain op, got {self.kind!r}")
        return self.t0 + (self.t1 - self.t0) * below_db / self.depth_db


def gain_envelope(ops: list[GainOp], *, n: int, sr: int) -> npt.NDArray[np.float64]:
    """Per-sample linear gain of the envelope.

    Parameters
    ----------
    ops : list of GainOp
        Envelope steps, applied in order (gains multiply).
    n : int
        Number of samples.
    sr : int
        Sample rate in Hz.

    Returns
    -------
    gain : np.ndarray of float64, shape (n,)

    Raises
    ------
    ParameterError
        If a step has an unknown kind or a reversed span.
    """
    g = np.ones(n, dtype=np.float64)
    for op in ops:
        i0 = int(round(op.t0 * sr))
        i0 = min(max(i0, 0), n)
        if op.kind == "cut":
            g[i0:] = 0.0
            continue
        i1 = min(max(int(round(op.t1 * sr)), 0), n)
        if i1 < i0:
            raise ParameterError(f"gain op {op.kind}: end {op.t1} s precedes start {op.t0} s")
        if op.kind == "mute":
            g[i0:i1] = 0.0
        elif op.kind == "fade":
            t = np.arange(i0, i1, dtype=np.float64) / sr
            db = -op.depth_db * (t - op.t0) / (op.t1 - op.t0)
            g[i0:i1] *= 10.0 ** (db / 20.0)
            g[i1:] = 0.0
        else:
            raise ParameterError(f"unknown gain op kind {op.kind!r}; use cut, mute or fade")
    return g


def write_midi(parts: list[Part], path: Path, *, ticks_per_beat: int) -> None:
    """Write the parts as a type-1 MIDI file (one track per part, named after the part).

    Raises
    ------
    ParameterError
        If more than 15 melodic parts or more than one drum-kit part are given.
    """
    if sum(1 for p in parts if not p.spec.is_drum) > 15 or sum(1 for p in parts if p.spec.is_drum) > 1:
        raise ParameterError("an arrangement holds at most 15 melodic parts and one drum kit")
    pm = pretty_midi.PrettyMIDI(resolution=ticks_per_beat, initial_tempo=120.0)
    for part in parts:
        inst = pretty_midi.Instrument(program=part.spec.program, is_drum=part.spec.is_drum,
                                      name=part.name)
        inst.control_changes.append(pretty_midi.ControlChange(7, int(part.volume), 0.0))
        inst.notes = [pretty_midi.Note(velocity=int(n.velocity), pitch=int(n.pitch),
                                       start=float(n.start), end=float(n.end)) for n in part.notes]
        pm.instruments.append(inst)
    path.parent.mkdir(parents=True, exist_ok=True)
    pm.write(str(path))


def read_midi_notes(path: Path) -> dict[str, list[Note]]:
    """Read a MIDI file written by :func:`write_midi` back as ``{part name: notes}``.

    Note times are those the file actually holds (tick-quantised), which is what the
    synthesiser plays and what every truth row is computed from.

    Raises
    ------
    TimingbenchError
        If the file cannot be parsed.
    """
    try:
        pm = pretty_midi.PrettyMIDI(str(path))
    except Exception as exc:  # pretty_midi raises assorted errors on bad files
        raise TimingbenchError(f"{path}: cannot read MIDI ({exc})") from None
    out: dict[str, list[Note]] = {}
    for inst in pm.instruments:
        out.setdefault(inst.name, []).extend(
            Note(float(n.start), float(n.end), int(n.pitch), int(n.velocity)) for n in inst.notes)
    for notes in out.values():
        notes.sort(key=lambda n: (n.start, n.pitch))
    return out


def fluidsynth_binary() -> str:
    """Path of the ``fluidsynth`` executable.

    Raises
    ------
    ConfigError
        If FluidSynth is not installed.
    """
    exe = shutil.which("fluidsynth")
    if exe is None:
        raise ConfigError("the reference renderer needs the `fluidsynth` command; run `make setup` "
                          "(Debian packages fluidsynth and fluid-soundfont-gm)")
    return exe


def resolve_soundfont(soundfont: Path | str | None, params: RenderParams) -> Path:
    """The soundfont to use: ``soundfont`` or the configured ``render.soundfont_path``.

    Raises
    ------
    ConfigError
        If the file does not exist.
    """
    sf2 = Path(soundfont) if soundfont is not None else Path(params.soundfont_path)
    if not sf2.is_file():
        raise ConfigError(f"soundfont {sf2} not found; install fluid-soundfont-gm or pass --soundfont "
                          "(any General MIDI .sf2/.sf3)")
    return sf2


def render_midi(midi_path: Path, *, n_samples: int, soundfont: Path | str, params: RenderParams,
                reverb: bool = False, timeout_s: float | None = None,
                polyphony: int = 4096) -> npt.NDArray[np.float64]:
    """Render one MIDI file with FluidSynth to mono float64 of exactly ``n_samples``.

    The one FluidSynth call of the package: the reference clips and stems, the MGBench
    batches and the evidence model's long per-family timelines are all rendered here.

    Parameters
    ----------
    midi_path : Path
        The MIDI file.
    n_samples : int
        Output length in samples; FluidSynth's output is cut or zero-padded to it.
    soundfont : Path or str
        A General MIDI soundfont.
    params : RenderParams
        ``render.sample_rate_hz``, ``render.synth_gain`` and (unless ``timeout_s`` is
        given) ``render.fluidsynth_timeout_s``.
    reverb : bool
        Switch FluidSynth's reverb on (off by default: stems then stay exactly silent
        outside their notes).
    timeout_s : float, optional
        Seconds after which the run counts as hung; ``render.fluidsynth_timeout_s`` when
        omitted. Long timelines pass a limit scaled to their length.
    polyphony : int
        FluidSynth's voice limit (``synth.polyphony``).

    Returns
    -------
    mono : np.ndarray of float64, shape (n_samples,)
        The mean of the two synthesiser channels.

    Raises
    ------
    TimingbenchError
        If FluidSynth fails, hangs or writes another sample rate.
    """
    sr = params.sample_rate_hz
    limit_s = params.fluidsynth_timeout_s if timeout_s is None else float(timeout_s)
    exe = fluidsynth_binary()

    def cmd(wav: Path) -> list[str]:
        return [exe, "-ni", "-q", "-F", str(wav), "-r", str(sr), "-g", str(params.synth_gain),
                "-O", "float", "-o", "synth.chorus.active=0",
                "-o", f"synth.reverb.active={1 if reverb else 0}", "-o", "synth.cpu-cores=1",
                "-o", "synth.dynamic-sample-loading=1", "-o", f"synth.polyphony={int(polyphony)}",
                str(soundfont), str(midi_path)]

    return run_renderer(cmd, name="FluidSynth", midi_path=midi_path, timeout_s=limit_s, sr=sr, n_samples=n_samples)


def run_renderer(cmd: Callable[[Path], list[str]], *, name: str, midi_path: Path, timeout_s: float, sr: int,
                 n_samples: int) -> npt.NDArray[np.float64]:
    """Run a MIDI synthesiser that writes a WAV file; its output as mono float64 of ``n_samples``.

    Parameters
    ----------
    cmd : callable
        The command line, given the WAV path to write.
    name : str
        The synthesiser's name (for messages).
    midi_path : Path
        The MIDI file rendered (for messages).
    timeout_s : float
        Seconds after which the run counts as hung.
    sr : int
        The sample rate in Hz the file must have.
    n_samples : int
        Output length; the mean of the file's channels is cut or zero-padded to it.

    Raises
    ------
    TimingbenchError
        If the synthesiser fails, hangs or writes another sample rate.
    """
    with tempfile.TemporaryDirectory(prefix="tb-render-") as tmp:
        wav = Path(tmp) / "out.wav"
        try:
            proc = subprocess.run(cmd(wav), capture_output=True, text=True, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            raise TimingbenchError(f"{midi_path}: {name} did not finish in {timeout_s:g} s") from None
        if proc.returncode != 0 or not wav.is_file():
            raise TimingbenchError(f"{midi_path}: {name} failed ({(proc.stderr or proc.stdout).strip()[-300:]})")
        data, file_sr = sf.read(str(wav), dtype="float64", always_2d=True)
    if file_sr != sr:
        raise TimingbenchError(f"{midi_path}: {name} wrote {file_sr} Hz, expected {sr} Hz")
    mono = data.mean(axis=1)
    out = np.zeros(n_samples, dtype=np.float64)
    m = min(n_samples, len(mono))
    out[:m] = mono[:m]
    return out


def write_wav(path: Path, samples: npt.NDArray[np.float64], *, sr: int) -> None:
    """Write mono 24-bit PCM WAV.

    Integer PCM is used because libsndfile stamps float WAV files with a PEAK chunk that
    carries the wall-clock time, which would break byte-identical re-renders; 24 bits keep
    the quantisation error near -144 dBFS, so gain variants stay scaled copies to 1e-6.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(path), np.clip(samples, -1.0, 1.0), sr, subtype="PCM_24", format="WAV")

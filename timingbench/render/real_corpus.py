"""The ``real`` corpus: real recordings laid over other real recordings at exact sample offsets.

Every clip is a backing recording plus one or more *layers* (a solo, a stem, a song, read
speech, an animal call or noise), each placed at an integer sample offset with numpy, so every
true time is known to the sample. The corpus is data, read and checked by
:mod:`timingbench.render.real_corpus_table` from ``timingbench/data/real_corpus/``:
:data:`REAL_SOURCES` names the 38 recordings of ``shared/realdata`` (16 from librosa-data,
vocadito and BeatNet, 22 short sms-tools solos, ensembles and decoys, each a loop) with the
split each belongs to (disjoint by recording), and :data:`REAL_CORPUS` holds the 333
:class:`RealClipSpec`, each with its id, seed, layers and levels: the 116 clips of the first
sixteen recordings, then the sms-tools clips. Rendering it again from the same files gives
byte-identical clips and identical truth.

Mixing rules (times in seconds, levels in dB):

- **Decoding** goes through :func:`timingbench.audio.load_clip` (44.1 kHz mono, soxr VHQ);
  the analysis window is widened so that whole recordings are kept.
- **Audible start.** A layer's nominal source position is moved forward to the first
  sample whose magnitude reaches :data:`AUDIBLE_BELOW_PEAK_DB` (30 dB) below the
  recording's peak; that sample is placed at the layer's clip offset, so an entrance's
  truth is the first audible sample of the layer. The trim is recorded in the manifest.
- **Audible end.** A layer cut at a clip time ends one sample after the last sample at or
  before the cut that reaches the same threshold; an exit's truth is that first silent
  sample.
- **Fades.** A raised-cosine fade of :data:`FADE_S` (5 ms, 220 samples) opens and closes
  every layer and the backing. Its first and last gains are non-zero, so the first and
  last non-zero samples of a layer are its truth samples.
- **Levels.** A layer's gain puts its active RMS at its ``level_db`` (within
  :data:`~timingbench.render.real_corpus_table.LEVEL_RANGE_DB`, -18 to 0 dB) relative to
  the backing's active RMS (the RMS over the 2048-sample frames within
  :data:`ACTIVE_BELOW_LOUD_DB` (30 dB) of the 95th percentile frame). The mix is then
  scaled to ``render.peak_dbfs`` (-1 dBFS) and written as mono 24-bit PCM WAV (integer PCM
  keeps re-renders byte-identical).

The corpus folder has the layout of the MIDI corpora (:mod:`timingbench.render.corpus`):
``clips/<clip_id>.wav``, ``prompts.jsonl`` (formats §1), ``truth.jsonl`` (formats §5
Layer 1, with ``split``), ``observed.jsonl`` (Layer 2: every music layer's
entrance) and ``manifest.jsonl`` (sources, offsets and trims in samples, levels,
scenario, true onset), plus ``stems/<clip_id>/<part>.wav`` on request.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from timingbench.audio import load_clip
from timingbench.config import Config, load_config
from timingbench.errors import ClipError, ParameterError
from timingbench.jsonio import write_jsonl
from timingbench.prompts import parse_prompt
from timingbench.render.real_corpus_table import (
    FAMILIES,
    REAL_CORPUS,
    REAL_SOURCES,
    LayerSpec,
    RealClipSpec,
    RealSource,
    check_spec,
)
from timingbench.render.scenarios import DELIVERY_SENTENCES, ScenarioParams, _at
from timingbench.render.synth import write_wav

F64 = npt.NDArray[np.float64]

#: Length of the raised-cosine fade that opens and closes every layer, in seconds.
FADE_S = 0.005
#: A sample is audible when its magnitude is at most this many dB below the recording's peak.
AUDIBLE_BELOW_PEAK_DB = 30.0
#: Frames within this many dB of the 95th-percentile frame count as the active part.
ACTIVE_BELOW_LOUD_DB = 30.0
#: Frame length of the active-RMS measure, in samples (46 ms at 44.1 kHz).
LEVEL_FRAME = 2048
#: Range of the displacement magnitude of an off-time delivery, in seconds.
OFF_TIME_RANGE_S = (1.0, 3.0)
#: An on-time delivery's truth lies at most this far from the instructed time, in seconds.
ON_TIME_MAX_S = 0.05


def _rng(seed: int, what: str) -> np.random.Generator:
    """The generator of a clip's ``what`` (its prompt wording) from the clip's seed."""
    return np.random.default_rng(np.random.SeedSequence([int(seed), zlib.crc32(what.encode())]))


# ----------------------------------------------------------------------------- decoding

@dataclass(frozen=True)
class DecodedSource:
    """A decoded recording.

    Attributes
    ----------
    source : RealSource
        Its definition.
    path : Path
        The file decoded.
    samples : np.ndarray of float64, shape (n,)
        Mono at ``sr`` Hz.
    sr : int
        Sample rate in Hz.
    threshold : float
        Audible threshold: :data:`AUDIBLE_BELOW_PEAK_DB` below the recording's peak (linear).
    """

    source: RealSource
    path: Path
    samples: F64
    sr: int
    threshold: float


def source_path(sources_dir: Path, key: str) -> Path:
    """The file of source ``key`` inside ``sources_dir``.

    Raises
    ------
    ParameterError
        If ``key`` is not a source of :data:`REAL_SOURCES`.
    """
    if key not in REAL_SOURCES:
        raise ParameterError(f"unknown real-corpus source {key!r}; known: {sorted(REAL_SOURCES)}")
    return Path(sources_dir) / REAL_SOURCES[key].path


def decode_source(sources_dir: Path, key: str, config: Config) -> DecodedSource:
    """Decode one recording with the project's loader (44.1 kHz mono, whole file).

    Parameters
    ----------
    sources_dir : Path
        The ``shared/realdata`` folder.
    key : str
        Key of :data:`REAL_SOURCES`.
    config : Config
        Configuration (``audio.*`` decoding constants).

    Returns
    -------
    decoded : DecodedSource

    Raises
    ------
    ClipError
        If the file is missing, unreadable, silent or shorter than its usable segment.
    """
    path = source_path(sources_dir, key)
    if not path.is_file():
        raise ClipError(f"{path}: real-corpus source {key!r} not found; --sources must be the shared/realdata "
                        "folder (librosa-data/, vocadito/, beatnet/, sms-tools/)")
    src = REAL_SOURCES[key]
    wide = config.with_value("audio.analysis_window_s", max(float(config.params.audio.analysis_window_s),
                                                            src.segment_s[1] + 30.0))
    clip = load_clip(path, wide)
    x = clip.samples.astype(np.float64)
    if x.size < int(round(src.segment_s[1] * clip.sr)) - 1:
        raise ClipError(f"{path}: {x.size / clip.sr:.2f} s of audio, shorter than the {src.segment_s[1]:g} s "
                        f"the real corpus uses of it")
    peak = float(np.max(np.abs(x)))
    return DecodedSource(src, path, x, clip.sr, peak * 10.0 ** (-AUDIBLE_BELOW_PEAK_DB / 20.0))


# ----------------------------------------------------------------------------- mixing

@dataclass
class PlacedPart:
    """One recording as placed into a clip (before the clip's peak scaling).

    Attributes
    ----------
    name : str
        ``backing`` or ``layer<k>-<role>-<source>``.
    spec : LayerSpec or None
        The layer (None for the backing).
    source : DecodedSource
        The recording.
    clip_start : int
        First sample in the clip.
    clip_end : int
        One past the last non-zero sample in the clip.
    source_start : int
        Source sample placed at ``clip_start`` (after the audible trim).
    nominal_start : int
        Source sample the spec asked for.
    cut_moved : int
        Samples the cut was moved back to reach the last audible sample (0 when not cut).
    gain_db : float
        Gain applied, in dB.
    signal : np.ndarray of float64, shape (n_clip,)
        Its contribution to the clip, gain and fades applied.
    """

    name: str
    spec: LayerSpec | None
    source: DecodedSource
    clip_start: int
    clip_end: int
    source_start: int
    nominal_start: int
    cut_moved: int
    gain_db: float
    signal: F64 = field(repr=False)


@dataclass
class MixedClip:
    """A clip mixed in memory.

    Attributes
    ----------
    spec : RealClipSpec
        Its definition.
    sr : int
        Sample rate in Hz.
    samples : np.ndarray of float64, shape (n,)
        The mix, scaled to the configured peak (the sum of the parts' signals).
    parts : list of PlacedPart
        Backing first, then the layers in spec order, each scaled like the mix.
    scale_db : float
        The peak scaling applied to every part, in dB.
    truth_sample : int or None
        The sample of the delivered event (None when it does not occur).
    """

    spec: RealClipSpec
    sr: int
    samples: F64
    parts: list[PlacedPart]
    scale_db: float
    truth_sample: int | None


def _fade(n: int) -> F64:
    """Raised-cosine fade-in of ``n`` samples whose first gain is already above zero."""
    k = np.arange(n, dtype=np.float64)
    return 0.5 * (1.0 - np.cos(np.pi * (k + 1.0) / (n + 1.0)))


def _loop_span(src: DecodedSource) -> tuple[int, int]:
    """First and one-past-last sample of the stretch a loop tiles (its ``segment_s``, clipped to the file)."""
    lo, hi = (int(round(t * src.sr)) for t in src.source.segment_s)
    return lo, min(hi, src.samples.size)


def _read(src: DecodedSource, start: int, n: int) -> F64:
    """``n`` source samples from ``start`` (for a loop, its span tiled with the span's period)."""
    x = src.samples
    if src.source.loop:
        lo, hi = _loop_span(src)
        return x[lo + (start - lo + np.arange(n)) % (hi - lo)]
    if start < 0 or start + n > x.size:
        raise ParameterError(f"{src.path.name}: samples {start}-{start + n} lie outside the recording "
                             f"({x.size} samples)")
    return x[start:start + n].copy()


def _first_audible(src: DecodedSource, start: int, limit: int) -> int:
    """The first source sample at or after ``start`` (before ``limit``) at the audible threshold."""
    step = src.sr
    i = start
    while i < limit:
        seg = _read(src, i, min(step, limit - i))
        hit = np.flatnonzero(np.abs(seg) >= src.threshold)
        if hit.size:
            return i + int(hit[0])
        i += step
    raise ParameterError(f"{src.path.name}: nothing audible between {start / src.sr:.3f} and "
                         f"{limit / src.sr:.3f} s")


def _last_audible(src: DecodedSource, seg: F64, name: str) -> int:
    """Index of the last sample of ``seg`` at the audible threshold."""
    loud = np.flatnonzero(np.abs(seg) >= src.threshold)
    if not loud.size:
        raise ParameterError(f"{name}: nothing of {src.path.name} is audible in the placed stretch")
    return int(loud[-1])


def active_rms(x: npt.ArrayLike, *, frame: int = LEVEL_FRAME, below_db: float = ACTIVE_BELOW_LOUD_DB) -> float:
    """RMS over the active part of a signal.

    Parameters
    ----------
    x : array_like of float, shape (n,)
        Mono signal.
    frame : int
        Frame length in samples (non-overlapping frames; a shorter signal is one frame).
    below_db : float
        Frames whose mean square lies within ``below_db`` dB of the 95th-percentile frame
        are active.

    Returns
    -------
    rms : float
        Linear RMS of the active frames (0.0 for an all-zero signal).
    """
    y = np.asarray(x, dtype=np.float64)
    n = y.size // frame
    ms = (y[:n * frame].reshape(n, frame) ** 2).mean(axis=1) if n else np.array([float(np.mean(y ** 2))])
    loud = float(np.percentile(ms, 95.0))
    if loud <= 0.0:
        return 0.0
    return float(np.sqrt(np.mean(ms[ms >= loud * 10.0 ** (-below_db / 10.0)])))


def _place(name: str, src: DecodedSource, *, n_clip: int, clip_start: int, nominal: int,
           cut: int | None, spec: LayerSpec | None, fade_n: int) -> PlacedPart:
    """Place one recording into a clip of ``n_clip`` samples (unit gain, fades applied)."""
    sr = src.sr
    # a loop is searched over one period; a recording up to the end of its usable segment
    if src.source.loop:
        lo, hi = _loop_span(src)
        seg_end = nominal + hi - lo
    else:
        seg_end = int(round(src.source.segment_s[1] * sr))
    s0 = _first_audible(src, nominal, seg_end)
    room = n_clip - clip_start
    if cut is not None:
        n = cut - clip_start
        if not src.source.loop and s0 + n > seg_end:
            raise ParameterError(f"{name}: the cut at {cut / sr:.3f} s lies beyond the usable segment of "
                                 f"{src.path.name}")
        seg = _read(src, s0, n)
        n_keep = _last_audible(src, seg, name) + 1
        moved = n - n_keep
    else:
        n_keep = room if src.source.loop else min(room, seg_end - s0)
        seg = _read(src, s0, n_keep)
        if n_keep < room:  # the recording ends inside the clip: end on its last audible sample
            n_keep = _last_audible(src, seg, name) + 1
        moved = 0
    if n_keep < 2 * fade_n:
        raise ParameterError(f"{name}: {n_keep} samples of {src.path.name} are too short for the fades")
    seg = seg[:n_keep].copy()
    ramp = _fade(fade_n)
    seg[:fade_n] *= ramp
    seg[-fade_n:] *= ramp[::-1]
    signal = np.zeros(n_clip, dtype=np.float64)
    signal[clip_start:clip_start + n_keep] = seg
    return PlacedPart(name=name, spec=spec, source=src, clip_start=clip_start, clip_end=clip_start + n_keep,
                      source_start=s0, nominal_start=nominal, cut_moved=moved, gain_db=0.0, signal=signal)


def mix_clip(spec: RealClipSpec, sources: dict[str, DecodedSource], *, peak_dbfs: float = -1.0) -> MixedClip:
    """Mix one clip in memory.

    Parameters
    ----------
    spec : RealClipSpec
        The clip.
    sources : dict of str to DecodedSource
        Decoded recordings by key (at least those of ``spec.source_keys``).
    peak_dbfs : float
        Peak of the scaled mix in dBFS.

    Returns
    -------
    clip : MixedClip

    Raises
    ------
    ParameterError
        If a source is missing from ``sources``, the sample rates differ, a layer lies
        outside its usable segment, or the delivered time breaks the scenario's rule (an
        on-time truth more than :data:`ON_TIME_MAX_S` from the instructed time, an off-time
        displacement outside :data:`OFF_TIME_RANGE_S`).
    """
    missing = [k for k in spec.source_keys if k not in sources]
    if missing:
        raise ParameterError(f"real clip {spec.clip_id!r}: sources {missing} were not decoded")
    rates = {sources[k].sr for k in spec.source_keys}
    if len(rates) != 1:
        raise ParameterError(f"real clip {spec.clip_id!r}: sources decoded at different rates {sorted(rates)}")
    sr = rates.pop()
    n_clip = int(round(spec.duration_s * sr))
    fade_n = int(round(FADE_S * sr))
    back = _place("backing", sources[spec.backing], n_clip=n_clip, clip_start=0,
                  nominal=int(round(spec.backing_from_s * sr)), cut=None, spec=None, fade_n=fade_n)
    if back.clip_end != n_clip:
        raise ParameterError(f"real clip {spec.clip_id!r}: the backing ends at {back.clip_end / sr:.3f} s, "
                             "before the clip")
    ref = active_rms(back.signal)
    parts = [back]
    for k, ly in enumerate(spec.layers):
        part = _place(f"layer{k + 1}-{ly.role}-{ly.source}", sources[ly.source], n_clip=n_clip,
                      clip_start=int(round(ly.start_s * sr)), nominal=int(round(ly.from_s * sr)),
                      cut=None if ly.cut_s is None else int(round(ly.cut_s * sr)), spec=ly, fade_n=fade_n)
        own = active_rms(part.signal[part.clip_start:part.clip_end])
        gain = 10.0 ** (ly.level_db / 20.0) * ref / own
        part.signal *= gain
        part.gain_db = 20.0 * math.log10(gain)
        parts.append(part)
    mix = np.sum([p.signal for p in parts], axis=0)
    scale = 10.0 ** (peak_dbfs / 20.0) / float(np.max(np.abs(mix)))
    for p in parts:
        p.signal *= scale
    mix = np.sum([p.signal for p in parts], axis=0)
    truth: int | None = None
    if spec.scenario == "busy_decoy" and spec.kind == "instrument_exit":
        decoy_end = parts[1].clip_end / sr
        if abs(decoy_end - spec.time_s) > ON_TIME_MAX_S:
            raise ParameterError(f"real clip {spec.clip_id!r}: the decoy leaves at {decoy_end:.4f} s, not at the "
                                 f"instructed {spec.time_s:g} s")
    if spec.occurred:
        target = next(p for p in parts if p.spec is not None and p.spec.role == "target")
        truth = target.clip_start if spec.kind == "instrument_entry" else target.clip_end
        d = truth / sr - spec.time_s
        if spec.scenario == "on_time" and abs(d) > ON_TIME_MAX_S:
            raise ParameterError(f"real clip {spec.clip_id!r}: on-time truth {truth / sr:.4f} s lies {d:+.3f} s "
                                 f"from the instructed {spec.time_s:g} s")
        if spec.scenario == "off_time" and not OFF_TIME_RANGE_S[0] - 0.05 <= abs(d) <= OFF_TIME_RANGE_S[1]:
            raise ParameterError(f"real clip {spec.clip_id!r}: off-time displacement {d:+.3f} s outside "
                                 f"{OFF_TIME_RANGE_S} s")
    return MixedClip(spec=spec, sr=sr, samples=mix, parts=parts, scale_db=20.0 * math.log10(scale),
                     truth_sample=truth)


# ----------------------------------------------------------------------------- rows

@dataclass
class RealClip:
    """Everything written for one clip of the real corpus.

    Attributes
    ----------
    clip_id : str
        Clip and prompt id.
    audio_path : Path
        Mono 24-bit PCM WAV at 44.1 kHz.
    prompt : dict
        formats §1 prompt row.
    truth : list of dict
        formats §5 Layer-1 rows (one).
    observed : list of dict
        formats §5 Layer-2 rows: the entrance of every music layer.
    manifest : dict
        The manifest row.
    stem_paths : dict of str to Path
        Part name -> WAV of that part alone (when stems were requested); they sum to the mix.
    scenario : str
        One of :data:`SCENARIOS`.
    """

    clip_id: str
    audio_path: Path
    prompt: dict[str, Any]
    truth: list[dict[str, Any]]
    observed: list[dict[str, Any]]
    manifest: dict[str, Any]
    stem_paths: dict[str, Path] = field(default_factory=dict)
    scenario: str = ""


def _character(mixed: MixedClip) -> str:
    """``hard`` for a cut (an exit, or a layer entering mid-recording); else the family's own."""
    spec = mixed.spec
    if spec.kind == "instrument_exit":
        return "hard"
    target = next((p for p in mixed.parts if p.spec is not None and p.spec.role == "target"), None)
    if target is not None and target.nominal_start > int(round(target.source.source.segment_s[0] * mixed.sr)):
        return "hard"
    return FAMILIES[spec.family].character


def _salience(spec: RealClipSpec) -> int:
    """1 for a target laid in more than 12 dB below the backing; else 3 for percussion and
    brass, 2 for the other families."""
    target = next((ly for ly in spec.layers if ly.role == "target"), None)
    if target is not None and target.level_db < -12.0:
        return 1
    return 3 if spec.family in ("percussion", "brass") else 2


def prompt_row(spec: RealClipSpec, *, tolerance_s: float) -> dict[str, Any]:
    """The formats §1 prompt of a clip.

    Parameters
    ----------
    spec : RealClipSpec
        The clip.
    tolerance_s : float
        On-time tolerance written into the event, in seconds.

    Returns
    -------
    prompt : dict

    Raises
    ------
    PromptError
        If the row breaks a rule of formats §1 (it never should).
    """
    rng = _rng(spec.seed, "wording")
    target = FAMILIES[spec.family].target
    phrase = REAL_SOURCES[spec.backing].phrase
    dur = f"{spec.duration_s:g}"
    at = _at(spec.time_s, rng)
    if spec.kind == "instrument_entry":
        first = f"Create a {phrase} track for exactly {dur} seconds."
    else:
        first = f"Create a {phrase} track featuring {target} for exactly {dur} seconds."
    wordings = DELIVERY_SENTENCES[spec.kind]
    sentence = wordings[int(rng.integers(len(wordings)))]
    if phrase[:1].lower() in "aeiou":
        first = "Create an " + first[len("Create a "):]
    event = {"id": f"{spec.clip_id}/e1", "kind": spec.kind, "target": target, "family": spec.family,
             "time_s": round(spec.time_s, 3), "tolerance_s": tolerance_s}
    row: dict[str, Any] = {"id": spec.clip_id, "family": "single_event",
                           "text": f"{first} {sentence.format(t=target, at=at)}", "style": phrase,
                           "duration_s": spec.duration_s, "events": [event], "tempo": None}
    parse_prompt(row, where=f"real clip {spec.clip_id}: ")
    return row


def truth_row(mixed: MixedClip) -> dict[str, Any]:
    """The formats §5 Layer-1 row of a mixed clip (``annotator: "renderer"``)."""
    spec = mixed.spec
    onset = None if mixed.truth_sample is None else round(mixed.truth_sample / mixed.sr, 6)
    return {"clip": f"{spec.clip_id}.wav", "event_id": f"{spec.clip_id}/e1", "occurred": onset is not None,
            "onset_s": onset, "onset_character": _character(mixed), "salience": _salience(spec),
            "annotator": "renderer", "split": spec.split}


def observed_rows(mixed: MixedClip) -> list[dict[str, Any]]:
    """formats §5 Layer-2 rows: the entrance of every laid-in music layer (speech and
    animal layers belong to no formats §1 family and the backing to many, so neither has a row)."""
    spec = mixed.spec
    rows = []
    for p in mixed.parts:
        fam = p.source.source.family
        if p.spec is None or fam is None:
            continue
        rows.append({"clip": f"{spec.clip_id}.wav", "source": FAMILIES[fam].target, "family": fam,
                     "onset_s": round(p.clip_start / mixed.sr, 6), "salience": 3 if fam in ("percussion", "brass")
                     else 2, "annotator": "renderer", "split": spec.split})
    rows.sort(key=lambda r: (r["onset_s"], r["source"]))
    return rows


def manifest_row(mixed: MixedClip, stem_paths: dict[str, Path], out_dir: Path) -> dict[str, Any]:
    """The manifest row of a mixed clip: split, sources, offsets and trims in samples,
    levels in dB, scenario and the true onset in seconds and samples."""
    spec = mixed.spec
    sr = mixed.sr

    def part_row(p: PlacedPart) -> dict[str, Any]:
        row: dict[str, Any] = {"part": p.name, "source": p.source.path.name, "source_key": p.source.source.key,
                               "kind": p.source.source.kind, "family": p.source.source.family,
                               "clip_start_sample": p.clip_start, "clip_end_sample": p.clip_end,
                               "clip_start_s": round(p.clip_start / sr, 6), "clip_end_s": round(p.clip_end / sr, 6),
                               "nominal_source_start_sample": p.nominal_start,
                               "source_start_sample": p.source_start,
                               "trim_samples": p.source_start - p.nominal_start, "looped": p.source.source.loop,
                               "gain_db": round(p.gain_db, 4)}
        if p.spec is not None:
            row.update(role=p.spec.role, level_db=p.spec.level_db,
                       cut_sample=None if p.spec.cut_s is None else int(round(p.spec.cut_s * sr)),
                       cut_moved_samples=p.cut_moved)
        return row

    truth = mixed.truth_sample
    return {"clip": f"{spec.clip_id}.wav", "prompt_id": spec.clip_id, "scenario": spec.scenario,
            "split": spec.split, "kind": spec.kind, "family": spec.family, "instructed_s": spec.time_s,
            "true_onset_s": None if truth is None else round(truth / sr, 6), "true_onset_sample": truth,
            "offset_s": None if truth is None else round(truth / sr - spec.time_s, 6),
            "duration_s": spec.duration_s, "sample_rate_hz": sr, "n_samples": int(mixed.samples.size),
            "seed": spec.seed, "fade_ms": FADE_S * 1000.0, "scale_db": round(mixed.scale_db, 4),
            "levels_db": [ly.level_db for ly in spec.layers],
            "sources": list(dict.fromkeys(p.source.path.name for p in mixed.parts)),
            "backing": part_row(mixed.parts[0]), "layers": [part_row(p) for p in mixed.parts[1:]],
            "stems": {k: str(v.relative_to(out_dir)) for k, v in stem_paths.items()}}


# ----------------------------------------------------------------------------- rendering

def decode_sources(sources_dir: Path, keys: Iterable[str], *, config: Config, jobs: int = 1
                   ) -> dict[str, DecodedSource]:
    """Decode the named recordings (in ``jobs`` threads); every file is checked first.

    Raises
    ------
    ClipError
        Naming the first missing file, or a file that cannot be decoded.
    """
    wanted = sorted(set(keys))
    for key in wanted:
        path = source_path(sources_dir, key)
        if not path.is_file():
            raise ClipError(f"{path}: real-corpus source {key!r} not found; --sources must be the "
                            "shared/realdata folder (librosa-data/, vocadito/, beatnet/, sms-tools/)")
    if jobs > 1:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            decoded = list(pool.map(lambda k: decode_source(sources_dir, k, config), wanted))
    else:
        decoded = [decode_source(sources_dir, k, config) for k in wanted]
    return dict(zip(wanted, decoded, strict=True))


def render_real_corpus(
    *,
    out_dir: Path,
    sources_dir: Path,
    specs: Sequence[RealClipSpec] | None = None,
    jobs: int = 1,
    stems: bool = False,
    config: Config | None = None,
    on_done: Callable[[RealClip], None] | None = None,
) -> list[RealClip]:
    """Render the real corpus (or some of its clips) and write the corpus files.

    Parameters
    ----------
    out_dir : Path
        Output folder (see the module docstring for its layout).
    sources_dir : Path
        The ``shared/realdata`` folder.
    specs : sequence of RealClipSpec, optional
        The clips; :data:`REAL_CORPUS` when omitted.
    jobs : int
        Threads that decode the recordings.
    stems : bool
        Also write every part alone to ``stems/<clip_id>/<part>.wav``.
    config : Config, optional
        Configuration; the packaged one when omitted.
    on_done : callable, optional
        Called with each finished clip, e.g. to advance a progress bar.

    Returns
    -------
    clips : list of RealClip
        In the order of ``specs``.

    Raises
    ------
    ParameterError
        If ``jobs`` is not positive, two specs share a clip id, a spec breaks a corpus rule
        or the decoding and writing rates differ.
    ClipError
        If a source file is missing or cannot be decoded (naming the file).
    """
    if jobs < 1:
        raise ParameterError(f"jobs must be a positive number of threads, got {jobs!r}")
    cfg = config if config is not None else load_config()
    chosen = tuple(REAL_CORPUS if specs is None else specs)
    ids = [s.clip_id for s in chosen]
    if len(set(ids)) != len(ids):
        raise ParameterError("two clips of the real corpus share a clip id")
    for s in chosen:
        check_spec(s)
    sp = ScenarioParams.from_config(cfg)
    sr_out = int(sp.render.sample_rate_hz)
    if int(cfg.params.audio.sample_rate_hz) != sr_out:
        raise ParameterError(f"audio.sample_rate_hz ({cfg.params.audio.sample_rate_hz}) must equal "
                             f"render.sample_rate_hz ({sr_out}) so that no resampling moves a truth sample")
    sources = decode_sources(Path(sources_dir), (k for s in chosen for k in s.source_keys), config=cfg, jobs=jobs)
    out_dir = Path(out_dir)
    clips: list[RealClip] = []
    for spec in chosen:
        mixed = mix_clip(spec, sources, peak_dbfs=float(sp.render.peak_dbfs))
        audio_path = out_dir / "clips" / f"{spec.clip_id}.wav"
        write_wav(audio_path, mixed.samples, sr=mixed.sr)
        stem_paths: dict[str, Path] = {}
        if stems:
            for p in mixed.parts:
                stem_paths[p.name] = out_dir / "stems" / spec.clip_id / f"{p.name}.wav"
                write_wav(stem_paths[p.name], p.signal, sr=mixed.sr)
        rc = RealClip(clip_id=spec.clip_id, audio_path=audio_path,
                      prompt=prompt_row(spec, tolerance_s=sp.default_tolerance_s), truth=[truth_row(mixed)],
                      observed=observed_rows(mixed), manifest=manifest_row(mixed, stem_paths, out_dir),
                      stem_paths=stem_paths, scenario=spec.scenario)
        clips.append(rc)
        if on_done is not None:
            on_done(rc)
    write_jsonl(out_dir / "prompts.jsonl", [c.prompt for c in clips])
    write_jsonl(out_dir / "truth.jsonl", [row for c in clips for row in c.truth])
    write_jsonl(out_dir / "observed.jsonl", [row for c in clips for row in c.observed])
    write_jsonl(out_dir / "manifest.jsonl", [c.manifest for c in clips])
    return clips

"""The ``real`` corpus: real recordings laid over other real recordings at exact sample offsets.

Every clip is a backing recording plus one or more *layers* (a solo, a stem, a song, read
speech, an animal call or noise), each placed at an integer sample offset with numpy, so every
true time is known to the sample. The corpus is code: :data:`REAL_SOURCES` names the 38
recordings of ``shared/realdata`` (16 from librosa-data, vocadito and BeatNet, 22 short
sms-tools solos, ensembles and decoys, each a loop) with the split each belongs to (disjoint
by recording), and :data:`REAL_CORPUS` is the seeded list of 333 :class:`RealClipSpec`: the
116 clips of the first sixteen recordings, then the sms-tools clips (appended, so the first
116 keep their ids and audio). Rendering it again
from the same files gives byte-identical clips and identical truth.

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
- **Levels.** A layer's gain puts its active RMS at a seeded level drawn from
  :data:`LEVEL_RANGE_DB` (-18 to 0 dB) relative to the backing's active RMS (the RMS over
  the 2048-sample frames within :data:`ACTIVE_BELOW_LOUD_DB` (30 dB) of the 95th
  percentile frame). The mix is then scaled to ``render.peak_dbfs`` (-1 dBFS) and written
  as mono 24-bit PCM WAV (integer PCM keeps re-renders byte-identical).

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
#: Range of a laid-in layer's level relative to the backing's active RMS, in dB.
LEVEL_RANGE_DB = (-18.0, 0.0)
#: Range of the displacement magnitude of an off-time delivery, in seconds.
OFF_TIME_RANGE_S = (1.0, 3.0)
#: An on-time delivery's truth lies at most this far from the instructed time, in seconds.
ON_TIME_MAX_S = 0.05
#: Scenario names a real clip can carry.
SCENARIOS = ("on_time", "off_time", "busy_decoy", "pre_existing", "absent", "speech_decoy",
             "animal_decoy", "noise_decoy")
#: How a prompt names each family's target.
TARGET_NAMES = {"percussion": "drums", "vocals": "vocals", "brass": "trumpet", "strings": "strings",
                "piano": "piano", "woodwinds": "woodwinds", "keys": "organ", "plucked": "vibraphone"}


# ----------------------------------------------------------------------------- sources

@dataclass(frozen=True)
class RealSource:
    """One recording of ``shared/realdata`` and what the corpus may do with it.

    Attributes
    ----------
    key : str
        Short name used by the clip specs.
    path : str
        Path relative to the sources folder.
    split : str
        ``dev`` or ``validation``: the only split whose clips may use the recording.
    kind : str
        ``music``, ``speech``, ``animal`` or ``noise``.
    family : str or None
        The formats §1 family a layer of this recording brings in (None: backing only, or not music).
    contains : tuple of str
        Every formats §1 family heard in the usable segment (from RMS envelopes, a percussive /
        harmonic split and the musicnn tagger); checked against every clip's truth.
    segment_s : tuple of float
        The usable stretch ``(start, end)`` in seconds of the recording; a loop tiles it (its
        end clipped to the recording's length).
    loop : bool
        The recording is a loop: a layer or backing tiles ``segment_s`` with that period.
    phrase : str
        Style phrase of a prompt when the recording is the backing.
    """

    key: str
    path: str
    split: str
    kind: str
    family: str | None
    contains: tuple[str, ...]
    segment_s: tuple[float, float]
    loop: bool = False
    phrase: str = ""


_LD = "librosa-data/"
_SMS = "sms-tools/"


def _sms(key: str, name: str, split: str, kind: str, family: str | None, contains: tuple[str, ...],
         segment_s: tuple[float, float], phrase: str = "") -> RealSource:
    """An sms-tools recording (1.2-9.4 s): always a loop over its audible ``segment_s``."""
    return RealSource(key, f"{_SMS}{name}.wav", split, kind, family, contains, segment_s, loop=True, phrase=phrase)


#: The 22 sms-tools recordings used (``sax-phrase-short.wav`` is not: it is ``sax-phrase.wav``
#: from 6.415 s on, sample for sample, so it cannot sit in the other split). Cello-double and
#: cello-double-2 are two takes on one cello (other notes over the same open D).
_SMS_SOURCES = (
    # dev: strings, woodwinds, vocals, percussion, and the only brass-note, organ, piano and
    # vibraphone recordings (these families have no other dev delivery)
    _sms("cello_double", "cello-double", "dev", "music", "strings", ("strings",), (0.0, 5.05)),
    _sms("cello_phrase", "cello-phrase", "dev", "music", "strings", ("strings",), (0.0, 8.3)),
    # the phrase's two breaths (1.13-2.18 s, 5.09-6.16 s) are silent: the loop tiles the longest
    # audible stretch between them
    _sms("sax_phrase", "sax-phrase", "dev", "music", "woodwinds", ("woodwinds",), (2.15, 5.1)),
    _sms("flute", "flute-A4", "dev", "music", "woodwinds", ("woodwinds",), (0.0, 2.1)),
    _sms("singing_female", "singing-female", "dev", "music", "vocals", ("vocals",), (0.0, 5.85)),
    _sms("vignesh", "vignesh", "dev", "music", "vocals", ("vocals",), (0.0, 3.09)),
    _sms("bendir", "bendir", "dev", "music", "percussion", ("percussion",), (0.0, 2.6)),
    _sms("trumpet_a4", "trumpet-A4", "dev", "music", "brass", ("brass",), (0.0, 2.6)),
    _sms("organ", "organ-C3", "dev", "music", "keys", ("keys",), (0.0, 5.9)),
    _sms("piano_notes", "piano", "dev", "music", "piano", ("piano",), (0.0, 3.84)),
    _sms("vibraphone", "vibraphone-C6", "dev", "music", "plucked", ("plucked",), (0.0, 2.75)),
    _sms("carnatic", "carnatic", "dev", "music", None, ("vocals", "percussion", "strings", "plucked"),
         (0.0, 3.41), phrase="Carnatic ensemble"),
    _sms("speech_female", "speech-female", "dev", "speech", None, (), (0.0, 3.99)),
    _sms("rain", "rain", "dev", "noise", None, (), (0.0, 7.05)),
    # validation
    _sms("cello_double_2", "cello-double-2", "validation", "music", "strings", ("strings",), (0.3, 5.9)),
    _sms("violin", "violin-B3", "validation", "music", "strings", ("strings",), (0.0, 2.15)),
    _sms("oboe", "oboe-A4", "validation", "music", "woodwinds", ("woodwinds",), (0.0, 3.4)),
    _sms("soprano", "soprano-E4", "validation", "music", "vocals", ("vocals",), (0.0, 1.17)),
    _sms("mridangam", "mridangam", "validation", "music", "percussion", ("percussion",), (0.0, 1.97)),
    _sms("orchestra", "orchestra", "validation", "music", None,
         ("strings", "bass", "woodwinds", "brass", "percussion", "plucked"), (0.0, 6.33), phrase="orchestral"),
    _sms("speech_male", "speech-male", "validation", "speech", None, (), (0.0, 5.63)),
    _sms("ocean", "ocean", "validation", "noise", None, (), (0.0, 6.43)),
)

#: The 38 recordings, each in exactly one split.
REAL_SOURCES: dict[str, RealSource] = {s.key: s for s in (
    # dev
    RealSource("drum_bass", _LD + "admiralbob77_-_Choice_-_Drum-bass.hq.ogg", "dev", "music", "percussion",
               ("percussion", "bass"), (0.0, 24.85), phrase="drum and bass groove"),
    RealSource("folk_song", _LD + "Karissa_Hobbs_-_Lets_Go_Fishin.hq.ogg", "dev", "music", "vocals",
               ("vocals", "guitar", "percussion"), (0.0, 131.0), phrase="acoustic folk"),
    RealSource("string_orchestra",
               _LD + "Hungarian_Dance_number_5_-_Allegro_in_F_sharp_minor_(string_orchestra).hq.ogg",
               "dev", "music", "strings", ("strings",), (0.0, 34.0), phrase="string orchestra"),
    RealSource("celesta", _LD + "Kevin_MacLeod_-_P_I_Tchaikovsky_Dance_of_the_Sugar_Plum_Fairy.hq.ogg",
               "dev", "music", None, ("plucked", "strings", "woodwinds", "bass"), (11.0, 118.0),
               phrase="orchestral celesta"),
    RealSource("speech_f", _LD + "198-209-0000.hq.ogg", "dev", "speech", None, (), (0.0, 13.9)),
    RealSource("speech_m", _LD + "3436-172162-0000.hq.ogg", "dev", "speech", None, (), (0.0, 16.7)),
    RealSource("whale", _LD + "glacier-bay-humpback.hq.ogg", "dev", "animal", None, (), (0.0, 64.8)),
    RealSource("robin", _LD + "456440__inspectorj__bird-whistling-robin-single-13.hq.ogg", "dev",
               "animal", None, (), (0.0, 2.69)),
    # validation
    RealSource("kick808", "beatnet/808kick120bpm.mp3", "validation", "music", "percussion",
               ("percussion",), (0.0, 10.0), loop=True, phrase="808 beat"),
    RealSource("vocadito", "vocadito/Audio/vocadito_1.wav", "validation", "music", "vocals",
               ("vocals",), (0.0, 12.0)),
    RealSource("trumpet", _LD + "sorohanro_-_solo-trumpet-06.hq.ogg", "validation", "music", "brass",
               ("brass",), (0.0, 5.33336), loop=True),  # the whole file: 235201 samples
    RealSource("ragtime", _LD + "442789__lena-orsa__happy-music-pistachio-ice-cream-ragtime.hq.ogg",
               "validation", "music", "piano", ("piano",), (0.0, 70.6), phrase="ragtime piano"),
    RealSource("waltz", _LD + "147793__setuniman__sweet-waltz-0i-22mi.hq.ogg", "validation", "music",
               None, ("plucked",), (0.0, 28.8), phrase="gentle waltz"),
    RealSource("jazz_combo", _LD + "Kevin_MacLeod_-_Vibe_Ace.hq.ogg", "validation", "music", None,
               ("percussion", "bass", "plucked"), (8.0, 43.5), phrase="laid-back jazz"),
    RealSource("speech_m2", _LD + "5703-47212-0000.hq.ogg", "validation", "speech", None, (), (0.0, 14.8)),
    RealSource("dog", _LD + "pibble.hq.ogg", "validation", "animal", None, (), (0.0, 46.9)),
    *_SMS_SOURCES,
)}


# ----------------------------------------------------------------------------- clip specs

@dataclass(frozen=True)
class LayerSpec:
    """One recording laid into a clip.

    Attributes
    ----------
    source : str
        Key of :data:`REAL_SOURCES`.
    role : str
        ``target`` (the instructed family's delivery), ``before`` (the target family
        already sounding from the clip start) or ``other`` (a different recording: a decoy,
        speech, an animal, or the layer entering over a pre-existing target).
    start_s : float
        Clip time of the layer's first sample, in seconds (rounded to the sample).
    from_s : float
        Nominal source position of its first sample, in seconds (moved forward to the first
        audible sample).
    cut_s : float or None
        Clip time where the layer is cut (moved back to its last audible sample); None: it
        runs to the end of its usable segment or of the clip.
    level_db : float
        Level of its active RMS relative to the backing's, in dB.
    """

    source: str
    role: str
    start_s: float = 0.0
    from_s: float = 0.0
    cut_s: float | None = None
    level_db: float = 0.0


@dataclass(frozen=True)
class RealClipSpec:
    """One clip of the real corpus: a backing, its layers and the instructed event.

    Attributes
    ----------
    clip_id : str
        Clip and prompt id.
    scenario : str
        One of :data:`SCENARIOS`.
    kind : str
        ``instrument_entry`` or ``instrument_exit``.
    family : str
        The family the prompt asks for.
    time_s : float
        Instructed time in seconds.
    duration_s : float
        Clip length in seconds (also the prompt's duration).
    backing : str
        Key of the backing recording.
    backing_from_s : float
        Source position of the backing's first sample, in seconds (moved forward to the
        first audible sample).
    layers : tuple of LayerSpec
        The recordings laid in.
    seed : int
        Seed of the drawn levels, offsets and wording.
    """

    clip_id: str
    scenario: str
    kind: str
    family: str
    time_s: float
    duration_s: float
    backing: str
    backing_from_s: float
    layers: tuple[LayerSpec, ...]
    seed: int

    @property
    def split(self) -> str:
        """The split of the backing (every source of a clip shares it)."""
        return REAL_SOURCES[self.backing].split

    @property
    def source_keys(self) -> tuple[str, ...]:
        """Keys of every recording the clip uses, backing first."""
        return (self.backing, *(ly.source for ly in self.layers))

    @property
    def occurred(self) -> bool:
        """Whether the instructed event is delivered (on or off time)."""
        return self.scenario in ("on_time", "off_time")


#: A layer as :meth:`_Book._add` takes it: (source, role, clip start, source from, cut or None), in seconds.
_LayerRow = tuple[str, str, float, float, float | None]


def _layer(src: str, role: str, kind: str, t: float, lfrom: float) -> _LayerRow:
    """A layer that enters at ``t`` (``instrument_entry``), or plays from the clip start and is cut at ``t``."""
    return (src, role, t, lfrom, None) if kind == "instrument_entry" else (src, role, 0.0, lfrom, t)


def _rng(seed: int, what: str) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([int(seed), zlib.crc32(what.encode())]))


class _Book:
    """Accumulates the corpus definition; every helper draws its levels from the clip seed."""

    def __init__(self, base_seed: int) -> None:
        self.specs: list[RealClipSpec] = []
        self.seed = base_seed

    def _add(self, scenario: str, kind: str, family: str, t: float, dur: float, backing: str,
             bfrom: float, layers: Sequence[_LayerRow]) -> None:
        self.seed += 1
        rng = _rng(self.seed, "levels")
        lo, hi = LEVEL_RANGE_DB
        built = tuple(LayerSpec(src, role, start, lfrom, cut, round(float(rng.uniform(lo, hi)), 1))
                      for src, role, start, lfrom, cut in layers)
        n = len(self.specs) + 1
        short = "entry" if kind == "instrument_entry" else "exit"
        cid = f"real-{n:03d}-{short}-{family}-{scenario.replace('_', '-')}"
        self.specs.append(RealClipSpec(cid, scenario, kind, family, float(t), float(dur), backing,
                                       float(bfrom), built, self.seed))

    def _offset(self, t: float, dur: float, offset_s: float | None) -> float:
        if offset_s is not None:
            return float(offset_s)
        rng = _rng(self.seed + 1, "offset")
        mag = round(float(rng.uniform(*OFF_TIME_RANGE_S)), 2)
        sign = 1.0 if rng.random() < 0.5 else -1.0
        if not 2.0 <= t + sign * mag <= dur - 3.0:
            sign = -sign
        return sign * mag

    def _deliver(self, kind: str, src: str, backing: str, t: float, dur: float, *, bfrom: float, lfrom: float,
                 off: bool, offset_s: float | None) -> None:
        fam = _family(src)
        d = self._offset(t, dur, offset_s) if off else 0.0
        self._add("off_time" if off else "on_time", kind, fam, t, dur, backing, bfrom,
                  [_layer(src, "target", kind, t + d, lfrom)])

    def entry(self, src: str, backing: str, t: float, dur: float, *, bfrom: float = 0.0,
              lfrom: float = 0.0, off: bool = False, offset_s: float | None = None) -> None:
        """The layer ``src`` enters at ``t`` (``off``: at ``t`` plus a 1-3 s offset)."""
        self._deliver("instrument_entry", src, backing, t, dur, bfrom=bfrom, lfrom=lfrom, off=off, offset_s=offset_s)

    def exit(self, src: str, backing: str, t: float, dur: float, *, bfrom: float = 0.0,
             lfrom: float = 0.0, off: bool = False, offset_s: float | None = None) -> None:
        """The layer ``src`` plays from the clip start and is cut at ``t`` (plus an offset)."""
        self._deliver("instrument_exit", src, backing, t, dur, bfrom=bfrom, lfrom=lfrom, off=off, offset_s=offset_s)

    def busy(self, family: str, src: str, backing: str, t: float, dur: float, *, bfrom: float = 0.0,
             lfrom: float = 0.0, kind: str = "instrument_entry") -> None:
        """A different family's recording enters (or, for an exit, leaves) at ``t``."""
        self._add("busy_decoy", kind, family, t, dur, backing, bfrom, [_layer(src, "other", kind, t, lfrom)])

    def pre(self, family: str, src: str, backing: str, t: float, dur: float, *, bfrom: float = 0.0,
            lfrom: float = 0.0, before: str | None = None, before_from: float = 0.0) -> None:
        """The target family sounds from the clip start (in the backing or the ``before``
        layer) and ``src`` enters at ``t``."""
        layers: list[_LayerRow] = []
        if before is not None:
            layers.append((before, "before", 0.0, before_from, None))
        layers.append((src, "other", t, lfrom, None))
        self._add("pre_existing", "instrument_entry", family, t, dur, backing, bfrom, layers)

    def absent(self, family: str, backing: str, t: float, dur: float, *, bfrom: float = 0.0) -> None:
        """Nothing of the target family, nothing changes: the backing alone."""
        self._add("absent", "instrument_entry", family, t, dur, backing, bfrom, [])

    def decoy(self, family: str, src: str, backing: str, t: float, dur: float, *, bfrom: float = 0.0,
              lfrom: float = 0.0) -> None:
        """Read speech, an animal call or noise enters at ``t``; the target family never sounds."""
        scenario = {"speech": "speech_decoy", "noise": "noise_decoy"}.get(REAL_SOURCES[src].kind, "animal_decoy")
        self._add(scenario, "instrument_entry", family, t, dur, backing, bfrom, [(src, "other", t, lfrom, None)])


def _family(src: str) -> str:
    fam = REAL_SOURCES[src].family
    if fam is None:
        raise ParameterError(f"source {src!r} brings in no instrument family; it can only be a backing or a decoy")
    return fam


def _dev_specs(book: _Book) -> None:
    """Dev: drum-bass stem, folk song, string orchestra; celesta piece; two readers; whale, robin."""
    b = book
    # percussion: the drum-and-bass stem
    b.entry("drum_bass", "celesta", 6.0, 24.0, bfrom=20.0, lfrom=0.0)
    b.entry("drum_bass", "celesta", 14.0, 26.0, bfrom=40.0, lfrom=4.0)
    b.entry("drum_bass", "string_orchestra", 4.5, 24.0, bfrom=0.0, lfrom=2.0)
    b.entry("drum_bass", "string_orchestra", 7.0, 22.0, bfrom=0.0, lfrom=8.0)
    b.entry("drum_bass", "celesta", 9.0, 24.0, bfrom=60.0, lfrom=1.0, off=True)
    b.entry("drum_bass", "string_orchestra", 7.0, 24.0, bfrom=0.0, lfrom=3.0, off=True)
    b.exit("drum_bass", "celesta", 9.0, 24.0, bfrom=30.0, lfrom=0.5)
    b.exit("drum_bass", "string_orchestra", 8.0, 24.0, bfrom=0.0, lfrom=5.0)
    b.exit("drum_bass", "celesta", 10.0, 24.0, bfrom=50.0, lfrom=2.0, off=True)
    # vocals: the folk song's sung passages (37-54 s, 21-28 s, 63-70 s of the recording)
    b.entry("folk_song", "celesta", 7.0, 24.0, bfrom=25.0, lfrom=40.0)
    b.entry("folk_song", "celesta", 12.0, 26.0, bfrom=70.0, lfrom=42.5)
    b.entry("folk_song", "string_orchestra", 5.0, 24.0, bfrom=0.0, lfrom=21.5)
    b.entry("folk_song", "string_orchestra", 6.0, 24.0, bfrom=1.5, lfrom=44.0)
    b.entry("folk_song", "drum_bass", 8.0, 22.0, bfrom=1.0, lfrom=63.5)
    b.entry("folk_song", "celesta", 10.0, 24.0, bfrom=85.0, lfrom=45.0, off=True)
    b.entry("folk_song", "string_orchestra", 8.0, 24.0, bfrom=0.0, lfrom=39.5, off=True)
    b.exit("folk_song", "celesta", 10.0, 24.0, bfrom=35.0, lfrom=38.0)
    b.exit("folk_song", "string_orchestra", 8.0, 24.0, bfrom=1.0, lfrom=42.0)
    b.exit("folk_song", "drum_bass", 6.0, 22.0, bfrom=2.0, lfrom=38.5, off=True)
    # strings: the string orchestra
    b.entry("string_orchestra", "drum_bass", 6.0, 24.0, bfrom=0.0, lfrom=0.0)
    b.entry("string_orchestra", "drum_bass", 11.0, 22.0, bfrom=2.0, lfrom=8.0)
    b.entry("string_orchestra", "drum_bass", 4.0, 24.0, bfrom=0.5, lfrom=16.0)
    b.entry("string_orchestra", "folk_song", 8.0, 24.0, bfrom=40.0, lfrom=3.0)
    b.entry("string_orchestra", "folk_song", 19.0, 24.0, bfrom=60.0, lfrom=5.0)
    b.entry("string_orchestra", "drum_bass", 9.0, 24.0, bfrom=0.0, lfrom=10.0, off=True)
    b.entry("string_orchestra", "folk_song", 12.0, 26.0, bfrom=90.0, lfrom=1.0, off=True)
    b.exit("string_orchestra", "drum_bass", 10.0, 24.0, bfrom=0.0, lfrom=0.3)
    b.exit("string_orchestra", "folk_song", 14.0, 26.0, bfrom=20.0, lfrom=6.0)
    b.exit("string_orchestra", "drum_bass", 9.0, 22.0, bfrom=2.0, lfrom=2.0, off=True)
    # negatives
    b.busy("percussion", "string_orchestra", "celesta", 8.0, 24.0, bfrom=15.0, lfrom=0.0)
    b.busy("vocals", "drum_bass", "celesta", 7.0, 24.0, bfrom=45.0, lfrom=0.0)
    b.busy("strings", "drum_bass", "folk_song", 9.0, 24.0, bfrom=100.0, lfrom=3.0)
    b.busy("piano", "drum_bass", "string_orchestra", 6.0, 24.0, bfrom=0.0, lfrom=6.0)
    b.busy("brass", "folk_song", "string_orchestra", 8.0, 24.0, bfrom=0.0, lfrom=40.0)
    b.busy("vocals", "string_orchestra", "drum_bass", 9.0, 22.0, bfrom=1.0, lfrom=4.0, kind="instrument_exit")
    b.pre("percussion", "string_orchestra", "drum_bass", 8.0, 22.0, bfrom=0.5, lfrom=0.0)
    b.pre("vocals", "string_orchestra", "folk_song", 7.0, 24.0, bfrom=38.5, lfrom=2.0)
    b.pre("strings", "drum_bass", "string_orchestra", 9.0, 24.0, bfrom=0.0, lfrom=3.0)
    b.absent("percussion", "celesta", 8.0, 24.0, bfrom=55.0)
    b.absent("vocals", "string_orchestra", 7.0, 24.0, bfrom=0.0)
    b.absent("strings", "drum_bass", 7.0, 22.0, bfrom=1.0)
    b.absent("piano", "string_orchestra", 6.0, 24.0, bfrom=2.0)
    b.absent("brass", "drum_bass", 12.0, 24.0, bfrom=0.0)
    b.decoy("vocals", "speech_f", "celesta", 6.0, 24.0, bfrom=22.0)
    b.decoy("vocals", "speech_f", "string_orchestra", 8.0, 24.0, bfrom=0.0)
    b.decoy("vocals", "speech_m", "drum_bass", 5.0, 22.0, bfrom=2.0)
    b.decoy("vocals", "speech_m", "celesta", 10.0, 26.0, bfrom=75.0)
    b.decoy("vocals", "whale", "celesta", 8.0, 24.0, bfrom=32.0, lfrom=10.0)
    b.decoy("strings", "whale", "drum_bass", 7.0, 22.0, bfrom=0.0, lfrom=30.0)
    b.decoy("vocals", "robin", "string_orchestra", 7.5, 24.0, bfrom=0.0)


def _validation_specs(book: _Book) -> None:
    """Validation: 808 kick, vocadito (before 12 s), ragtime, trumpet; waltz, jazz combo; a
    third reader; the dog."""
    b = book
    # percussion: the 808 kick pattern (looped with its own 10 s period)
    b.entry("kick808", "waltz", 6.0, 24.0, bfrom=1.0)
    b.entry("kick808", "waltz", 12.0, 26.0, bfrom=0.0)
    b.entry("kick808", "ragtime", 4.5, 24.0, bfrom=10.0)
    b.entry("kick808", "ragtime", 9.0, 24.0, bfrom=30.0, lfrom=2.0)
    b.entry("kick808", "waltz", 10.0, 24.0, bfrom=2.0, off=True)
    b.entry("kick808", "ragtime", 8.0, 24.0, bfrom=40.0, off=True)
    b.exit("kick808", "waltz", 8.0, 24.0, bfrom=1.5)
    b.exit("kick808", "ragtime", 14.0, 24.0, bfrom=20.0)
    b.exit("kick808", "waltz", 11.0, 24.0, bfrom=0.5, off=True)
    # vocals: vocadito before 12 s (its first audible sample 0.578 s; notes 0.66-12.07 s)
    b.entry("vocadito", "waltz", 5.0, 24.0, bfrom=2.0)
    b.entry("vocadito", "waltz", 10.0, 24.0, bfrom=0.0)
    b.entry("vocadito", "jazz_combo", 7.0, 24.0, bfrom=10.0)
    b.entry("vocadito", "jazz_combo", 4.0, 24.0, bfrom=16.0)
    b.entry("vocadito", "ragtime", 8.0, 24.0, bfrom=5.0)
    b.entry("vocadito", "kick808", 6.0, 22.0, bfrom=0.0)
    b.entry("vocadito", "waltz", 9.0, 24.0, bfrom=1.0, off=True)
    b.entry("vocadito", "ragtime", 7.0, 24.0, bfrom=45.0, off=True)
    b.exit("vocadito", "waltz", 5.0, 24.0, bfrom=3.0)
    b.exit("vocadito", "jazz_combo", 8.0, 24.0, bfrom=12.0)
    b.exit("vocadito", "ragtime", 10.5, 24.0, bfrom=25.0)
    b.exit("vocadito", "waltz", 6.0, 24.0, bfrom=0.0, off=True, offset_s=2.0)
    b.exit("vocadito", "jazz_combo", 9.0, 24.0, bfrom=9.0, off=True, offset_s=-2.0)
    # piano: the ragtime
    b.entry("ragtime", "waltz", 6.0, 24.0, bfrom=1.0, lfrom=0.0)
    b.entry("ragtime", "waltz", 12.0, 26.0, bfrom=0.0, lfrom=20.0)
    b.entry("ragtime", "waltz", 4.0, 24.0, bfrom=3.0, lfrom=35.0)
    b.entry("ragtime", "jazz_combo", 8.0, 24.0, bfrom=16.0, lfrom=10.0)
    b.entry("ragtime", "jazz_combo", 20.0, 24.0, bfrom=18.0, lfrom=46.0)
    b.entry("ragtime", "kick808", 10.0, 24.0, bfrom=0.0, lfrom=5.0)
    b.entry("ragtime", "waltz", 9.0, 24.0, bfrom=2.0, lfrom=15.0, off=True)
    b.entry("ragtime", "kick808", 12.0, 26.0, bfrom=0.0, lfrom=40.0, off=True)
    b.exit("ragtime", "waltz", 9.0, 24.0, bfrom=1.0, lfrom=3.0)
    b.exit("ragtime", "jazz_combo", 12.0, 24.0, bfrom=17.0, lfrom=25.0)
    b.exit("ragtime", "kick808", 15.0, 24.0, bfrom=0.0, lfrom=45.0)
    b.exit("ragtime", "waltz", 10.0, 24.0, bfrom=0.0, lfrom=8.0, off=True)
    # brass: the trumpet loop (a 3.0 s phrase in a 5.333 s period)
    b.entry("trumpet", "waltz", 7.0, 24.0, bfrom=1.0)
    b.entry("trumpet", "waltz", 15.0, 24.0, bfrom=3.0)
    b.entry("trumpet", "ragtime", 5.0, 24.0, bfrom=12.0)
    b.entry("trumpet", "ragtime", 11.0, 24.0, bfrom=44.0)
    b.entry("trumpet", "jazz_combo", 9.0, 24.0, bfrom=11.0)
    b.entry("trumpet", "jazz_combo", 21.0, 25.0, bfrom=15.0)
    b.entry("trumpet", "waltz", 10.0, 24.0, bfrom=2.0, off=True)
    b.entry("trumpet", "ragtime", 8.0, 24.0, bfrom=33.0, off=True)
    b.exit("trumpet", "waltz", 6.0, 24.0, bfrom=0.5)
    b.exit("trumpet", "ragtime", 13.0, 24.0, bfrom=15.0, lfrom=0.3)
    b.exit("trumpet", "jazz_combo", 8.0, 24.0, bfrom=14.0)
    b.exit("trumpet", "waltz", 9.0, 24.0, bfrom=2.5, off=True, offset_s=-1.5)
    # negatives
    b.busy("piano", "trumpet", "waltz", 8.0, 24.0, bfrom=1.0)
    b.busy("percussion", "ragtime", "waltz", 7.0, 24.0, bfrom=2.0, lfrom=12.0)
    b.busy("vocals", "trumpet", "jazz_combo", 10.0, 24.0, bfrom=13.0)
    b.busy("brass", "vocadito", "waltz", 6.0, 24.0, bfrom=0.0)
    b.busy("piano", "kick808", "waltz", 9.0, 24.0, bfrom=1.5)
    b.busy("piano", "trumpet", "waltz", 13.0, 24.0, bfrom=0.0, lfrom=0.3, kind="instrument_exit")
    b.pre("piano", "trumpet", "ragtime", 7.0, 24.0, bfrom=8.0)
    b.pre("percussion", "ragtime", "jazz_combo", 9.0, 24.0, bfrom=9.0, lfrom=30.0)
    b.pre("vocals", "trumpet", "waltz", 8.0, 24.0, bfrom=1.0, before="vocadito")
    b.pre("brass", "kick808", "waltz", 7.5, 24.0, bfrom=2.0, before="trumpet")
    b.absent("piano", "waltz", 16.0, 24.0, bfrom=1.0)
    b.absent("vocals", "ragtime", 9.0, 24.0, bfrom=15.0)
    b.absent("brass", "waltz", 18.0, 24.0, bfrom=3.0)
    b.absent("percussion", "waltz", 16.0, 24.0, bfrom=2.0)
    b.decoy("vocals", "speech_m2", "waltz", 7.0, 24.0, bfrom=1.0)
    b.decoy("vocals", "speech_m2", "jazz_combo", 9.0, 24.0, bfrom=12.0)
    b.decoy("vocals", "speech_m2", "ragtime", 5.0, 24.0, bfrom=20.0)
    b.decoy("vocals", "dog", "waltz", 8.0, 24.0, bfrom=2.0, lfrom=3.0)
    b.decoy("vocals", "dog", "ragtime", 6.0, 24.0, bfrom=35.0, lfrom=10.0)
    b.decoy("brass", "dog", "waltz", 10.0, 24.0, bfrom=0.0, lfrom=6.5)


#: A delivery row of :func:`_deliver_rows`: (entry or exit, source, backing, time, clip length,
#: backing from, layer from, off time), times in seconds.
_Delivery = tuple[str, str, str, float, float, float, float, bool]


def _deliver_rows(book: _Book, rows: Iterable[_Delivery]) -> None:
    """Add an on- or off-time entrance (``"in"``) or exit (``"out"``) for every row."""
    for how, src, backing, t, dur, bfrom, lfrom, off in rows:
        add = book.entry if how == "in" else book.exit
        add(src, backing, t, dur, bfrom=bfrom, lfrom=lfrom, off=off)


def _sms_dev_specs(book: _Book) -> None:
    """Dev, sms-tools: cello (two), saxophone and flute, female and Carnatic singing, bendir,
    trumpet note, organ, piano notes, vibraphone; the Carnatic ensemble; a female reader; rain.
    Over the dev backings that lack each family (celesta, string orchestra, drum-bass, folk song)."""
    b = book
    _deliver_rows(b, [
        # strings: two cello loops (the celesta piece and the string orchestra hold strings)
        ("in", "cello_double", "drum_bass", 6.0, 24.0, 0.0, 0.0, False),
        ("in", "cello_phrase", "drum_bass", 9.0, 22.0, 2.0, 0.0, False),
        ("in", "cello_phrase", "folk_song", 7.0, 24.0, 30.0, 2.0, False),
        ("in", "cello_double", "folk_song", 12.0, 24.0, 80.0, 0.0, False),
        ("in", "cello_double", "drum_bass", 5.0, 24.0, 0.5, 1.0, False),
        ("in", "cello_phrase", "folk_song", 10.0, 24.0, 100.0, 0.0, True),
        ("in", "cello_double", "drum_bass", 8.0, 22.0, 1.0, 0.0, True),
        ("out", "cello_phrase", "drum_bass", 10.0, 24.0, 0.0, 0.0, False),
        ("out", "cello_double", "folk_song", 9.0, 24.0, 50.0, 0.0, False),
        ("out", "cello_phrase", "folk_song", 14.0, 24.0, 10.0, 0.0, True),
        # woodwinds: the saxophone phrase and the flute note (the celesta piece holds woodwinds)
        ("in", "sax_phrase", "string_orchestra", 6.0, 24.0, 0.0, 2.15, False),
        ("in", "flute", "string_orchestra", 8.0, 24.0, 5.0, 0.0, False),
        ("in", "sax_phrase", "drum_bass", 7.0, 22.0, 1.0, 2.15, False),
        ("in", "flute", "folk_song", 11.0, 24.0, 60.0, 0.0, False),
        ("in", "sax_phrase", "folk_song", 5.0, 24.0, 15.0, 3.0, False),
        ("in", "flute", "drum_bass", 9.0, 24.0, 0.0, 0.0, True),
        ("in", "sax_phrase", "string_orchestra", 10.0, 24.0, 8.0, 2.15, True),
        ("out", "flute", "string_orchestra", 9.0, 24.0, 2.0, 0.0, False),
        ("out", "sax_phrase", "folk_song", 12.0, 24.0, 95.0, 2.15, False),
        ("out", "sax_phrase", "drum_bass", 8.0, 22.0, 2.5, 2.15, True),
        # vocals: female singing and the Carnatic phrase (the folk song holds vocals)
        ("in", "singing_female", "celesta", 7.0, 24.0, 20.0, 0.0, False),
        ("in", "vignesh", "string_orchestra", 6.0, 24.0, 0.0, 0.0, False),
        ("in", "singing_female", "drum_bass", 9.0, 22.0, 1.0, 0.0, False),
        ("in", "vignesh", "celesta", 12.0, 26.0, 60.0, 0.0, False),
        ("in", "singing_female", "string_orchestra", 5.0, 24.0, 4.0, 1.5, False),
        ("in", "vignesh", "drum_bass", 8.0, 24.0, 0.0, 0.0, True),
        ("in", "singing_female", "celesta", 10.0, 24.0, 90.0, 0.0, True),
        ("out", "vignesh", "string_orchestra", 9.0, 24.0, 1.0, 0.0, False),
        ("out", "singing_female", "celesta", 13.0, 24.0, 40.0, 0.0, False),
        ("out", "vignesh", "celesta", 8.0, 24.0, 70.0, 0.0, True),
        # percussion: the bendir strokes (drum-bass and the folk song hold percussion)
        ("in", "bendir", "celesta", 6.0, 24.0, 14.0, 0.0, False),
        ("in", "bendir", "string_orchestra", 8.0, 24.0, 0.0, 0.0, False),
        ("in", "bendir", "celesta", 11.0, 24.0, 65.0, 0.0, False),
        ("in", "bendir", "string_orchestra", 5.0, 24.0, 3.0, 1.8, False),
        ("in", "bendir", "celesta", 13.0, 26.0, 80.0, 0.0, False),
        ("in", "bendir", "string_orchestra", 9.0, 24.0, 6.0, 0.0, True),
        ("in", "bendir", "celesta", 7.0, 24.0, 92.0, 0.0, True),
        ("out", "bendir", "celesta", 10.0, 24.0, 25.0, 0.0, False),
        ("out", "bendir", "string_orchestra", 7.5, 24.0, 2.0, 0.0, False),
        # brass: the trumpet note
        ("in", "trumpet_a4", "celesta", 6.0, 24.0, 18.0, 0.0, False),
        ("in", "trumpet_a4", "string_orchestra", 9.0, 24.0, 0.0, 0.0, False),
        ("in", "trumpet_a4", "drum_bass", 7.0, 22.0, 2.0, 0.0, False),
        ("in", "trumpet_a4", "folk_song", 12.0, 24.0, 70.0, 0.0, False),
        ("in", "trumpet_a4", "celesta", 10.0, 24.0, 85.0, 0.0, True),
        ("in", "trumpet_a4", "string_orchestra", 8.0, 24.0, 6.0, 0.0, True),
        ("out", "trumpet_a4", "drum_bass", 9.0, 24.0, 0.5, 0.0, False),
        ("out", "trumpet_a4", "folk_song", 11.0, 24.0, 20.0, 0.0, False),
        ("out", "trumpet_a4", "celesta", 8.0, 24.0, 50.0, 0.0, True),
        # keys: the organ note (not over the celesta, a keyboard)
        ("in", "organ", "string_orchestra", 7.0, 24.0, 1.0, 0.0, False),
        ("in", "organ", "drum_bass", 6.0, 22.0, 0.0, 0.0, False),
        ("in", "organ", "folk_song", 10.0, 24.0, 45.0, 0.0, False),
        ("in", "organ", "string_orchestra", 12.0, 24.0, 9.0, 0.0, False),
        ("in", "organ", "folk_song", 8.0, 24.0, 105.0, 0.0, True),
        ("in", "organ", "drum_bass", 9.0, 24.0, 0.0, 0.0, True),
        ("out", "organ", "string_orchestra", 10.0, 24.0, 3.0, 0.0, False),
        ("out", "organ", "folk_song", 8.0, 24.0, 85.0, 0.0, False),
        ("out", "organ", "drum_bass", 11.0, 24.0, 0.8, 0.0, True),
        # piano: the piano notes (not over the celesta)
        ("in", "piano_notes", "string_orchestra", 6.0, 24.0, 0.0, 0.0, False),
        ("in", "piano_notes", "drum_bass", 8.0, 24.0, 0.5, 0.0, False),
        ("in", "piano_notes", "folk_song", 11.0, 24.0, 55.0, 0.0, False),
        ("in", "piano_notes", "string_orchestra", 9.0, 24.0, 7.0, 0.0, False),
        ("in", "piano_notes", "folk_song", 7.0, 24.0, 105.0, 0.0, True),
        ("in", "piano_notes", "drum_bass", 10.0, 22.0, 2.0, 0.0, True),
        ("out", "piano_notes", "string_orchestra", 8.0, 24.0, 2.0, 0.0, False),
        ("out", "piano_notes", "folk_song", 12.0, 24.0, 65.0, 0.0, False),
        # plucked: the vibraphone note (the celesta piece holds plucked; the folk song a guitar)
        ("in", "vibraphone", "string_orchestra", 6.0, 24.0, 0.0, 0.0, False),
        ("in", "vibraphone", "drum_bass", 7.0, 24.0, 0.0, 0.0, False),
        ("in", "vibraphone", "string_orchestra", 10.0, 24.0, 8.0, 0.0, False),
        ("in", "vibraphone", "drum_bass", 5.0, 22.0, 2.5, 0.0, False),
        ("in", "vibraphone", "string_orchestra", 8.0, 24.0, 4.0, 0.0, True),
        ("in", "vibraphone", "drum_bass", 9.0, 22.0, 1.5, 0.0, True),
        ("out", "vibraphone", "string_orchestra", 9.0, 24.0, 2.0, 0.0, False),
        ("out", "vibraphone", "drum_bass", 8.0, 24.0, 0.3, 0.0, False),
        ("out", "vibraphone", "string_orchestra", 11.0, 24.0, 6.0, 0.0, True),
    ])
    # off-time exits of the sparse loops: the offset is fixed so that the cut lands in a sound
    b.exit("bendir", "celesta", 12.0, 24.0, bfrom=45.0, off=True, offset_s=1.5)
    b.exit("piano_notes", "drum_bass", 9.5, 24.0, bfrom=0.0, off=True, offset_s=-1.5)
    # busy decoys: another family's solo enters (or leaves)
    b.busy("strings", "flute", "drum_bass", 8.0, 24.0, bfrom=0.2)
    b.busy("strings", "organ", "folk_song", 10.0, 24.0, bfrom=25.0, kind="instrument_exit")
    b.busy("woodwinds", "cello_phrase", "drum_bass", 7.0, 22.0, bfrom=1.5)
    b.busy("woodwinds", "trumpet_a4", "string_orchestra", 9.0, 24.0, bfrom=2.0)
    b.busy("vocals", "sax_phrase", "string_orchestra", 8.0, 24.0, bfrom=1.0, lfrom=2.15)
    b.busy("vocals", "organ", "celesta", 6.0, 24.0, bfrom=30.0)
    b.busy("percussion", "singing_female", "string_orchestra", 7.0, 24.0, bfrom=3.0)
    b.busy("percussion", "piano_notes", "celesta", 9.0, 24.0, bfrom=55.0)
    b.busy("brass", "flute", "folk_song", 8.0, 24.0, bfrom=40.0)
    b.busy("brass", "cello_double", "celesta", 10.0, 24.0, bfrom=75.0)
    b.busy("keys", "piano_notes", "string_orchestra", 7.0, 24.0, bfrom=5.0)
    b.busy("keys", "trumpet_a4", "drum_bass", 9.0, 24.0, bfrom=0.0)
    b.busy("piano", "organ", "drum_bass", 8.0, 22.0, bfrom=2.0)
    b.busy("piano", "vibraphone", "string_orchestra", 10.0, 24.0, bfrom=0.0)
    b.busy("plucked", "piano_notes", "drum_bass", 7.0, 24.0, bfrom=0.5)
    b.busy("plucked", "bendir", "string_orchestra", 9.0, 24.0, bfrom=6.0)
    # pre-existing: the family sounds from the start (backing or a 'before' layer), another enters
    b.pre("strings", "sax_phrase", "string_orchestra", 8.0, 24.0, bfrom=1.0, lfrom=2.15)
    b.pre("strings", "flute", "drum_bass", 9.0, 24.0, bfrom=0.0, before="cello_phrase")
    b.pre("woodwinds", "vignesh", "drum_bass", 7.0, 22.0, bfrom=1.0, before="sax_phrase", before_from=2.15)
    b.pre("woodwinds", "trumpet_a4", "celesta", 8.0, 24.0, bfrom=35.0)
    b.pre("vocals", "flute", "folk_song", 9.0, 24.0, bfrom=38.0)
    b.pre("vocals", "organ", "string_orchestra", 7.0, 24.0, bfrom=2.0, before="singing_female")
    b.pre("vocals", "sax_phrase", "carnatic", 8.0, 24.0, lfrom=2.15)
    b.pre("percussion", "cello_double", "drum_bass", 10.0, 24.0, bfrom=0.0)
    b.pre("percussion", "singing_female", "celesta", 8.0, 24.0, bfrom=60.0, before="bendir")
    b.pre("percussion", "trumpet_a4", "carnatic", 9.0, 24.0)
    b.pre("brass", "piano_notes", "string_orchestra", 7.0, 24.0, bfrom=3.0, before="trumpet_a4")
    b.pre("keys", "singing_female", "drum_bass", 8.0, 22.0, bfrom=0.5, before="organ")
    b.pre("piano", "cello_phrase", "folk_song", 9.0, 24.0, bfrom=65.0, before="piano_notes")
    b.pre("plucked", "cello_double", "celesta", 7.0, 24.0, bfrom=42.0)
    b.pre("plucked", "bendir", "string_orchestra", 10.0, 24.0, bfrom=4.0, before="vibraphone")
    # absent: the backing alone
    b.absent("strings", "folk_song", 9.0, 24.0, bfrom=30.0)
    b.absent("woodwinds", "string_orchestra", 8.0, 24.0, bfrom=3.0)
    b.absent("woodwinds", "folk_song", 11.0, 24.0, bfrom=75.0)
    b.absent("vocals", "celesta", 10.0, 24.0, bfrom=50.0)
    b.absent("percussion", "string_orchestra", 9.0, 24.0, bfrom=5.0)
    b.absent("brass", "carnatic", 8.0, 24.0)
    b.absent("keys", "string_orchestra", 7.0, 24.0, bfrom=1.0)
    b.absent("keys", "folk_song", 10.0, 24.0, bfrom=10.0)
    b.absent("piano", "drum_bass", 9.0, 24.0, bfrom=0.5)
    b.absent("plucked", "drum_bass", 8.0, 24.0, bfrom=0.2)
    b.absent("plucked", "string_orchestra", 11.0, 24.0, bfrom=8.0)
    # speech decoys: the female reader (looped) enters
    b.decoy("vocals", "speech_female", "celesta", 7.0, 24.0, bfrom=28.0)
    b.decoy("vocals", "speech_female", "drum_bass", 9.0, 24.0, bfrom=0.0)
    for fam, backing, t, bfrom in (("strings", "drum_bass", 8.0, 0.6), ("woodwinds", "string_orchestra", 10.0, 2.0),
                                   ("percussion", "celesta", 6.0, 62.0), ("brass", "folk_song", 11.0, 88.0),
                                   ("keys", "string_orchestra", 9.0, 6.0), ("piano", "folk_song", 7.0, 48.0),
                                   ("plucked", "drum_bass", 10.0, 0.4)):
        b.decoy(fam, "speech_female", backing, t, 24.0, bfrom=bfrom)
    # noise decoys: rain (looped) enters
    for fam, backing, t, bfrom in (("vocals", "celesta", 8.0, 38.0), ("vocals", "string_orchestra", 6.0, 0.5),
                                   ("percussion", "celesta", 10.0, 70.0), ("percussion", "string_orchestra", 7.0, 9.0),
                                   ("strings", "folk_song", 9.0, 105.0), ("woodwinds", "drum_bass", 8.0, 0.0),
                                   ("brass", "celesta", 9.0, 16.0), ("keys", "drum_bass", 7.0, 0.8),
                                   ("piano", "string_orchestra", 11.0, 1.5), ("plucked", "string_orchestra", 8.0, 7.0)):
        b.decoy(fam, "rain", backing, t, 24.0, bfrom=bfrom)


def _sms_validation_specs(book: _Book) -> None:
    """Validation, sms-tools: cello (the other take) and violin, oboe, soprano, mridangam; the
    orchestra excerpt; a male reader; the ocean. Over the validation backings that lack each
    family (waltz, ragtime, jazz combo, 808 kick)."""
    b = book
    _deliver_rows(b, [
        # strings
        ("in", "cello_double_2", "waltz", 6.0, 24.0, 1.0, 0.3, False),
        ("in", "violin", "ragtime", 8.0, 24.0, 10.0, 0.0, False),
        ("in", "cello_double_2", "jazz_combo", 7.0, 24.0, 10.0, 0.3, False),
        ("in", "violin", "kick808", 10.0, 24.0, 0.0, 0.0, False),
        ("in", "cello_double_2", "ragtime", 12.0, 26.0, 30.0, 0.3, False),
        ("in", "violin", "waltz", 9.0, 24.0, 3.0, 0.0, True),
        ("in", "cello_double_2", "kick808", 7.0, 24.0, 2.0, 0.3, True),
        ("out", "violin", "jazz_combo", 9.0, 24.0, 12.0, 0.0, False),
        ("out", "cello_double_2", "waltz", 11.0, 24.0, 0.5, 0.3, False),
        ("out", "violin", "ragtime", 8.0, 24.0, 40.0, 0.0, True),
        # woodwinds
        ("in", "oboe", "waltz", 7.0, 24.0, 2.0, 0.0, False),
        ("in", "oboe", "ragtime", 5.0, 24.0, 22.0, 0.0, False),
        ("in", "oboe", "jazz_combo", 10.0, 24.0, 14.0, 0.0, False),
        ("in", "oboe", "kick808", 8.0, 22.0, 0.0, 0.0, False),
        ("in", "oboe", "waltz", 12.0, 26.0, 0.0, 1.0, False),
        ("in", "oboe", "ragtime", 9.0, 24.0, 35.0, 0.0, True),
        ("in", "oboe", "jazz_combo", 8.0, 24.0, 9.0, 0.0, True),
        ("out", "oboe", "waltz", 10.0, 24.0, 4.0, 0.0, False),
        ("out", "oboe", "kick808", 9.0, 24.0, 0.0, 0.0, False),
        ("out", "oboe", "ragtime", 12.0, 24.0, 45.0, 0.0, True),
        # vocals
        ("in", "soprano", "waltz", 8.0, 24.0, 0.5, 0.0, False),
        ("in", "soprano", "ragtime", 6.0, 24.0, 12.0, 0.0, False),
        ("in", "soprano", "jazz_combo", 9.0, 24.0, 11.0, 0.0, False),
        ("in", "soprano", "kick808", 5.0, 24.0, 0.0, 0.0, False),
        ("in", "soprano", "ragtime", 11.0, 24.0, 28.0, 0.0, False),
        ("in", "soprano", "waltz", 10.0, 24.0, 1.5, 0.0, True),
        ("in", "soprano", "jazz_combo", 7.0, 24.0, 15.0, 0.0, True),
        ("out", "soprano", "ragtime", 9.0, 24.0, 33.0, 0.0, False),
        ("out", "soprano", "kick808", 12.0, 24.0, 0.0, 0.0, False),
        ("out", "soprano", "waltz", 8.0, 24.0, 3.5, 0.0, True),
        # percussion (the jazz combo and the 808 kick hold percussion)
        ("in", "mridangam", "waltz", 6.0, 24.0, 1.0, 0.0, False),
        ("in", "mridangam", "ragtime", 9.0, 24.0, 5.0, 0.0, False),
        ("in", "mridangam", "waltz", 11.0, 24.0, 2.0, 0.0, False),
        ("in", "mridangam", "ragtime", 7.0, 24.0, 44.0, 0.0, False),
        ("in", "mridangam", "waltz", 5.0, 24.0, 4.0, 0.9, False),
        ("in", "mridangam", "ragtime", 10.0, 24.0, 18.0, 0.0, True),
        ("in", "mridangam", "waltz", 8.0, 24.0, 0.0, 0.0, True),
        ("out", "mridangam", "ragtime", 10.0, 24.0, 26.0, 0.0, False),
        ("out", "mridangam", "waltz", 8.3, 24.0, 2.5, 0.0, False),
    ])
    b.exit("mridangam", "ragtime", 12.0, 24.0, bfrom=38.0, off=True, offset_s=1.5)
    # busy decoys
    b.busy("strings", "oboe", "waltz", 8.0, 24.0, bfrom=1.0)
    b.busy("strings", "oboe", "ragtime", 10.0, 24.0, bfrom=20.0, kind="instrument_exit")
    b.busy("woodwinds", "violin", "ragtime", 7.0, 24.0, bfrom=8.0)
    b.busy("woodwinds", "soprano", "kick808", 9.0, 24.0)
    b.busy("vocals", "cello_double_2", "jazz_combo", 8.0, 24.0, bfrom=12.0, lfrom=0.3)
    b.busy("vocals", "orchestra", "waltz", 9.0, 24.0, bfrom=2.0)
    b.busy("percussion", "soprano", "waltz", 7.0, 24.0, bfrom=3.0)
    b.busy("percussion", "violin", "ragtime", 9.0, 24.0, bfrom=42.0)
    b.busy("brass", "oboe", "ragtime", 8.0, 24.0, bfrom=14.0)
    b.busy("keys", "violin", "waltz", 10.0, 24.0, bfrom=0.5)
    b.busy("piano", "soprano", "jazz_combo", 9.0, 24.0, bfrom=16.0)
    b.busy("plucked", "mridangam", "ragtime", 8.0, 24.0, bfrom=24.0)
    # pre-existing
    b.pre("strings", "soprano", "orchestra", 8.0, 24.0)
    b.pre("strings", "oboe", "waltz", 9.0, 24.0, bfrom=2.0, before="violin")
    b.pre("woodwinds", "mridangam", "orchestra", 7.0, 24.0)
    b.pre("woodwinds", "cello_double_2", "ragtime", 8.0, 24.0, bfrom=10.0, lfrom=0.3, before="oboe")
    b.pre("vocals", "oboe", "jazz_combo", 9.0, 24.0, bfrom=10.0, before="soprano")
    b.pre("percussion", "violin", "kick808", 8.0, 24.0)
    b.pre("percussion", "soprano", "waltz", 10.0, 24.0, bfrom=1.0, before="mridangam")
    b.pre("brass", "soprano", "orchestra", 9.0, 24.0)
    b.pre("piano", "violin", "ragtime", 7.0, 24.0, bfrom=30.0)
    b.pre("plucked", "oboe", "waltz", 8.0, 24.0, bfrom=3.0)
    # absent
    b.absent("strings", "waltz", 9.0, 24.0, bfrom=1.0)
    b.absent("woodwinds", "jazz_combo", 10.0, 24.0, bfrom=11.0)
    b.absent("vocals", "kick808", 8.0, 24.0)
    b.absent("percussion", "ragtime", 7.0, 24.0, bfrom=40.0)
    b.absent("keys", "waltz", 11.0, 24.0, bfrom=2.5)
    b.absent("plucked", "ragtime", 9.0, 24.0, bfrom=5.0)
    b.absent("brass", "kick808", 10.0, 24.0)
    # speech decoys: the male reader (looped) enters
    for fam, backing, t, bfrom in (("vocals", "waltz", 8.0, 1.5), ("vocals", "ragtime", 10.0, 26.0),
                                   ("strings", "jazz_combo", 9.0, 13.0), ("woodwinds", "waltz", 7.0, 4.0),
                                   ("percussion", "ragtime", 11.0, 43.0)):
        b.decoy(fam, "speech_male", backing, t, 24.0, bfrom=bfrom)
    # noise decoys: the ocean (looped) enters
    for fam, backing, t, bfrom in (("vocals", "waltz", 9.0, 0.0), ("vocals", "jazz_combo", 7.0, 17.0),
                                   ("strings", "ragtime", 8.0, 16.0), ("woodwinds", "kick808", 10.0, 0.0),
                                   ("percussion", "waltz", 8.0, 3.0), ("brass", "ragtime", 9.0, 36.0)):
        b.decoy(fam, "ocean", backing, t, 24.0, bfrom=bfrom)


def _real_corpus() -> tuple[RealClipSpec, ...]:
    book = _Book(base_seed=30000)
    _dev_specs(book)
    _validation_specs(book)
    _sms_dev_specs(book)
    _sms_validation_specs(book)
    for spec in book.specs:
        check_spec(spec)
    return tuple(book.specs)


def check_spec(spec: RealClipSpec) -> None:
    """Check one clip definition against the rules of the corpus.

    Raises
    ------
    ParameterError
        If a source is unknown, the sources span two splits, a scenario's family rule is
        broken (a positive whose backing already holds the family, a negative where the
        family sounds, a pre-existing target that is not there), a level lies outside
        :data:`LEVEL_RANGE_DB`, the backing's segment is too short or a time lies outside
        the clip.
    """
    where = f"real clip {spec.clip_id!r}: "
    unknown = [k for k in spec.source_keys if k not in REAL_SOURCES]
    if unknown:
        raise ParameterError(f"{where}unknown source(s) {unknown}; known: {sorted(REAL_SOURCES)}")
    splits = {REAL_SOURCES[k].split for k in spec.source_keys}
    if len(splits) != 1:
        raise ParameterError(f"{where}sources {list(spec.source_keys)} span the splits {sorted(splits)}")
    if spec.scenario not in SCENARIOS:
        raise ParameterError(f"{where}scenario must be one of {list(SCENARIOS)}, got {spec.scenario!r}")
    if not 20.0 <= spec.duration_s <= 30.0:
        raise ParameterError(f"{where}duration_s must lie in [20, 30] s, got {spec.duration_s!r}")
    if not 0.0 < spec.time_s < spec.duration_s:
        raise ParameterError(f"{where}time_s {spec.time_s!r} lies outside the clip")
    back = REAL_SOURCES[spec.backing]
    if not back.loop and spec.backing_from_s + spec.duration_s > back.segment_s[1] + 1e-9:
        raise ParameterError(f"{where}backing {back.key!r} from {spec.backing_from_s:g} s ends before the clip "
                             f"(usable until {back.segment_s[1]:g} s)")
    if spec.backing_from_s < back.segment_s[0]:
        raise ParameterError(f"{where}backing {back.key!r} must start at or after {back.segment_s[0]:g} s")
    for ly in spec.layers:
        if not LEVEL_RANGE_DB[0] <= ly.level_db <= LEVEL_RANGE_DB[1]:
            raise ParameterError(f"{where}level {ly.level_db!r} dB outside {LEVEL_RANGE_DB}")
        if not 0.0 <= ly.start_s < spec.duration_s or (ly.cut_s is not None and not ly.start_s < ly.cut_s
                                                         < spec.duration_s):
            raise ParameterError(f"{where}layer {ly.source!r} lies outside the clip")
    fam = spec.family
    heard = {f for k in spec.source_keys for f in REAL_SOURCES[k].contains}
    targets = [ly for ly in spec.layers if ly.role == "target"]
    if spec.occurred:
        if len(targets) != 1 or REAL_SOURCES[targets[0].source].family != fam:
            raise ParameterError(f"{where}a delivery needs exactly one target layer of family {fam!r}")
        if fam in back.contains or any(fam in REAL_SOURCES[ly.source].contains
                                       for ly in spec.layers if ly.role != "target"):
            raise ParameterError(f"{where}family {fam!r} already sounds outside the target layer")
    elif spec.scenario == "pre_existing":
        before = [ly for ly in spec.layers if ly.role == "before"]
        if fam not in back.contains and not any(fam in REAL_SOURCES[ly.source].contains for ly in before):
            raise ParameterError(f"{where}pre-existing family {fam!r} is neither in the backing nor a 'before' layer")
        if any(fam in REAL_SOURCES[ly.source].contains for ly in spec.layers if ly.role == "other"):
            raise ParameterError(f"{where}the layer entering over a pre-existing {fam!r} holds that family")
    elif fam in heard or targets:
        raise ParameterError(f"{where}family {fam!r} must never sound in a {spec.scenario} clip")


#: The real corpus: every clip of both splits, in a fixed order.
REAL_CORPUS: tuple[RealClipSpec, ...] = _real_corpus()


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


_CHARACTER = {"percussion": "hard", "piano": "hard", "brass": "hard", "vocals": "soft", "strings": "soft",
              "woodwinds": "soft", "keys": "soft", "plucked": "hard"}


def _character(mixed: MixedClip) -> str:
    """``hard`` for a cut (an exit, or a layer entering mid-recording); else the family's own."""
    spec = mixed.spec
    if spec.kind == "instrument_exit":
        return "hard"
    target = next((p for p in mixed.parts if p.spec is not None and p.spec.role == "target"), None)
    if target is not None and target.nominal_start > int(round(target.source.source.segment_s[0] * mixed.sr)):
        return "hard"
    return _CHARACTER.get(spec.family, "hard")


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
    target = TARGET_NAMES[spec.family]
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
        rows.append({"clip": f"{spec.clip_id}.wav", "source": TARGET_NAMES[fam], "family": fam,
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

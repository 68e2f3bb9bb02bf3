"""The reference renderer's instrument catalogue and musical styles.

Every instrument is a General MIDI program (0-based), the musical role its part plays in an
arrangement, its register and its onset character. These are musical choices of the
renderer, not detector thresholds. The family an instrument belongs to is the one whose
``gm_programs`` (``gm_drum_kits`` for a kit) hold its program in the family registry
(:mod:`timingbench.families`, ``families.table``): :func:`catalogue` reads it there.
A style lists the instruments an arrangement in that style draws from and its tempo range.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from timingbench.errors import ConfigError, ParameterError
from timingbench.families import FAMILY_NAMES, drum_kit_families, program_families
from timingbench.render.lookup import lookup

if TYPE_CHECKING:
    from timingbench.config import Config

#: Part roles understood by :mod:`timingbench.render.arrangement`.
ROLES = ("drums", "click", "bass", "pad", "comp", "arp", "lead", "stabs", "timpani")


@dataclass(frozen=True)
class InstrumentSpec:
    """One instrument of the catalogue.

    Attributes
    ----------
    name : str
        Catalogue key (``"electric_guitar"``).
    target : str
        How a prompt names it (``"electric guitar"``).
    family : str
        formats §1 event family.
    program : int
        General MIDI program, 0-based (the drum-kit program when ``is_drum``).
    is_drum : bool
        True for a drum kit on the percussion channel.
    role : str
        One of :data:`ROLES`.
    low, high : int
        MIDI pitch range of the part (ignored by drum kits).
    velocity : int
        Typical MIDI velocity (1-127).
    character : str
        Onset character of its entrances: ``hard`` | ``soft``.
    kit_style : str
        Drum pattern style for drum kits (``rock``, ``electronic``, ``jazz``, ``cinematic``).
    """

    name: str
    target: str
    family: str
    program: int
    is_drum: bool
    role: str
    low: int
    high: int
    velocity: int
    character: str
    kit_style: str = ""


def _i(name: str, target: str, program: int, role: str, low: int, high: int,
       velocity: int, character: str, *, is_drum: bool = False, kit_style: str = "") -> InstrumentSpec:
    """A catalogue entry whose family is still to be read from the registry (:func:`catalogue`)."""
    return InstrumentSpec(name, target, "", program, is_drum, role, low, high, velocity,
                          character, kit_style)


#: The catalogue's entries, without their families (grouped by family as the packaged registry has them).
_ENTRIES: tuple[InstrumentSpec, ...] = (
    # percussion
    _i("drums", "drums", 0, "drums", 0, 0, 100, "hard", is_drum=True, kit_style="rock"),
    _i("drum_machine", "drum machine", 25, "drums", 0, 0, 105, "hard", is_drum=True,
       kit_style="electronic"),
    _i("jazz_drums", "jazz drums", 32, "drums", 0, 0, 85, "hard", is_drum=True,
       kit_style="jazz"),
    _i("cinematic_drums", "cinematic drums", 48, "drums", 0, 0, 105, "hard",
       is_drum=True, kit_style="cinematic"),
    _i("timpani", "timpani", 47, "timpani", 36, 55, 105, "hard"),
    # bass
    _i("bass_guitar", "bass guitar", 33, "bass", 28, 52, 100, "hard"),
    _i("synth_bass", "synth bass", 38, "bass", 28, 52, 100, "hard"),
    _i("upright_bass", "upright bass", 32, "bass", 28, 52, 105, "hard"),
    _i("fretless_bass", "fretless bass", 35, "bass", 28, 52, 100, "hard"),
    _i("double_bass", "double basses", 43, "bass", 28, 50, 100, "soft"),
    # guitar
    _i("electric_guitar", "electric guitar", 29, "comp", 52, 72, 90, "hard"),
    _i("clean_guitar", "clean electric guitar", 27, "comp", 52, 74, 95, "hard"),
    _i("acoustic_guitar", "acoustic guitar", 25, "arp", 48, 76, 95, "hard"),
    _i("nylon_guitar", "nylon guitar", 24, "arp", 48, 76, 100, "hard"),
    _i("jazz_guitar", "jazz guitar", 26, "comp", 50, 72, 90, "hard"),
    # piano
    _i("piano", "piano", 0, "comp", 48, 84, 90, "hard"),
    _i("piano_arp", "piano", 0, "arp", 55, 88, 85, "hard"),
    _i("bright_piano", "bright piano", 1, "comp", 48, 84, 90, "hard"),
    # vocals
    _i("choir", "choir", 52, "pad", 52, 76, 100, "soft"),
    _i("voice_oohs", "vocal oohs", 53, "pad", 55, 76, 100, "soft"),
    # strings
    _i("strings", "strings", 48, "pad", 48, 79, 95, "soft"),
    _i("slow_strings", "slow strings", 49, "pad", 48, 79, 100, "soft"),
    _i("violin", "solo violin", 40, "lead", 62, 86, 95, "soft"),
    _i("cello", "cello section", 42, "pad", 36, 60, 100, "soft"),
    _i("pizzicato", "pizzicato strings", 45, "arp", 55, 79, 105, "hard"),
    # brass
    _i("brass", "brass section", 61, "stabs", 53, 74, 100, "hard"),
    _i("french_horn", "french horns", 60, "pad", 48, 70, 100, "soft"),
    _i("trumpet", "trumpet", 56, "lead", 60, 80, 95, "hard"),
    _i("trombone", "trombone", 57, "pad", 40, 62, 100, "hard"),
    # woodwinds
    _i("flute", "flute", 73, "lead", 67, 91, 100, "soft"),
    _i("clarinet", "clarinet", 71, "lead", 55, 79, 100, "soft"),
    _i("oboe", "oboe", 68, "lead", 62, 84, 100, "soft"),
    _i("bassoon", "bassoon", 70, "pad", 40, 60, 100, "soft"),
    _i("tenor_sax", "tenor sax", 66, "lead", 52, 74, 100, "hard"),
    _i("alto_sax", "alto sax", 65, "lead", 58, 80, 100, "hard"),
    # keys
    _i("organ", "organ", 16, "pad", 48, 76, 95, "hard"),
    _i("rock_organ", "rock organ", 18, "comp", 48, 76, 90, "hard"),
    _i("e_piano", "electric piano", 4, "comp", 48, 79, 95, "hard"),
    _i("clavinet", "clavinet", 7, "comp", 48, 76, 90, "hard"),
    # plucked
    _i("harp", "harp", 46, "arp", 48, 84, 100, "hard"),
    _i("marimba", "marimba", 12, "arp", 55, 84, 110, "hard"),
    _i("bells", "tubular bells", 14, "stabs", 60, 77, 100, "hard"),
    _i("glockenspiel", "glockenspiel", 9, "arp", 72, 96, 95, "hard"),
    _i("vibraphone", "vibraphone", 11, "arp", 55, 84, 100, "hard"),
    _i("celesta", "celesta", 8, "arp", 60, 91, 100, "hard"),
    # synth
    _i("warm_pad", "warm synth pad", 89, "pad", 48, 76, 105, "soft"),
    _i("new_age_pad", "ambient pad", 88, "pad", 48, 76, 105, "soft"),
    _i("saw_lead", "saw lead synth", 81, "lead", 60, 84, 95, "hard"),
    _i("square_lead", "square lead synth", 80, "lead", 60, 84, 90, "hard"),
    _i("synth_arp", "synth arpeggio", 90, "arp", 55, 84, 95, "hard"),
    # tempo references
    _i("click", "click track", 0, "click", 0, 0, 110, "hard", is_drum=True,
       kit_style="click"),
)


def catalogue(config: Config | None = None) -> dict[str, InstrumentSpec]:
    """The instrument catalogue, each instrument in the family its General MIDI program belongs to.

    Parameters
    ----------
    config : Config, optional
        Configuration whose family registry gives the families; the packaged one when omitted.

    Returns
    -------
    instruments : dict of str to InstrumentSpec
        Catalogue key -> instrument.

    Raises
    ------
    ConfigError
        If an instrument's program (drum-kit program for a kit) belongs to no family of the
        registry.
    """
    programs, kits = program_families(config), drum_kit_families(config)
    out: dict[str, InstrumentSpec] = {}
    for spec in _ENTRIES:
        table, what = (kits, "gm_drum_kits") if spec.is_drum else (programs, "gm_programs")
        if spec.program not in table:
            raise ConfigError(f"the renderer's instrument {spec.name!r} (General MIDI program {spec.program}) belongs "
                              f"to no family: no row of 'families.table' lists {spec.program} in its '{what}'")
        out[spec.name] = dataclasses.replace(spec, family=table[spec.program])
    return out


#: The catalogue of the packaged family registry.
INSTRUMENTS: dict[str, InstrumentSpec] = catalogue()


@dataclass(frozen=True)
class StyleSpec:
    """One musical style.

    Attributes
    ----------
    name : str
        Style key.
    phrases : tuple of str
        Style descriptions used in prompt texts.
    instruments : tuple of str
        Catalogue keys an arrangement in this style draws from.
    foundation : tuple of str
        Instruments preferred for the bed (harmony and rhythm), in order.
    bpm_range : tuple of float
        Tempo range in BPM.
    swing : bool
        Whether eighth notes swing (jazz).
    """

    name: str
    phrases: tuple[str, ...]
    instruments: tuple[str, ...]
    foundation: tuple[str, ...]
    bpm_range: tuple[float, float]
    swing: bool = False


STYLES: dict[str, StyleSpec] = {s.name: s for s in (
    StyleSpec("cinematic", ("tense cinematic", "epic cinematic", "dark cinematic trailer"),
              ("strings", "cello", "brass", "french_horn", "timpani", "cinematic_drums", "piano_arp",
               "choir", "warm_pad", "harp", "double_bass"),
              ("strings", "cello", "piano_arp", "choir", "cinematic_drums", "french_horn"),
              (70.0, 110.0)),
    StyleSpec("electronic", ("driving electronic", "dark synthwave", "upbeat electronic dance"),
              ("drum_machine", "synth_bass", "warm_pad", "saw_lead", "synth_arp", "e_piano",
               "glockenspiel", "voice_oohs", "square_lead"),
              ("drum_machine", "synth_bass", "warm_pad", "synth_arp", "e_piano"),
              (110.0, 132.0)),
    StyleSpec("rock_pop", ("upbeat pop rock", "energetic indie rock", "warm pop"),
              ("drums", "bass_guitar", "electric_guitar", "clean_guitar", "acoustic_guitar", "piano",
               "organ", "rock_organ", "voice_oohs", "brass"),
              ("drums", "bass_guitar", "piano", "clean_guitar", "organ"),
              (90.0, 140.0)),
    StyleSpec("jazz", ("smoky late-night jazz", "swinging jazz combo", "mellow cool jazz"),
              ("jazz_drums", "upright_bass", "piano", "tenor_sax", "alto_sax", "trumpet", "vibraphone",
               "jazz_guitar", "e_piano", "trombone"),
              ("jazz_drums", "upright_bass", "piano", "jazz_guitar", "e_piano"),
              (90.0, 160.0), swing=True),
    StyleSpec("ambient", ("calm ambient", "dreamy ambient", "meditative ambient"),
              ("new_age_pad", "warm_pad", "bells", "celesta", "voice_oohs", "slow_strings",
               "nylon_guitar", "fretless_bass", "flute", "piano_arp"),
              ("new_age_pad", "slow_strings", "piano_arp", "celesta", "fretless_bass"),
              (60.0, 84.0)),
    StyleSpec("orchestral", ("gentle orchestral", "pastoral orchestral", "sweeping orchestral"),
              ("flute", "clarinet", "oboe", "bassoon", "strings", "violin", "cello", "pizzicato", "harp",
               "french_horn", "trumpet", "timpani", "double_bass", "celesta", "marimba"),
              ("strings", "cello", "harp", "bassoon", "double_bass", "french_horn"),
              (66.0, 108.0)),
)}


def instrument(name: str) -> InstrumentSpec:
    """Look up a catalogue instrument.

    Parameters
    ----------
    name : str
        Catalogue key.

    Returns
    -------
    spec : InstrumentSpec

    Raises
    ------
    ParameterError
        If the name is not in the catalogue.
    """
    return lookup(INSTRUMENTS, name, "instrument")


def style(name: str) -> StyleSpec:
    """Look up a style.

    Raises
    ------
    ParameterError
        If the name is not a known style.
    """
    return lookup(STYLES, name, "style")


def styles_with_family(family: str) -> list[str]:
    """Names of the styles whose instruments include one of ``family``.

    Raises
    ------
    ParameterError
        If ``family`` is not an instrument family of formats §1.
    """
    if family not in FAMILY_NAMES:
        raise ParameterError(
            f"family {family!r} is not an instrument family; choose one of {list(FAMILY_NAMES)}"
        )
    return [s.name for s in STYLES.values()
            if any(INSTRUMENTS[i].family == family for i in s.instruments)]

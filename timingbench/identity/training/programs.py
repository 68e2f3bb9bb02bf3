"""General MIDI programs of every instrument family, with their roles and registers.

The training vocabulary of the family evidence model. Which programs belong to which family
is the family registry's (``gm_programs`` and ``gm_drum_kits`` of ``families.table``,
:mod:`timingbench.families`); this module adds what a program plays: the roles its part may
play (so one program is heard in several articulations) and its playable register, and a
drum kit's pattern style. These are musical facts of the General MIDI sound set, not
thresholds, and they belong to the program, whatever family the registry puts it in.

``vocals`` means a human voice singing. No General MIDI program sings words, so the
vocals family has no soundfont program of its own: the voice-like synthesizer patches
(54 synth voice, 85 voice lead, 91 choir pad) are synths, and choir aahs / voice oohs
(52, 53), sampled voices without words (the registry lists them with vocals, the
renderer's voices), belong to the family the data recipe names (``choir_family``:
:data:`CHOIR_FAMILIES`, default :data:`DEFAULT_CHOIR_FAMILY`), to be decided on dev
figures. Real singing (vocadito) is the vocals family's positive source.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from timingbench.errors import ConfigError, ParameterError
from timingbench.families import FAMILY_NAMES, registry
from timingbench.render.instruments import InstrumentSpec

if TYPE_CHECKING:
    from timingbench.config import Config

#: The instrument families, in the model's output order (the family registry's order).
FAMILIES = FAMILY_NAMES


@dataclass(frozen=True)
class Program:
    """One General MIDI program of a family.

    Attributes
    ----------
    program : int
        General MIDI program, 0-based (kit program when ``is_drum``).
    roles : tuple of str
        Part roles of :mod:`timingbench.render.arrangement` it may play.
    low, high : int
        Playable MIDI pitch range.
    is_drum : bool
        Drum kit on the percussion channel.
    kit_style : str
        Drum pattern style of a kit.
    """

    program: int
    roles: tuple[str, ...]
    low: int
    high: int
    is_drum: bool = False
    kit_style: str = ""


#: Drum-kit program -> the pattern style its kit plays (GM standard, room, power, electronic,
#: TR-808, jazz, brush and orchestra kits).
KIT_STYLES: dict[int, str] = {0: "rock", 8: "rock", 16: "rock", 24: "electronic", 25: "electronic", 32: "jazz",
                              40: "jazz", 48: "cinematic"}

#: Melodic program -> (roles, lowest pitch, highest pitch) of its training parts.
VOICINGS: dict[int, tuple[tuple[str, ...], int, int]] = {}


def _voice(programs: Iterable[int], roles: tuple[str, ...], low: int, high: int) -> None:
    for p in programs:
        VOICINGS[p] = (roles, low, high)


_voice((47,), ("timpani",), 36, 55)  # timpani
_voice(range(32, 40), ("bass",), 28, 55)  # acoustic, electric, fretless, slap and synth basses
_voice((43,), ("bass",), 28, 50)  # contrabass
_voice(range(24, 32), ("comp", "arp", "lead"), 45, 79)  # guitars
_voice(range(0, 4), ("comp", "arp", "lead", "stabs"), 36, 96)  # pianos
_voice((40, 41, 42, 44, 48, 49, 50, 110), ("pad", "lead", "stabs"), 40, 88)  # bowed strings, fiddle
_voice((45,), ("arp", "stabs"), 48, 84)  # pizzicato
_voice(range(56, 64), ("stabs", "pad", "lead"), 40, 80)  # brass
_voice(range(64, 80), ("lead", "pad", "arp"), 50, 91)  # reeds and pipes
_voice((4, 5, 6, 7, 16, 17, 18, 19, 20, 21), ("pad", "comp", "arp", "stabs"), 45, 84)  # e-pianos, clavs, organs
_voice((8, 9, 10, 11, 12, 13, 14, 15, 46, 104, 105, 106, 107, 108), ("arp", "stabs", "lead"), 52, 96)  # mallets,
#                                                                       harp, sitar, banjo, shamisen, koto, kalimba
_voice(range(80, 88), ("lead", "arp", "stabs"), 52, 88)  # synth leads
_voice(range(88, 96), ("pad", "stabs"), 45, 81)  # synth pads
_voice((54,), ("pad", "lead"), 50, 79)  # synth voice
#: Choir aahs and voice oohs: sampled voices without words, whose family is a recipe option.
CHOIR_PROGRAMS = (52, 53)
_voice(CHOIR_PROGRAMS, ("pad", "lead"), 50, 79)


def _program(program: int, *, kit: bool) -> Program:
    if kit:
        if program not in KIT_STYLES:
            raise ConfigError(f"'families.table' lists drum kit {program}, which has no pattern style: add it to "
                              "timingbench.identity.training.programs.KIT_STYLES")
        return Program(program, ("drums",), 0, 0, True, KIT_STYLES[program])
    if program not in VOICINGS:
        raise ConfigError(f"'families.table' lists General MIDI program {program}, which has no roles and register: "
                          "add it to timingbench.identity.training.programs.VOICINGS")
    roles, low, high = VOICINGS[program]
    return Program(program, roles, low, high)


def family_programs(config: Config | None = None) -> dict[str, list[Program]]:
    """Every family's programs without the choirs (:func:`programs_for` places them).

    Parameters
    ----------
    config : Config, optional
        Configuration whose family registry gives the programs; the packaged one when omitted.

    Returns
    -------
    programs : dict of str to list of Program
        Family -> its drum kits, then its melodic programs, in registry order. The choir
        programs are left out (vocals has none: its parts are real singing, or choirs
        where the recipe makes them vocals).

    Raises
    ------
    ConfigError
        If the registry lists a program or kit this module has no voicing for.
    """
    return {f.name: [_program(k, kit=True) for k in f.gm_drum_kits]
            + [_program(p, kit=False) for p in f.gm_programs if p not in CHOIR_PROGRAMS]
            for f in registry(config).rows}


#: Every family's programs without the choirs (:func:`programs_for` places them), from the
#: packaged registry. Vocals has none: its parts are real singing (or choirs, where the
#: recipe makes them vocals).
PROGRAMS: dict[str, list[Program]] = family_programs()


#: Families the choir programs may be given: sung-word ``vocals`` or a pad-like family.
CHOIR_FAMILIES = ("vocals", "synth", "strings")
#: The recipe's default: a text-to-music system's "vocals" are sung words, choirs are pads.
DEFAULT_CHOIR_FAMILY = "synth"
#: Sustained pad, string and organ programs that stand where no voice sings: the hard
#: negatives of the vocals family (see :func:`hard_negative_programs`): bowed strings, organs,
#: the synth voice, the voice lead and the synth pads.
_HARD_NEGATIVES = frozenset((40, 41, 42, 44, 48, 49, 50, 110, 16, 17, 18, 19, 20, 54, 85, 88, 89, 90, 91, 92, 93,
                             94, 95))


#: The program of a part that is real singing, not a soundfont voice (no General MIDI
#: program: it is never rendered).
REAL_SINGING = Program(-1, ("lead",), 50, 79)
_CHOIRS = [_program(p, kit=False) for p in CHOIR_PROGRAMS]


def check_choir_family(choir_family: str) -> str:
    """``choir_family`` itself, once it is known to be one of :data:`CHOIR_FAMILIES`.

    Raises
    ------
    ParameterError
        If it is not.
    """
    if choir_family not in CHOIR_FAMILIES:
        raise ParameterError(f"choir family {choir_family!r} is not one of {list(CHOIR_FAMILIES)}")
    return choir_family


def programs_for(choir_family: str = DEFAULT_CHOIR_FAMILY) -> dict[str, list[Program]]:
    """The program table of a recipe: :data:`PROGRAMS` with the choirs in ``choir_family``.

    Parameters
    ----------
    choir_family : str
        One of :data:`CHOIR_FAMILIES`.

    Returns
    -------
    programs : dict of str to list of Program
        Family -> its programs, in :data:`FAMILIES` order. The vocals list is empty
        unless ``choir_family`` is ``"vocals"``.

    Raises
    ------
    ParameterError
        If ``choir_family`` is not one of :data:`CHOIR_FAMILIES`.
    """
    fam = check_choir_family(choir_family)
    table = {f: list(progs) for f, progs in PROGRAMS.items()}
    table[fam] = table[fam] + _CHOIRS
    return table


def hard_negative_programs(choir_family: str = DEFAULT_CHOIR_FAMILY) -> list[tuple[str, Program, str]]:
    """Sustained pads, strings and organs (family, program, role) that are not vocals.

    Each plays its ``pad`` role where it has one (else its first role). With the
    choirs outside the vocals family, they are hard negatives too.

    Raises
    ------
    ParameterError
        If ``choir_family`` is not one of :data:`CHOIR_FAMILIES`.
    """
    table = programs_for(choir_family)
    chosen = _HARD_NEGATIVES | (frozenset(CHOIR_PROGRAMS) if choir_family != "vocals" else frozenset())
    out: list[tuple[str, Program, str]] = []
    for fam in FAMILIES:
        for prog in table[fam]:
            if not prog.is_drum and prog.program in chosen:
                out.append((fam, prog, "pad" if "pad" in prog.roles else prog.roles[0]))
    return out


def instrument_spec(family: str, prog: Program, *, role: str, shift: int) -> InstrumentSpec:
    """An :class:`InstrumentSpec` for one program in one role, its register moved by ``shift`` semitones.

    The register is kept at least an octave wide and inside the program's playable range.
    """
    if role not in prog.roles:
        raise ParameterError(f"program {prog.program} of {family} does not play role {role!r}")
    low, high = prog.low, prog.high
    if not prog.is_drum:
        width = max(12, min(high - low, 24))
        lo = min(max(low, low + shift), high - width)
        low, high = lo, lo + width
    return InstrumentSpec(name=f"{family}_{prog.program}_{role}", target=family, family=family,
                          program=prog.program, is_drum=prog.is_drum, role=role, low=low, high=high,
                          velocity=95, character="hard", kit_style=prog.kit_style)

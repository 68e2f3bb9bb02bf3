"""General MIDI programs of every SPEC section 1 instrument family, with their roles and registers.

The training vocabulary of the family evidence model. Each entry is a General MIDI
program (0-based; for drum kits the kit program on the percussion channel), the roles
its part may play (so one program is heard in several articulations) and its playable
register. These are musical facts of the General MIDI sound set, not thresholds.
"""

from __future__ import annotations

from dataclasses import dataclass

from timingbench.errors import ParameterError
from timingbench.render.instruments import InstrumentSpec

#: The 11 instrument families of SPEC section 1, in the model's output order.
FAMILIES = ("percussion", "bass", "guitar", "piano", "vocals", "strings", "brass", "woodwinds",
            "keys", "plucked", "synth")


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


def _r(programs: range | tuple[int, ...], roles: tuple[str, ...], low: int, high: int) -> list[Program]:
    return [Program(p, roles, low, high) for p in programs]


_KITS = ((0, "rock"), (8, "rock"), (16, "rock"), (24, "electronic"), (25, "electronic"),
         (32, "jazz"), (40, "jazz"), (48, "cinematic"))

PROGRAMS: dict[str, list[Program]] = {
    "percussion": [Program(p, ("drums",), 0, 0, True, s) for p, s in _KITS]
    + [Program(47, ("timpani",), 36, 55)],
    "bass": _r(range(32, 40), ("bass",), 28, 55) + _r((43,), ("bass",), 28, 50),
    "guitar": _r(range(24, 32), ("comp", "arp", "lead"), 45, 79),
    "piano": _r(range(0, 4), ("comp", "arp", "lead", "stabs"), 36, 96),
    "vocals": _r((52, 53, 54, 85, 91), ("pad", "lead"), 50, 79),
    "strings": _r((40, 41, 42, 44, 48, 49, 50, 110), ("pad", "lead", "stabs"), 40, 88)
    + _r((45,), ("arp", "stabs"), 48, 84),
    "brass": _r(range(56, 64), ("stabs", "pad", "lead"), 40, 80),
    "woodwinds": _r(range(64, 80), ("lead", "pad", "arp"), 50, 91),
    "keys": _r((4, 5, 6, 7, 16, 17, 18, 19, 20, 21), ("pad", "comp", "arp", "stabs"), 45, 84),
    "plucked": _r((8, 9, 10, 11, 12, 13, 14, 15, 46, 104, 105, 106, 107, 108), ("arp", "stabs", "lead"),
                  52, 96),
    "synth": _r(tuple(range(80, 85)) + (86, 87), ("lead", "arp", "stabs"), 52, 88)
    + _r(tuple(range(88, 91)) + (92, 93, 94, 95), ("pad", "stabs"), 45, 81),
}


def family_index(family: str) -> int:
    """Index of ``family`` in :data:`FAMILIES`.

    Raises
    ------
    ParameterError
        If ``family`` is not an instrument family.
    """
    try:
        return FAMILIES.index(family)
    except ValueError:
        raise ParameterError(f"family {family!r} is not an instrument family; use one of {list(FAMILIES)}") \
            from None


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

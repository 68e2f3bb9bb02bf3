"""Music-theory vocabulary shared by the MGBench generators and the baseline.

Pitch names, interval names, diatonic scales, triads named by Roman numerals and the
harmonic-pattern types of MGBench-2B. Pitches are MIDI numbers (60 = C4, 21 = A0,
108 = C8: the 88 piano keys).
"""

from __future__ import annotations

LOWEST_KEY = 21
HIGHEST_KEY = 108

PITCH_CLASS_NAMES = ("C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B")

#: Interval names by size in semitones (0 = unison / repeated note, 12 = octave).
INTERVAL_NAMES = (
    "unison", "minor second", "major second", "minor third", "major third", "perfect fourth",
    "tritone", "perfect fifth", "minor sixth", "major sixth", "minor seventh", "major seventh",
    "octave",
)

MAJOR_SCALE = (0, 2, 4, 5, 7, 9, 11)
MINOR_SCALE = (0, 2, 3, 5, 7, 8, 10)  # natural minor
MODES = ("major", "minor")

_ROMAN = ("I", "II", "III", "IV", "V", "VI", "VII")

#: MGBench-2B harmonic-pattern types as (name, first-bar degree choices, second-bar degree),
#: degrees 0-based on the scale (0 = tonic triad, 4 = dominant triad).
HARMONIC_PATTERNS: tuple[tuple[str, tuple[int, ...], int], ...] = (
    ("authentic cadence", (4,), 0),
    ("plagal cadence", (3,), 0),
    ("half cadence", (0, 1, 3, 5), 4),
    ("deceptive cadence", (4,), 5),
    ("tonic prolongation", (0,), 0),
)
HARMONIC_PATTERN_NAMES = tuple(name for name, _, _ in HARMONIC_PATTERNS)


def pitch_name(pitch: int) -> str:
    """Scientific pitch name of a MIDI pitch (60 -> ``C4``, 61 -> ``C#4``)."""
    return f"{PITCH_CLASS_NAMES[pitch % 12]}{pitch // 12 - 1}"


def scale_of(mode: str) -> tuple[int, ...]:
    """Semitone offsets of the scale of ``mode`` (``major`` or ``minor``)."""
    return MAJOR_SCALE if mode == "major" else MINOR_SCALE


def triad_pitch_classes(tonic: int, mode: str, degree: int) -> tuple[int, int, int]:
    """Pitch classes (root, third, fifth) of the diatonic triad on ``degree`` (0-based)."""
    sc = scale_of(mode)
    return tuple((tonic + sc[(degree + k) % 7]) % 12 for k in (0, 2, 4))  # type: ignore[return-value]


def roman(mode: str, degree: int) -> str:
    """Roman-numeral label of the diatonic triad on ``degree``: upper case major, lower case
    minor, ``°`` diminished (major: I ii iii IV V vi vii°; natural minor: i ii° III iv v VI VII)."""
    sc = scale_of(mode)
    third = (sc[(degree + 2) % 7] - sc[degree]) % 12
    fifth = (sc[(degree + 4) % 7] - sc[degree]) % 12
    name = _ROMAN[degree]
    if third == 4:
        return name
    return name.lower() + ("°" if fifth == 6 else "")


def scale_degree(pitch: int, tonic: int, mode: str) -> int | None:
    """1-based scale degree of ``pitch`` in the key, or None when it is not diatonic."""
    off = (pitch - tonic) % 12
    sc = scale_of(mode)
    return sc.index(off) + 1 if off in sc else None


def diatonic_index(pitch: int, tonic: int, mode: str) -> int | None:
    """Position of a diatonic ``pitch`` on the scale counted in steps from the tonic of
    octave 0 (consecutive scale tones differ by 1), or None when it is not diatonic."""
    off = (pitch - tonic) % 12
    sc = scale_of(mode)
    if off not in sc:
        return None
    octave = (pitch - tonic - off) // 12
    return octave * 7 + sc.index(off)


def pitch_of_diatonic_index(index: int, tonic: int, mode: str) -> int:
    """Inverse of :func:`diatonic_index` (tonic taken as a MIDI pitch class 0-11)."""
    octave, step = divmod(index, 7)
    return tonic + 12 * octave + scale_of(mode)[step]


def contour_name(intervals: tuple[int, ...]) -> str:
    """Contour of a three-note line from its two signed intervals (``up-down`` ...)."""
    return "-".join("up" if d > 0 else "down" for d in intervals)

"""Transcription baseline for MGBench grounding: notes from the audio, answers by rule.

No language model is involved. For each clip:

1. **Onsets**: peaks of the feature bank's full-band onset curve above
   ``mgbench_baseline.onset_threshold`` of the clip's largest peak, at least
   ``min_ioi_s`` apart.
2. **Offsets**: the first frame after the attack where the level has fallen
   ``offset_drop_db`` below the note's attack peak, else the next onset (or the clip end).
3. **Pitch**: librosa ``pyin`` (semitone resolution, A0-C8) over ``pitch_window_s`` after
   each attack; the median voiced f0, rounded to a MIDI pitch.

Answering: the question text is matched against the phrasings MGBench uses and the
answer computed from the transcribed notes. Supported: every 3N family (ABS, REL, ORD,
PAT) and the 2B questions that follow from notes alone -- intervals, downbeats and bars
(bar 2 is taken to start at the attack nearest the middle of the excerpt's sounding
span), bar comparison and the exact / rhythmic repetition of bar 1. Questions about
beats inside a bar, the key, chords and harmonic patterns need meter and key estimation
that the baseline does not do; it gives no answer to them (they count as not following
the instruction, so IFR shows the coverage).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import librosa
import numpy as np

from timingbench.audio import load_clip
from timingbench.config import Config
from timingbench.convert import frames_to_time
from timingbench.curves import local_peaks, strongest_apart
from timingbench.features.bank import compute_bank
from timingbench.memo import process_cache
from timingbench.mgbench_gen.theory import (
    HARMONIC_PATTERN_NAMES,
    INTERVAL_NAMES,
    MODES,
    PITCH_CLASS_NAMES,
    contour_name,
    diatonic_index,
    roman,
    scale_degree,
    triad_pitch_classes,
)
from timingbench.mgbench_gen.theory import (
    HARMONIC_PATTERNS as _PATTERNS,
)
from timingbench.mgbench_gen.two_bar import derived_pattern
from timingbench.params.base import zero_if_off

#: Krumhansl-Kessler key profiles (Krumhansl 1990, probe-tone ratings), C major / C minor.
_KK_MAJOR = (6.35, 2.23, 3.48, 2.33, 4.38, 4.09, 2.52, 5.19, 2.39, 3.66, 2.29, 2.88)
_KK_MINOR = (6.33, 2.68, 3.52, 5.38, 2.60, 3.53, 2.54, 4.75, 3.98, 2.69, 3.34, 3.17)

_NAME_RE = re.compile(r"^([A-G]#?)(-?\d+)$")


@dataclass(frozen=True)
class HeardNote:
    """A transcribed note: onset and offset in seconds, MIDI pitch (None when unvoiced)."""

    onset_s: float
    offset_s: float
    pitch: int | None


def _peaks(curve: np.ndarray, *, threshold: float, min_gap: int) -> list[int]:
    top = float(np.max(curve)) if curve.size else 0.0
    if top <= 0.0:
        return []
    cand = local_peaks(curve, 0, curve.size, edges="interior", strict_right=True, min_value=threshold * top)
    return strongest_apart(curve, cand, separation=min_gap)


def transcribe(audio: str | Path, cfg: Config) -> list[HeardNote]:
    """Transcribe a monophonic piano clip into notes.

    Parameters
    ----------
    audio : str or Path
        The clip.
    cfg : Config
        Its ``mgbench_baseline`` parameters; the clip and its feature bank are read with it.
        ``onset_threshold`` switched off keeps every local peak of the onset curve,
        ``offset_drop_db`` switched off ends each note at the next attack.

    Returns
    -------
    notes : list of HeardNote
        In time order.

    Raises
    ------
    ClipError
        If the audio cannot be read.
    """
    p = cfg.params.mgbench_baseline
    clip = load_clip(audio, cfg)
    bank = compute_bank(clip, cfg, separation="none")
    sr, hop = bank.sr, bank.hop
    # a switched-off threshold keeps every local peak; a switched-off drop ends each note
    # at the next attack
    onsets = _peaks(np.asarray(bank.onset_full), threshold=zero_if_off(p.onset_threshold),
                    min_gap=max(1, bank.grid.frames(p.min_ioi_s)))
    rms = np.asarray(bank.rms_db)
    drop = np.inf if p.offset_drop_db is None else p.offset_drop_db
    w0, w1 = (float(v) for v in p.pitch_window_s)
    frame_len = p.pyin_frame_length
    out: list[HeardNote] = []
    for i, k in enumerate(onsets):
        nxt = onsets[i + 1] if i + 1 < len(onsets) else rms.size - 1
        peak = float(np.max(rms[k:min(k + 8, nxt + 1)]))
        below = np.flatnonzero(rms[k + 2:nxt] < peak - drop)
        end = k + 2 + int(below[0]) if below.size else nxt
        on_s, off_s = (float(x) for x in frames_to_time([k, end], sr=sr, hop=hop))
        s0 = int((on_s + w0) * sr)
        s1 = max(int(min(on_s + w1, off_s) * sr), s0 + frame_len + 2 * hop)
        seg = clip.samples[s0:min(s1, clip.samples.size)]
        pitch = None
        if seg.size >= frame_len:
            f0, voiced, _ = librosa.pyin(seg, fmin=p.pyin_fmin_hz, fmax=p.pyin_fmax_hz, sr=sr,
                                         frame_length=frame_len, hop_length=hop, center=False, resolution=1.0)
            if np.any(voiced):
                pitch = int(round(float(np.nanmedian(librosa.hz_to_midi(f0[voiced])))))
        out.append(HeardNote(round(on_s, 6), round(off_s, 6), pitch))
    return out


# ----------------------------------------------------------------------------- answering

Predicate = Callable[[list[HeardNote]], list[int] | None]


def _pitch_of(text: str) -> int | None:
    m = _NAME_RE.match(text)
    if m is None:
        return None
    return PITCH_CLASS_NAMES.index(m.group(1)) + 12 * (int(m.group(2)) + 1)


def _p(notes: list[HeardNote]) -> list[int]:
    return [n.pitch if n.pitch is not None else -1 for n in notes]


def _steps(notes: list[HeardNote]) -> list[int]:
    p = _p(notes)
    return [p[i + 1] - p[i] for i in range(len(p) - 1)]


def _pairs(notes: list[HeardNote], pred: Callable[[int], bool]) -> list[int]:
    return sorted({j for i, d in enumerate(_steps(notes)) if pred(d) for j in (i, i + 1)})


def _targets_of(d: int) -> Callable[[int], bool]:
    return lambda x: x == d


def _bar_split(notes: list[HeardNote]) -> int:
    """Index of the first note of bar 2: the attack nearest the middle of the sounding span."""
    if len(notes) < 2:
        return len(notes)
    mid = (notes[0].onset_s + notes[-1].offset_s) / 2
    return min(range(1, len(notes)), key=lambda i: abs(notes[i].onset_s - mid))


def _bars(notes: list[HeardNote]) -> dict[int, list[int]]:
    k = _bar_split(notes)
    return {1: list(range(k)), 2: list(range(k, len(notes)))}


def _iois(notes: list[HeardNote], idx: list[int], end: float) -> list[float]:
    on = [notes[i].onset_s for i in idx] + [end]
    span = on[-1] - on[0]
    return [(on[j + 1] - on[j]) / span for j in range(len(idx))] if span > 0 else []


def _same_rhythm(notes: list[HeardNote]) -> bool:
    b = _bars(notes)
    if len(b[1]) != len(b[2]) or not b[1]:
        return False
    r1 = _iois(notes, b[1], notes[b[2][0]].onset_s)
    r2 = _iois(notes, b[2], notes[b[2][0]].onset_s + (notes[b[2][0]].onset_s - notes[0].onset_s))
    return bool(np.all(np.abs(np.asarray(r1) - np.asarray(r2)) < 0.08))


def _kk_correlation(notes: list[HeardNote], tonic: int, mode: str) -> float:
    hist = np.zeros(12)
    for n in notes:
        if n.pitch is not None:
            hist[n.pitch % 12] += n.offset_s - n.onset_s
    prof = _KK_MAJOR if mode == "major" else _KK_MINOR
    return float(np.corrcoef(hist, np.roll(prof, tonic))[0, 1]) if hist.std() > 0 else 0.0


def estimate_harmony(notes: list[HeardNote]) -> tuple[int, str, dict[int, int]]:
    """Key and bar chords of a two-bar excerpt, searched jointly.

    Every key (12 tonics x major / natural minor) and every two-chord progression of the
    five harmonic patterns is scored by, in order: fewest notes outside the key, fewest
    bars whose first note is not a tone of the bar's chord, most sounding time on chord
    tones, and the Krumhansl-Kessler correlation of the duration-weighted pitch-class
    histogram (Krumhansl 1990).

    Returns
    -------
    tonic : int
        Pitch class 0-11.
    mode : str
        ``major`` or ``minor``.
    chords : dict
        Bar (1, 2) -> 0-based scale degree of its triad (bars without notes left out).
    """
    bars = _bars(notes)
    best: tuple[tuple[float, ...], int, str, dict[int, int]] | None = None
    for mode in MODES:
        for tonic in range(12):
            outside = sum(1 for n in notes if n.pitch is not None and scale_degree(n.pitch, tonic, mode) is None)
            kk = _kk_correlation(notes, tonic, mode)
            for _, firsts, second in _PATTERNS:
                for first in firsts:
                    chords = {1: first, 2: second}
                    miss, cover = 0, 0.0
                    for b, idx in bars.items():
                        if not idx:
                            continue
                        pcs = triad_pitch_classes(tonic, mode, chords[b])
                        head = notes[idx[0]].pitch
                        miss += int(head is None or head % 12 not in pcs)
                        cover += sum(notes[i].offset_s - notes[i].onset_s for i in idx
                                     if (notes[i].pitch or 0) % 12 in pcs and notes[i].pitch is not None)
                    key = (-float(outside), -float(miss), round(cover, 3), kk)
                    if best is None or key > best[0]:
                        best = (key, tonic, mode, {b: chords[b] for b, idx in bars.items() if idx})
    if best is None:
        return 0, "major", {}
    return best[1], best[2], best[3]


@process_cache(maxsize=256)
def _tonal_cached(notes: tuple[HeardNote, ...]) -> tuple[int, str, tuple[tuple[int, int], ...]]:
    tonic, mode, chords = estimate_harmony(list(notes))
    return tonic, mode, tuple(sorted(chords.items()))


def _tonal(notes: list[HeardNote]) -> tuple[int, str, dict[int, int]]:
    """:func:`estimate_harmony`, computed once per transcription (every question of a clip asks it)."""
    tonic, mode, chords = _tonal_cached(tuple(notes))
    return tonic, mode, dict(chords)


def _rules() -> list[tuple[re.Pattern[str], Callable[[re.Match[str], list[HeardNote]], tuple[list[int], bool]]]]:
    """(question pattern, answer function) pairs; an answer is (note indices, merge runs)."""
    R: list[tuple[re.Pattern[str], Callable[[re.Match[str], list[HeardNote]], tuple[list[int], bool]]]] = []

    def rule(pat: str, merge: bool = False) -> Callable[[Callable[..., list[int]]], None]:
        def deco(fn: Callable[..., list[int]]) -> None:
            R.append((re.compile("^" + pat + "$"), lambda m, n: (fn(m, n), merge)))
        return deco

    def where(notes: list[HeardNote], pred: Callable[[int], bool]) -> list[int]:
        return [i for i, q in enumerate(_p(notes)) if q >= 0 and pred(q)]

    rule(r"Locate the note\(s\) whose pitch is (\d+) \(MIDI\)\.")(lambda m, n: where(n, _targets_of(int(m.group(1)))))
    rule(r"Locate the note\(s\) whose pitch is ([A-G]#?-?\d+)\.")(
        lambda m, n: where(n, _targets_of(_pitch_of(m.group(1)) or -99)))
    rule(r"Locate the note\(s\) with pitch class ([A-G]#?)\.")(
        lambda m, n: where(n, lambda q: q % 12 == PITCH_CLASS_NAMES.index(m.group(1))))
    rule(r"Locate the note\(s\) higher than (\d+) \(MIDI\)\.")(lambda m, n: where(n, lambda q: q > int(m.group(1))))
    rule(r"Locate the note\(s\) lower than (\d+) \(MIDI\)\.")(lambda m, n: where(n, lambda q: q < int(m.group(1))))
    rule(r"Locate the highest note\.")(lambda m, n: where(n, lambda q: q == max(_p(n))) if n else [])
    rule(r"Locate the lowest note\.")(lambda m, n: where(n, lambda q: q == min(x for x in _p(n) if x >= 0))
                                      if any(x >= 0 for x in _p(n)) else [])
    rule(r"Locate the longest note\.")(lambda m, n: [int(np.argmax([x.offset_s - x.onset_s for x in n]))] if n else [])
    rule(r"Locate the shortest note\.")(lambda m, n: [int(np.argmin([x.offset_s - x.onset_s for x in n]))] if n else [])
    for word, ref in (("first", 0), ("last", -1)):
        rule(rf"Locate the note\(s\) higher than the {word} note\.")(
            lambda m, n, ref=ref: where(n, lambda q: q > _p(n)[ref]) if n else [])
        rule(rf"Locate the note\(s\) lower than the {word} note\.")(
            lambda m, n, ref=ref: where(n, lambda q: q < _p(n)[ref]) if n else [])
    rule(r"Locate the later note\(s\) with the same pitch as the first note\.")(
        lambda m, n: [i for i in range(1, len(n)) if _p(n)[i] == _p(n)[0]])
    for k, word in enumerate(("first", "second", "third")):
        rule(rf"Locate the {word} note\.")(lambda m, n, k=k: [k] if k < len(n) else [])
    rule(r"Locate the last note\.")(lambda m, n: [len(n) - 1] if n else [])
    rule(r"Locate the second-to-last note\.")(lambda m, n: [len(n) - 2] if len(n) >= 2 else [])
    rule(r"Locate the pair of notes separated by (\d+) semitone\(s\)\.")(
        lambda m, n: _pairs(n, lambda d: abs(d) == int(m.group(1))))
    rule(r"Locate the ascending pair of notes\.")(lambda m, n: _pairs(n, lambda d: d > 0))
    rule(r"Locate the descending pair of notes\.")(lambda m, n: _pairs(n, lambda d: d < 0))
    rule(r"Locate the repeated note pair\.")(lambda m, n: _pairs(n, lambda d: d == 0))
    rule(r"Locate the pair of notes an octave apart\.")(lambda m, n: _pairs(n, lambda d: abs(d) == 12))
    rule(r"Locate the note\(s\) reached by a step \(1 or 2 semitones\)\.")(
        lambda m, n: [i + 1 for i, d in enumerate(_steps(n)) if 1 <= abs(d) <= 2])
    rule(r"Locate the note\(s\) reached by a leap \(more than 2 semitones\)\.")(
        lambda m, n: [i + 1 for i, d in enumerate(_steps(n)) if abs(d) > 2])
    rule(r"Locate the three notes forming an? ([a-z]+-[a-z]+) contour\.")(
        lambda m, n: [0, 1, 2] if len(n) == 3 and contour_name(tuple(_steps(n))) == m.group(1) else [])
    # 2B: intervals
    names = "|".join(re.escape(x) for x in INTERVAL_NAMES[1:])
    rule(r"Locate the repeated note\(s\)\.")(lambda m, n: [i + 1 for i, d in enumerate(_steps(n)) if d == 0])
    rule(rf"Locate the note\(s\) reached by an? ({names})\.")(
        lambda m, n: [i + 1 for i, d in enumerate(_steps(n)) if abs(d) == INTERVAL_NAMES.index(m.group(1))])
    rule(rf"Locate the note\(s\) reached by an? (ascending|descending) ({names})\.")(
        lambda m, n: [i + 1 for i, d in enumerate(_steps(n)) if abs(d) == INTERVAL_NAMES.index(m.group(2))
                      and (d > 0) == (m.group(1) == "ascending")])
    # 2B: bars, downbeats, bar comparison, repetition
    rule(r"Locate the downbeat note\(s\)\.")(lambda m, n: [0, _bar_split(n)] if len(n) >= 2 else list(range(len(n))))
    rule(r"Locate bar ([12])\.", True)(lambda m, n: _bars(n)[int(m.group(1))])

    def compare(n: list[HeardNote], key: Callable[[list[int]], float], want_more: bool) -> list[int]:
        b = _bars(n)
        if not b[1] or not b[2]:
            return []
        a, c = key(b[1]), key(b[2])
        if abs(a - c) < 1e-9:
            return []
        return b[1] if (a > c) == want_more else b[2]

    rule(r"Locate the bar with more notes\.", True)(lambda m, n: compare(n, lambda ix: len(ix), True))
    rule(r"Locate the bar with fewer notes\.", True)(lambda m, n: compare(n, lambda ix: len(ix), False))
    rule(r"Locate the bar with the higher average pitch\.", True)(
        lambda m, n: compare(n, lambda ix: float(np.mean([_p(n)[i] for i in ix])), True))
    rule(r"Locate the bar containing the highest note\.", True)(
        lambda m, n: [i for b in _bars(n).values() if any(_p(n)[j] == max(_p(n)) for j in b) for i in b] if n else [])
    rule(r"Locate the exact repetition of the first bar\.", True)(
        lambda m, n: _bars(n)[2]
        if _same_rhythm(n) and [_p(n)[i] for i in _bars(n)[1]] == [_p(n)[i] for i in _bars(n)[2]]
        else [])
    rule(r"Locate the bar that repeats the rhythm of the first bar\.", True)(
        lambda m, n: _bars(n)[2] if _same_rhythm(n) else [])

    def sequence(n: list[HeardNote]) -> list[int]:
        b = _bars(n)
        if not _same_rhythm(n) or [_p(n)[i] for i in b[1]] == [_p(n)[i] for i in b[2]]:
            return []
        tonic, mode, _ = _tonal(n)
        shifts = {(diatonic_index(_p(n)[j], tonic, mode) or -99) - (diatonic_index(_p(n)[i], tonic, mode) or 99)
                  for i, j in zip(b[1], b[2], strict=True)}
        return b[2] if len(shifts) == 1 else []

    rule(r"Locate the sequence \(the first bar transposed within the key\)\.", True)(lambda m, n: sequence(n))
    # 2B: tonality, chords, harmonic pattern (estimated key and bar chords)
    rule(r"Locate the note\(s\) on ([A-G]#?)\.")(
        lambda m, n: where(n, lambda q: q % 12 == PITCH_CLASS_NAMES.index(m.group(1))))
    rule(r"Locate the note\(s\) on the tonic\.")(lambda m, n: where(n, lambda q: q % 12 == _tonal(n)[0]))
    def on_degree(n: list[HeardNote], d: int) -> list[int]:
        tonic, mode, _ = _tonal(n)
        return where(n, lambda q: scale_degree(q, tonic, mode) == d)

    rule(r"Locate the note\(s\) on scale degree (\d)\.")(lambda m, n: on_degree(n, int(m.group(1))))

    def region(n: list[HeardNote], label: str) -> list[int]:
        tonic, mode, chords = _tonal(n)
        return [i for b, idx in _bars(n).items() if b in chords and roman(mode, chords[b]) == label for i in idx]

    def chord_tones(n: list[HeardNote], bars: tuple[int, ...], inside: bool) -> list[int]:
        tonic, mode, chords = _tonal(n)
        b = _bars(n)
        return [i for k in bars if k in chords for i in b[k]
                if (_p(n)[i] % 12 in triad_pitch_classes(tonic, mode, chords[k])) == inside]

    rule(r"Locate the region where the harmony is ([ivIV]+°?)\.", True)(lambda m, n: region(n, m.group(1)))
    rule(r"Locate the chord tones of bar ([12])\.")(lambda m, n: chord_tones(n, (int(m.group(1)),), True))
    rule(r"Locate the non-chord tones\.")(lambda m, n: chord_tones(n, (1, 2), False))
    pattern_names = "|".join(re.escape(x) for x in HARMONIC_PATTERN_NAMES)

    def pattern(n: list[HeardNote], name: str) -> list[int]:
        _, _, chords = _tonal(n)
        if 1 not in chords or 2 not in chords:
            return []
        return list(range(len(n))) if derived_pattern((chords[1], chords[2])) == name else []

    rule(rf"Locate the ({pattern_names})\.", True)(lambda m, n: pattern(n, m.group(1)))
    return R


_RULES = _rules()


def _merge(notes: list[HeardNote], idx: list[int], merge: bool) -> list[list[float]]:
    ids = sorted(set(i for i in idx if 0 <= i < len(notes)))
    if not merge:
        return [[notes[i].onset_s, notes[i].offset_s] for i in ids]
    out: list[list[float]] = []
    run: list[int] = []
    for i in ids + [-10]:
        if run and i != run[-1] + 1:
            out.append([notes[run[0]].onset_s, notes[run[-1]].offset_s])
            run = []
        if i >= 0:
            run.append(i)
    return out


def answer(question: str, notes: list[HeardNote]) -> list[list[float]] | None:
    """Spans answering ``question`` from transcribed ``notes``; None when unsupported.

    Returns
    -------
    spans : list of [start, end] or None
        Seconds; ``[]`` is an explicit empty answer.
    """
    for pat, fn in _RULES:
        m = pat.match(question.strip())
        if m is not None:
            idx, merge = fn(m, notes)
            return _merge(notes, idx, merge)
    return None


def run_baseline(rows: list[dict[str, Any]], base: Path, cfg: Config,
                 on_clip: Callable[[], None] | None = None) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Answer every grounding question of a generated split from its audio.

    Parameters
    ----------
    rows : list of dict
        ``mgbench.jsonl`` rows (with ``audio_path`` relative to ``base``).
    base : Path
        The split folder.
    cfg : Config
    on_clip : callable, optional
        Called once per transcribed clip (progress).

    Returns
    -------
    answers : list of dict
        Response rows ``{"id", "intervals"}`` for the supported questions.
    counts : dict
        ``answered``, ``unsupported`` and ``understanding`` (skipped) question counts.
    """
    by_clip: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_clip.setdefault(str(r["audio_path"]), []).append(r)
    out: list[dict[str, Any]] = []
    counts = {"answered": 0, "unsupported": 0, "understanding": 0}
    for audio, qs in by_clip.items():
        ground = [q for q in qs if q.get("task") == "grounding"]
        counts["understanding"] += len(qs) - len(ground)
        if ground:
            notes = transcribe(base / audio, cfg)
            for q in ground:
                spans = answer(str(q["question"]), notes)
                if spans is None:
                    counts["unsupported"] += 1
                    continue
                counts["answered"] += 1
                out.append({"id": q["id"], "intervals": spans})
        if on_clip is not None:
            on_clip()
    return out, counts

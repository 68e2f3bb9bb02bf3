"""The scenario catalogue: seeded recipe builders and :data:`RECIPES`.

A recipe turns a seeded :class:`Ctx` and a few keyword parameters into a :class:`Plan`:
the parts of an arrangement, the prompt row's events and sentences, the
:class:`~timingbench.render.truth_rules.TruthRule` by which each instructed event's truth
is read from the MIDI notes, and the gain envelope (cuts, pauses, fades). Nothing here
writes a file; :func:`timingbench.render.pipeline.render_recipe` renders a plan.
"""

from __future__ import annotations

import inspect
import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from timingbench.config import Config
from timingbench.errors import ParameterError
from timingbench.families import FAMILY_NAMES
from timingbench.params.generation import RenderParams
from timingbench.render.arrangement import (
    KICK,
    SNARE,
    Grid,
    Harmony,
    Note,
    Part,
    anchor_notes,
    clip_notes,
    generate_part,
    random_harmony,
    tidy,
)
from timingbench.render.instruments import (
    INSTRUMENTS,
    STYLES,
    InstrumentSpec,
    StyleSpec,
    instrument,
    style,
    styles_with_family,
)
from timingbench.render.synth import GainOp
from timingbench.render.truth_rules import TruthRule

#: Families an instrument event can target (the family registry's; ``mix`` is not one).
#: The longest instructed duration a prompt asks for (paper Sec. III-A).
MAX_PROMPT_S = 30.0


@dataclass
class Plan:
    """A recipe's output before rendering."""

    scenario: str
    style: str
    phrase: str
    parts: list[Part]
    events: list[dict[str, Any]]
    rules: list[TruthRule]
    sentences: list[str]
    envelope: list[GainOp] = field(default_factory=list)
    prompt_family: str = "single_event"
    tempo: dict[str, Any] | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    intro: str | None = None
    keep_exact: tuple[str, ...] = ()
    #: The tempo grid and harmony the parts were generated on (the source of the rendered controls).
    grid: Grid | None = None
    harmony: Harmony | None = None


@dataclass(frozen=True)
class ScenarioParams:
    """The constants the scenario builders read.

    Attributes
    ----------
    render : RenderParams
        The ``render`` section (offset and gap ranges, fade depth, accent ring).
    default_tolerance_s : float
        ``search.default_tolerance_s``: the on-time tolerance written into every event.
    fade_point_below_loud_db : float
        ``mix.fade_point_below_loud_db``: where a rendered fade's truth lies.
    tempo_tolerance_pct : float
        ``tempo.tolerance_pct``: the tolerance written into every tempo target.
    """

    render: RenderParams
    default_tolerance_s: float
    fade_point_below_loud_db: float
    tempo_tolerance_pct: float

    @classmethod
    def from_config(cls, config: Config) -> ScenarioParams:
        """Gather the constants from ``config``'s parameter sets."""
        return cls(render=config.params.render,
                   default_tolerance_s=float(config.params.search.default_tolerance_s),
                   fade_point_below_loud_db=float(config.params.mix.fade_point_below_loud_db),
                   tempo_tolerance_pct=float(config.params.tempo.tolerance_pct))


@dataclass
class Ctx:
    """What every recipe builder receives."""

    rng: np.random.Generator
    params: ScenarioParams
    duration_s: float
    prompt_s: float
    sr: int


def recipe_rng(name: str, seed: int) -> np.random.Generator:
    """The generator of recipe ``name`` at ``seed`` (independent per recipe name)."""
    return np.random.default_rng(np.random.SeedSequence([int(seed), zlib.crc32(name.encode())]))


# ----------------------------------------------------------------------------- helpers

def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _at(t: float, rng: np.random.Generator) -> str:
    """'at exactly the 6th second' or 'at exactly 6.5 seconds'."""
    if abs(t - round(t)) < 1e-9 and rng.random() < 0.5:
        return f"at exactly the {_ordinal(int(round(t)))} second"
    return f"at exactly {t:g} seconds"


def _choose_target(rng: np.random.Generator, *, family: str | None, target: str | None,
                   style_name: str | None) -> tuple[StyleSpec, InstrumentSpec]:
    if target is not None:
        spec = instrument(target)
        if spec.role == "click":
            raise ParameterError("target 'click' is a tempo reference, not an instrument event target")
        if family is not None and family != spec.family:
            raise ParameterError(f"target {target!r} is family {spec.family!r}, not {family!r}")
        names = [s for s in STYLES if spec.name in STYLES[s].instruments]
        if style_name is not None:
            st = style(style_name)
        elif names:
            st = STYLES[names[int(rng.integers(len(names)))]]
        else:
            st = STYLES["cinematic"]
        return st, spec
    if family is None:
        family = FAMILY_NAMES[int(rng.integers(len(FAMILY_NAMES)))]
    cands = styles_with_family(family)
    if style_name is not None:
        st = style(style_name)
        if st.name not in cands:
            raise ParameterError(
                f"style {style_name!r} has no {family} instrument; styles with one: {cands}")
    else:
        st = STYLES[cands[int(rng.integers(len(cands)))]]
    pool = [INSTRUMENTS[i] for i in st.instruments if INSTRUMENTS[i].family == family]
    return st, pool[int(rng.integers(len(pool)))]


def _pick_style(rng: np.random.Generator, style_name: str | None) -> StyleSpec:
    if style_name is not None:
        return style(style_name)
    names = sorted(STYLES)
    return STYLES[names[int(rng.integers(len(names)))]]


def _bed(rng: np.random.Generator, st: StyleSpec, *, exclude_families: set[str], n: int,
         exclude: frozenset[str] | set[str] = frozenset()) -> list[InstrumentSpec]:
    """Pick ``n`` bed instruments: foundation first, at most one drum kit, distinct families
    from the excluded ones."""
    chosen: list[InstrumentSpec] = []

    def ok(spec: InstrumentSpec) -> bool:
        if spec.family in exclude_families or spec.name in exclude or spec in chosen:
            return False
        return not (spec.is_drum and any(c.is_drum for c in chosen))

    found = [INSTRUMENTS[i] for i in st.foundation]
    others = [INSTRUMENTS[i] for i in st.instruments if i not in st.foundation]
    for spec in found:
        if len(chosen) >= max(2, n - 1):
            break
        if ok(spec) and rng.random() < 0.85:
            chosen.append(spec)
    order = rng.permutation(len(others))
    for k in order:
        if len(chosen) >= n:
            break
        if ok(others[int(k)]):
            chosen.append(others[int(k)])
    for spec in found:
        if len(chosen) >= n:
            break
        if ok(spec):
            chosen.append(spec)
    return chosen


def _bpm(rng: np.random.Generator, st: StyleSpec, bpm: float | None) -> float:
    if bpm is not None:
        if not 30.0 <= bpm <= 260.0:
            raise ParameterError(f"bpm must lie in [30, 260], got {bpm!r}")
        return float(bpm)
    lo, hi = st.bpm_range
    return float(round(rng.uniform(lo, hi)))


def _instructed(ctx: Ctx, time_s: float | None, *, lo_frac: float = 0.2, hi_frac: float = 0.7,
                lo_min: float = 3.0) -> float:
    if time_s is not None:
        if not 0.0 < time_s < ctx.prompt_s:
            raise ParameterError(f"time_s must lie inside (0, {ctx.prompt_s}) s, got {time_s!r}")
        return float(time_s)
    lo = max(lo_min, math.ceil(lo_frac * ctx.prompt_s))
    hi = max(lo, math.floor(hi_frac * ctx.prompt_s))
    return float(ctx.rng.integers(int(lo), int(hi) + 1))


def _offset(ctx: Ctx, t: float, offset_s: float | None, *, required: bool, lo_s: float = 1.5,
            hi_margin_s: float = 2.0) -> float:
    """Signed delivery offset in seconds; drawn in ``render.off_time_offset_s`` when required."""
    lo_off, hi_off = (float(v) for v in ctx.params.render.off_time_offset_s)
    hi_s = ctx.prompt_s - hi_margin_s
    if offset_s is not None:
        if required and not lo_off <= abs(offset_s) <= hi_off:
            raise ParameterError(
                f"offset_s of an off-time delivery must have magnitude in [{lo_off}, {hi_off}] s, "
                f"got {offset_s!r}")
        if not lo_s <= t + offset_s <= hi_s:
            raise ParameterError(
                f"time_s + offset_s = {t + offset_s:g} s falls outside [{lo_s:g}, {hi_s:g}] s")
        return float(offset_s)
    if not required:
        return 0.0
    mag = round(float(ctx.rng.uniform(lo_off, hi_off)), 2)
    sign = 1.0 if ctx.rng.random() < 0.5 else -1.0
    for _ in range(2):
        if lo_s <= t + sign * mag <= hi_s:
            return sign * mag
        sign = -sign
    mag = round(max(lo_off, min(mag, max(t - lo_s, hi_s - t))), 2)
    sign = -1.0 if t - mag >= lo_s else 1.0
    return sign * mag


def _part(name: str, spec: InstrumentSpec, notes: list[Note], rng: np.random.Generator) -> Part:
    return Part(name=name, spec=spec, notes=tidy(notes), volume=int(rng.integers(92, 111)))


def _gen(spec: InstrumentSpec, ctx: Ctx, grid: Grid, harmony: Harmony, t0: float, t1: float, *,
         level: float = 1.0, anchor: bool = False, feel: str = "straight") -> list[Note]:
    notes = generate_part(spec, grid=grid, harmony=harmony, rng=ctx.rng, t0=t0, t1=t1, level=level,
                          feel=feel)
    if anchor:
        length = min(grid.beat_s if spec.role != "pad" else grid.bar_s * 0.98, t1 - t0)
        notes = anchor_notes(spec, grid=grid, harmony=harmony, t=t0, rng=ctx.rng, level=level,
                             length_s=length) + [n for n in notes if n.start > t0 + 1e-6]
    return tidy(notes)


def _end_at(notes: list[Note], spec: InstrumentSpec, t_end: float, *, grid: Grid, harmony: Harmony,
            rng: np.random.Generator) -> list[Note]:
    """Make a part stop exactly at ``t_end``.

    Percussion ends with a final hit at ``t_end``; a tonal part's last note(s) end there.
    """
    if spec.family == "percussion":
        kept = [n for n in notes if n.start < t_end - 0.05]
        if spec.is_drum:  # kick and snare: a crash would ring for seconds past the exit
            v = min(127, spec.velocity + 5)
            final = [Note(t_end, t_end + 0.1, KICK, v), Note(t_end, t_end + 0.1, SNARE, v)]
        else:
            final = anchor_notes(spec, grid=grid, harmony=harmony, t=t_end, rng=rng, length_s=0.1)
        return tidy(kept + final)
    kept = clip_notes(notes, t0=0.0, t1=t_end - 0.15)
    kept = [Note(n.start, min(n.end, t_end), n.pitch, n.velocity) for n in kept]
    last_start = max((n.start for n in kept), default=-1.0)
    if last_start < t_end - 2.0 * grid.beat_s:
        t_a = t_end - grid.beat_s
        kept = [n for n in kept if n.end <= t_a] + anchor_notes(
            spec, grid=grid, harmony=harmony, t=t_a, rng=rng, length_s=grid.beat_s)
    else:
        kept = [Note(n.start, t_end, n.pitch, n.velocity) if abs(n.start - last_start) < 1e-9 else n
                for n in kept]
    return tidy(kept)


def _is_perc(spec: InstrumentSpec) -> bool:
    return spec.family == "percussion"


def _salience(spec: InstrumentSpec, quiet: bool) -> int:
    if quiet:
        return 1
    return 3 if spec.family in ("percussion", "brass") or spec.role in ("drums", "stabs") else 2


def _event(kind: str, target: str, family: str, t: float, tol: float) -> dict[str, Any]:
    return {"kind": kind, "target": target, "family": family, "time_s": round(float(t), 3),
            "tolerance_s": tol}


def _tol(ctx: Ctx) -> float:
    return ctx.params.default_tolerance_s


def _bed_parts(ctx: Ctx, specs: list[InstrumentSpec], grid: Grid, harmony: Harmony, t0: float,
               t1: float, *, level: float = 1.0, anchor: bool = False) -> list[Part]:
    parts = []
    for spec in specs:
        parts.append(_part(spec.name, spec, _gen(spec, ctx, grid, harmony, t0, t1, level=level,
                                                 anchor=anchor), ctx.rng))
    return parts


def _target_bed(ctx: Ctx, st: StyleSpec, tgt: InstrumentSpec, origin_s: float, bpm: float | None
                ) -> tuple[Grid, Harmony, list[Part]]:
    """The grid (a bar line at ``origin_s``), the harmony and 3-4 parts of style ``st`` playing
    through the clip, none of the target's family."""
    grid = Grid(_bpm(ctx.rng, st, bpm), origin_s, swing=st.swing)
    harmony = random_harmony(ctx.rng)
    bed = _bed(ctx.rng, st, exclude_families={tgt.family}, n=int(ctx.rng.integers(3, 5)))
    return grid, harmony, _bed_parts(ctx, bed, grid, harmony, 0.0, ctx.duration_s)


def _undelivered_entry(ctx: Ctx, scenario: str, st: StyleSpec, tgt: InstrumentSpec, t: float, grid: Grid,
                       harmony: Harmony, parts: list[Part], **meta: Any) -> Plan:
    """The plan of a prompt asking for ``tgt`` to enter at ``t`` whose entrance never happens
    (truth ``absent``); ``meta`` follows the common keys."""
    return Plan(grid=grid, harmony=harmony,
        scenario=scenario, style=st.name, phrase=_phrase(ctx, st), parts=parts,
        events=[_event("instrument_entry", tgt.target, tgt.family, t, _tol(ctx))],
        rules=[TruthRule("absent", character=tgt.character, salience=_salience(tgt, False))],
        sentences=[f"Bring in {tgt.target} {_at(t, ctx.rng)}."],
        meta={"target": tgt.name, "target_family": tgt.family, "instructed_s": t, "bpm": grid.bpm, **meta},
    )


def _setup_mix(ctx: Ctx, style_name: str | None, bpm: float | None, origin_s: float, *,
               n: tuple[int, int] = (3, 5), need_drums: bool = False
               ) -> tuple[StyleSpec, Grid, Harmony, list[InstrumentSpec]]:
    st = _pick_style(ctx.rng, style_name)
    grid = Grid(_bpm(ctx.rng, st, bpm), origin_s, swing=st.swing)
    harmony = random_harmony(ctx.rng)
    specs = _bed(ctx.rng, st, exclude_families=set(), n=int(ctx.rng.integers(n[0], n[1] + 1)))
    if need_drums and not any(s.is_drum for s in specs):
        kits = [INSTRUMENTS[i] for i in st.instruments if INSTRUMENTS[i].is_drum]
        if kits:
            specs = [kits[0]] + specs
    return st, grid, harmony, specs


def _phrase(ctx: Ctx, st: StyleSpec) -> str:
    return st.phrases[int(ctx.rng.integers(len(st.phrases)))]


# ----------------------------------------------------------------------------- scenarios

#: How a prompt words an instrument's entry or exit (one wording drawn per clip), ``{t}`` the target
#: and ``{at}`` the time.
DELIVERY_SENTENCES = {
    "instrument_entry": ("Bring in {t} {at}.", "Introduce {t} {at}.", "Add {t} {at}."),
    "instrument_exit": ("Have the {t} drop out {at}.", "Stop the {t} {at}.", "Take the {t} out {at}."),
}


def _delivery(ctx: Ctx, *, kind: str, off: bool, family: str | None = None, target: str | None = None,
              style: str | None = None, time_s: float | None = None, offset_s: float | None = None,
              bpm: float | None = None, quiet_target: bool = False) -> Plan:
    """The target enters (``instrument_entry``) or stops (``instrument_exit``) over a bed of other
    families, at the instructed time or (``off``) at that time plus a signed offset."""
    leaves = kind == "instrument_exit"
    st, tgt = _choose_target(ctx.rng, family=family, target=target, style_name=style)
    if leaves:  # the target plays long enough to be heard before it stops
        t = _instructed(ctx, time_s, lo_frac=0.3, lo_min=5.0)
        off_s = _offset(ctx, t, offset_s, required=off, lo_s=3.0)
    else:
        t = _instructed(ctx, time_s)
        off_s = _offset(ctx, t, offset_s, required=off)
    actual = t + off_s
    grid, harmony, parts = _target_bed(ctx, st, tgt, actual, bpm)
    if leaves:
        notes = _end_at(_gen(tgt, ctx, grid, harmony, 0.0, actual + grid.bar_s), tgt, actual, grid=grid,
                        harmony=harmony, rng=ctx.rng)
        rule = TruthRule("last_on" if _is_perc(tgt) else "last_off", ("target",), character=tgt.character,
                         salience=_salience(tgt, False))
        intro: str | None = f"Create a {{phrase}} track featuring {tgt.target} for exactly {{dur}} seconds."
    else:
        notes = _gen(tgt, ctx, grid, harmony, actual, ctx.duration_s, level=0.6 if quiet_target else 1.0,
                     anchor=True)
        rule = TruthRule("first_on", ("target",), character=tgt.character,
                         salience=_salience(tgt, quiet_target))
        intro = None
    parts.append(_part("target", tgt, notes, ctx.rng))
    wordings = DELIVERY_SENTENCES[kind]
    sentence = wordings[int(ctx.rng.integers(len(wordings)))]
    return Plan(grid=grid, harmony=harmony,
        scenario=f"{'exit' if leaves else 'entry'}_{'off' if off else 'on'}_time", style=st.name,
        phrase=_phrase(ctx, st), parts=parts, events=[_event(kind, tgt.target, tgt.family, t, _tol(ctx))],
        rules=[rule], sentences=[sentence.format(t=tgt.target, at=_at(t, ctx.rng))], intro=intro,
        meta={"target": tgt.name, "target_family": tgt.family, "instructed_s": t, "offset_s": off_s,
              "delivered_s": actual, "bpm": grid.bpm},
    )


def entry_on_time(ctx: Ctx, **kw: Any) -> Plan:
    """The target instrument enters exactly at the instructed time."""
    return _delivery(ctx, kind="instrument_entry", off=False, **kw)


def entry_off_time(ctx: Ctx, **kw: Any) -> Plan:
    """The target enters at the instructed time plus a signed offset (0.3-4 s)."""
    return _delivery(ctx, kind="instrument_entry", off=True, **kw)


def exit_on_time(ctx: Ctx, **kw: Any) -> Plan:
    """The target instrument plays from the start and stops exactly at the instructed time."""
    return _delivery(ctx, kind="instrument_exit", off=False, **kw)


def exit_off_time(ctx: Ctx, **kw: Any) -> Plan:
    """The target stops at the instructed time plus a signed offset (0.3-4 s)."""
    return _delivery(ctx, kind="instrument_exit", off=True, **kw)


_NEG_KINDS = ("instrument_entry", "instrument_exit", "music_end", "music_pause",
              "music_start_after_silence", "mix_energy_increase")


def never_delivered(ctx: Ctx, *, kind: str = "instrument_entry", family: str | None = None,
                    target: str | None = None, style: str | None = None,
                    time_s: float | None = None, bpm: float | None = None) -> Plan:
    """The instructed event never happens (a negative); ``kind`` selects which event."""
    if kind not in _NEG_KINDS:
        raise ParameterError(f"kind must be one of {list(_NEG_KINDS)}, got {kind!r}")
    t = _instructed(ctx, time_s)
    if kind in ("instrument_entry", "instrument_exit"):
        st, tgt = _choose_target(ctx.rng, family=family, target=target, style_name=style)
        grid, harmony, parts = _target_bed(ctx, st, tgt, t, bpm)
        intro = None
        if kind == "instrument_exit":  # the target plays throughout and never stops
            parts.append(_part("target", tgt, _gen(tgt, ctx, grid, harmony, 0.0, ctx.duration_s),
                               ctx.rng))
            sentence = f"Have the {tgt.target} drop out {_at(t, ctx.rng)}."
            intro = f"Create a {{phrase}} track featuring {tgt.target} for exactly {{dur}} seconds."
        else:
            sentence = f"Bring in {tgt.target} {_at(t, ctx.rng)}."
        ev = _event(kind, tgt.target, tgt.family, t, _tol(ctx))
        rule = TruthRule("absent", character=tgt.character, salience=_salience(tgt, False))
        meta: dict[str, Any] = {"target": tgt.name, "target_family": tgt.family}
    else:
        st, grid, harmony, specs = _setup_mix(ctx, style, bpm, t)
        parts = _bed_parts(ctx, specs, grid, harmony, 0.0, ctx.duration_s)
        intro = None
        sentence = {
            "music_end": f"End the music abruptly {_at(t, ctx.rng)}.",
            "music_pause": f"Pause the music {_at(t, ctx.rng)} for about 4 seconds, then bring it back.",
            "music_start_after_silence": f"Start with {t:g} seconds of silence, then begin the music.",
            "mix_energy_increase": f"{_at(t, ctx.rng).capitalize()}, make the track bigger and louder "
                                   "with more instruments.",
        }[kind]
        ev = _event(kind, "music", "mix", t, _tol(ctx))
        rule = TruthRule("absent", character="gradual" if kind == "music_end" else "hard", salience=3)
        meta = {}
    meta.update({"instructed_s": t, "bpm": grid.bpm, "negative_kind": kind})
    return Plan(grid=grid, harmony=harmony,scenario=f"never_delivered:{kind}", style=st.name,
                phrase=_phrase(ctx, st), parts=parts,
                events=[ev], rules=[rule], sentences=[sentence], intro=intro, meta=meta)


def busy_decoy(ctx: Ctx, *, family: str | None = None, target: str | None = None,
               style: str | None = None, time_s: float | None = None, bpm: float | None = None,
               n_decoys: int | None = None) -> Plan:
    """A dense arrangement whose other instruments enter near the instructed time; the
    target never enters."""
    st, tgt = _choose_target(ctx.rng, family=family, target=target, style_name=style)
    t = _instructed(ctx, time_s)
    grid = Grid(_bpm(ctx.rng, st, bpm), t, swing=st.swing)
    harmony = random_harmony(ctx.rng)
    bed = _bed(ctx.rng, st, exclude_families={tgt.family}, n=int(ctx.rng.integers(5, 7)))
    nd = int(ctx.rng.integers(2, 4)) if n_decoys is None else int(n_decoys)
    if not 1 <= nd <= len(bed):
        raise ParameterError(f"n_decoys must lie in [1, {len(bed)}], got {n_decoys!r}")
    tonal = [s for s in bed if not s.is_drum]
    decoy_specs = (tonal + [s for s in bed if s.is_drum])[:nd]
    parts: list[Part] = []
    decoys: list[dict[str, Any]] = []
    for spec in bed:
        if spec in decoy_specs:
            d = 0.0 if not decoys else round(float(ctx.rng.uniform(-0.5, 0.5)), 3)
            start = t + d
            parts.append(_part(spec.name, spec, _gen(spec, ctx, grid, harmony, start, ctx.duration_s,
                                                     anchor=True), ctx.rng))
            decoys.append({"part": spec.name, "family": spec.family, "planned_s": start})
        else:
            notes = _gen(spec, ctx, grid, harmony, 0.0, ctx.duration_s)
            if spec.is_drum:  # a fill and a crash right on the instructed time
                notes += anchor_notes(spec, grid=grid, harmony=harmony, t=t, rng=ctx.rng, length_s=0.1)
            parts.append(_part(spec.name, spec, notes, ctx.rng))
    return _undelivered_entry(ctx, "busy_decoy", st, tgt, t, grid, harmony, parts, decoys=decoys)


def pre_existing(ctx: Ctx, *, family: str | None = None, target: str | None = None,
                 style: str | None = None, time_s: float | None = None, bpm: float | None = None,
                 gap_s: float | None = None, quiet_before: bool | None = None) -> Plan:
    """The target already plays before its instructed entrance (absence-before must reject).

    The target plays from the start, optionally falls silent ``gap_s`` seconds before the
    instructed time, and plays an accent at it.
    """
    st, tgt = _choose_target(ctx.rng, family=family, target=target, style_name=style)
    t = _instructed(ctx, time_s, lo_min=6.0)
    gap = float([0.0, 1.0, 3.5][int(ctx.rng.integers(3))]) if gap_s is None else float(gap_s)
    if not 0.0 <= gap <= t - 2.0:
        raise ParameterError(f"gap_s must lie in [0, time_s - 2] = [0, {t - 2:g}] s, got {gap_s!r}")
    quiet = bool(ctx.rng.random() < 0.5) if quiet_before is None else bool(quiet_before)
    grid, harmony, parts = _target_bed(ctx, st, tgt, t, bpm)
    before = _gen(tgt, ctx, grid, harmony, 0.0, t - gap, level=0.55 if quiet else 1.0)
    after = _gen(tgt, ctx, grid, harmony, t, ctx.duration_s, level=1.1, anchor=True)
    parts.append(_part("target", tgt, before + after, ctx.rng))
    return _undelivered_entry(ctx, "pre_existing", st, tgt, t, grid, harmony, parts, gap_s=gap,
                              quiet_before=quiet)


def _quantize(t: float, sr: int) -> float:
    return round(t * sr) / sr


def pause(ctx: Ctx, *, style: str | None = None, time_s: float | None = None,
          offset_s: float | None = None, gap_s: float | None = None, bpm: float | None = None) -> Plan:
    """The music stops abruptly (a sample-accurate cut) and resumes 3-5 s later."""
    lo_g, hi_g = (float(v) for v in ctx.params.render.pause_gap_s)
    gap = round(float(ctx.rng.uniform(lo_g, hi_g)), 2) if gap_s is None else float(gap_s)
    if not lo_g <= gap <= hi_g:
        raise ParameterError(f"gap_s must lie in [{lo_g}, {hi_g}] s, got {gap_s!r}")
    t = _instructed(ctx, time_s, hi_frac=0.55)
    off_s = _offset(ctx, t, offset_s, required=False, hi_margin_s=gap + 2.0)
    t_p = _quantize(t + off_s, ctx.sr)
    t_r = t_p + gap
    st, grid, harmony, specs = _setup_mix(ctx, style, bpm, t_r)
    parts = []
    for spec in specs:
        before = _gen(spec, ctx, grid, harmony, 0.0, t_p)
        after = _gen(spec, ctx, grid, harmony, t_r, ctx.duration_s, anchor=True)
        parts.append(_part(spec.name, spec, before + after, ctx.rng))
    return Plan(grid=grid, harmony=harmony,
        scenario="pause", style=st.name, phrase=_phrase(ctx, st), parts=parts,
        events=[_event("music_pause", "music", "mix", t, _tol(ctx))],
        rules=[TruthRule("fixed", fixed_s=t_p, character="hard", salience=3)],
        sentences=[f"Pause the music {_at(t, ctx.rng)} for about {gap:.0f} seconds, then bring it back."],
        envelope=[GainOp("mute", t_p, t_r)],
        meta={"instructed_s": t, "offset_s": off_s, "delivered_s": t_p, "gap_s": gap, "resume_s": t_r,
              "bpm": grid.bpm, "edge": "cut"},
    )


def _end_common(ctx: Ctx, style_name: str | None, time_s: float | None, offset_s: float | None,
                bpm: float | None) -> tuple[float, float, StyleSpec, Grid, Harmony, list[InstrumentSpec]]:
    t = _instructed(ctx, time_s, lo_frac=0.4, hi_frac=0.85, lo_min=6.0)
    off_s = _offset(ctx, t, offset_s, required=False, lo_s=4.0, hi_margin_s=0.0)
    st, grid, harmony, specs = _setup_mix(ctx, style_name, bpm, t + off_s)
    return t, off_s, st, grid, harmony, specs


def end_cut(ctx: Ctx, *, style: str | None = None, time_s: float | None = None,
            offset_s: float | None = None, bpm: float | None = None) -> Plan:
    """The music ends with an abrupt, sample-accurate cut."""
    t, off_s, st, grid, harmony, specs = _end_common(ctx, style, time_s, offset_s, bpm)
    t_c = _quantize(t + off_s, ctx.sr)
    parts = _bed_parts(ctx, specs, grid, harmony, 0.0, t_c)
    return Plan(grid=grid, harmony=harmony,
        scenario="end_cut", style=st.name, phrase=_phrase(ctx, st), parts=parts,
        events=[_event("music_end", "music", "mix", t, _tol(ctx))],
        rules=[TruthRule("fixed", fixed_s=t_c, character="hard", salience=3)],
        sentences=[f"End the music abruptly {_at(t, ctx.rng)}."],
        envelope=[GainOp("cut", t_c)],
        meta={"instructed_s": t, "offset_s": off_s, "delivered_s": t_c, "bpm": grid.bpm, "edge": "cut"},
    )


def end_decay(ctx: Ctx, *, style: str | None = None, time_s: float | None = None,
              offset_s: float | None = None, bpm: float | None = None) -> Plan:
    """The music ends on a last accent (every part hits together) that rings out."""
    t, off_s, st, grid, harmony, specs = _end_common(ctx, style, time_s, offset_s, bpm)
    t_a = t + off_s
    ring = ctx.params.render.accent_ring_s
    parts = []
    for spec in specs:
        notes = [n for n in _gen(spec, ctx, grid, harmony, 0.0, t_a) if n.start < t_a - 0.1]
        notes = [Note(n.start, min(n.end, t_a), n.pitch, n.velocity) for n in notes]
        notes += anchor_notes(spec, grid=grid, harmony=harmony, t=t_a, rng=ctx.rng, level=1.1,
                              length_s=min(1.5, ring))
        parts.append(_part(spec.name, spec, notes, ctx.rng))
    return Plan(grid=grid, harmony=harmony,
        scenario="end_decay", style=st.name, phrase=_phrase(ctx, st), parts=parts,
        events=[_event("music_end", "music", "mix", t, _tol(ctx))],
        rules=[TruthRule("last_on", ("*",), character="hard", salience=3)],
        sentences=[f"End the track with a final hit {_at(t, ctx.rng)} and let it ring out."],
        envelope=[GainOp("fade", t_a + ring, t_a + ring + 0.4, 60.0)],
        meta={"instructed_s": t, "offset_s": off_s, "delivered_s": t_a, "bpm": grid.bpm,
              "edge": "accent"},
    )


def end_fade(ctx: Ctx, *, style: str | None = None, time_s: float | None = None,
             offset_s: float | None = None, fade_s: float | None = None, bpm: float | None = None) -> Plan:
    """The music fades out; the truth is where the fade gain reaches the configured fade
    point (``mix.fade_point_below_loud_db``, 23 dB) below the loud level."""
    depth = ctx.params.render.fade_depth_db
    point = ctx.params.fade_point_below_loud_db
    length = round(float(ctx.rng.uniform(4.0, 8.0)), 2) if fade_s is None else float(fade_s)
    if not 1.0 <= length <= 15.0:
        raise ParameterError(f"fade_s must lie in [1, 15] s, got {fade_s!r}")
    t, off_s, st, grid, harmony, specs = _end_common(ctx, style, time_s, offset_s, bpm)
    t_point = t + off_s
    f0 = t_point - length * point / depth
    if f0 < 2.0:
        raise ParameterError(f"a {length:g} s fade reaching -{point:g} dB at {t_point:g} s starts "
                             "before 2 s; use a later time_s or a shorter fade_s")
    op = GainOp("fade", f0, f0 + length, depth)
    parts = _bed_parts(ctx, specs, grid, harmony, 0.0, op.t1)
    return Plan(grid=grid, harmony=harmony,
        scenario="end_fade", style=st.name, phrase=_phrase(ctx, st), parts=parts,
        events=[_event("music_end", "music", "mix", t, _tol(ctx))],
        rules=[TruthRule("fixed", fixed_s=op.fade_time_at(point), character="gradual", salience=2)],
        sentences=[f"Fade the music out so that it ends {_at(t, ctx.rng)}."],
        envelope=[op],
        meta={"instructed_s": t, "offset_s": off_s, "delivered_s": t_point, "bpm": grid.bpm,
              "edge": "fade", "fade_start_s": f0, "fade_end_s": op.t1, "fade_depth_db": depth},
    )


def energy_increase(ctx: Ctx, *, style: str | None = None, time_s: float | None = None,
                    offset_s: float | None = None, bpm: float | None = None,
                    base_level: float | None = None) -> Plan:
    """A sparse, quiet bed; at the event new layers enter and the bed plays louder.

    ``base_level`` (velocity scale of the bed before the event, drawn in [0.5, 0.85]) sets
    how large the rise is; the bed plays at 1.1 afterwards.
    """
    level0 = round(float(ctx.rng.uniform(0.5, 0.85)), 2) if base_level is None else float(base_level)
    if not 0.2 <= level0 <= 0.9:
        raise ParameterError(f"base_level must lie in [0.2, 0.9], got {base_level!r}")
    st = _pick_style(ctx.rng, style)
    t = _instructed(ctx, time_s, lo_frac=0.3, lo_min=5.0)
    off_s = _offset(ctx, t, offset_s, required=False, lo_s=4.0)
    t_e = t + off_s
    grid = Grid(_bpm(ctx.rng, st, bpm), t_e, swing=st.swing)
    harmony = random_harmony(ctx.rng)
    base = _bed(ctx.rng, st, exclude_families=set(), n=2,
                exclude={i for i in st.instruments if INSTRUMENTS[i].is_drum})
    new = _bed(ctx.rng, st, exclude_families={s.family for s in base}, n=int(ctx.rng.integers(2, 4)))
    parts = []
    for spec in base:
        notes = _gen(spec, ctx, grid, harmony, 0.0, t_e, level=level0)
        notes += _gen(spec, ctx, grid, harmony, t_e, ctx.duration_s, level=1.1, anchor=True)
        parts.append(_part(spec.name, spec, notes, ctx.rng))
    new_names = []
    for spec in new:
        parts.append(_part("new_" + spec.name, spec,
                           _gen(spec, ctx, grid, harmony, t_e, ctx.duration_s, level=1.1, anchor=True),
                           ctx.rng))
        new_names.append("new_" + spec.name)
    return Plan(grid=grid, harmony=harmony,
        scenario="energy_increase", style=st.name, phrase=_phrase(ctx, st), parts=parts,
        events=[_event("mix_energy_increase", "music", "mix", t, _tol(ctx))],
        rules=[TruthRule("first_on", tuple(new_names), character="hard", salience=3)],
        sentences=[f"{_at(t, ctx.rng).capitalize()}, make the track bigger and louder with more "
                   "instruments."],
        meta={"instructed_s": t, "offset_s": off_s, "delivered_s": t_e, "bpm": grid.bpm,
              "new_layers": [s.name for s in new], "base_layers": [s.name for s in base],
              "base_level": level0},
    )


def silence_then_start(ctx: Ctx, *, style: str | None = None, time_s: float | None = None,
                       offset_s: float | None = None, bpm: float | None = None) -> Plan:
    """Digital silence, then every part starts together."""
    t = _instructed(ctx, time_s, lo_frac=0.1, hi_frac=0.4, lo_min=2.0)
    off_s = _offset(ctx, t, offset_s, required=False, lo_s=0.5)
    t_s = t + off_s
    st, grid, harmony, specs = _setup_mix(ctx, style, bpm, t_s)
    parts = _bed_parts(ctx, specs, grid, harmony, t_s, ctx.duration_s, anchor=True)
    hard = any(s.character == "hard" for s in specs)
    sentence = [f"Start with {t:g} seconds of silence, then begin the music.",
                f"Keep complete silence until {_at(t, ctx.rng)[len('at exactly '):]}, then start the music."][
        int(ctx.rng.integers(2))]
    return Plan(grid=grid, harmony=harmony,
        scenario="silence_then_start", style=st.name, phrase=_phrase(ctx, st), parts=parts,
        events=[_event("music_start_after_silence", "music", "mix", t, _tol(ctx))],
        rules=[TruthRule("first_on", ("*",), character="hard" if hard else "soft", salience=3)],
        sentences=[sentence],
        meta={"instructed_s": t, "offset_s": off_s, "delivered_s": t_s, "bpm": grid.bpm},
    )


def sequence(ctx: Ctx, *, family: str | None = None, target: str | None = None,
             style: str | None = None, bpm: float | None = None,
             offsets_s: tuple[float, float, float] | list[float] | None = None) -> Plan:
    """An event sequence: silence, then the music starts; the target enters; the music is
    cut. ``offsets_s`` displaces each delivery (on time when omitted)."""
    st, tgt = _choose_target(ctx.rng, family=family, target=target, style_name=style)
    p_s = ctx.prompt_s
    if p_s < 10.0:
        raise ParameterError(f"a sequence needs duration_s >= 10 s, got {ctx.duration_s:g}")

    def step(lo: float, hi: float) -> float:
        a, b = max(1, math.ceil(lo * p_s)), max(1, math.floor(hi * p_s))
        return float(ctx.rng.integers(a, max(a, b) + 1))

    t1 = step(0.07, 0.13)
    t2 = t1 + step(0.15, 0.25)
    t3 = min(t2 + step(0.15, 0.3), math.floor(p_s) - 1.0)
    offs = (0.0, 0.0, 0.0) if offsets_s is None else tuple(float(o) for o in offsets_s)
    if len(offs) != 3:
        raise ParameterError(f"offsets_s needs three offsets in seconds, got {offsets_s!r}")
    d1, d2, d3 = t1 + offs[0], t2 + offs[1], _quantize(t3 + offs[2], ctx.sr)
    if not (0.5 <= d1 < d2 - 1.0 and d2 < d3 - 1.0 and d3 <= ctx.prompt_s):
        raise ParameterError(f"offsets_s {offs} do not keep the deliveries ordered inside the clip")
    grid = Grid(_bpm(ctx.rng, st, bpm), d1, swing=st.swing)
    harmony = random_harmony(ctx.rng)
    bed = _bed(ctx.rng, st, exclude_families={tgt.family}, n=int(ctx.rng.integers(3, 5)))
    parts = _bed_parts(ctx, bed, grid, harmony, d1, d3, anchor=True)
    parts.append(_part("target", tgt, _gen(tgt, ctx, grid, harmony, d2, d3, anchor=True), ctx.rng))
    tol = _tol(ctx)
    return Plan(grid=grid, harmony=harmony,
        scenario="sequence", style=st.name, phrase=_phrase(ctx, st), parts=parts,
        events=[_event("music_start_after_silence", "music", "mix", t1, tol),
                _event("instrument_entry", tgt.target, tgt.family, t2, tol),
                _event("music_end", "music", "mix", t3, tol)],
        rules=[TruthRule("first_on", ("*",), character="hard", salience=3),
               TruthRule("first_on", ("target",), character=tgt.character,
                         salience=_salience(tgt, False)),
               TruthRule("fixed", fixed_s=d3, character="hard", salience=3)],
        sentences=[f"Start with {t1:g} seconds of silence.", f"Bring in {tgt.target} {_at(t2, ctx.rng)}.",
                   f"End the music abruptly {_at(t3, ctx.rng)}."],
        envelope=[GainOp("cut", d3)],
        meta={"target": tgt.name, "target_family": tgt.family, "instructed_s": [t1, t2, t3],
              "offsets_s": list(offs), "delivered_s": [d1, d2, d3], "bpm": grid.bpm},
    )


_TEMPO_STYLES = ("rock_pop", "electronic", "jazz")


def _tempo(ctx: Ctx, *, kind: str, bpm: float | None, style: str | None,
           pattern: str = "groove") -> Plan:
    target = round(float(ctx.rng.uniform(50.0, 174.0)), 1) if bpm is None else float(bpm)
    if not 30.0 <= target <= 260.0:
        raise ParameterError(f"bpm must lie in [30, 260], got {bpm!r}")
    start = round(float(ctx.rng.uniform(0.1, 0.6)), 3)
    st = _pick_style(ctx.rng, style) if style is not None else STYLES[_TEMPO_STYLES[int(ctx.rng.integers(3))]]
    grid = Grid(target, start)
    harmony = random_harmony(ctx.rng)
    if pattern not in ("groove", "beat"):
        raise ParameterError(f"pattern must be 'groove' or 'beat', got {pattern!r}")
    feel = {"tempo_click": "straight", "tempo_drums": "straight", "tempo_half_time": "half",
            "tempo_double_time": "double"}[kind]
    if pattern == "beat" and kind == "tempo_drums":
        feel = "beat"
    parts: list[Part] = []
    if kind == "tempo_click":
        spec = INSTRUMENTS["click"]
        parts.append(_part("click", spec, _gen(spec, ctx, grid, harmony, start, ctx.duration_s), ctx.rng))
        phrase = "metronome click"
    else:
        kit = INSTRUMENTS["drum_machine" if st.name == "electronic" else "drums"]
        parts.append(_part("drums", kit, _gen(kit, ctx, grid, harmony, start, ctx.duration_s, feel=feel),
                           ctx.rng))
        accompaniment = () if feel == "beat" else (
            ("synth_bass", "warm_pad") if st.name == "electronic" else ("bass_guitar", "organ"))
        for name in accompaniment:
            spec = INSTRUMENTS[name]
            parts.append(_part(name, spec, _gen(spec, ctx, grid, harmony, start, ctx.duration_s,
                                                level=0.8), ctx.rng))
        phrase = _phrase(ctx, st)
    factors = {"straight": [], "beat": [], "half": [0.5], "double": [2.0]}[feel]
    text = (f"Create a {phrase} track at exactly {target:g} BPM for exactly {ctx.prompt_s:g} seconds."
            if kind != "tempo_click" else
            f"Create a steady click track at exactly {target:g} BPM for exactly {ctx.prompt_s:g} seconds.")
    return Plan(grid=grid, harmony=harmony,
        scenario=kind, style=st.name if kind != "tempo_click" else "click", phrase=phrase, parts=parts,
        events=[], rules=[], sentences=[], prompt_family="tempo",
        tempo={"bpm": target, "tolerance_pct": ctx.params.tempo_tolerance_pct},
        intro=text, meta={"bpm": target, "feel": feel, "ambiguous_factors": factors,
                          "first_beat_s": start},
        keep_exact=tuple(p.name for p in parts),
    )


def tempo_click(ctx: Ctx, *, bpm: float | None = None) -> Plan:
    """A click track (accented downbeats) at an exact tempo."""
    return _tempo(ctx, kind="tempo_click", bpm=bpm, style=None)


def tempo_drums(ctx: Ctx, *, bpm: float | None = None, style: str | None = None,
                pattern: str = "groove") -> Plan:
    """A drum pattern at an exact tempo.

    ``pattern="groove"``: the style's groove (off-beat hi-hats) with bass and chords, as a
    tempo prompt's answer. ``pattern="beat"``: drums alone, four on the floor with the
    hi-hat on the beat and a backbeat on 2 and 4 and no hit between beats, so the beat is
    the only pulse and the tempo is exact at one metrical level (tempo-check's reference).
    """
    return _tempo(ctx, kind="tempo_drums", bpm=bpm, style=style, pattern=pattern)


def tempo_half_time(ctx: Ctx, *, bpm: float | None = None, style: str | None = None) -> Plan:
    """Half-time feel (snare on beat 3 only) at an exact tempo: a tracker may report bpm/2."""
    return _tempo(ctx, kind="tempo_half_time", bpm=bpm, style=style)


def tempo_double_time(ctx: Ctx, *, bpm: float | None = None, style: str | None = None) -> Plan:
    """Double-time feel (kick/snare on eighths, sixteenth hats): a tracker may report 2*bpm."""
    return _tempo(ctx, kind="tempo_double_time", bpm=bpm, style=style)


Builder = Callable[..., Plan]

#: Recipe name -> builder. Every builder takes the context and keyword-only parameters.
RECIPES: dict[str, Builder] = {
    "entry_on_time": entry_on_time,
    "entry_off_time": entry_off_time,
    "exit_on_time": exit_on_time,
    "exit_off_time": exit_off_time,
    "never_delivered": never_delivered,
    "busy_decoy": busy_decoy,
    "pre_existing": pre_existing,
    "pause": pause,
    "end_cut": end_cut,
    "end_decay": end_decay,
    "end_fade": end_fade,
    "energy_increase": energy_increase,
    "silence_then_start": silence_then_start,
    "sequence": sequence,
    "tempo_click": tempo_click,
    "tempo_drums": tempo_drums,
    "tempo_half_time": tempo_half_time,
    "tempo_double_time": tempo_double_time,
}

_SHARED_ENTRY = ("family", "target", "style", "time_s", "offset_s", "bpm")
#: Parameters each recipe accepts (for validation and the docs).
RECIPE_PARAMS: dict[str, tuple[str, ...]] = {
    "entry_on_time": _SHARED_ENTRY + ("quiet_target",),
    "entry_off_time": _SHARED_ENTRY + ("quiet_target",),
    "exit_on_time": _SHARED_ENTRY,
    "exit_off_time": _SHARED_ENTRY,
}
for _name, _fn in RECIPES.items():
    if _name not in RECIPE_PARAMS:
        RECIPE_PARAMS[_name] = tuple(
            p.name for p in inspect.signature(_fn).parameters.values()
            if p.kind is inspect.Parameter.KEYWORD_ONLY)

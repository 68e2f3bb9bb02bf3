"""The TimingBench v1 prompt set: a seeded, template-based generator and its composition.

The set follows paper Sec. III-A: 100 single-event prompts, 100 event-sequence prompts
(two or three ordered events: silence until t1, entrance at t2, pause at t3, ...) and 50
tempo prompts, every one asking for exactly 30 s of instrumental audio. The composition is
fixed by a *plan* (which event kinds each prompt carries); the seed only changes the
wording, the style, the instruments and the instructed times. Every generated row is
checked against formats §1 with :func:`timingbench.prompts.parse_prompt` and the
totals against the ``prompts.*`` constants of the configuration before anything is
returned, so a generator bug can never produce a silently different set.

Design decisions (documented in ``docs/prompts.md``):

- Instrument events target the nine families in ``prompts.instrument_families``; each
  new instrument in a prompt takes the least-used family not yet used in that prompt, so
  the families are spread evenly and no prompt names two instruments of one family. A
  family's instruments are named by its ``prompt_targets`` in the family registry
  (``families.table``).
- Tempo prompts either ask for a tempo only or for a tempo plus one instrument entrance;
  the plan gives the exact number of each so that the event totals of the paper hold.
- An exit targets an instrument the prompt brought in earlier, or one the prompt says
  plays from the start, so every exit is musically possible.
- Instructed times lie in ``prompts.time_range_s`` on the ``prompts.time_grid_s`` grid,
  siblings at least ``prompts.min_sibling_gap_s`` apart.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from timingbench.config import Config
from timingbench.errors import ConfigError, ParameterError, PromptError
from timingbench.families import registry
from timingbench.prompts import EVENT_FAMILIES, MIX_KINDS, PROMPT_FAMILIES, parse_prompt

# Short kind codes used by the plan below.
_KIND = {
    "in": "instrument_entry",
    "out": "instrument_exit",
    "start": "music_start_after_silence",
    "end": "music_end",
    "pause": "music_pause",
    "energy": "mix_energy_increase",
}

#: The v1 plan: (prompt family, kinds of its events in time order, number of prompts).
#: Its totals are checked against ``prompts.family_counts`` and ``prompts.kind_counts``.
V1_PLAN: tuple[tuple[str, tuple[str, ...], int], ...] = (
    ("single_event", ("in",), 68),
    ("single_event", ("out",), 14),
    ("single_event", ("start",), 6),
    ("single_event", ("end",), 5),
    ("single_event", ("pause",), 4),
    ("single_event", ("energy",), 3),
    ("event_sequence", ("start", "in", "in"), 12),
    ("event_sequence", ("start", "in", "pause"), 4),
    ("event_sequence", ("start", "in", "out"), 5),
    ("event_sequence", ("in", "in", "in"), 14),
    ("event_sequence", ("in", "in", "out"), 15),
    ("event_sequence", ("in", "out", "in"), 8),
    ("event_sequence", ("in", "in", "end"), 6),
    ("event_sequence", ("in", "energy", "out"), 4),
    ("event_sequence", ("in", "out", "out"), 2),
    ("event_sequence", ("in", "in"), 21),
    ("event_sequence", ("in", "out"), 9),
    ("tempo", ("in",), 29),
    ("tempo", (), 21),
)

STYLES: tuple[str, ...] = (
    "cinematic electronic", "orchestral", "synthwave", "lo-fi hip hop", "jazz trio",
    "ambient", "pop", "indie rock", "funk", "bossa nova", "deep house", "techno",
    "drum and bass", "trap", "reggae", "blues", "folk", "country", "heavy metal",
    "chamber music", "epic trailer", "chillout", "downtempo", "dubstep", "disco",
    "neo-soul", "latin jazz", "afrobeat", "celtic folk", "post-rock", "new age",
    "minimalist", "neo-classical", "chiptune", "tango", "flamenco", "trip hop",
    "big band swing", "film noir", "progressive rock",
)

MOODS: tuple[str, ...] = (
    "tense", "uplifting", "melancholic", "driving", "dreamy", "dark", "playful",
    "energetic", "calm", "mysterious", "warm", "epic", "gritty", "nostalgic", "hopeful",
    "brooding", "bright", "laid-back",
)

_OPENERS = (
    "Create {a_mood} {style} track for exactly {dur} seconds, instrumental only.",
    "Compose exactly {dur} seconds of {mood} instrumental {style} music.",
    "Generate {a_mood} instrumental {style} piece that lasts exactly {dur} seconds.",
    "Write a {dur}-second instrumental {style} cue with {a_mood} feel.",
    "Produce exactly {dur} seconds of {mood} {style} music with no vocals.",
)
_TEMPO_OPENERS = (
    "Create {a_mood} {style} track at exactly {bpm} BPM, {dur} seconds long, instrumental only.",
    "Compose exactly {dur} seconds of {mood} instrumental {style} music at a steady {bpm} BPM.",
    "Generate {a_mood} instrumental {style} groove at exactly {bpm} BPM lasting {dur} seconds.",
    "Produce {dur} seconds of {mood} {style} music with no vocals, locked to {bpm} BPM.",
)
_ENTRY = (
    "Bring in {target} at {at}.",
    "Introduce {target} at {at}.",
    "Add {target} at {at}.",
    "Have {target} enter at {at}.",
    "Let {target} join at {at}.",
)
_ENTRY_SOLO = (  # single-event entrances also say the instrument is absent before
    "Bring in {target} at {at}.",
    "Keep {target} out at first and bring {it} in at {at}.",
    "Introduce {target} at {at}, not before.",
    "Add {target} at {at}.",
)
_EXIT_ENTERED = (
    "Take {it} out again at {at}.",
    "Drop {it} out at {at}.",
    "Remove {it} at {at}.",
    "Cut {it} at {at}.",
)
_EXIT_FROM_START = (
    "Have {target} play from the very start and drop out at {at}.",
    "Open with {target} and take {it} out at {at}.",
    "Feature {target} from the first second, then remove {it} at {at}.",
    "Start with {target} playing and cut {it} at {at}.",
)
_START = (
    "Keep the opening silent and start the music at {at}.",
    "Begin with silence; the music starts at {at}.",
    "Stay completely silent until {at}, then start the music.",
    "Leave silence at the top and begin playing at {at}.",
)
_END = (
    "End the music at {at} and stay silent after that.",
    "Stop the music completely at {at}.",
    "The music must end at {at}, followed by silence to the end.",
    "Bring everything to a stop at {at}.",
)
_PAUSE = (
    "Pause the music for a few seconds at {at}, then resume.",
    "Insert a short silent break at {at} before the music continues.",
    "Drop to silence briefly at {at} and then carry on.",
    "Put a brief pause in the music at {at}, then pick it back up.",
)
_ENERGY = (
    "Build to a full-energy drop at {at}.",
    "Kick the energy up sharply at {at} with the full arrangement.",
    "Make the track noticeably louder and fuller at {at}.",
    "Hit a big, intense climax at {at}.",
)


@dataclass(frozen=True)
class GeneratorSettings:
    """The ``prompts.*`` constants the generator reads.

    Attributes
    ----------
    id_prefix : str
        Prompt ids are ``<id_prefix>-0001`` ...
    duration_s : float
        Requested clip length in seconds.
    family_counts, kind_counts : dict of str to int
        Required totals (paper Table I).
    instrument_families : tuple of str
        Families instrument events may target.
    targets : dict of str to tuple of str
        Family -> how prompts name its instruments (the registry's ``prompt_targets``).
    time_range_s : tuple of float
        ``(lo, hi)`` in seconds: every instructed time lies in it.
    min_sibling_gap_s : float
        Minimum gap in seconds between instructed times of one prompt.
    time_grid_s : float
        Instructed times are multiples of it (seconds).
    bpm_choices : tuple of int
        Tempo targets are drawn from these (BPM).
    tempo_tolerance_pct : float
        Tempo tolerance written into every tempo target (percent).
    tolerance_s : float
        On-time tolerance written into every event (seconds).
    """

    id_prefix: str
    duration_s: float
    family_counts: dict[str, int]
    kind_counts: dict[str, int]
    instrument_families: tuple[str, ...]
    targets: Mapping[str, tuple[str, ...]]
    time_range_s: tuple[float, float]
    min_sibling_gap_s: float
    time_grid_s: float
    bpm_choices: tuple[int, ...]
    tempo_tolerance_pct: float
    tolerance_s: float


def settings_from_config(config: Config) -> GeneratorSettings:
    """Read and check the generator's constants.

    Parameters
    ----------
    config : Config
        Configuration with the ``prompts``, ``tempo`` and ``search`` sections.

    Returns
    -------
    settings : GeneratorSettings

    Raises
    ------
    ConfigError
        If ``prompts.instrument_families`` names a family the registry does not hold, or
        one without ``prompt_targets`` (ranges are checked by :meth:`PromptsParams.validate`).
    """
    p = config.params.prompts
    reg = registry(config)
    fams = tuple(p.instrument_families)
    bad = [f for f in fams if f not in reg.names]
    if bad or not fams:
        raise ConfigError(f"{config.source}: 'prompts.instrument_families' has non-instrument families {bad}")
    unnamed = [f for f in fams if not (row := reg.family(f)) or not row.prompt_targets]
    if unnamed:
        raise ConfigError(f"{config.source}: 'prompts.instrument_families' names {unnamed}, whose rows of "
                          "'families.table' give no 'prompt_targets'")
    lo, hi = (float(x) for x in p.time_range_s)
    return GeneratorSettings(
        id_prefix=p.id_prefix,
        duration_s=p.duration_s,
        family_counts={str(k): int(v) for k, v in p.family_counts.items()},
        kind_counts={str(k): int(v) for k, v in p.kind_counts.items()},
        instrument_families=fams,
        targets={f.name: f.prompt_targets for f in reg.rows if f.name in fams},
        time_range_s=(lo, hi),
        min_sibling_gap_s=p.min_sibling_gap_s,
        time_grid_s=p.time_grid_s,
        bpm_choices=tuple(int(b) for b in p.bpm_choices),
        tempo_tolerance_pct=float(config.params.tempo.tolerance_pct),
        tolerance_s=float(config.params.search.default_tolerance_s),
    )


def _total_mismatch(
    families: Counter[str], kinds: Counter[str], settings: GeneratorSettings
) -> tuple[str, str, int] | None:
    """The first configured family or kind total that the counts miss.

    Parameters
    ----------
    families, kinds : Counter of str
        Prompts per prompt family and events per kind.
    settings : GeneratorSettings

    Returns
    -------
    mismatch : (str, str, int) or None
        ``(what, field, wanted)``, e.g. ``("3 'tempo' prompts", "family_counts", 4)``;
        None when every total agrees.
    """
    totals = (("prompts", "family_counts", families, settings.family_counts),
              ("events", "kind_counts", kinds, settings.kind_counts))
    for unit, field, got, wanted in totals:
        for name, want in wanted.items():
            if got[name] != want:
                return f"{got[name]} {name!r} {unit}", field, want
    return None


def check_plan(
    plan: Sequence[tuple[str, tuple[str, ...], int]], *, settings: GeneratorSettings
) -> None:
    """Check that a plan yields exactly the configured family and kind totals.

    Parameters
    ----------
    plan : sequence of (str, tuple of str, int)
        ``(prompt family, kind codes, number of prompts)``.
    settings : GeneratorSettings

    Raises
    ------
    ConfigError
        Naming the family or kind whose total differs.
    """
    fam_n: Counter[str] = Counter()
    kind_n: Counter[str] = Counter()
    for fam, kinds, n in plan:
        if fam not in PROMPT_FAMILIES:
            raise ConfigError(f"plan: unknown prompt family {fam!r}")
        fam_n[fam] += n
        for k in kinds:
            kind_n[_KIND[k]] += n
    bad = _total_mismatch(fam_n, kind_n, settings)
    if bad is not None:
        what, field, want = bad
        raise ConfigError(f"plan gives {what}; 'prompts.{field}' wants {want}")
    extra = set(kind_n) - set(settings.kind_counts)
    if extra:
        raise ConfigError(f"plan uses kinds {sorted(extra)} that 'prompts.kind_counts' does not list")


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _fmt_seconds(t: float) -> str:
    return f"{int(t)}" if float(t).is_integer() else f"{t:g}"


def _ordinal(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"


def _at(t: float, rng: np.random.Generator) -> str:
    """Natural wording of an instructed time."""
    s = _fmt_seconds(t)
    forms = [f"exactly {s} seconds", f"exactly the {s}-second mark", f"precisely {s} s"]
    if float(t).is_integer():
        forms += [f"exactly the {_ordinal(int(t))} second", f"0:{int(t):02d} on the dot"]
    return forms[int(rng.integers(len(forms)))]


def _draw_times(n: int, *, s: GeneratorSettings, rng: np.random.Generator) -> list[float]:
    """``n`` sorted times on the grid inside the range, siblings >= the minimum gap apart."""
    if n == 0:
        return []
    lo, hi = s.time_range_s
    steps_gap = int(np.ceil(s.min_sibling_gap_s / s.time_grid_s - 1e-9))
    first = int(np.ceil(lo / s.time_grid_s - 1e-9))
    last = int(np.floor(hi / s.time_grid_s + 1e-9))
    slack = last - first - (n - 1) * steps_gap
    if slack < 0:
        raise ConfigError(
            f"{n} events do not fit in {s.time_range_s} s with gaps of {s.min_sibling_gap_s} s"
        )
    # Whole seconds read most naturally: three draws in four stay on the 1 s grid.
    whole = s.time_grid_s <= 1.0 and (1.0 / s.time_grid_s).is_integer() and rng.random() < 0.75
    u = np.sort(rng.integers(0, slack + 1, size=n))
    steps = [first + int(u[i]) + i * steps_gap for i in range(n)]
    if whole:
        per = int(round(1.0 / s.time_grid_s))
        # Round up to whole seconds from the back so that the order and gaps survive.
        rounded: list[int] = []
        for st in reversed(steps):
            r = -(-st // per) * per
            if rounded and rounded[-1] - r < steps_gap:
                r = st
            rounded.append(r)
        rounded.reverse()
        if rounded[-1] <= last and all(b - a >= steps_gap for a, b in zip(rounded, rounded[1:], strict=False)):
            steps = rounded
    return [round(st * s.time_grid_s, 6) for st in steps]


def _pick_family(counts: Counter[str], used: set[str], *, s: GeneratorSettings,
                 rng: np.random.Generator) -> str:
    free = [f for f in s.instrument_families if f not in used]
    low = min(counts[f] for f in free)
    cands = [f for f in free if counts[f] == low]
    return cands[int(rng.integers(len(cands)))]


def _choice(options: Sequence[str], rng: np.random.Generator) -> str:
    return options[int(rng.integers(len(options)))]


def _it(target: str) -> str:
    plural = target.endswith("s") and not target.startswith(("a ", "an ")) and target != "bass"
    return "them" if plural else "it"


def _cap(sentence: str) -> str:
    return sentence[:1].upper() + sentence[1:]


def _build_prompt(
    *, pid: str, family: str, codes: tuple[str, ...], s: GeneratorSettings,
    rng: np.random.Generator, fam_counts: Counter[str],
) -> dict[str, Any]:
    style = _choice(STYLES, rng)
    mood = _choice(MOODS, rng)
    dur = _fmt_seconds(s.duration_s)
    tempo: dict[str, float] | None = None
    if family == "tempo":
        bpm = s.bpm_choices[int(rng.integers(len(s.bpm_choices)))]
        tempo = {"bpm": float(bpm), "tolerance_pct": s.tempo_tolerance_pct}
        opener = _choice(_TEMPO_OPENERS, rng)
    else:
        bpm = 0
        opener = _choice(_OPENERS, rng)
    sentences = [opener.format(a_mood=f"{_article(mood)} {mood}", mood=mood, style=style,
                               dur=dur, bpm=bpm)]
    times = _draw_times(len(codes), s=s, rng=rng)
    events: list[dict[str, Any]] = []
    used: set[str] = set()
    entered: list[tuple[str, str]] = []  # (family, target) brought in earlier in this prompt
    for i, (code, t) in enumerate(zip(codes, times, strict=True)):
        kind = _KIND[code]
        at = _at(t, rng)
        if kind in MIX_KINDS:
            efam = "mix"
            target = "energy" if kind == "mix_energy_increase" else "music"
            table: tuple[str, ...] = {"music_start_after_silence": _START, "music_end": _END,
                     "music_pause": _PAUSE, "mix_energy_increase": _ENERGY}[kind]
            sentences.append(_choice(table, rng).format(at=at))
        elif kind == "instrument_exit" and entered and (codes[0] == "start" or rng.random() < 0.6):
            efam, target = entered.pop()
            sentences.append(_choice(_EXIT_ENTERED, rng).format(it=_it(target), at=at))
        else:
            efam = _pick_family(fam_counts, used, s=s, rng=rng)
            target = _choice(s.targets[efam], rng)
            used.add(efam)
            if kind == "instrument_entry":
                entered.append((efam, target))
                entry_table: tuple[str, ...] = _ENTRY_SOLO if len(codes) == 1 else _ENTRY
                sentences.append(_choice(entry_table, rng).format(target=target, it=_it(target), at=at))
            else:
                sentences.append(
                    _cap(_choice(_EXIT_FROM_START, rng).format(target=target, it=_it(target), at=at))
                )
        fam_counts[efam] += 1
        events.append({"id": f"{pid}/e{i + 1}", "kind": kind, "target": target, "family": efam,
                       "time_s": t, "tolerance_s": s.tolerance_s})
    return {"id": pid, "family": family, "text": " ".join(_cap(x) for x in sentences),
            "style": style, "duration_s": s.duration_s, "events": events, "tempo": tempo}


def generate_prompt_set(
    *, seed: int, config: Config,
    plan: Sequence[tuple[str, tuple[str, ...], int]] = V1_PLAN,
) -> list[dict[str, Any]]:
    """Generate the prompt rows of the set.

    Parameters
    ----------
    seed : int
        Seed of the wording, style, instrument and time draws (the composition is fixed
        by ``plan``). The same seed and configuration give identical rows.
    config : Config
        Configuration with the ``prompts``, ``tempo`` and ``search`` sections.
    plan : sequence of (str, tuple of str, int)
        ``(prompt family, kind codes, number of prompts)``; the v1 plan by default.

    Returns
    -------
    rows : list of dict
        Prompt rows in formats §1 format, ids ``<prefix>-0001`` ... in plan order.

    Raises
    ------
    ConfigError
        If the plan's totals differ from the configured ones, or times cannot fit.
    PromptError
        If a generated row breaks formats §1 (a generator bug; never expected).
    ParameterError
        If ``seed`` is negative.
    """
    if seed < 0:
        raise ParameterError(f"seed must be a non-negative integer, got {seed}")
    s = settings_from_config(config)
    check_plan(plan, settings=s)
    rng = np.random.default_rng(seed)
    fam_counts: Counter[str] = Counter()
    # Interleave the plan within each prompt family so that kinds mix across ids.
    rows: list[dict[str, Any]] = []
    texts: set[str] = set()
    number = 0
    for family in PROMPT_FAMILIES:
        slots = [codes for fam, codes, n in plan if fam == family for _ in range(n)]
        order = rng.permutation(len(slots))
        for j in order:
            number += 1
            pid = f"{s.id_prefix}-{number:04d}"
            for _attempt in range(100):
                row = _build_prompt(pid=pid, family=family, codes=slots[int(j)], s=s, rng=rng,
                                    fam_counts=fam_counts)
                if row["text"] not in texts:
                    break
                for e in row["events"]:  # undo the family counts of the discarded draw
                    fam_counts[e["family"]] -= 1
            else:  # pragma: no cover - 100 identical draws in a row cannot happen in practice
                raise PromptError(f"prompt {pid!r}: could not draw a unique text")
            texts.add(row["text"])
            parse_prompt(row, where="generated: ")
            rows.append(row)
    check_composition(rows, settings=s)
    return rows


def check_composition(rows: Iterable[Mapping[str, Any]], *, settings: GeneratorSettings) -> None:
    """Check generated rows against the configured totals and time rules.

    Raises
    ------
    PromptError
        Naming the prompt id and the rule broken, or the total that differs.
    """
    fam_n: Counter[str] = Counter()
    kind_n: Counter[str] = Counter()
    lo, hi = settings.time_range_s
    for row in rows:
        fam_n[row["family"]] += 1
        if row["duration_s"] != settings.duration_s:
            raise PromptError(f"prompt {row['id']!r}: field 'duration_s' must be {settings.duration_s}")
        times = [float(e["time_s"]) for e in row["events"]]
        for e in row["events"]:
            kind_n[e["kind"]] += 1
            if not lo - 1e-9 <= e["time_s"] <= hi + 1e-9:
                raise PromptError(f"prompt {row['id']!r}: event {e['id']!r} time {e['time_s']} outside {lo}-{hi} s")
        for a, b in zip(times, times[1:], strict=False):
            if b - a < settings.min_sibling_gap_s - 1e-9:
                raise PromptError(
                    f"prompt {row['id']!r}: sibling events {a} s and {b} s closer than "
                    f"{settings.min_sibling_gap_s} s"
                )
    bad = _total_mismatch(fam_n, kind_n, settings)
    if bad is not None:
        what, _, want = bad
        raise PromptError(f"set has {what}, wants {want}")


@dataclass(frozen=True)
class Composition:
    """Counts that describe a prompt set (what ``timingbench prompts stats`` prints).

    Attributes
    ----------
    n_prompts : int
    by_prompt_family : dict of str to int
    events_by_kind : dict of str to dict of str to int
        Event kind -> prompt family -> count.
    events_by_family : dict of str to int
        Event (target) family -> count.
    events_per_prompt : dict of int to int
        Number of events -> number of prompts.
    n_tempo_targets : int
    bpm_range : tuple of float or None
        Lowest and highest tempo target in BPM.
    n_styles : int
    duration_s : dict of float to int
        Requested duration in seconds -> number of prompts.
    time_range_s : tuple of float or None
        Earliest and latest instructed time in seconds.
    min_sibling_gap_s : float or None
        Smallest gap between sibling events in seconds.
    tolerance_s : dict of float to int
        Event tolerance in seconds -> number of events.
    """

    n_prompts: int
    by_prompt_family: dict[str, int]
    events_by_kind: dict[str, dict[str, int]]
    events_by_family: dict[str, int]
    events_per_prompt: dict[int, int]
    n_tempo_targets: int
    bpm_range: tuple[float, float] | None
    n_styles: int
    duration_s: dict[float, int]
    time_range_s: tuple[float, float] | None
    min_sibling_gap_s: float | None
    tolerance_s: dict[float, int]

    @property
    def n_events(self) -> int:
        """Total number of timed events."""
        return sum(self.events_by_family.values())


def composition(prompts: Iterable[Any], *, default_tolerance_s: float) -> Composition:
    """Count what a set of validated prompts contains.

    Parameters
    ----------
    prompts : iterable of timingbench.prompts.Prompt
        Validated prompts.
    default_tolerance_s : float
        Tolerance in seconds counted for events whose row gives none.

    Returns
    -------
    composition : Composition
    """
    fam: Counter[str] = Counter()
    kinds: dict[str, Counter[str]] = {}
    efam: Counter[str] = Counter()
    per: Counter[int] = Counter()
    durs: Counter[float] = Counter()
    tols: Counter[float] = Counter()
    bpms: list[float] = []
    styles: set[str] = set()
    times: list[float] = []
    gaps: list[float] = []
    n = 0
    for p in prompts:
        n += 1
        fam[p.family] += 1
        per[len(p.events)] += 1
        durs[p.duration_s] += 1
        styles.add(p.style)
        if p.tempo_bpm is not None:
            bpms.append(p.tempo_bpm)
        for e in p.events:
            kinds.setdefault(e.kind, Counter())[p.family] += 1
            efam[e.family] += 1
            tols[e.tolerance_s if e.tolerance_s is not None else default_tolerance_s] += 1
            times.append(e.time_s)
        gaps += [b.time_s - a.time_s for a, b in zip(p.events, p.events[1:], strict=False)]
    return Composition(
        n_prompts=n,
        by_prompt_family=dict(fam),
        events_by_kind={k: dict(v) for k, v in kinds.items()},
        events_by_family=dict(efam),
        events_per_prompt=dict(sorted(per.items())),
        n_tempo_targets=len(bpms),
        bpm_range=(min(bpms), max(bpms)) if bpms else None,
        n_styles=len(styles),
        duration_s=dict(durs),
        time_range_s=(min(times), max(times)) if times else None,
        min_sibling_gap_s=min(gaps) if gaps else None,
        tolerance_s=dict(tols),
    )


def format_composition(comp: Composition, *, source: str) -> str:
    """The composition as a plain-text table (paper Table I layout).

    Parameters
    ----------
    comp : Composition
    source : str
        Name of the prompt file, for the header.

    Returns
    -------
    text : str
    """
    from timingbench.prompts import EVENT_KINDS

    fams = [f for f in PROMPT_FAMILIES if f in comp.by_prompt_family]
    lines = [f"{source}: {comp.n_prompts} prompts, {comp.n_events} timed events, "
             f"{comp.n_tempo_targets} tempo targets, {comp.n_styles} styles", ""]
    head = f"{'event kind':<28}" + "".join(f"{f:>16}" for f in fams) + f"{'total':>8}"
    lines += [head, "-" * len(head)]
    lines.append(f"{'prompts':<28}" + "".join(f"{comp.by_prompt_family[f]:>16}" for f in fams)
                 + f"{comp.n_prompts:>8}")
    for k in EVENT_KINDS:
        row = comp.events_by_kind.get(k, {})
        lines.append(f"{k:<28}" + "".join(f"{row.get(f, 0):>16}" for f in fams)
                     + f"{sum(row.values()):>8}")
    tot = {f: sum(comp.events_by_kind.get(k, {}).get(f, 0) for k in EVENT_KINDS) for f in fams}
    lines.append(f"{'all timed events':<28}" + "".join(f"{tot[f]:>16}" for f in fams)
                 + f"{comp.n_events:>8}")
    lines += ["", "events per target family:"]
    lines += [f"  {f:<12} {comp.events_by_family[f]:>4}" for f in EVENT_FAMILIES if f in comp.events_by_family]
    lines.append("prompts by number of events: "
                 + ", ".join(f"{k}: {v}" for k, v in comp.events_per_prompt.items()))
    if comp.time_range_s:
        lines.append(f"instructed times: {comp.time_range_s[0]:g}-{comp.time_range_s[1]:g} s; "
                     f"smallest sibling gap: "
                     + (f"{comp.min_sibling_gap_s:g} s" if comp.min_sibling_gap_s is not None else "n/a"))
    if comp.bpm_range:
        lines.append(f"tempo targets: {comp.bpm_range[0]:g}-{comp.bpm_range[1]:g} BPM")
    lines.append("requested durations: " + ", ".join(f"{d:g} s x {n}" for d, n in sorted(comp.duration_s.items())))
    lines.append("event tolerances: " + ", ".join(f"{t:g} s x {n}" for t, n in sorted(comp.tolerance_s.items())))
    return "\n".join(lines)

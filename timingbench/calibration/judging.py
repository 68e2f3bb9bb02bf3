"""The judging bar: a family is judged when it is audible and measured (issue 48's rule).

On real dev material (real recordings and real samples over real backings), a family's
entrances and exits whose part sits at ``calibration.judge_min_level_db`` (-12 dB) or louder
relative to the backing are credited on time at ``calibration.judge_min_on_time`` (80 %) or
more over at least ``calibration.judge_min_events`` (8) such events, and at most
``calibration.judge_max_negative_rate`` (5 %) of at least ``calibration.judge_min_negatives``
(10) negatives (absent targets, parts that never stop, busy decoys, pre-existing parts) are
credited on time.

:func:`figures` reads a scored results folder's rows (the real scoring path, ``events.jsonl``)
against the corpus's truth and manifest, per family and per evidence that decided the rows
(their ``evidence`` field): on-time recall by level band (``calibration.judge_level_bands_db``:
-18...-12, -12...-6, -6...0 dB re the backing), negatives credited, busy decoys ``none``, and
"the quietest entrance it hears" (the lowest band at 80 % or more). :func:`verdict` applies the bar.
Nothing here fits a threshold: it measures what the configuration holds.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from timingbench.jsonio import iter_jsonl

if TYPE_CHECKING:
    from timingbench.config import Config

#: The negative scenarios of a rendered corpus's manifest (the requested event never happens).
NEGATIVE_SCENARIOS = ("absent", "never_stops", "busy_decoy", "pre_existing")


def band_label(lo: float, hi: float) -> str:
    """A level band's name, ``-18..-12`` (dB re the backing)."""
    return f"{lo:g}..{hi:g}"


def band_of(level_db: float | None, bands: Sequence[Sequence[float]]) -> str | None:
    """The band holding ``level_db`` (each ``[lo, hi)``, the last one closed); None outside every band or unknown."""
    if level_db is None:
        return None
    for i, (lo, hi) in enumerate(bands):
        if lo <= level_db < hi or (i == len(bands) - 1 and level_db == hi):
            return band_label(lo, hi)
    return None


def evidence_label(row: Mapping[str, Any]) -> str:
    """What decided a row: its ``evidence`` sources joined by ``+`` (``signal`` for older rows)."""
    ev = row.get("evidence") or [{"source": "signal"}]
    return "+".join(str(e.get("source")) for e in ev)


def figures(rows: Iterable[Mapping[str, Any]], truth: Mapping[str, Mapping[str, Any]],
            manifest: Mapping[str, Mapping[str, Any]], *, bands: Sequence[Sequence[float]],
            min_level_db: float, offset_match_s: float) -> dict[str, dict[str, Any]]:
    """Per family and evidence: on-time recall by level band, negatives credited, busy decoys ``none``.

    Parameters
    ----------
    rows : iterable of mapping
        ``events.jsonl`` rows of instrument entrances and exits.
    truth : mapping of str to mapping
        Event id -> its truth row (``occurred``, ``onset_s``).
    manifest : mapping of str to mapping
        Clip -> its manifest row (``scenario``, ``levels_db``: the target part's level re the backing).
    bands : sequence of (lo, hi)
        The level bands, dB.
    min_level_db : float
        The audible level of the bar: events at or above it count toward ``audible``.
    offset_match_s : float
        An off-time report is right within this of the truth (s).

    Returns
    -------
    figures : dict
        ``{family: {evidence: {"on_time_by_band": {band: [credited, of]}, "audible": [credited, of],
        "off_time_located": [k, n], "negatives_credited": [k, n], "busy_decoys_none": [k, n],
        "quietest_heard": band or None}}}``.
    """
    acc: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for r in rows:
        if r.get("kind") not in ("instrument_entry", "instrument_exit"):
            continue
        t = truth.get(str(r["event_id"]))
        m = manifest.get(str(r["clip"]), {})
        if t is None:
            continue
        fam, ev = str(r["family"]), evidence_label(r)
        f = acc[fam].setdefault(ev, {"on_time_by_band": {band_label(*b): [0, 0] for b in bands},
                                     "audible": [0, 0], "off_time_located": [0, 0],
                                     "negatives_credited": [0, 0], "busy_decoys_none": [0, 0]})
        levels = m.get("levels_db") or []
        level = float(levels[0]) if levels else None
        on = r.get("outcome") == "on_time"
        if not t.get("occurred"):
            f["negatives_credited"][1] += 1
            f["negatives_credited"][0] += int(on)
            if m.get("scenario") == "busy_decoy":
                f["busy_decoys_none"][1] += 1
                f["busy_decoys_none"][0] += int(r.get("outcome") == "none")
            continue
        truth_s = float(t["onset_s"])
        tol = float(r["tolerance_s"])
        det = r.get("detected_s")
        if abs(truth_s - float(r["instructed_s"])) > tol + 1e-9:  # delivered off time
            f["off_time_located"][1] += 1
            f["off_time_located"][0] += int(r.get("outcome") == "off_time" and det is not None
                                            and abs(float(det) - truth_s) <= offset_match_s + 1e-9)
            continue
        credited = int(on and det is not None and abs(float(det) - truth_s) <= tol + 1e-9)
        band = band_of(level, bands)
        if band is not None:
            f["on_time_by_band"][band][1] += 1
            f["on_time_by_band"][band][0] += credited
        if level is None or level >= min_level_db:
            f["audible"][1] += 1
            f["audible"][0] += credited
    for fams in acc.values():
        for f in fams.values():
            f["quietest_heard"] = quietest_heard(f["on_time_by_band"], bands)
    return {k: dict(v) for k, v in sorted(acc.items())}


def quietest_heard(by_band: Mapping[str, Sequence[int]], bands: Sequence[Sequence[float]],
                   min_rate: float = 0.8) -> str | None:
    """The quietest band from which every louder band is credited on time at ``min_rate`` or more (None: none)."""
    heard = None
    for lo, hi in reversed([tuple(b) for b in bands]):
        k, n = by_band.get(band_label(lo, hi), (0, 0))
        if not n or k / n < min_rate - 1e-12:
            break
        heard = band_label(lo, hi)
    return heard


def verdict(fig: Mapping[str, Any], *, min_on_time: float, min_events: int, max_negative_rate: float,
            min_negatives: int) -> tuple[bool, str | None]:
    """Whether one family's figures under one evidence reach the bar (module docstring), and why not.

    Returns
    -------
    judged : bool
    reason : str or None
        The first bar missed (``dev_audible_on_time_events_below_8``, ``dev_negatives_below_10``,
        ``dev_audible_on_time_below_0.80``, ``dev_negatives_credited_above_0.05``); None when judged.
    """
    k, n = fig["audible"]
    kn, nn = fig["negatives_credited"]
    if n < min_events:
        return False, f"dev_audible_on_time_events_below_{min_events}"
    if nn < min_negatives:
        return False, f"dev_negatives_below_{min_negatives}"
    if k / n < min_on_time - 1e-12:
        return False, f"dev_audible_on_time_below_{min_on_time:.2f}"
    if kn / nn > max_negative_rate + 1e-12:
        return False, f"dev_negatives_credited_above_{max_negative_rate:.2f}"
    return True, None


def format_figures(figs: Mapping[str, Mapping[str, Any]], bands: Sequence[Sequence[float]]) -> str:
    """The figures as a table: one line per family and evidence."""
    names = [band_label(*b) for b in bands]
    head = f"{'family':<11}{'evidence':<16}" + "".join(f"{b + ' dB':>14}" for b in names) + \
        f"{'audible':>9}{'off loc':>9}{'neg cred':>9}{'decoy none':>11}  quietest heard"
    lines = [head]
    for fam, evs in figs.items():
        for ev, f in evs.items():
            cells = "".join(f"{_frac(*f['on_time_by_band'][b]):>14}" for b in names)
            lines.append(f"{fam:<11}{ev:<16}{cells}{_frac(*f['audible']):>9}{_frac(*f['off_time_located']):>9}"
                         f"{_frac(*f['negatives_credited']):>9}{_frac(*f['busy_decoys_none']):>11}  "
                         f"{f['quietest_heard'] or '-'}")
    return "\n".join(lines)


def _frac(k: int, n: int) -> str:
    return f"{k}/{n}" if n else "-"


def corpus_figures(corpus: Path, results: Path, config: Config) -> dict[str, Any]:
    """The judging figures of a scored corpus and, per family and evidence, the bar's verdict.

    Reads ``results/events.jsonl`` (what ``timingbench score`` wrote) against the corpus's
    ``truth.jsonl`` and ``manifest.jsonl``, with the ``calibration`` section's bands, level
    and bar. Measures only: nothing is fitted.

    Parameters
    ----------
    corpus : Path
        A rendered corpus folder (``truth.jsonl``, ``manifest.jsonl`` with ``level_db``).
    results : Path
        The results folder of ``timingbench score`` on its clips.
    config : Config
        The configuration (``calibration`` section).

    Returns
    -------
    out : dict
        ``splits`` (the manifest's), ``bands``, ``figures`` (:func:`figures`) and ``verdicts``
        (family -> evidence -> ``[judged, reason]``, :func:`verdict`).
    """
    cal = config.params.calibration
    truth = {str(r["event_id"]): r for _, r in iter_jsonl(corpus / "truth.jsonl") if isinstance(r, dict)}
    manifest = {str(r["clip"]): r for _, r in iter_jsonl(corpus / "manifest.jsonl") if isinstance(r, dict)}
    rows = [r for _, r in iter_jsonl(results / "events.jsonl") if isinstance(r, dict)]
    bands = [tuple(b) for b in cal.judge_level_bands_db]
    figs = figures(rows, truth, manifest, bands=bands, min_level_db=cal.judge_min_level_db,
                   offset_match_s=cal.offset_match_s)
    verdicts = {fam: {ev: list(verdict(f, min_on_time=cal.judge_min_on_time, min_events=cal.judge_min_events,
                                       max_negative_rate=cal.judge_max_negative_rate,
                                       min_negatives=cal.judge_min_negatives)) for ev, f in evs.items()}
                for fam, evs in figs.items()}
    return {"splits": sorted({str(r.get("split")) for r in manifest.values()}), "bands": bands,
            "figures": figs, "verdicts": verdicts}

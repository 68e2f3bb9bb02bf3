"""Agreement between annotators (paper Sec. IV-D, VI "Annotation variance").

For every pair of annotators, over the clips both labelled:

- **Layer 1, occurred / not**: the 2x2 table, observed agreement and Cohen's kappa
  (:func:`cohen_kappa`); the same for the onset character of events both heard.
- **Layer 1, onset**: ``|onset_a - onset_b|`` of every instructed event both marked as
  occurred, summarised (:func:`delta_summary`: median, 90th percentile, share within each
  of ``annotations.onset_within_s``) overall, per family and per onset character (the
  character both gave, or ``mixed`` when they differ).
- **Layer 2, inventory**: per clip and family, one annotator's observed onsets against the
  other's with ``mir_eval.onset.f_measure`` within ``annotations.inventory_window_s``;
  counts are pooled over clips (``f_measure = 2 * matched / (n_a + n_b)``), and the
  ``|Δ|`` of the matched pairs is summarised like Layer 1. ``family_blind`` matches the
  onsets whatever family each annotator gave them.

A clip counts for Layer 2 only when both annotators wrote at least one Layer-2 row for it
(a clip one of them has not inventoried is not a clip where they disagree).
"""

from __future__ import annotations

import itertools
import warnings
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from timingbench.annotation_io import AnnotationSet, Layer1Row, Layer2Row
from timingbench.errors import ParameterError
from timingbench.params.tools import AnnotationsParams
from timingbench.prompts import Prompt, parse_clip_name

#: Decimals of seconds |Δ| is rounded to before it is compared with a tolerance.
DELTA_DECIMALS = 6
#: Percentile reported beside the median of every |Δ| distribution.
DELTA_PERCENTILE = 90.0
#: Character group of an event the two annotators characterised differently.
MIXED_CHARACTER = "mixed"
#: Family (and kind) of a Layer-1 event whose prompt is not known.
UNKNOWN = "unknown"


@dataclass(frozen=True)
class EventInfo:
    """What the prompt instructed for one event.

    Attributes
    ----------
    kind : str
        formats §1 event kind.
    family : str
        formats §1 target family.
    instructed_s : float
        Instructed time in seconds from the clip start.
    prompt_id : str
        The prompt the event belongs to.
    """

    kind: str
    family: str
    instructed_s: float
    prompt_id: str


def event_index(prompts: Mapping[str, Prompt]) -> dict[str, EventInfo]:
    """Event id -> :class:`EventInfo` for every event of ``prompts``."""
    return {e.id: EventInfo(e.kind, e.family, float(e.time_s), p.id)
            for p in prompts.values() for e in p.events}


def prompt_of_clip(clip: str, prompts: Mapping[str, Prompt]) -> str | None:
    """The prompt id a clip file name belongs to (formats §2), or None."""
    pid, _ = parse_clip_name(clip)
    if pid in prompts:
        return pid
    stem = Path(clip).stem
    return stem if stem in prompts else None


def event_family(row: Layer1Row, events: Mapping[str, EventInfo]) -> str:
    """Family of a Layer-1 row's event: from the prompts, else a ``family`` key of the row."""
    info = events.get(row.event_id)
    if info is not None:
        return info.family
    fam = (row.extra or {}).get("family")
    return fam if isinstance(fam, str) and fam else UNKNOWN


def annotators(ann: AnnotationSet) -> list[str]:
    """Every annotator name with a valid row, sorted."""
    return sorted({r.annotator for r in ann.rows()})


def cohen_kappa(pairs: Sequence[tuple[Hashable, Hashable]]) -> float | None:
    """Cohen's kappa of two raters' labels of the same items.

    Parameters
    ----------
    pairs : sequence of (label_a, label_b)
        One pair per item.

    Returns
    -------
    kappa : float or None
        ``(p_o - p_e) / (1 - p_e)`` with ``p_o`` the observed agreement and ``p_e`` the
        agreement expected from the two raters' label frequencies. None when there are
        no items or ``p_e == 1`` (both raters gave one and the same label to every item:
        kappa is undefined).
    """
    n = len(pairs)
    if n == 0:
        return None
    p_o = sum(1 for a, b in pairs if a == b) / n
    ca = Counter(a for a, _ in pairs)
    cb = Counter(b for _, b in pairs)
    p_e = sum(ca[k] * cb.get(k, 0) for k in ca) / (n * n)
    if p_e >= 1.0:
        return None
    return (p_o - p_e) / (1.0 - p_e)


def _ms(s: float) -> str:
    return f"{round(1000 * s):g}ms"


def delta_summary(deltas_s: Iterable[float], *, within_s: Sequence[float]) -> dict[str, Any]:
    """Summary of absolute onset differences.

    Parameters
    ----------
    deltas_s : iterable of float
        ``|Δ|`` in seconds (signs are dropped).
    within_s : sequence of float
        Tolerances in seconds; ``|Δ|`` is rounded to :data:`DELTA_DECIMALS` decimals
        before the comparison, so a difference exactly on a tolerance counts as within.

    Returns
    -------
    summary : dict
        ``n``, ``median_s``, ``p90_s``, ``max_s`` (None when empty), ``within``
        (``"25ms" -> share`` in [0, 1], None when empty) and ``deltas_s`` (sorted).
    """
    d = np.round(np.abs(np.asarray(list(deltas_s), dtype=float)), DELTA_DECIMALS)
    out: dict[str, Any] = {"n": int(d.size)}
    if d.size == 0:
        out.update(median_s=None, p90_s=None, max_s=None, within={_ms(w): None for w in within_s},
                   deltas_s=[])
        return out
    out.update(
        median_s=round(float(np.median(d)), DELTA_DECIMALS),
        p90_s=round(float(np.percentile(d, DELTA_PERCENTILE)), DELTA_DECIMALS),
        max_s=round(float(d.max()), DELTA_DECIMALS),
        within={_ms(w): round(float(np.mean(d <= round(w, DELTA_DECIMALS))), 4) for w in within_s},
        deltas_s=sorted(float(x) for x in d),
    )
    return out


def _pair_character(a: Layer1Row, b: Layer1Row) -> str:
    ca, cb = a.onset_character or UNKNOWN, b.onset_character or UNKNOWN
    return ca if ca == cb else MIXED_CHARACTER


def layer1_agreement(
    rows_a: Iterable[Layer1Row], rows_b: Iterable[Layer1Row], *,
    events: Mapping[str, EventInfo], within_s: Sequence[float],
) -> dict[str, Any]:
    """Layer-1 agreement of two annotators over the events both labelled.

    Parameters
    ----------
    rows_a, rows_b : iterable of Layer1Row
        The two annotators' rows.
    events : mapping of event id to EventInfo
        Families of the events (events not in it take the row's ``family`` key or
        ``unknown``).
    within_s : sequence of float
        Tolerances in seconds for the shares of :func:`delta_summary`.

    Returns
    -------
    agreement : dict
        ``n_events``; ``occurred`` (``n``, ``agree``, ``observed_agreement``, ``kappa``,
        ``table`` with ``both_yes``/``a_only``/``b_only``/``both_no``, ``by_family``
        tables); ``onset_character`` (``n``, ``agree``, ``kappa`` over events both heard);
        ``onset_delta`` (``all``, ``by_family``, ``by_character`` summaries) and
        ``events`` (per event: clip, event_id, family, both occurred flags, |Δ|).
    """
    ia = {(r.clip, r.event_id): r for r in rows_a}
    ib = {(r.clip, r.event_id): r for r in rows_b}
    keys = sorted(set(ia) & set(ib))
    occ = [(ia[k].occurred, ib[k].occurred) for k in keys]
    table = {"both_yes": sum(1 for a, b in occ if a and b), "a_only": sum(1 for a, b in occ if a and not b),
             "b_only": sum(1 for a, b in occ if b and not a),
             "both_no": sum(1 for a, b in occ if not a and not b)}
    kappa = cohen_kappa(occ)
    fam_occ: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    heard: list[tuple[Layer1Row, Layer1Row, str]] = []
    per_event: list[dict[str, Any]] = []
    for k in keys:
        a, b = ia[k], ib[k]
        fam = event_family(a, events)
        fam_occ[fam].append((a.occurred, b.occurred))
        delta = None
        if a.occurred and b.occurred and a.onset_s is not None and b.onset_s is not None:
            heard.append((a, b, fam))
            delta = round(abs(a.onset_s - b.onset_s), DELTA_DECIMALS)
        per_event.append({"clip": k[0], "event_id": k[1], "family": fam, "occurred_a": a.occurred,
                          "occurred_b": b.occurred, "abs_delta_s": delta})
    chars = [(a.onset_character, b.onset_character) for a, b, _ in heard]

    def summ(group: list[tuple[Layer1Row, Layer1Row, str]]) -> dict[str, Any]:
        return delta_summary((abs(float(a.onset_s) - float(b.onset_s)) for a, b, _ in group),  # type: ignore[arg-type]
                             within_s=within_s)

    by_fam: dict[str, list[tuple[Layer1Row, Layer1Row, str]]] = defaultdict(list)
    by_char: dict[str, list[tuple[Layer1Row, Layer1Row, str]]] = defaultdict(list)
    for h in heard:
        by_fam[h[2]].append(h)
        by_char[_pair_character(h[0], h[1])].append(h)
    return {
        "n_events": len(keys),
        "occurred": {
            "n": len(occ), "agree": table["both_yes"] + table["both_no"],
            "observed_agreement": round((table["both_yes"] + table["both_no"]) / len(occ), 4) if occ else None,
            "kappa": None if kappa is None else round(kappa, 4), "table": table,
            "by_family": {f: {"n": len(v), "agree": sum(1 for a, b in v if a == b),
                              "kappa": None if (kf := cohen_kappa(v)) is None else round(kf, 4)}
                          for f, v in sorted(fam_occ.items())},
        },
        "onset_character": {
            "n": len(chars), "agree": sum(1 for a, b in chars if a == b),
            "kappa": None if (kc := cohen_kappa(chars)) is None else round(kc, 4),
        },
        "onset_delta": {
            "all": summ(heard),
            "by_family": {f: summ(v) for f, v in sorted(by_fam.items())},
            "by_character": {c: summ(v) for c, v in sorted(by_char.items())},
        },
        "events": per_event,
    }


def match_onsets(ref_s: Sequence[float], est_s: Sequence[float], *,
                 window_s: float) -> tuple[float, float, float, list[tuple[float, float]]]:
    """Match two onset lists with mir_eval (``onset.f_measure``, ``util.match_events``).

    Parameters
    ----------
    ref_s, est_s : sequence of float
        Onsets in seconds (any order; sorted here, as mir_eval requires).
    window_s : float
        Matching window in seconds (a pair matches when ``|Δ| <= window_s``).

    Returns
    -------
    f_measure, precision, recall : float
        mir_eval's figures (0.0 when either list is empty).
    pairs : list of (ref_s, est_s)
        The one-to-one matched onsets (maximum matching).
    """
    ref = np.sort(np.asarray(ref_s, dtype=float))
    est = np.sort(np.asarray(est_s, dtype=float))
    if ref.size == 0 or est.size == 0:
        return 0.0, 0.0, 0.0, []
    import mir_eval

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f, p, r = mir_eval.onset.f_measure(ref, est, window=window_s)
        idx = mir_eval.util.match_events(ref, est, window_s)
    return float(f), float(p), float(r), [(float(ref[i]), float(est[j])) for i, j in idx]


def _inventory_entry(n_a: int, n_b: int, pairs: list[tuple[float, float]], clip_f: list[float],
                     within_s: Sequence[float]) -> dict[str, Any]:
    m = len(pairs)
    return {
        "n_a": n_a, "n_b": n_b, "matched": m,
        "f_measure": round(2 * m / (n_a + n_b), 4) if n_a + n_b else None,
        "precision": round(m / n_b, 4) if n_b else None, "recall": round(m / n_a, 4) if n_a else None,
        "clips": len(clip_f), "mean_clip_f_measure": round(float(np.mean(clip_f)), 4) if clip_f else None,
        "matched_delta": delta_summary((abs(x - y) for x, y in pairs), within_s=within_s),
    }


def layer2_agreement(
    rows_a: Iterable[Layer2Row], rows_b: Iterable[Layer2Row], *,
    window_s: float, within_s: Sequence[float],
) -> dict[str, Any]:
    """Layer-2 inventory agreement of two annotators (``a`` is mir_eval's reference).

    Parameters
    ----------
    rows_a, rows_b : iterable of Layer2Row
        The two annotators' observed-event rows.
    window_s : float
        Matching window in seconds (``annotations.inventory_window_s``).
    within_s : sequence of float
        Tolerances for the matched-pair ``|Δ|`` summary.

    Returns
    -------
    agreement : dict
        ``window_s``, ``shared_clips`` (clips both inventoried), ``by_family`` and ``all``
        (pooled over families, matching within a family) and ``family_blind`` entries,
        each with ``n_a``, ``n_b``, ``matched``, ``f_measure``, ``precision``, ``recall``,
        ``clips``, ``mean_clip_f_measure`` (mean of mir_eval's per-clip F) and
        ``matched_delta``; ``clips``: per clip ``n_a``, ``n_b``, ``matched``, ``f_measure``
        (family-aware).
    """
    ca: dict[str, list[Layer2Row]] = defaultdict(list)
    cb: dict[str, list[Layer2Row]] = defaultdict(list)
    for r in rows_a:
        ca[r.clip].append(r)
    for r in rows_b:
        cb[r.clip].append(r)
    shared = sorted(set(ca) & set(cb))
    fam_counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    fam_pairs: dict[str, list[tuple[float, float]]] = defaultdict(list)
    fam_clip_f: dict[str, list[float]] = defaultdict(list)
    blind_pairs: list[tuple[float, float]] = []
    blind_f: list[float] = []
    per_clip: list[dict[str, Any]] = []
    na_all = nb_all = 0
    for clip in shared:
        fams = sorted({r.family for r in ca[clip]} | {r.family for r in cb[clip]})
        clip_m = 0
        for fam in fams:
            oa = [r.onset_s for r in ca[clip] if r.family == fam]
            ob = [r.onset_s for r in cb[clip] if r.family == fam]
            f, _, _, pairs = match_onsets(oa, ob, window_s=window_s)
            fam_counts[fam][0] += len(oa)
            fam_counts[fam][1] += len(ob)
            fam_pairs[fam].extend(pairs)
            fam_clip_f[fam].append(f)
            clip_m += len(pairs)
        oa_all = [r.onset_s for r in ca[clip]]
        ob_all = [r.onset_s for r in cb[clip]]
        f, _, _, pairs = match_onsets(oa_all, ob_all, window_s=window_s)
        blind_pairs.extend(pairs)
        blind_f.append(f)
        na_all += len(oa_all)
        nb_all += len(ob_all)
        per_clip.append({"clip": clip, "n_a": len(oa_all), "n_b": len(ob_all), "matched": clip_m,
                         "f_measure": round(2 * clip_m / (len(oa_all) + len(ob_all)), 4)})
    all_pairs = [p for v in fam_pairs.values() for p in v]
    return {
        "window_s": window_s,
        "shared_clips": len(shared),
        "by_family": {f: _inventory_entry(c[0], c[1], fam_pairs[f], fam_clip_f[f], within_s)
                      for f, c in sorted(fam_counts.items())},
        "all": _inventory_entry(na_all, nb_all, all_pairs, [c["f_measure"] for c in per_clip], within_s),
        "family_blind": _inventory_entry(na_all, nb_all, blind_pairs, blind_f, within_s),
        "clips": per_clip,
    }


def agreement_report(
    ann: AnnotationSet, *, events: Mapping[str, EventInfo], params: AnnotationsParams,
) -> dict[str, Any]:
    """Agreement of every pair of annotators (see the module docstring).

    Parameters
    ----------
    ann : AnnotationSet
        Rows of two or more annotators.
    events : mapping of event id to EventInfo
        The instructed events (:func:`event_index`); may be empty.
    params : AnnotationsParams
        ``annotations.onset_within_s`` and ``annotations.inventory_window_s``.

    Returns
    -------
    report : dict
        ``annotators``, ``window_s``, ``within_s`` and ``pairs``: one entry per pair
        ``(a, b)`` (names sorted, ``a`` first) with ``shared_clips``, ``layer1``
        (:func:`layer1_agreement`) and ``layer2`` (:func:`layer2_agreement`).

    Raises
    ------
    ParameterError
        If fewer than two annotators have rows.
    """
    names = annotators(ann)
    if len(names) < 2:
        raise ParameterError(
            f"{ann.source}: agreement needs rows of at least two annotators, found "
            f"{names or 'none'}; label the same clips with a second --annotator"
        )
    within = [float(x) for x in params.onset_within_s]
    window = params.inventory_window_s
    l1: dict[str, list[Layer1Row]] = defaultdict(list)
    l2: dict[str, list[Layer2Row]] = defaultdict(list)
    clips: dict[str, set[str]] = defaultdict(set)
    for r1 in ann.layer1:
        l1[r1.annotator].append(r1)
        clips[r1.annotator].add(r1.clip)
    for r2 in ann.layer2:
        l2[r2.annotator].append(r2)
        clips[r2.annotator].add(r2.clip)
    pairs = []
    for a, b in itertools.combinations(names, 2):
        shared = clips[a] & clips[b]
        pairs.append({
            "a": a, "b": b, "shared_clips": len(shared),
            "layer1": layer1_agreement([r for r in l1[a] if r.clip in shared],
                                       [r for r in l1[b] if r.clip in shared],
                                       events=events, within_s=within),
            "layer2": layer2_agreement([r for r in l2[a] if r.clip in shared],
                                       [r for r in l2[b] if r.clip in shared],
                                       window_s=window, within_s=within),
        })
    return {"annotators": names, "window_s": window, "within_s": within, "pairs": pairs}


def _fmt_s(x: float | None) -> str:
    return "-" if x is None else f"{1000 * x:.1f}"


def _fmt_share(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def _delta_line(name: str, s: Mapping[str, Any]) -> str:
    shares = "".join(f"{_fmt_share(v):>8}" for v in s["within"].values())
    return f"  {name:<16}{s['n']:>5}{_fmt_s(s['median_s']):>11}{_fmt_s(s['p90_s']):>9}{shares}"


def format_agreement(report: Mapping[str, Any]) -> str:
    """Text tables of :func:`agreement_report` (times in ms)."""
    lines: list[str] = []
    within_head = "".join(f"{'<=' + _ms(w):>8}" for w in report["within_s"])
    for p in report["pairs"]:
        l1, l2 = p["layer1"], p["layer2"]
        occ = l1["occurred"]
        t = occ["table"]
        kappa = "undefined" if occ["kappa"] is None else f"{occ['kappa']:.3f}"
        lines.append(f"{p['a']} vs {p['b']}: {p['shared_clips']} shared clips")
        lines.append(
            f"Layer 1 occurred: {occ['agree']} of {occ['n']} events agree, Cohen's kappa {kappa} "
            f"(both yes {t['both_yes']}, only {p['a']} {t['a_only']}, only {p['b']} {t['b_only']}, "
            f"both no {t['both_no']})")
        ch = l1["onset_character"]
        ck = "undefined" if ch["kappa"] is None else f"{ch['kappa']:.3f}"
        lines.append(f"Layer 1 onset character: {ch['agree']} of {ch['n']} agree, kappa {ck}")
        lines.append(f"Layer 1 onset |Δ|      {'n':>5}{'median ms':>11}{'p90 ms':>9}{within_head}")
        lines.append(_delta_line("all", l1["onset_delta"]["all"]))
        for f, s in l1["onset_delta"]["by_family"].items():
            lines.append(_delta_line(f, s))
        for c, s in l1["onset_delta"]["by_character"].items():
            lines.append(_delta_line(f"[{c}]", s))
        lines.append(f"Layer 2 inventory (mir_eval onset F within {1000 * l2['window_s']:g} ms, "
                     f"{l2['shared_clips']} clips; a = {p['a']}, b = {p['b']})")
        lines.append(f"  {'family':<16}{'n_a':>5}{'n_b':>5}{'matched':>9}{'F':>8}{'P':>8}{'R':>8}"
                     f"{'median |Δ| ms':>15}")
        rows = [*l2["by_family"].items(), ("all", l2["all"]), ("family-blind", l2["family_blind"])]
        for f, e in rows:
            fm = "-" if e["f_measure"] is None else f"{e['f_measure']:.3f}"
            pr = "-" if e["precision"] is None else f"{e['precision']:.3f}"
            rc = "-" if e["recall"] is None else f"{e['recall']:.3f}"
            lines.append(f"  {f:<16}{e['n_a']:>5}{e['n_b']:>5}{e['matched']:>9}{fm:>8}{pr:>8}{rc:>8}"
                         f"{_fmt_s(e['matched_delta']['median_s']):>15}")
        lines.append("")
    return "\n".join(lines).rstrip()


def plot_agreement(report: Mapping[str, Any], path: str | Path) -> None:
    """PNG of the inter-annotator ``|Δ|`` distributions per family, in ms.

    One box per (family, pair of annotators): Layer-1 onsets of instructed events (left
    panel) and the matched Layer-2 onsets (right panel).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = []
    for title, getter in (
        ("Layer 1: instructed events", lambda p: p["layer1"]["onset_delta"]["by_family"]),
        ("Layer 2: matched observed onsets", lambda p: {f: e["matched_delta"] for f, e in
                                                        p["layer2"]["by_family"].items()}),
    ):
        labels, data = [], []
        for p in report["pairs"]:
            for fam, s in getter(p).items():
                if s["n"]:
                    tag = f"{fam}\n(n={s['n']})" if len(report["pairs"]) == 1 else \
                        f"{fam}\n{p['a']}/{p['b']} (n={s['n']})"
                    labels.append(tag)
                    data.append(np.asarray(s["deltas_s"]) * 1000.0)
        panels.append((title, labels, data))
    width = max(8.0, 1.0 * sum(len(lb) for _, lb, _ in panels) + 4)
    fig, axes = plt.subplots(1, 2, figsize=(width, 4.5), dpi=120)
    rng = np.random.default_rng(0)
    for ax, (title, labels, data) in zip(axes, panels, strict=True):
        if data:
            ax.boxplot(data, widths=0.55, showfliers=False, medianprops={"color": "tab:red", "lw": 2})
            for i, d in enumerate(data, start=1):
                ax.scatter(i + rng.uniform(-0.15, 0.15, d.size), d, s=10, alpha=0.6, color="tab:blue", zorder=3)
            ax.set_xticks(range(1, len(labels) + 1))
            ax.set_xticklabels(labels, fontsize=8)
        else:
            ax.text(0.5, 0.5, "no pairs", ha="center", va="center", transform=ax.transAxes)
        top = max([float(d.max()) for d in data] + [1000.0 * w for w in report["within_s"]])
        ax.set_yscale("symlog", linthresh=10)
        ax.set_ylim(0, 1.3 * top)
        for w in report["within_s"]:
            ax.axhline(1000 * w, color="0.6", lw=0.8, ls=":")
            ax.annotate(f"{1000 * w:g} ms", (1.0, 1000 * w), xycoords=("axes fraction", "data"),
                        xytext=(2, 0), textcoords="offset points", fontsize=7, color="0.4", va="center")
        ax.set_title(title, fontsize=10)
        ax.set_ylabel("|Δ| between annotators (ms)")
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle("Inter-annotator onset differences per family")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)

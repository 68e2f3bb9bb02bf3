"""Dataset statistics of an annotation set (paper Sec. IV-D: the figures the release defers).

Counted over every valid row: each annotator's judgement of an event is one label, so a
doubly-labelled event contributes two labels (``events`` counts distinct events).

- clips, events, labels and annotators per split;
- Layer 1 by event kind and family: labels, occurred, not occurred;
- onset character (``hard`` / ``soft`` / ``gradual``) and salience (1-3, or not rated)
  distributions, overall and per family;
- displacement (annotated onset minus instructed time, seconds) per family: median and a
  histogram on ``annotations.displacement_bins_s`` with open bins beyond both ends;
- Layer 2: observed events per clip, per family, and the **unprompted** ones: observed
  onsets with no instructed event of their family within ``search.window_s`` of them. Rows
  of clips whose prompt is not known are counted apart (``no_prompt``), not as unprompted.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from timingbench.annotation_io import (
    ONSET_CHARACTERS,
    SALIENCE_LEVELS,
    SPLITS,
    AnnotationSet,
)
from timingbench.calibration.agreement import (
    UNKNOWN,
    EventInfo,
    annotators,
    event_family,
    prompt_of_clip,
)
from timingbench.params.tools import AnnotationsParams
from timingbench.prompts import Prompt

#: Key of a salience or character that was not given.
NOT_RATED = "not_rated"


def _counts(values: Iterable[Any], levels: Sequence[Any]) -> dict[str, int]:
    c = Counter(NOT_RATED if v is None else v for v in values)
    return {str(k): c.get(k, 0) for k in levels} | {NOT_RATED: c.get(NOT_RATED, 0)}


def displacement_histogram(values_s: Sequence[float], *, edges_s: Sequence[float]) -> dict[str, Any]:
    """Histogram of signed displacements in seconds.

    Parameters
    ----------
    values_s : sequence of float
        Annotated onset minus instructed time, seconds.
    edges_s : sequence of float
        Increasing bin edges; a value equal to an inner edge falls in the bin to its right
        (the last closed bin includes its right edge), values beyond the ends fall in the
        open bins ``< first`` and ``> last``.

    Returns
    -------
    histogram : dict
        ``n``, ``median_s`` (None when empty), ``edges_s`` and ``counts`` (length
        ``len(edges_s) + 1``: the open low bin, the closed bins, the open high bin).
    """
    e = np.asarray(edges_s, dtype=float)
    v = np.round(np.asarray(values_s, dtype=float), 6)
    inner = np.histogram(v[(v >= e[0]) & (v <= e[-1])], bins=e)[0] if v.size else np.zeros(e.size - 1, int)
    counts = [int((v < e[0]).sum()), *(int(x) for x in inner), int((v > e[-1]).sum())]
    return {"n": int(v.size), "median_s": round(float(np.median(v)), 6) if v.size else None,
            "edges_s": [float(x) for x in e], "counts": counts}


def annotation_stats(
    ann: AnnotationSet, *, prompts: Mapping[str, Prompt], events: Mapping[str, EventInfo],
    params: AnnotationsParams, window_s: float, clip_names: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The dataset table of an annotation set (see the module docstring).

    Parameters
    ----------
    ann : AnnotationSet
        The annotations.
    prompts : mapping of prompt id to Prompt
        The prompt set (may be empty: kinds, families and displacements are then unknown).
    events : mapping of event id to EventInfo
        :func:`timingbench.calibration.agreement.event_index` of ``prompts``.
    params : AnnotationsParams
        ``annotations.displacement_bins_s``.
    window_s : float
        The search half-window in seconds (``search.window_s``).
    clip_names : sequence of str, optional
        Clip file names of the clips folder matched to a prompt; when given, the clips
        nobody labelled and the labelled clips missing from the folder are listed.

    Returns
    -------
    stats : dict
        ``annotators``, ``by_split``, ``layer1``, ``displacement``, ``layer2`` and, with
        ``clip_names``, ``clips_folder``.
    """
    window = float(window_s)
    edges = [float(x) for x in params.displacement_bins_s]
    rows_per = Counter(r.annotator for r in ann.rows())
    by_split: dict[str, Any] = {}
    for split in SPLITS:
        l1 = [r for r in ann.layer1 if r.split == split]
        l2 = [r for r in ann.layer2 if r.split == split]
        if not l1 and not l2:
            continue
        by_split[split] = {
            "clips": len({r.clip for r in l1} | {r.clip for r in l2}),
            "events": len({(r.clip, r.event_id) for r in l1}),
            "layer1_labels": len(l1), "layer2_rows": len(l2),
            "annotators": sorted({r.annotator for r in l1} | {r.annotator for r in l2}),
        }

    kind_c: dict[str, Counter[str]] = defaultdict(Counter)
    fam_c: dict[str, Counter[str]] = defaultdict(Counter)
    char_by_fam: dict[str, list[str | None]] = defaultdict(list)
    sal_by_fam: dict[str, list[int | None]] = defaultdict(list)
    disp: dict[str, list[float]] = defaultdict(list)
    unknown_events = set()
    for r in ann.layer1:
        info = events.get(r.event_id)
        kind = info.kind if info else UNKNOWN
        fam = event_family(r, events)
        if info is None:
            unknown_events.add(r.event_id)
        for c, key in ((kind_c, kind), (fam_c, fam)):
            c[key]["labels"] += 1
            c[key]["occurred" if r.occurred else "not_occurred"] += 1
        if r.occurred:
            char_by_fam[fam].append(r.onset_character)
            if info is not None and r.onset_s is not None:
                disp[fam].append(r.onset_s - info.instructed_s)
        sal_by_fam[fam].append(r.salience)
    occ_fields = ("labels", "occurred", "not_occurred")
    all_chars = [c for v in char_by_fam.values() for c in v]
    all_sal = [s for v in sal_by_fam.values() for s in v]
    layer1 = {
        "labels": len(ann.layer1), "events": len({(r.clip, r.event_id) for r in ann.layer1}),
        "by_kind": {k: {f: c[f] for f in occ_fields} for k, c in sorted(kind_c.items())},
        "by_family": {k: {f: c[f] for f in occ_fields} for k, c in sorted(fam_c.items())},
        "onset_character": _counts(all_chars, ONSET_CHARACTERS),
        "onset_character_by_family": {f: _counts(v, ONSET_CHARACTERS) for f, v in sorted(char_by_fam.items())},
        "salience": _counts(all_sal, SALIENCE_LEVELS),
        "salience_by_family": {f: _counts(v, SALIENCE_LEVELS) for f, v in sorted(sal_by_fam.items())},
        "events_without_prompt": sorted(unknown_events),
    }
    displacement = {
        "by_family": {f: displacement_histogram(v, edges_s=edges) for f, v in sorted(disp.items())},
        "all": displacement_histogram([x for v in disp.values() for x in v], edges_s=edges),
    }

    # Layer 2
    per_clip = Counter((r.annotator, r.clip) for r in ann.layer2)
    fam2: dict[str, Counter[str]] = defaultdict(Counter)
    no_prompt = 0
    instructed: dict[str, list[tuple[str, float]]] = {}
    for r2 in ann.layer2:
        pid = prompt_of_clip(r2.clip, prompts)
        fam2[r2.family]["observed"] += 1
        if pid is None:
            no_prompt += 1
            fam2[r2.family]["no_prompt"] += 1
            continue
        if pid not in instructed:
            instructed[pid] = [(e.family, float(e.time_s)) for e in prompts[pid].events]
        prompted = any(f == r2.family and abs(r2.onset_s - t) <= window + 1e-9 for f, t in instructed[pid])
        fam2[r2.family]["prompted" if prompted else "unprompted"] += 1
    n_unp = sum(c["unprompted"] for c in fam2.values())
    n_known = len(ann.layer2) - no_prompt
    counts = list(per_clip.values())
    layer2 = {
        "rows": len(ann.layer2),
        "clips": len({r.clip for r in ann.layer2}),
        "per_clip": {"labelled_clips": len(counts),
                     "mean": round(float(np.mean(counts)), 3) if counts else None,
                     "median": float(np.median(counts)) if counts else None,
                     "min": min(counts) if counts else None, "max": max(counts) if counts else None},
        "by_family": {f: {"observed": c["observed"], "prompted": c["prompted"], "unprompted": c["unprompted"],
                          "no_prompt": c["no_prompt"],
                          "unprompted_rate": round(c["unprompted"] / (c["observed"] - c["no_prompt"]), 4)
                          if c["observed"] > c["no_prompt"] else None}
                      for f, c in sorted(fam2.items())},
        "unprompted": n_unp,
        "unprompted_rate": round(n_unp / n_known, 4) if n_known else None,
        "no_prompt": no_prompt,
        "search_window_s": window,
    }
    out: dict[str, Any] = {
        "source": ann.source, "annotators": {a: rows_per[a] for a in annotators(ann)},
        "by_split": by_split, "layer1": layer1, "displacement": displacement, "layer2": layer2,
        "rejected_rows": len(ann.errors),
    }
    if clip_names is not None:
        labelled = {r.clip for r in ann.rows()}
        folder = set(clip_names)
        out["clips_folder"] = {"clips": len(folder), "labelled": len(folder & labelled),
                               "unlabelled": sorted(folder - labelled),
                               "labelled_not_in_folder": sorted(labelled - folder)}
    return out


def _bin_label(edges: Sequence[float], i: int) -> str:
    if i == 0:
        return f"<{edges[0]:g}"
    if i == len(edges):
        return f">{edges[-1]:g}"
    return f"{edges[i - 1]:g}..{edges[i]:g}"


def format_stats(stats: Mapping[str, Any]) -> str:
    """Text tables of :func:`annotation_stats`."""
    lines = [f"annotations: {stats['source']}  ({stats['rejected_rows']} rejected rows)",
             "annotators: " + ", ".join(f"{a} ({n} rows)" for a, n in stats["annotators"].items()), ""]
    lines.append(f"{'split':<12}{'clips':>7}{'events':>8}{'L1 labels':>11}{'L2 rows':>9}  annotators")
    for s, v in stats["by_split"].items():
        lines.append(f"{s:<12}{v['clips']:>7}{v['events']:>8}{v['layer1_labels']:>11}{v['layer2_rows']:>9}  "
                     + ", ".join(v["annotators"]))
    l1 = stats["layer1"]
    for title, table in (("kind", l1["by_kind"]), ("family", l1["by_family"])):
        lines += ["", f"{'Layer 1 ' + title:<28}{'labels':>8}{'occurred':>10}{'not':>6}"]
        for k, v in table.items():
            lines.append(f"{k:<28}{v['labels']:>8}{v['occurred']:>10}{v['not_occurred']:>6}")
    chars = [*ONSET_CHARACTERS, NOT_RATED]
    lines += ["", f"{'onset character':<16}" + "".join(f"{c:>11}" for c in chars)]
    for f, v in [*l1["onset_character_by_family"].items(), ("all", l1["onset_character"])]:
        lines.append(f"{f:<16}" + "".join(f"{v[c]:>11}" for c in chars))
    sal = [str(x) for x in SALIENCE_LEVELS] + [NOT_RATED]
    lines += ["", f"{'salience':<16}" + "".join(f"{c:>11}" for c in sal)]
    for f, v in [*l1["salience_by_family"].items(), ("all", l1["salience"])]:
        lines.append(f"{f:<16}" + "".join(f"{v[c]:>11}" for c in sal))
    d = stats["displacement"]
    edges = d["all"]["edges_s"]
    lines += ["", "displacement from the prompt (annotated - instructed, s)",
              f"{'family':<14}{'n':>5}{'median':>9}  " + " ".join(f"{_bin_label(edges, i):>10}"
                                                          for i in range(len(edges) + 1))]
    for f, h in [*d["by_family"].items(), ("all", d["all"])]:
        med = "-" if h["median_s"] is None else f"{h['median_s']:+.3f}"
        lines.append(f"{f:<14}{h['n']:>5}{med:>9}  " + " ".join(f"{c:>10}" for c in h["counts"]))
    l2 = stats["layer2"]
    pc = l2["per_clip"]
    rate = "-" if l2["unprompted_rate"] is None else f"{100 * l2['unprompted_rate']:.1f} %"
    lines += ["", f"Layer 2: {l2['rows']} observed events on {l2['clips']} clips; per (annotator, clip): "
                  f"mean {pc['mean']}, median {pc['median']}, min {pc['min']}, max {pc['max']}",
              f"unprompted (no instructed event of the family within {l2['search_window_s']:g} s): "
              f"{l2['unprompted']} ({rate}); clips without a known prompt: {l2['no_prompt']} rows",
              f"{'family':<14}{'observed':>9}{'prompted':>10}{'unprompted':>12}{'rate':>8}"]
    for f, v in l2["by_family"].items():
        r = "-" if v["unprompted_rate"] is None else f"{100 * v['unprompted_rate']:.0f}%"
        lines.append(f"{f:<14}{v['observed']:>9}{v['prompted']:>10}{v['unprompted']:>12}{r:>8}")
    if "clips_folder" in stats:
        cf = stats["clips_folder"]
        lines += ["", f"clips folder: {cf['clips']} clips, {cf['labelled']} labelled, "
                      f"{len(cf['unlabelled'])} not labelled, {len(cf['labelled_not_in_folder'])} labelled "
                      "but not in the folder"]
    return "\n".join(lines)

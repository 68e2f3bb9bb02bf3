"""Per-family localization floors (paper Fig. 2): |detected - annotated onset| statistics."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np


def localization_floors(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Median, IQR and maximum of |detected - annotated onset| per family, in seconds.

    Only correctly credited events (class ``correct_credit``) and correctly reported
    off-time deliveries (``offset_correct``) count: the floor measures how precisely the
    detector places an event it found, not whether it found it.

    Returns
    -------
    floors : dict
        ``family -> {n, median_s, q25_s, q75_s, iqr_s, max_s, errors_s}``.
    """
    errs: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        if r.get("abs_error_to_truth_s") is None:
            continue
        if r["class"] == "correct_credit" or r.get("offset_correct"):
            errs[r["family"]].append(float(r["abs_error_to_truth_s"]))
    out: dict[str, dict[str, Any]] = {}
    for fam, e in sorted(errs.items()):
        a = np.asarray(e)
        q25, med, q75 = np.percentile(a, [25, 50, 75])
        out[fam] = {"n": int(a.size), "median_s": round(float(med), 4), "q25_s": round(float(q25), 4),
                    "q75_s": round(float(q75), 4), "iqr_s": round(float(q75 - q25), 4),
                    "max_s": round(float(a.max()), 4), "errors_s": [round(x, 4) for x in sorted(e)]}
    return out


def plot_floors(floors: dict[str, dict[str, Any]], path: str | Path, *, title: str = "",
                human: Mapping[str, tuple[float, float, float]] | None = None) -> None:
    """Box and strip plot of the per-family errors in ms, median labelled (PNG).

    ``human`` (family -> band low, band high, median of the inter-annotator ``|Δ|``, in
    seconds) is drawn as a shaded band with a dashed median behind each family's box.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fams = list(floors)
    data = [np.asarray(floors[f]["errors_s"]) * 1000.0 for f in fams]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(fams) + 2), 4.5), dpi=120)
    bands = {f: human[f] for f in fams if human and f in human}
    for i, f in enumerate(fams, start=1):
        if f in bands:
            lo, hi, med_h = (1000.0 * x for x in bands[f])
            ax.fill_between([i - 0.42, i + 0.42], lo, hi, color="tab:green", alpha=0.2, lw=0, zorder=0,
                            label="inter-annotator |Δ| band" if f == next(iter(bands)) else None)
            ax.hlines(med_h, i - 0.42, i + 0.42, colors="tab:green", linestyles="--", lw=1, zorder=1)
    if fams:
        ax.boxplot(data, widths=0.55, showfliers=False, medianprops={"color": "tab:red", "lw": 2})
        rng = np.random.default_rng(0)
        for i, d in enumerate(data, start=1):
            ax.scatter(i + rng.uniform(-0.15, 0.15, d.size), d, s=12, alpha=0.6, color="tab:blue", zorder=3)
            med = floors[fams[i - 1]]["median_s"] * 1000.0
            ax.annotate(f"{med:.0f} ms", (i, med), xytext=(i + 0.3, med), fontsize=8, color="tab:red",
                        va="center")
        ax.set_xticks(range(1, len(fams) + 1))
        ax.set_xticklabels([f"{f}\n(n={floors[f]['n']})" for f in fams], fontsize=9)
        top = max([float(d.max()) for d in data if d.size] + [1000.0 * b[1] for b in bands.values()])
        if top > 0:
            ax.set_yscale("symlog", linthresh=10)
        ax.set_ylim(bottom=0)
    ax.set_ylabel("|detected − annotated onset| (ms)")
    ax.set_title(title or "Localization floors per family")
    ax.grid(axis="y", alpha=0.3)
    if bands:
        ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)

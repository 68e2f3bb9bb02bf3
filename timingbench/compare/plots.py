"""Comparison plots (matplotlib, Agg backend, PNG).

- ``on_time_by_family.png``: on-time rate per event family, one bar per system, with the
  bootstrap interval as error bars.
- ``signed_errors.png``: signed timing errors (detected - instructed) of delivered events
  per family and system, early to the left and late to the right; the family's
  measurement floor is shaded around 0 and the on-time tolerance drawn dashed.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from timingbench.compare.core import Comparison
from timingbench.compare.report import mixed_note
from timingbench.prompts import EVENT_FAMILIES


def _pyplot():  # type: ignore[no-untyped-def]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_on_time_by_family(comp: Comparison, path: str | Path) -> Path:
    """Bar chart of per-family on-time rates with intervals; returns the PNG path."""
    plt = _pyplot()
    fams = [f for f in EVENT_FAMILIES
            if any(f"on_time_rate|family={f}" in comp.estimates[n] for n in comp.names)]
    n = len(comp.names)
    width = 0.8 / n
    fig, ax = plt.subplots(figsize=(max(8.0, 1.1 * len(fams) + 2), 4.8), dpi=120)
    x = np.arange(len(fams))
    for i, name in enumerate(comp.names):
        vals, lo, hi = [], [], []
        for f in fams:
            e = comp.estimates[name].get(f"on_time_rate|family={f}")
            v = e.value if e is not None and math.isfinite(e.value) else np.nan
            vals.append(100 * v)
            lo.append(100 * (v - e.lo) if e is not None and math.isfinite(e.lo) else 0.0)
            hi.append(100 * (e.hi - v) if e is not None and math.isfinite(e.hi) else 0.0)
        ax.bar(x - 0.4 + width * (i + 0.5), vals, width, yerr=[lo, hi], capsize=3, label=name)
    ax.set_xticks(x, fams, rotation=20)
    ax.set_ylim(0, 105)
    ax.set_ylabel("on-time rate (%)")
    level = f"{100 * comp.settings.ci_level:g} %"
    title = f"On-time rate per event family ({level} bootstrap intervals over prompts)"
    if comp.mixed:
        title = "MIXED COMPARISON - " + title
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, ncols=min(n, 4), loc="upper center", bbox_to_anchor=(0.5, -0.18))
    ax.grid(axis="y", alpha=0.3)
    if comp.mixed:
        fig.text(0.01, 0.005, mixed_note(comp)[:180], fontsize=6, color="red")
    fig.tight_layout()
    p = Path(path)
    fig.savefig(p)
    plt.close(fig)
    return p


def plot_signed_errors(comp: Comparison, path: str | Path) -> Path:
    """Strip plots of signed errors per family and system; returns the PNG path."""
    plt = _pyplot()
    data: dict[str, dict[str, np.ndarray]] = {}
    tol: dict[str, float] = {}
    for s in comp.systems:
        for e in s.events:
            if e["outcome"] == "none":
                continue
            data.setdefault(e["family"], {}).setdefault(s.name, np.zeros(0))
            data[e["family"]][s.name] = np.append(data[e["family"]][s.name], float(e["error_s"]))
            tol[e["family"]] = float(e["tolerance_s"])
    fams = [f for f in EVENT_FAMILIES if f in data] or ["(no deliveries)"]
    ncol = 2 if len(fams) > 1 else 1
    nrow = math.ceil(len(fams) / ncol)
    n = len(comp.names)
    fig, axes = plt.subplots(nrow, ncol, figsize=(11, 0.5 + nrow * (0.45 * n + 0.9)), dpi=120,
                             squeeze=False, sharex=True)
    rng = np.random.default_rng(0)  # jitter only, for readability
    lim = max([1.0] + [float(np.max(np.abs(v))) for d in data.values() for v in d.values() if v.size])
    for ax, fam in zip(axes.ravel(), fams, strict=False):
        floor = comp.floors_s.get(fam)
        if floor:
            ax.axvspan(-floor, floor, color="tab:green", alpha=0.25, lw=0,
                       label=f"floor ±{1000 * floor:.0f} ms")
        if fam in tol:
            for sgn in (-1, 1):
                ax.axvline(sgn * tol[fam], color="grey", ls="--", lw=0.8)
        ax.axvline(0.0, color="black", lw=0.6)
        for i, name in enumerate(comp.names):
            v = data.get(fam, {}).get(name, np.zeros(0))
            if v.size:
                ax.scatter(v, i + rng.uniform(-0.18, 0.18, v.size), s=6, alpha=0.5, color=f"C{i % 10}")
                ax.plot([np.median(v)] * 2, [i - 0.3, i + 0.3], color="black", lw=2)
        ax.set_yticks(range(n), comp.names, fontsize=8)
        ax.set_ylim(-0.6, n - 0.4)
        ax.set_xlim(-lim * 1.05, lim * 1.05)
        ax.set_title(fam + (f" (floor {1000 * floor:.0f} ms shaded)" if floor else ""), fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    for ax in axes.ravel()[len(fams):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("signed error (s): early  <-  0  ->  late")
    title = "Signed timing error of delivered events (dashed: on-time tolerance; bar: median)"
    if comp.mixed:
        title = "MIXED COMPARISON - " + title
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    p = Path(path)
    fig.savefig(p)
    plt.close(fig)
    return p


def write_plots(comp: Comparison, out: str | Path) -> list[Path]:
    """Write both plots into ``out``; returns their paths."""
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    return [plot_on_time_by_family(comp, d / "on_time_by_family.png"),
            plot_signed_errors(comp, d / "signed_errors.png")]

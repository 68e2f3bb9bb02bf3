"""Draw one explained event on a single time axis (matplotlib, Agg backend, PNG).

Panels, top to bottom, sharing the time axis in seconds:

1. the clip's log-mel (the feature bank's ``logmel``), with the search window shaded,
   the instructed time (dashed), every candidate (thin ticks) and the detected time;
2. the family evidence: the event family's presence probability and, with the trained
   backend, its probability of entering / leaving at each instant, with the thresholds
   the gates read (absence, change, the presence level persistence counts; other judged
   families faint);
   for a vocals event, under it: the singing detector's vocals presence (singing and speech
   log-odds, :mod:`timingbench.explain.singing_panel`), which judges nothing yet;
3. one row per gate: each candidate's verdict (pass, fail, exempt) at its time;
4. the gate table of the detected (or nearest) candidate: each measured statistic
   against its threshold.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from timingbench.explain.event import SILENT_NOTE, ExplainedEvent, window_text
from timingbench.explain.singing_panel import draw_vocals_presence, panel_presence
from timingbench.explain.thresholds import direction_of, format_checks
from timingbench.prompts import INSTRUMENT_KINDS
from timingbench.text import shortlist

VERDICT_STYLE = {"pass": ("^", "#2a9d4b"), "fail": ("X", "#d62828"), "exempt": ("o", "#8d96a8")}
WINDOW_COLOR = "#4cc9f0"
INSTRUCTED_COLOR = "#ffffff"
DETECTED_COLOR = "#3dff8b"
NEAREST_COLOR = "#c77dff"
OTHER_FAMILIES_COLOR = "#b8bfcc"
#: Resolution of an explain figure (14 inches wide: 1260 pixels).
PLOT_DPI = 90
#: Colours of a saved figure: the marks' own colours exactly, the rest (the log-mel, text
#: antialiasing) from an adaptive palette. 64 keep the log-mel readable and a figure of a
#: dense 12 s clip under 200 KB (a full-colour one is about 700 KB).
PLOT_COLORS = 64


def identity_verified(x: ExplainedEvent) -> bool:
    """Whether the event's identity is verified: the row's ``identity_verified`` when written,
    else its family is ``mix`` or one the clip's family evidence judges."""
    flag = x.row.get("identity_verified")
    if isinstance(flag, bool):
        return flag
    fam = x.prompt.events[x.index].family
    fe = x.family_evidence
    return fam == "mix" or (fe is not None and fam in fe.curves and fam not in fe.exempt)


def title_of(x: ExplainedEvent) -> str:
    """The plot's title: clip, event, instruction, verdict, and whether the identity was verified."""
    ev = x.prompt.events[x.index]
    r = x.row
    verdict = (f" at {x.verdict.detected_s:.3f} s" if x.verdict.detected_s is not None
               else " (silent audio)" if x.silent
               else f" (rejected by {x.verdict.rejected_by})" if x.verdict.rejected_by
               else " (no candidate)")
    note = "" if identity_verified(x) else "  [identity not verified: timing only]"
    return (f"{r['clip']}  {ev.id}  {ev.kind}/{ev.family} ({ev.target or '-'})  instructed "
            f"{ev.time_s:.2f} s ±{r.get('tolerance_s')} s  ->  {x.verdict.outcome}{verdict}{note}")


def no_candidate_text(x: ExplainedEvent) -> str:
    """Why an event has no candidate: silent audio, no search window, or none found in it."""
    if x.silent:
        return f"{SILENT_NOTE}: the detector is not run"
    if not x.has_window:
        return window_text(x)
    return "the detector found no candidate in the search window"


def _mark_times(ax: Any, x: ExplainedEvent, *, on_image: bool) -> None:
    lo, hi = x.window
    ev = x.prompt.events[x.index]
    if x.has_window:
        ax.axvspan(lo, hi, color=WINDOW_COLOR, alpha=0.10 if on_image else 0.08, lw=0)
        for edge in (lo, hi):
            ax.axvline(edge, color=WINDOW_COLOR, lw=0.8, alpha=0.9)
    ax.axvline(ev.time_s, color=INSTRUCTED_COLOR if on_image else "k", ls="--", lw=1.2)
    c = x.chosen
    if c is not None:
        col = DETECTED_COLOR if x.verdict.detected_s is not None else NEAREST_COLOR
        ax.axvline(c.candidate.time_s, color=col, lw=1.6)


def plot_explanation(x: ExplainedEvent, out: Path, *, compress_level: int = 6) -> Path:
    """Draw ``x`` and save it as a PNG.

    Parameters
    ----------
    x : ExplainedEvent
        The explained event (:func:`timingbench.explain.event.explain_event`).
    out : Path
        PNG path; its folder is created.
    compress_level : int
        zlib level of the PNG, 0-9 (1 writes several times faster, files somewhat larger).

    Returns
    -------
    out : Path
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bank = x.bank
    t = np.asarray(bank.times, dtype=np.float64)
    gates = list(dict.fromkeys(g for c in x.candidates for g in c.candidate.gates))
    chosen = x.chosen
    table = format_checks(chosen.checks) if chosen is not None else [f"  {no_candidate_text(x)}"]
    vocals = panel_presence(x)  # vocals events: the singing detector's panel under the family evidence
    heights = [3.0, 1.8, *([1.4] if vocals is not None else []), max(0.9, 0.32 * (len(gates) + 1)),
               0.22 * (len(table) + 2)]
    fig = plt.figure(figsize=(14, sum(heights) + 0.8), constrained_layout=True)
    grid = fig.add_gridspec(len(heights), 1, height_ratios=heights)
    ax_mel = fig.add_subplot(grid[0])
    ax_ev = fig.add_subplot(grid[1], sharex=ax_mel)
    ax_g = fig.add_subplot(grid[-2], sharex=ax_mel)
    ax_tab = fig.add_subplot(grid[-1])
    end = float(t[-1]) if t.size else float(bank.duration_s)

    # 1. log-mel with times
    ax_mel.imshow(bank.logmel, origin="lower", aspect="auto", cmap="magma",
                  extent=(float(t[0]) if t.size else 0.0, end, 0, bank.logmel.shape[0]))
    _mark_times(ax_mel, x, on_image=True)
    for c in x.candidates:
        col = VERDICT_STYLE["pass" if c.passed else "fail"][1]
        ax_mel.plot([c.candidate.time_s] * 2, [bank.logmel.shape[0] * 0.9, bank.logmel.shape[0]], color=col, lw=2.5)
    ax_mel.set_ylabel("mel band")
    ax_mel.set_title(title_of(x), fontsize=10)

    # 2. family evidence
    if x.silent:
        _no_evidence_panel(ax_ev, "no family evidence (silent audio is scored without it)")
    else:
        _draw_evidence(ax_ev, x)
    _mark_times(ax_ev, x, on_image=False)
    if vocals is not None:
        ax_voc = fig.add_subplot(grid[2], sharex=ax_mel)
        draw_vocals_presence(ax_voc, vocals)
        _mark_times(ax_voc, x, on_image=False)

    # 3. gate verdicts per candidate
    for row, g in enumerate(gates):
        for c in x.candidates:
            v = c.candidate.gates.get(g)
            if v is None:
                continue
            marker, col = VERDICT_STYLE.get(v, ("s", "k"))
            ax_g.scatter([c.candidate.time_s], [row], marker=marker, color=col, s=60 if c.chosen else 30,
                         edgecolors="k" if c.chosen else "none", zorder=3)
    _mark_times(ax_g, x, on_image=False)
    ax_g.set_yticks(range(len(gates)), gates, fontsize=8)
    ax_g.set_ylim(-0.7, max(len(gates), 1) - 0.3)
    ax_g.invert_yaxis()
    if not x.candidates:
        ax_g.text(0.5, 0.5, no_candidate_text(x), transform=ax_g.transAxes, ha="center", va="center", fontsize=9)
    ax_g.set_xlabel("time (s)   [shaded: search window; dashed: instructed; green: detected; violet: nearest "
                    "rejected; markers: ▲ pass, ✕ fail, ○ exempt]", fontsize=8)
    ax_mel.set_xlim(0.0, end)

    # 4. the gate table of the chosen candidate
    ax_tab.axis("off")
    head = "gates of the detected candidate" if x.verdict.detected_s is not None else \
        "gates of the nearest candidate (not credited)" if chosen is not None else "no gates"
    when = f" at {chosen.candidate.time_s:.3f} s" if chosen is not None else ""
    ax_tab.text(0.0, 1.0, "\n".join([head + when, *table]), family="monospace", fontsize=7.5, va="top",
                transform=ax_tab.transAxes)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    save_png(fig, out, compress_level=compress_level)
    plt.close(fig)
    return out


def _drawn_colors(fig: Any) -> list[tuple[int, int, int]]:
    """The opaque colours the figure draws its lines, markers and text in (8-bit RGB), white and black.

    Read from the figure's artists, so a curve added to a panel keeps its exact colour too.
    """
    from matplotlib.colors import to_rgba, to_rgba_array

    found: list[Any] = ["#ffffff", "#000000"]
    for ax in fig.axes:
        found += [line.get_color() for line in ax.get_lines()]
        found += [t.get_color() for t in ax.texts]
        for coll in ax.collections:
            found += list(to_rgba_array(coll.get_facecolor())) + list(to_rgba_array(coll.get_edgecolor()))
    out: dict[tuple[int, int, int], None] = {}
    for c in found:
        r, g, b, a = to_rgba(c)
        if a >= 1.0:
            out[(round(255 * r), round(255 * g), round(255 * b))] = None
    return list(out)[:PLOT_COLORS // 2]


def save_png(fig: Any, out: Path, *, compress_level: int = 6) -> None:
    """Save ``fig`` as a paletted PNG of :data:`PLOT_COLORS` colours at :data:`PLOT_DPI`.

    The palette holds every drawn colour exactly (:func:`_drawn_colors`) and fills the rest by
    median cut of the rendered figure; each pixel takes its nearest palette colour (no
    dithering, so flat areas stay flat and compress).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    out : Path
        PNG path.
    compress_level : int
        zlib level, 0-9.
    """
    import io

    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, dpi=PLOT_DPI, format="png")
    rgb = Image.open(buf).convert("RGB")
    fixed = np.array(_drawn_colors(fig), dtype=np.int32)
    adaptive = rgb.quantize(colors=max(PLOT_COLORS - len(fixed), 2), method=Image.Quantize.MEDIANCUT,
                            dither=Image.Dither.NONE)
    pal = np.asarray(adaptive.getpalette() or [], dtype=np.int32)[:3 * (PLOT_COLORS - len(fixed))]
    palette = np.vstack([fixed, pal.reshape(-1, 3)])
    px = np.asarray(rgb, dtype=np.uint32)
    packed = (px[..., 0] << 16) | (px[..., 1] << 8) | px[..., 2]
    colours, inverse = np.unique(packed.ravel(), return_inverse=True)
    unique_rgb = np.stack([(colours >> 16) & 255, (colours >> 8) & 255, colours & 255], axis=1).astype(np.int32)
    nearest = np.empty(len(colours), dtype=np.uint8)
    for k in range(0, len(colours), 8192):  # bounded memory: 8192 colours x palette at a time
        d = ((unique_rgb[k:k + 8192, None, :] - palette[None, :, :]) ** 2).sum(axis=-1)
        nearest[k:k + 8192] = d.argmin(axis=1)
    img = Image.fromarray(nearest[inverse].reshape(packed.shape), mode="P")
    img.putpalette(palette.astype(np.uint8).ravel().tolist())
    img.save(out, format="PNG", compress_level=compress_level)


def tagger_label(classes: tuple[str, ...] | list[str], most: int = 4) -> str:
    """The AudioSet classes behind a family's tagger curve, for a legend (the first ``most``, then a count)."""
    if not classes:
        return "max over the family's AudioSet classes"
    return "max of " + shortlist(list(classes), most)


def _no_evidence_panel(ax: Any, text: str) -> None:
    """The family-evidence panel of an event scored without family evidence: its axes and why."""
    ax.set_ylabel("family\nevidence (p)")
    ax.set_ylim(-0.03, 1.03)
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", fontsize=9)


def _draw_presence(ax: Any, x: ExplainedEvent) -> None:
    """The family's log-odds presence on a second axis, with what the presence detection read of it.

    For an event the presence detection scored: the change point (a vertical line), the two
    levels either side of it over the search window (horizontal segments), and the snapped
    time (a diamond at the later level). Drawn for exempt families too, when the provider
    gives their presence, so a reader sees what judging them would read.
    """
    fe = x.family_evidence
    ev = x.prompt.events[x.index]
    if fe is None or ev.kind not in INSTRUMENT_KINDS or ev.family not in fe.presence_logits:
        return
    times, z = fe.presence_logit(ev.family, prob_clip=x.inputs.config.params.presence.prob_clip)
    ax2 = ax.twinx()
    ax2.plot(times, z, lw=1.1, color="#8338ec", label=f"{ev.family} presence (log-odds)", zorder=4)
    ax2.set_ylabel("presence\n(log-odds)", fontsize=8, color="#8338ec")
    chosen = x.chosen
    stats = chosen.candidate.stats if chosen is not None else {}
    step = stats.get("family_change") if isinstance(stats.get("family_change"), dict) else None
    if chosen is not None and step is not None and step.get("change_point_s") is not None:
        cp = float(step["change_point_s"])
        lo, hi = x.window
        ax2.axvline(cp, color="#8338ec", ls=":", lw=1.0, label=f"change point {cp:.2f} s")
        ax2.hlines([step["before"], step["after"]], [lo, cp], [cp, hi], colors="#3a0ca3", lw=2.0,
                   label=f"levels {step['before']:.2f} -> {step['after']:.2f} (size {step['size']:.2f}, "
                         f"needs {step['min_step']})")
        t_snap = float(chosen.candidate.time_s)
        ax2.scatter([t_snap], [step["after"] if ev.kind == "instrument_entry" else step["before"]], marker="D",
                    color="#ff006e", s=40, zorder=5,
                    label=f"snapped to the {stats.get('route', 'route')} onset: {t_snap:.2f} s"
                    if stats.get("snapped") else f"no onset within snap reach: {t_snap:.2f} s")
    handles, labels = ax2.get_legend_handles_labels()
    ax2.legend(handles, labels, loc="upper left", fontsize=6.5, framealpha=0.8)


def _draw_stem_judge(ax: Any, x: ExplainedEvent) -> bool:
    """The judging stem's level (dB re the mix's loud level) on a second axis, for a family its stem decides.

    Draws the stem level over the clip, the quiet side's bound and, for the detected (or
    nearest) candidate, the two levels its ``semantic_family`` gate measured across it. True
    when drawn.
    """
    fe = x.family_evidence
    ev = x.prompt.events[x.index]
    if fe is None or ev.kind not in INSTRUMENT_KINDS:
        return False
    stems = [j for j in dict(fe.judges or {}).get(ev.family, ()) if j.backend == "stems"]
    if not stems:
        return False
    params = x.inputs.config.params.presence
    entry = ev.kind == "instrument_entry"
    times, level = stems[0].presence_logit(ev.family, prob_clip=params.prob_clip)
    ax2 = ax.twinx()
    ax2.plot(times, level, lw=1.2, color="#8338ec", label=f"{ev.family} stem level (dB re the mix's loud level)",
             zorder=4)
    ax2.set_ylabel("stem level\n(dB re mix)", fontsize=8, color="#8338ec")
    need, quiet_max, _ = params.thresholds("stems", ev.family, entry=entry)
    if quiet_max is not None:
        ax2.axhline(quiet_max, color="#6c757d", ls=":", lw=0.9,
                    label=f"quiet side at most {quiet_max:g} dB (presence.quiet_max_by_evidence)")
    chosen = x.chosen
    gate = chosen.candidate.stats.get("semantic_family") if chosen is not None else None
    measured = gate.get("stems") if isinstance(gate, dict) else None
    if chosen is not None and isinstance(measured, dict) and measured.get("before") is not None:
        t = float(chosen.candidate.time_s)
        span = float(params.level_span_s)
        ax2.hlines([measured["before"], measured["after"]], [t - span, t], [t, t + span], colors="#3a0ca3", lw=2.0,
                   label=f"across {t:.2f} s: {measured['before']:.1f} -> {measured['after']:.1f} dB "
                         f"(step {measured['step']:.1f}, needs {need})")
    handles, labels = ax2.get_legend_handles_labels()
    ax2.legend(handles, labels, loc="upper left", fontsize=6.5, framealpha=0.8)
    return True


def _draw_evidence(ax: Any, x: ExplainedEvent) -> None:
    fe = x.family_evidence
    ev = x.prompt.events[x.index]
    ax.set_ylabel("family\nevidence (p)")
    ax.set_ylim(-0.03, 1.03)
    if _draw_stem_judge(ax, x) and (fe is None or not fe.curves):
        ax.text(0.5, 0.92, f"{ev.family}: judged by its separated stem", transform=ax.transAxes, ha="center",
                fontsize=8)
        return
    if fe is None or not fe.curves:
        req = x.inputs.options.family_evidence
        if fe is None:
            why = "--family-evidence none" if req == "none" else f"{req}: this prompt's events consult none"
        else:
            why = f"{fe.backend}: {fe.note or 'no family judged'}"
        ax.text(0.5, 0.5, f"no family evidence ({why})", transform=ax.transAxes, ha="center", va="center",
                fontsize=9)
        return
    times = np.asarray(fe.times, dtype=np.float64)
    others = [fam for fam in sorted(fe.curves) if fam != ev.family]
    for k, fam in enumerate(others):
        ax.plot(times, fe.curves[fam], lw=0.5, color=OTHER_FAMILIES_COLOR, zorder=1,
                label=f"other families present ({', '.join(others)})" if k == 0 else None)
    if ev.family in fe.tagger:
        ax.plot(times, fe.tagger[ev.family], lw=1.0, color="#2a9d8f", ls="--", zorder=2,
                label=f"tagger: {tagger_label(fe.classes.get(ev.family, ()))}")
    if ev.family in fe.curves:
        ax.plot(times, fe.curves[ev.family], lw=1.6, color="#264653", label=f"{ev.family} present", zorder=3)
        change = fe.entered if direction_of(ev.kind) == "rise" else fe.left
        if ev.family in change:
            word = "entered" if change is fe.entered else "left"
            ax.plot(times, change[ev.family], lw=1.2, color="#e76f51", label=f"{ev.family} {word}", zorder=3)
    else:
        ax.text(0.5, 0.85, f"{ev.family}: not judged by {fe.backend} "
                f"({fe.exempt.get(ev.family, 'not_in_vocabulary')})", transform=ax.transAxes,
                ha="center", fontsize=8)
    _draw_presence(ax, x)
    if ax.get_legend_handles_labels()[0]:  # every drawn curve is labelled
        design = fe.sources.get(ev.family)
        title = f"backend {fe.backend}" + (f", design {design}" if design else "")
        ax.legend(loc="upper right", fontsize=7, ncol=2, title=title, title_fontsize=7)

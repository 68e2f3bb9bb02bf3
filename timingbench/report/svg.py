"""Small inline SVG charts of the report's overview (no image files, no script)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

import numpy as np

#: Outcome -> fill colour (the clip table and the clip pages use the same ones).
OUTCOME_COLORS = {"on_time": "#2a9d4b", "off_time": "#f4a261", "none": "#9aa3b5"}


def outcome_bar(counts: dict[str, int], *, width: int = 240, height: int = 14) -> str:
    """A stacked bar of outcome shares, each part titled with its count and percentage.

    Parameters
    ----------
    counts : dict of str to int
        Outcome (``on_time``, ``off_time``, ``none``) -> number of events.
    width, height : int
        Size in CSS pixels.
    """
    n = sum(int(counts.get(o, 0)) for o in OUTCOME_COLORS)
    parts = [f'<svg class="bar" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">']
    x = 0.0
    for o, col in OUTCOME_COLORS.items():
        k = int(counts.get(o, 0))
        if n == 0 or k == 0:
            continue
        w = width * k / n
        parts.append(f'<rect x="{x:.2f}" y="0" width="{w:.2f}" height="{height}" fill="{col}">'
                     f"<title>{escape(o)}: {k} of {n} ({100 * k / n:.1f} %)</title></rect>")
        x += w
    if n == 0:
        parts.append(f'<rect width="{width}" height="{height}" fill="#eee"/>')
    parts.append("</svg>")
    return "".join(parts)


def error_histogram(credited_s: Sequence[float], off_s: Sequence[float], *, floor_s: float | None,
                    tolerance_s: float | None, width: int = 300, height: int = 90, bins: int = 24) -> str:
    """Signed errors of credited events (bars), off-time ones (ticks), the floor band, the tolerance.

    Parameters
    ----------
    credited_s : sequence of float
        Signed errors in seconds (detected - instructed) of on-time events.
    off_s : sequence of float
        Signed errors in seconds of off-time events, drawn as ticks under the axis.
    floor_s : float or None
        The family's measurement floor in seconds, drawn as a band ``±floor_s`` about 0.
    tolerance_s : float or None
        The events' tolerance in seconds, drawn as dashed lines (the axis spans it).
    width, height, bins : int
        Size in CSS pixels; number of bars across the tolerance.
    """
    span = float(tolerance_s) if tolerance_s else max([0.05, *(abs(e) for e in credited_s)])
    pad_l, pad_b, top = 6, 26, 6
    plot_w, plot_h = width - 2 * pad_l, height - pad_b - top

    def xs(t: float) -> float:
        return pad_l + (max(-span, min(span, t)) + span) / (2 * span) * plot_w

    out = [f'<svg class="hist" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">',
           f'<rect x="{pad_l}" y="{top}" width="{plot_w}" height="{plot_h}" fill="#fafbfc" stroke="#dde"/>']
    if floor_s:
        x0, x1 = xs(-floor_s), xs(floor_s)
        out.append(f'<rect class="floor" x="{x0:.2f}" y="{top}" width="{max(x1 - x0, 1.0):.2f}" height="{plot_h}" '
                   f'fill="#4cc9f0" opacity="0.35"><title>measurement floor ±{1000 * floor_s:.0f} ms'
                   "</title></rect>")
    if credited_s:
        counts, edges = np.histogram(np.clip(credited_s, -span, span), bins=bins, range=(-span, span))
        peak = max(int(counts.max()), 1)
        for k, c in enumerate(counts):
            if c == 0:
                continue
            h = plot_h * c / peak
            x0 = xs(float(edges[k]))
            w = max(xs(float(edges[k + 1])) - x0 - 0.5, 0.5)
            out.append(f'<rect x="{x0:.2f}" y="{top + plot_h - h:.2f}" width="{w:.2f}" height="{h:.2f}" '
                       f'fill="{OUTCOME_COLORS["on_time"]}"><title>{int(c)} credited events from '
                       f"{1000 * edges[k]:+.0f} to {1000 * edges[k + 1]:+.0f} ms</title></rect>")
    for e in off_s:
        x = xs(float(e))
        out.append(f'<line x1="{x:.2f}" x2="{x:.2f}" y1="{top + plot_h + 2}" y2="{top + plot_h + 8}" '
                   f'stroke="{OUTCOME_COLORS["off_time"]}" stroke-width="1.5"><title>off time {float(e):+.3f} s'
                   "</title></line>")
    zero = xs(0.0)
    out.append(f'<line x1="{zero:.2f}" x2="{zero:.2f}" y1="{top}" y2="{top + plot_h}" stroke="#333" '
               'stroke-width="0.8"/>')
    label = f"±{1000 * span:.0f} ms" + (" (tolerance)" if tolerance_s else "")
    out.append(f'<text x="{pad_l}" y="{height - 4}" font-size="10" fill="#555">-{escape(label[1:])}</text>')
    out.append(f'<text x="{width - pad_l}" y="{height - 4}" font-size="10" fill="#555" text-anchor="end">'
               f"+{escape(label[1:])}</text>")
    if floor_s:
        out.append(f'<text x="{zero:.2f}" y="{height - 4}" font-size="10" fill="#1d7fa5" text-anchor="middle">'
                   f"floor ±{1000 * floor_s:.0f} ms</text>")
    out.append("</svg>")
    return "".join(out)


def fmt_pct(x: float | None, *, digits: int = 1) -> str:
    """A fraction as a percentage string ('-' when None or not finite)."""
    if x is None or not math.isfinite(float(x)):
        return "-"
    return f"{100 * float(x):.{digits}f} %"

"""The report's HTML: the index page (overview, families, kinds, comparison, clip table) and clip pages.

Pages are plain HTML with their data inline (``<script type="application/json">``) and
the shared stylesheet and scripts in ``assets/`` (package data ``timingbench/data/report``);
nothing is fetched, so they open from ``file://`` as from a web server.
"""

from __future__ import annotations

import json
import math
from html import escape
from typing import TYPE_CHECKING, Any

from timingbench.report.overview import Group, Headline, Overview
from timingbench.report.svg import OUTCOME_COLORS, error_histogram, fmt_pct, outcome_bar

if TYPE_CHECKING:
    from timingbench.compare.core import Comparison
    from timingbench.explain.event import ExplainedEvent
    from timingbench.report.pages import ClipJob

OUTCOME_WORDS = {"on_time": "on time", "off_time": "off time", "none": "none"}

#: The marks a clip page draws over its log-mel: (CSS classes, as ``clip.js`` sets them, legend
#: text). The legend draws each with the same classes, so its colours are the ones drawn.
SPEC_MARKS = (
    ("instructed", "instructed time"),
    ("tolerance", "tolerance"),
    ("window", "search window"),
    ("candidate", "the detector's candidates"),
    ("detected on_time", "on-time detection"),
    ("detected off_time", "off-time detection"),
    ("nearest", "nearest rejected candidate"),
)


def spec_legend() -> str:
    """The legend of a clip page's log-mel overlay: one swatch per :data:`SPEC_MARKS` entry."""
    keys = "".join(f'<span class="key" data-mark="{cls}"><span class="swatch"><i class="mark {cls}"></i></span>'
                   f"{escape(text)}</span>" for cls, text in SPEC_MARKS)
    return f'<div class="legend hint" id="legend">{keys}<span class="key">click the image to move the audio there'\
           "</span></div>"


def fmt_bpm(x: Any) -> str:
    """A tempo in BPM to the 0.1 BPM the estimator resolves ('-' when absent)."""
    return "-" if not isinstance(x, int | float) or isinstance(x, bool) else f"{float(x):.1f}"


def inline_json(data: Any, element_id: str) -> str:
    """A ``<script type="application/json">`` element holding ``data`` (safe inside HTML)."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def _page(title: str, body: str, *, script: str, prefix: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(title)}</title>"
            f'<link rel="stylesheet" href="{prefix}assets/report.css"></head>'
            f"<body>{body}<script src=\"{prefix}assets/{script}\"></script></body></html>\n")


def _ci(ci: dict[str, Any] | None) -> str:
    """A bootstrap interval in words; over one prompt there is none to give (``n = 1, no interval``)."""
    if ci and ci.get("n_prompts") == 1:
        return '<span class="ci" title="one prompt: a bootstrap over it has no spread">n = 1, no interval</span>'
    if not ci or ci.get("lo") is None:
        return '<span class="ci">no interval</span>'
    return (f'<span class="ci" title="bootstrap interval over {ci["n_prompts"]} prompts, macro-averaged, as '
            f'timingbench compare computes it">{100 * ci["value"]:.1f} % '
            f'[{100 * ci["lo"]:.1f}, {100 * ci["hi"]:.1f}] · {ci["n_prompts"]} prompts</span>')


def _card(h: Headline, extra: str = "", *, primary: bool = False, judged: str = "") -> str:
    value = "" if h.value is None else repr(float(h.value))
    return (f'<div class="card{" primary" if primary else ""}" data-key="{escape(h.key)}" data-value="{value}">'
            f'<div class="label">{escape(h.label)}</div><div class="num">{fmt_pct(h.value)}</div>'
            + (f'<div class="judged">{escape(judged)}</div>' if judged else "")
            + f'<div class="sub">{extra}</div><div class="sub">macro {_ci(h.ci)}</div>'
            f'<div class="key">summary.json: {escape(h.key)}</div></div>')


#: The clip table's legend of its exempt marker (the ``*`` ``index.js`` writes after a family).
EXEMPT_LEGEND = ('<p class="hint" id="exempt-legend"><b>*</b> after a family: identity not verified. The family '
                 "evidence does not judge that family, so its events are timed only: any layer changing at the "
                 "instructed time is credited.</p>")

#: The headline card that stands out: the on-time rate over identity-verified events.
PRIMARY_KEY = "rates_identity_verified.on_time_rate"


def _headline_cards(summary: dict[str, Any], ov: Overview) -> str:
    """The overview's headline cards (the primary one naming who was judged) and the judged set's warnings."""
    judged = summary.get("identity_judged") or {}
    cards = "".join(_card(h, _counts_text(summary, h.key), primary=h.key == PRIMARY_KEY,
                          judged=str(judged.get("label") or "") if h.key == PRIMARY_KEY else "")
                    for h in ov.headline)
    warnings = "".join(f"<li>{escape(str(w))}</li>" for w in judged.get("warnings") or [])
    return (f'<div class="cards" id="headline">{cards}</div>'
            + (f'<ul class="warn" id="judged-warnings">{warnings}</ul>' if warnings else ""))


#: Summary rates object whose events a discounted rate is computed over.
DISCOUNTED_OVER = {"p_chance_discounted_on_time_rate": "rates",
                   "p_chance_discounted_on_time_rate_identity_verified": "rates_identity_verified"}


def _counts_text(summary: dict[str, Any], key: str) -> str:
    """The denominator of a headline card: counts and what they are counted over."""
    group, _, word = key.partition(".")
    if key in DISCOUNTED_OVER:
        rates = summary.get(DISCOUNTED_OVER[key]) or {}
        return escape(f"over the same {rates.get('n')} events: {rates.get('denominator', '')}".rstrip(": "))
    rates = summary.get(group) or {}
    word = word.removesuffix("_rate")
    if group.startswith("rates") and word in rates:
        return escape(f"{rates[word]} of {rates.get('n')} {rates.get('denominator', 'events')}")
    if group == "tempo" or key.startswith("tempo."):
        return f"of {(summary.get('tempo') or {}).get('n')} clips with a tempo target"
    if key.startswith("duration_compliance"):
        return f"of {(summary.get('counts') or {}).get('clips')} clips"
    return ""


def _group_rows(groups: list[Group], *, floors: bool) -> str:
    rows = []
    for g in groups:
        c = g.counts
        hist = error_histogram(g.credited_errors_s, g.off_errors_s, floor_s=g.floor_s, tolerance_s=g.tolerance_s)
        floor = "-" if g.floor_s is None else f"{1000 * g.floor_s:.0f} ms"
        rows.append(
            f'<tr data-group="{escape(g.name)}"><th>{escape(g.name)}'
            + (f' <span class="badge exempt" title="{escape(g.exempt)}">identity not verified</span>' if g.exempt
               else "")
            + f'</th><td class="n" data-key="by_{g.scope}.{escape(g.name)}.n">{c.get("n")}</td>'
            f"<td>{outcome_bar({o: int(c.get(o, 0)) for o in OUTCOME_COLORS})}</td>"
            + "".join(f'<td class="num" data-key="by_{g.scope}.{escape(g.name)}.{o}_rate" '
                      f'data-value="{c.get(o + "_rate")}">{fmt_pct(c.get(o + "_rate"))}</td>' for o in OUTCOME_COLORS)
            + f"<td>{_ci(g.on_time_ci)}</td><td>{hist}<div class='hint'>{len(g.credited_errors_s)} credited, "
            f"{len(g.off_errors_s)} off time</div></td>"
            + (f'<td class="num">{floor}</td>' if floors else "") + "</tr>")
    head = ("<tr><th></th><th>n</th><th>outcome shares</th><th>on time</th><th>off time</th><th>none</th>"
            "<th>on time, bootstrap</th><th>signed error of credited events</th>"
            + ("<th>floor</th>" if floors else "") + "</tr>")
    return f'<table class="groups">{head}{"".join(rows)}</table>'


def _generic(value: Any, depth: int = 0) -> str:
    """Any JSON value as nested HTML (for optional blocks such as ``controls``)."""
    if isinstance(value, dict):
        if not value:
            return "<i>empty</i>"
        inner = "".join(f"<tr><th>{escape(str(k))}</th><td>{_generic(v, depth + 1)}</td></tr>"
                        for k, v in value.items())
        return f'<table class="generic">{inner}</table>'
    if isinstance(value, list):
        if len(value) > 50 or all(not isinstance(v, dict | list) for v in value):
            return escape(json.dumps(value)[:2000])
        return "<ol>" + "".join(f"<li>{_generic(v, depth + 1)}</li>" for v in value) + "</ol>"
    if isinstance(value, float):
        return f"{value:.4g}" if math.isfinite(value) else "-"
    return escape("null" if value is None else str(value))


def _controls_table(controls: dict[str, Any]) -> str:
    """The ``controls`` summary as the run table prints it: one row per control (and the melody's
    salience measure), mean over clips, chance mean, the difference, p_chance and the floor."""
    from timingbench.controls.report import control_rows

    def cell(x: Any) -> str:
        return f"{x:.3f}" if isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) else "-"

    rows = []
    for label, e, extras in control_rows(controls):
        vals = [e.get("mean"), e.get("chance_mean"), e.get("above_chance"), e.get("p_chance"), e.get("floor")]
        n = escape(str(e["n"])) if e.get("n") is not None else "-"
        extra = ", ".join(f"{name} {cell(v)}{unit}" for name, v, unit in extras)
        rows.append(f"<tr><th>{escape(label)}</th><td>{n}</td>" + "".join(f"<td>{cell(v)}</td>" for v in vals)
                    + f"<td>{escape(extra)}</td></tr>")
    head = ("<tr><th>control</th><th>n</th><th>mean</th><th>chance</th><th>above chance</th><th>p_chance</th>"
            "<th>floor</th><th></th></tr>")
    return (f'<table class="controls">{head}{"".join(rows)}</table><p class="hint">Each control\'s metric on the '
            "clips that carry it, against the same metric on the controls shifted in time (the chance control), "
            'beside the floor a perfect rendition reaches (definitions: docs/controls.md).</p>')


def _compare_section(comp: Comparison) -> str:
    from timingbench.compare.core import HEADLINE_METRIC, metric_info
    from timingbench.compare.report import OUTCOME_RATES, format_estimate, mixed_note

    keys = ["on_time_rate_judged", "none_rate_judged", "on_time_rate_discounted_judged",
            *OUTCOME_RATES, "on_time_rate_discounted", "on_time_rate_low_p_chance", "error_median_s",
            f"tempo_within_{comp.settings.tempo_tolerance_pct:g}pct", "duration_ok_rate", "timbre_match_rate"]
    head = "<tr><th>metric</th>" + "".join(f"<th>{escape(n)}</th>" for n in comp.names) + "</tr>"
    body = ""
    for k in keys:
        body += f"<tr><th>{escape(metric_info(k).label)}</th>" + "".join(
            f'<td class="num">{escape(format_estimate(k, comp.estimates[n].get(k)))}</td>'
            for n in comp.names) + "</tr>"
    rank = comp.ranks.get(HEADLINE_METRIC, {})
    body += "<tr><th>rank (on time, identity verified)</th>" + "".join(
        f"<td class='num'>{rank.get(n, '-')}</td>" for n in comp.names)
    body += "</tr>"
    prow = "".join(
        f'<tr class="{"resolved" if p.resolved else "unresolved"}"><td>{escape(metric_info(p.metric).label)}</td>'
        f"<td>{escape(p.a)} - {escape(p.b)}</td>"
        f'<td class="num">{escape(format_estimate(p.metric, p.diff))}</td>'
        f'<td class="num">{_ms(p.floor_s)}</td>'
        f"<td>{escape(p.verdict)}</td></tr>" for p in comp.pairwise)
    note = mixed_note(comp)
    level = f"{100 * comp.settings.ci_level:g} %"
    return ('<section id="compare"><h2>Systems side by side</h2>'
            + (f'<p class="warn">{escape(note)}</p>' if note else "")
            + f"<p>Macro over {len(comp.prompt_ids)} prompts with {level} bootstrap intervals, as "
            "<code>timingbench compare</code> computes them. A difference is <i>not resolved</i> when its "
            "interval includes 0, when fewer than the configured number of prompts carry it, or when a timing "
            "difference is below the family's measurement floor; unresolved differences are never ranked.</p>"
            f'<table class="systems">{head}{body}</table>'
            f'<h3>Pairwise differences</h3><table class="pairs" id="pairs"><tr><th>metric</th><th>A - B</th>'
            f"<th>difference</th><th>floor</th><th>verdict</th></tr>{prow}</table></section>")


def _ms(v: float | None) -> str:
    return "-" if v is None else f"{1000 * float(v):.0f} ms"


def index_html(*, title: str, system: str, results: str, summary: dict[str, Any], ov: Overview,
               table: dict[str, Any], comp: Comparison | None) -> str:
    """The index page.

    Parameters
    ----------
    title : str
    system : str
        Name of the reported system.
    results : str
        Its results folder.
    summary : dict
        Its ``summary.json``.
    ov : Overview
    table : dict
        The clip table's data (``rows``, ``systems``, ``families``, ``kinds``).
    comp : Comparison or None
        With ``--compare``.
    """
    ladder = "".join(_card(h, _counts_text(summary, h.key)) for h in ov.ladder)
    unresolved = "".join(f"<li>{escape(n)}</li>" for n in ov.unresolved) or "<li>nothing flagged</li>"
    prov = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in ov.provenance)
    disc = "".join(
        f"<details><summary>{escape(k)}: {len(v)}</summary><ul>"
        + "".join(f"<li>{escape(x)}</li>" for x in v[:500]) + ("<li>...</li>" if len(v) > 500 else "")
        + "</ul></details>" for k, v in ov.disclosures.items())
    judged = [g for g in ov.families if not g.exempt]
    exempt = [g for g in ov.families if g.exempt]
    controls = summary.get("controls")
    nav = ["overview", "families", "kinds", *(["compare"] if comp else []), "clips"]
    body = (
        f'<header><h1>{escape(title)}</h1><p class="where">system <b>{escape(system)}</b> · results '
        f'<code>{escape(results)}</code></p><nav>'
        + " · ".join(f'<a href="#{n}">{n}</a>' for n in nav) + "</nav></header><main>"
        f'<section id="overview"><h2>Overview</h2>{_headline_cards(summary, ov)}'
        + (f'<h3>Tempo ladder</h3><div class="cards" id="ladder">{ladder}</div>' if ov.ladder else "")
        + f'<p class="hint">Big numbers are <code>summary.json</code>\'s rates over events, each with the '
        "events it counts. The first is over identity-verified events: events of the families whose "
        "instrument the family evidence checks, plus whole-mix events; the all-events rates also credit "
        "exempt families on timing alone. Events of clips that could not be scored count as none. Beside "
        "each, the same metric macro-averaged over prompts with its bootstrap interval.</p>"
        f'<h3>What these numbers cannot resolve</h3><ul class="unresolved">{unresolved}</ul>'
        f'<h3>Run</h3><table class="prov">{prov}</table>{disc}'
        + (f'<h3>Control adherence</h3><div class="controls" id="controls">{_controls_table(controls)}</div>'
           if controls else "")
        + "</section>"
        f'<section id="families"><h2>Per family</h2><p class="hint">Bars: on time '
        f'<b style="color:{OUTCOME_COLORS["on_time"]}">■</b>, off time <b style="color:{OUTCOME_COLORS["off_time"]}">'
        f'■</b>, none <b style="color:{OUTCOME_COLORS["none"]}">■</b>. Histograms: signed error (detected - '
        "instructed) of credited events across the tolerance, the family's measurement floor shaded blue, "
        "off-time errors as ticks below (clipped to the axis).</p>"
        f"{_group_rows(judged, floors=True)}"
        + (f'<h3 id="exempt">Identity not verified</h3><p class="hint">The family evidence cannot judge these '
           "families: their events are timed, but any layer changing at the instructed time is credited.</p>"
           f'<div class="exempt-block">{_group_rows(exempt, floors=True)}</div>' if exempt else "")
        + "</section>"
        f'<section id="kinds"><h2>Per kind</h2>{_group_rows(ov.kinds, floors=False)}</section>'
        + (_compare_section(comp) if comp else "")
        + '<section id="clips"><h2>Clips</h2><div class="filters">'
        '<label>family <select id="f-family"><option value="">all</option></select></label> '
        '<label>kind <select id="f-kind"><option value="">all</option></select></label> '
        '<label>outcome <select id="f-outcome"><option value="">all</option>'
        + "".join(f'<option value="{o}">{w}</option>' for o, w in OUTCOME_WORDS.items())
        + '</select></label> <label>clip <input id="f-text" type="search" placeholder="name contains"></label> '
        '<label>order <select id="f-order"><option value="clip">clip</option>'
        '<option value="closest">closest calls first</option>'
        + ('<option value="disagree">systems disagree first</option>' if comp else "")
        + '</select></label> <span id="count"></span></div>'
        + (EXEMPT_LEGEND if any(r.get("exempt") for r in table.get("rows") or []) else "")
        + '<table class="clips" id="clip-table"><thead></thead><tbody></tbody></table>'
        '<div class="pager"><button id="prev">‹ previous</button> <span id="pageinfo"></span> '
        '<button id="next">next ›</button></div></section></main>'
        + inline_json(table, "tb-table"))
    return _page(title, body, script="index.js", prefix="")


def _verdict_text(row: dict[str, Any] | None) -> str:
    if row is None:
        return "no row"
    o = row.get("outcome")
    err = row.get("error_s")
    return OUTCOME_WORDS.get(str(o), str(o)) + ("" if err is None else f" {1000 * float(err):+.0f} ms")


def explanation_html(x: ExplainedEvent) -> str:
    """An explained event as HTML: the lines ``timingbench explain`` prints, each candidate's gate table a table.

    Parameters
    ----------
    x : ExplainedEvent

    Returns
    -------
    html : str
        A ``<div class="explanation">``: the account's header lines, then per candidate its
        heading and a ``<table class="gates">`` with the cells of the text table.
    """
    from timingbench.explain.event import candidate_heading, explanation_header, ordered_candidates
    from timingbench.explain.thresholds import CHECK_COLUMNS, check_cells

    head = "".join(f"<li>{escape(line)}</li>" for line in explanation_header(x))
    parts = [f'<ul class="account">{head}</ul>']
    columns = "".join(f"<th>{escape(c)}</th>" for c in CHECK_COLUMNS)
    for c in ordered_candidates(x):
        rows = []
        for check in c.checks:
            cells = dict(zip(CHECK_COLUMNS, check_cells(check), strict=True))
            rows.append(f'<tr class="{escape(check.verdict)}">' + "".join(
                f'<td class="{col}{" no" if col == "meets" and value == "NO" else ""}">{escape(value)}</td>'
                for col, value in cells.items()) + "</tr>")
        parts.append(f'<p class="candidate">{escape(candidate_heading(x, c))}</p>'
                     f'<table class="gates"><tr>{columns}</tr>{"".join(rows)}</table>')
    return f'<div class="explanation">{"".join(parts)}</div>'


def clip_page_html(*, job: ClipJob, views: list[dict[str, Any]], accounts: dict[str, str], plots: dict[str, str],
                   event_errors: dict[str, str], spec: dict[str, Any] | None, audio_rel: str | None,
                   error: str | None, prompt_text: str | None) -> str:
    """One clip page (see :mod:`timingbench.report.clip_page`); ``accounts``: event id -> :func:`explanation_html`."""
    from timingbench.report.pages import page_name

    prev, nxt = job.neighbours
    nav = ('<a href="../index.html#clips">all clips</a>'
           + (f' · <a id="prev-clip" href="{page_name(prev)}.html">‹ previous</a>' if prev is not None else "")
           + (f' · <a id="next-clip" href="{page_name(nxt)}.html">next ›</a>' if nxt is not None else ""))
    c = job.clip_row
    facts = []
    if c:
        dur = c.get("duration_s")
        facts.append(("duration -" if dur is None else f"duration {float(dur):.2f} s")
                     + f" ({'ok' if c.get('duration_ok') else 'not ok'})")
        if c.get("silent"):
            facts.append("silent audio: nothing delivered")
        t = c.get("tempo")
        if t:
            est = t.get("estimate_bpm")
            facts.append((f"tempo {fmt_bpm(est)} BPM" if est is not None
                          else f"no tempo estimate ({t.get('reason') or 'no pulse'})")
                         + f" for {fmt_bpm(t.get('target_bpm'))} BPM (within "
                         + ", ".join(f"±{k} %: {'yes' if v else 'no'}" for k, v in (t.get("within_pct") or {}).items())
                         + ")")
        facts.append(f"separation {c.get('separation') or '-'}, family evidence "
                     f"{c.get('family_evidence') or 'not consulted'}")
    by_id = {str(r["event_id"]): r for r in job.rows}
    other_by = [(name, {str(r["event_id"]): r for r in rows}) for name, rows in job.others]
    events_html = []
    for v in views:
        eid = str(v["event_id"])
        row = by_id.get(eid, {})
        verdicts = f"<tr><th>{escape(job.system)}</th><td>{escape(_verdict_text(row))}</td></tr>" + "".join(
            f"<tr><th>{escape(n)}</th><td>{escape(_verdict_text(m.get(eid)))}</td></tr>" for n, m in other_by)
        account = accounts.get(eid)
        events_html.append(
            f'<section class="event" id="ev-{escape(eid)}"><h3><span class="dot {escape(str(v["outcome"]))}"></span>'
            f'{escape(eid)} · {escape(str(v["kind"]))}/{escape(str(v["family"]))}'
            + (f" ({escape(str(v['target']))})" if v.get("target") else "")
            + f" · instructed {v['instructed_s']} s ±{v['tolerance_s']} s"
            + (' <span class="badge exempt">identity not verified</span>' if v.get("exempt") else "") + "</h3>"
            f'<table class="verdicts">{verdicts}</table>'
            + (f'<p class="warn">{escape(event_errors[eid])}</p>' if eid in event_errors else "")
            + (f"<h4>Gate table</h4>{account}" if account else "")
            + (f'<h4>Explain plot</h4><img class="explain" loading="lazy" src="{escape(plots[eid])}" '
               f'alt="explain plot of {escape(eid)}">' if eid in plots else "")
            + "</section>")
    if audio_rel:
        player = f'<audio id="audio" controls preload="metadata" src="{escape(audio_rel)}"></audio>'
    elif job.audio == "none":
        player = '<p class="hint" id="no-audio">Audio not included (report written with --audio none).</p>'
    else:
        player = ('<p class="warn" id="no-audio">Audio not included: '
                  + escape(error or "the clip's audio could not be read") + "</p>")
    figure = ""
    if spec is not None:
        figure = ('<div id="spec-wrap" title="click to move the audio here">'
                  f'<img id="spec" src="{escape(spec["src"])}" '
                  f'alt="log-mel spectrogram"><div id="overlay"></div><div id="cursor"></div></div>'
                  f'<div id="axis"></div>{spec_legend()}')
    controls = c.get("controls") if c else None
    body = (
        f'<header><h1>{escape(job.clip)}</h1><nav>{nav}</nav>'
        + (f'<p class="prompt">{escape(prompt_text)}</p>' if prompt_text else "")
        + f'<p class="where">{escape(" · ".join(facts))}</p></header><main>'
        + (f'<p class="warn" id="clip-error">Not re-derived: {escape(error)}</p>' if error else "")
        + figure + player
        + ("" if views else '<p class="hint" id="no-events">The prompt instructs no timed event: this clip is '
                            "scored on its duration, tempo and controls (above).</p>")
        + (f'<h3>Controls</h3><div class="controls">{_generic(controls)}</div>' if controls is not None else "")
        + "".join(events_html) + "</main>"
        + inline_json({"spec": spec, "events": views}, "tb-clip"))
    return _page(f"{job.clip} · timingbench report", body, script="clip.js", prefix="../")

"""The explain plot of every judged-family instrument event a scored corpus gets wrong, with the limit it hits.

Usage: .venv/bin/python tools/identity_failures.py RESULTS CORPUS OUT_DIR [--split validation]

RESULTS is a ``timingbench score --out`` folder of CORPUS's clips (``CORPUS/truth.jsonl``
and ``manifest.jsonl`` give the truth). For each entrance or exit of a family the trained
evidence judges whose verdict disagrees with the truth (a true delivery not credited, a
negative credited, an off-time delivery placed more than ``calibration.offset_match_s``
away), ``timingbench explain --plot`` is drawn into OUT_DIR and one line says which limit
the failure hits, read off the evidence at the true time (the instructed time for a
negative):

- **evidence**: the change head stays under its floor (``evidence.entry_min_prob`` /
  ``exit_min_prob``) within ``evidence.gate_reach_s`` of the true time, or the summarised
  presence does not rise across it, or (a negative credited) the evidence itself says the
  target family came in: no decision rule on this evidence can get it right;
- **decision**: the evidence shows the change at the true time (change head over its
  floor, presence rising by ``evidence.min_logit_rise``) but a gate or the candidate search
  still got it wrong.

OUT_DIR/index.md lists every failure with its plot and its line.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from timingbench.config import load_config
from timingbench.explain.event import explain_event
from timingbench.explain.plot import plot_explanation
from timingbench.explain.results import load_results
from timingbench.families import judged_families
from timingbench.identity.rules import change_near, logit_rise, side_levels


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _shrink(path: Path) -> None:
    """Committed plots: three quarters of the size, 96 colours (about a fifth of the bytes)."""
    from PIL import Image

    im = Image.open(path).convert("RGB")
    im = im.resize((im.width * 3 // 4, im.height * 3 // 4), Image.Resampling.LANCZOS)
    im.quantize(colors=96, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)


def limit_of(x: Any, truth: dict[str, Any], cfg: Any) -> tuple[str, str]:
    """``(limit, why)`` of one failure (module docstring)."""
    ev, row = x.family_evidence, x.row
    sec = cfg.params.evidence
    entry = row["kind"] == "instrument_entry"
    t = truth["onset_s"] if truth["occurred"] and truth["onset_s"] is not None else row["instructed_s"]
    fam = row["family"]
    ch = change_near((ev.entered if entry else ev.left)[fam], ev.times, t, sec.gate_reach_s)
    lv = side_levels(ev, fam, t_s=t, params=sec, entry=entry)
    rise = None if lv.quiet is None or lv.sounding is None else logit_rise(lv.quiet, lv.sounding, clip=sec.prob_clip)
    floor = sec.entry_min_prob if entry else sec.exit_min_prob
    stats = (f"at {t:.2f} s: change {ch:.2f} (floor {floor}), presence {lv.quiet:.2f} -> {lv.sounding:.2f}, "
             f"rise {rise:.1f} (needs {sec.min_logit_rise})") \
        if ch is not None and rise is not None else f"at {t:.2f} s"
    shows = ch is not None and floor is not None and ch >= floor and rise is not None \
        and (sec.min_logit_rise is None or rise >= sec.min_logit_rise)
    if not truth["occurred"]:
        if shows:
            return "evidence", f"the evidence says {fam} came in where it did not ({stats})"
        return "decision", (f"credited at {row['detected_s']:.2f} s although the evidence at the instructed time "
                            f"does not show it ({stats})")
    if shows:
        where = f"detected at {row['detected_s']:.2f} s" if row["detected_s"] is not None \
            else f"rejected by {row['rejected_by']}"
        return "decision", f"the evidence shows the change but the verdict is {row['outcome']} ({where}; {stats})"
    return "evidence", f"the evidence does not show the change ({stats})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--split", default=None, help="only truth rows of this split")
    args = ap.parse_args()
    cfg = load_config()
    judged = list(judged_families(cfg))
    match_s = cfg.params.calibration.offset_match_s
    truth = {(r["clip"], r["event_id"]): r for r in _jsonl(args.corpus / "truth.jsonl")
             if args.split is None or r.get("split") == args.split}
    results = load_results(args.results)
    rows = _jsonl(args.results / "events.jsonl")
    args.out.mkdir(parents=True, exist_ok=True)
    lines = [f"# Judged-family failures: {args.corpus.name}" + (f" ({args.split})" if args.split else ""), ""]
    n = {"evidence": 0, "decision": 0}
    for row in rows:
        tr = truth.get((row["clip"], row["event_id"]))
        if tr is None or row["family"] not in judged or row["kind"] not in ("instrument_entry", "instrument_exit"):
            continue
        occurred, onset = tr["occurred"], tr["onset_s"]
        on_time = occurred and onset is not None and abs(onset - row["instructed_s"]) <= row["tolerance_s"] + 1e-9
        ok = (row["outcome"] == "on_time") if on_time else (row["outcome"] == "none") if not occurred else \
            (row["outcome"] == "off_time" and row["detected_s"] is not None
             and abs(row["detected_s"] - onset) <= match_s)
        if ok:
            continue
        x = explain_event(results, row["clip"], row["event_id"])
        name = f"{Path(row['clip']).stem}__{row['event_id'].split('/')[-1]}.png"
        plot_explanation(x, args.out / name)
        _shrink(args.out / name)
        limit, why = limit_of(x, tr, cfg)
        n[limit] += 1
        truth_s = "absent" if not occurred else f"{onset:.2f} s"
        lines.append(f"- [{row['clip']} {row['event_id']}]({name}) {row['family']} {row['kind'][11:]}, "
                     f"truth {truth_s}, "
                     f"verdict {row['outcome']}: **{limit} limit**: {why}")
        print(lines[-1])
    lines += ["", f"{n['evidence']} evidence limits, {n['decision']} decision limits."]
    (args.out / "index.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(lines[-1])


if __name__ == "__main__":
    main()

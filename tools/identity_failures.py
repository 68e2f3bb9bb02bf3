"""The explain plot of every judged-family instrument event a scored corpus gets wrong, with the limit it hits.

Usage: .venv/bin/python tools/identity_failures.py RESULTS CORPUS OUT_DIR [--split validation]
       [--config CONFIG] [--families a,b]

RESULTS is a ``timingbench score --out`` folder of CORPUS's clips (``CORPUS/truth.jsonl``
and ``manifest.jsonl`` give the truth), scored with CONFIG (default: the packaged one; its
registry says which families are judged, ``--families`` narrows them). For each entrance or
exit of a judged family whose verdict disagrees with the truth (a true delivery not
credited, a negative credited, an off-time delivery placed more than
``calibration.offset_match_s`` away), ``timingbench explain --plot`` is drawn into OUT_DIR
and one line says which limit the failure hits, read off the family's log-odds presence at
the true time (the instructed time for a negative): the median of the columns in the
``SIDE_S`` after it against the median of those in the ``SIDE_S`` before it.

- **evidence**: that step stays under the family's ``presence.entry_min_step_by_family``
  (``exit_min_step_by_family``) at the true time, or (a negative credited) reaches it where
  the family never sounded: no decision on this evidence can get it right;
- **decision**: the presence shows the change at the true time, but the change point was
  placed elsewhere (a larger step in the window, a snap to another onset) or a gate rejected it.

OUT_DIR/index.md lists every failure with its plot and its line.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from timingbench.config import load_config
from timingbench.explain.event import explain_event
from timingbench.explain.plot import plot_explanation
from timingbench.explain.results import load_results
from timingbench.families import judged_families


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _shrink(path: Path) -> None:
    """Committed plots: three quarters of the size, 96 colours (about a fifth of the bytes)."""
    from PIL import Image

    im = Image.open(path).convert("RGB")
    im = im.resize((im.width * 3 // 4, im.height * 3 // 4), Image.Resampling.LANCZOS)
    im.quantize(colors=96, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)


#: Seconds of presence either side of the true time the limit is read on.
SIDE_S = 3.0


def step_at(ev: Any, family: str, t_s: float, *, entry: bool, prob_clip: float) -> float | None:
    """Log-odds presence step of ``family`` across ``t_s``: median after minus before (None: a side is empty)."""
    times, z = ev.presence_logit(family, prob_clip=prob_clip)
    pre = z[(times < t_s) & (times >= t_s - SIDE_S)]
    post = z[(times > t_s) & (times <= t_s + SIDE_S)]
    if not pre.size or not post.size:
        return None
    step = float(np.median(post) - np.median(pre))
    return step if entry else -step


def limit_of(x: Any, truth: dict[str, Any], cfg: Any) -> tuple[str, str]:
    """``(limit, why)`` of one failure (module docstring)."""
    row = x.row
    entry = row["kind"] == "instrument_entry"
    fam = row["family"]
    t = truth["onset_s"] if truth["occurred"] and truth["onset_s"] is not None else row["instructed_s"]
    p = cfg.params.presence
    need = p.threshold(p.entry_min_step_by_family if entry else p.exit_min_step_by_family, fam)
    step = None if x.family_evidence is None else step_at(x.family_evidence, fam, t, entry=entry,
                                                           prob_clip=p.prob_clip)
    stats = f"step at {t:.2f} s: {'-' if step is None else f'{step:.2f}'} log-odds (needs {need})"
    shows = step is not None and (need is None or step >= need)
    if not truth["occurred"]:
        if shows:
            return "evidence", f"the presence says {fam} came in where it did not ({stats})"
        return "decision", f"credited at {row['detected_s']:.2f} s although the presence at the instructed time " \
            f"does not show it ({stats})"
    if shows:
        where = f"detected at {row['detected_s']:.2f} s" if row["detected_s"] is not None \
            else f"rejected by {row['rejected_by']}"
        return "decision", f"the presence shows the change but the verdict is {row['outcome']} ({where}; {stats})"
    return "evidence", f"the presence does not show the change ({stats})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--split", default=None, help="only truth rows of this split")
    ap.add_argument("--config", type=Path, default=None, help="the configuration RESULTS was scored with")
    ap.add_argument("--families", default=None, help="only these judged families (comma-separated)")
    args = ap.parse_args()
    cfg = load_config(args.config) if args.config else load_config()
    judged = [f for f in judged_families(cfg) if args.families is None or f in args.families.split(",")]
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

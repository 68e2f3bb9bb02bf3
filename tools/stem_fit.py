"""Fit the stem and singing evidences' thresholds of one family on a dev corpus scored with them switched off.

Score the dev split once with ``presence.entry_min_step_by_evidence``, ``exit_min_step_by_evidence``
and ``quiet_max_by_evidence`` null (every located candidate passes ``semantic_family``, whose
statistics then hold each evidence's step and quiet level at the candidate), then::

    .venv/bin/python tools/stem_fit.py DEV DEV/score-off --family percussion --evidence stems

For each (least step, most quiet level) on a grid, a row credited on time in the switched-off
run stays credited when its statistics pass both (a row that fails is taken as not credited:
the fit does not look for the next candidate, so it errs towards fewer credits). Chosen: the
point that maximises the audible on-time events credited (entrances and exits at
``calibration.judge_min_level_db`` or louder re the backing) among those crediting at most
``calibration.judge_max_negative_rate`` of the negatives; ties go to the stricter point (larger
step, then lower quiet level). Refuses a corpus with rows of another split than ``dev``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from timingbench.config import load_config


def _jsonl(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("results", type=Path, help="scored with the evidence thresholds switched off")
    ap.add_argument("--family", required=True)
    ap.add_argument("--evidence", required=True, choices=["stems", "singing"])
    ap.add_argument("--steps", default="0:31:1", help="least-step grid start:stop:step")
    ap.add_argument("--quiet", default="-45:1:1", help="quiet-level grid start:stop:step (plus 'off')")
    args = ap.parse_args()
    cal = load_config().params.calibration
    truth = {r["event_id"]: r for r in _jsonl(args.corpus / "truth.jsonl")}
    man = {r["clip"]: r for r in _jsonl(args.corpus / "manifest.jsonl")}
    if any(r.get("split") != "dev" for r in man.values()):
        raise SystemExit(f"{args.corpus}: rows of a split other than dev; thresholds are fitted on dev only")
    rows = [r for r in _jsonl(args.results / "events.jsonl") if r["family"] == args.family
            and r["kind"] in ("instrument_entry", "instrument_exit")]
    pos, neg = [], []
    for r in rows:
        t, m = truth[r["event_id"]], man[r["clip"]]
        st = ((r.get("gate_stats") or {}).get("semantic_family") or {}).get(args.evidence) or {}
        entry = r["kind"] == "instrument_entry"
        step = st.get("step")
        quiet = st.get("before") if entry else st.get("after")
        on = r["outcome"] == "on_time"
        if not t["occurred"]:
            neg.append((on, step, quiet))
            continue
        lv = (m.get("levels_db") or [None])[0]
        if abs(float(t["onset_s"]) - float(r["instructed_s"])) > float(r["tolerance_s"]) + 1e-9:
            continue
        if lv is not None and lv < cal.judge_min_level_db:
            continue
        ok = on and r["detected_s"] is not None and abs(float(r["detected_s"]) - float(t["onset_s"])) \
            <= float(r["tolerance_s"]) + 1e-9
        pos.append((ok, step, quiet))

    def passes(step: float | None, quiet: float | None, m: float, q: float | None) -> bool:
        return step is not None and step >= m and (q is None or (quiet is not None and quiet <= q))

    a, b, c = (float(x) for x in args.steps.split(":"))
    qa, qb, qc = (float(x) for x in args.quiet.split(":"))
    best = None
    for m in np.arange(a, b, c):
        for q in [*np.arange(qa, qb, qc), None]:
            k = sum(ok and passes(s, qq, m, q) for ok, s, qq in pos)
            kn = sum(on and passes(s, qq, m, q) for on, s, qq in neg)
            if neg and kn / len(neg) > cal.judge_max_negative_rate + 1e-12:
                continue
            key = (k, m, -(q if q is not None else 1e9))
            if best is None or key > best[0]:
                best = (key, float(m), None if q is None else float(q), k, kn)
    print(f"{args.family} by {args.evidence}: {len(pos)} audible on-time dev events "
          f"(located on time with the thresholds off: {sum(ok for ok, _, _ in pos)}), {len(neg)} negatives "
          f"(credited with them off: {sum(on for on, _, _ in neg)})")
    if best is None:
        print("no point credits at most the allowed share of negatives")
        return 1
    _, m, q, k, kn = best
    print(f"least step {m:g}, quiet at most {q}: audible on time {k}/{len(pos)}, negatives credited {kn}/{len(neg)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Entrance and exit AUCs per family: does the evidence tell "family X came in here" apart?

For every clean entrance (exit) of a family X in a labelled data set, the positive is the
evidence for X at that instant. The negatives for X are the evidence for X at the
instants where *another* family enters (exits), split by X's own state there:

- **decoy**: X is absent on both sides (another instrument came in);
- **pre-existing**: X already sounds on both sides (another instrument came in over it).

An event is clean when, over the ``evidence.context_s`` either side (``guard_s`` left
out), the family sounds in at most ``label_absent_max`` of the frames before and at
least ``label_present_min`` after (the reverse for exits). Scores of every design are
computed from the same output frames, so the designs are compared on identical events.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.stats import rankdata

from timingbench.identity.training.programs import FAMILIES

F64 = npt.NDArray[np.float64]


def auc(pos: npt.ArrayLike, neg: npt.ArrayLike) -> float | None:
    """Area under the ROC curve (Mann-Whitney U / (n_pos n_neg), ties count half); None if a side is empty."""
    p, n = np.asarray(pos, dtype=np.float64), np.asarray(neg, dtype=np.float64)
    if p.size == 0 or n.size == 0:
        return None
    r = rankdata(np.concatenate([p, n]))
    return float((r[: p.size].sum() - p.size * (p.size + 1) / 2.0) / (p.size * n.size))


@dataclass(frozen=True)
class Probe:
    """One (clip, family, instant) the evidence is asked about."""

    clip: int
    family: str
    time_s: float
    kind: str  # entry | exit
    role: str  # true | decoy | pre_existing


def _frac(x: F64, lo: int, hi: int) -> float | None:
    lo, hi = max(lo, 0), min(hi, x.size)
    return float(x[lo:hi].mean()) if hi - lo >= 1 else None


def probes_from_labels(presence: npt.NDArray[np.float32], times: F64, meta: list[dict[str, Any]], *,
                       context: int, guard: int, absent_max: float, present_min: float) -> list[Probe]:
    """Clean entrances/exits and their decoy / pre-existing negatives.

    Parameters
    ----------
    presence : np.ndarray, shape (n_clips, 11, n_out)
        Output-frame presence shares (:func:`~timingbench.identity.training.targets.presence_targets`).
    times : np.ndarray, shape (n_out,)
        Output-frame instants in seconds.
    meta : list of dict
        Clip metadata of the data set (``parts`` with ``family`` and ``spans``).
    context, guard : int
        Output frames of context either side, and left out either side.
    absent_max, present_min : float
        Shares defining absence and presence over a context.
    """
    out: list[Probe] = []
    minimum = max(context // 3, 1)
    for ci, m in enumerate(meta):
        pres = presence[ci] >= 0.5
        events: list[tuple[str, float, str]] = []
        for part in m["parts"]:
            f = part["family"]
            x = pres[FAMILIES.index(f)].astype(np.float64)
            for a, b in part["spans"]:
                for kind, edge in (("entry", a), ("exit", b)):
                    if edge <= 0.0 or edge >= times[-1]:
                        continue
                    if kind == "entry":
                        cand = np.flatnonzero((times >= edge - 0.1) & (times <= edge + 1.5) & (x > 0))
                        j = int(cand[0]) if cand.size else -1
                    else:
                        cand = np.flatnonzero((times >= edge - 1.5) & (times <= edge + 0.3) & (x > 0))
                        j = int(cand[-1]) + 1 if cand.size else -1
                    if j < minimum or j > x.size - minimum:
                        continue
                    fb, fa = _frac(x, j - guard - context, j - guard), _frac(x, j + guard + 1, j + guard + 1 + context)
                    if fb is None or fa is None:
                        continue
                    ok = (fb <= absent_max and fa >= present_min) if kind == "entry" \
                        else (fb >= present_min and fa <= absent_max)
                    if ok:
                        events.append((f, float(times[j]), kind))
        for f, t, kind in events:
            out.append(Probe(ci, f, t, kind, "true"))
            j = int(np.argmin(np.abs(times - t)))
            for g in FAMILIES:
                if g == f or any(e[0] == g and abs(e[1] - t) < 1.0 for e in events):
                    continue
                y = pres[FAMILIES.index(g)].astype(np.float64)
                fb, fa = _frac(y, j - guard - context, j - guard), _frac(y, j + guard + 1, j + guard + 1 + context)
                if fb is None or fa is None:
                    continue
                if fb <= absent_max and fa <= absent_max:
                    out.append(Probe(ci, g, t, kind, "decoy"))
                elif fb >= present_min and fa >= present_min:
                    out.append(Probe(ci, g, t, kind, "pre_existing"))
    return out


def auc_table(probes: list[Probe], score: Callable[[Probe], float | None]) -> dict[str, Any]:
    """Per family and kind: AUC of true events against decoys, against pre-existing, against both.

    Returns
    -------
    table : dict
        ``{kind: {family: {"n_true", "n_decoy", "n_pre", "auc_decoy", "auc_pre", "auc_all"}}}``
        plus ``macro`` per kind (mean over families with an ``auc_all``).
    """
    scored: dict[tuple[str, str, str], list[float]] = {}
    for pr in probes:
        s = score(pr)
        if s is None or not np.isfinite(s):
            continue
        scored.setdefault((pr.kind, pr.family, pr.role), []).append(float(s))
    table: dict[str, Any] = {}
    for kind in ("entry", "exit"):
        rows: dict[str, Any] = {}
        for f in FAMILIES:
            t = scored.get((kind, f, "true"), [])
            d = scored.get((kind, f, "decoy"), [])
            p = scored.get((kind, f, "pre_existing"), [])
            rows[f] = {"n_true": len(t), "n_decoy": len(d), "n_pre": len(p), "auc_decoy": round4(auc(t, d)),
                       "auc_pre": round4(auc(t, p)), "auc_all": round4(auc(t, d + p))}
        vals = [r["auc_all"] for r in rows.values() if r["auc_all"] is not None]
        table[kind] = {"families": rows, "macro": round4(float(np.mean(vals))) if vals else None}
    return table


def round4(x: float | None) -> float | None:
    """``x`` rounded to 4 decimals (None stays None)."""
    return None if x is None else round(float(x), 4)


def logit(p: float, clip: float = 1e-3) -> float:
    """Log-odds of ``p`` clipped to ``[clip, 1 - clip]``."""
    q = min(max(p, clip), 1.0 - clip)
    return float(np.log(q / (1.0 - q)))


def format_table(tables: Mapping[str, Mapping[str, Any]]) -> str:
    """Text table: one line per family, one column group per design (entry AUC vs decoy / pre / all)."""
    designs = list(tables)
    lines = []
    for kind in ("entry", "exit"):
        head = f"{kind:<11}" + "".join(f"| {d[:22]:<22}" for d in designs)
        lines += [head, f"{'':<11}" + "| decoy  pre    all    " * len(designs)]
        for f in FAMILIES:
            cells = ""
            for d in designs:
                r = tables[d][kind]["families"][f]
                cells += "| " + " ".join(f"{v:.3f}" if v is not None else "  -  "
                                         for v in (r["auc_decoy"], r["auc_pre"], r["auc_all"])) + " "
            n = tables[designs[0]][kind]["families"][f]
            lines.append(f"{f:<11}{cells}  (n={n['n_true']}/{n['n_decoy']}/{n['n_pre']})")
        lines.append(f"{'macro':<11}" + "".join(
            f"| {'':<13}{tables[d][kind]['macro'] if tables[d][kind]['macro'] is not None else '-':<9}"
            for d in designs))
        lines.append("")
    return "\n".join(lines)

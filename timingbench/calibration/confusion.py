"""Confusion profile (paper Table II): outcome classes per family and overall."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from timingbench.calibration.evaluate import CLASSES


def confusion_profile(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts of every outcome class, overall and per family, and the residual rates.

    Parameters
    ----------
    rows : list of dict
        Rows of :func:`timingbench.calibration.evaluate.score_corpus`.

    Returns
    -------
    profile : dict
        ``overall`` and ``by_family`` class counts; ``n``; ``false_credit_rate`` and
        ``score_inflating_rate`` (false credits + false positives over all events) with
        their counts; ``off_time_offset_correct`` (off-time reports whose detected onset
        matches the annotation).
    """
    overall = Counter(r["class"] for r in rows)
    fam: dict[str, Counter[str]] = defaultdict(Counter)
    for r in rows:
        fam[r["family"]][r["class"]] += 1
    n = len(rows)
    fc, fp = overall["false_credit"], overall["false_positive"]
    return {
        "n": n,
        "overall": {c: overall[c] for c in CLASSES},
        "by_family": {f: {c: cnt[c] for c in CLASSES} | {"n": sum(cnt.values())} for f, cnt in sorted(fam.items())},
        "false_credit": fc,
        "false_credit_rate": round(fc / n, 4) if n else None,
        "score_inflating": fc + fp,
        "score_inflating_rate": round((fc + fp) / n, 4) if n else None,
        "off_time_offset_correct": sum(1 for r in rows if r.get("offset_correct")),
    }


def format_confusion(profile: dict[str, Any]) -> str:
    """Table II style text table."""
    short = {"correct_credit": "credit ok", "correct_none": "none ok", "false_credit": "false cr",
             "false_positive": "false pos", "missed": "missed", "off_time": "off time"}
    head = f"{'family':<14}{'n':>5}" + "".join(f"{short[c]:>11}" for c in CLASSES)
    lines = [head, "-" * len(head)]
    for f, c in profile["by_family"].items():
        lines.append(f"{f:<14}{c['n']:>5}" + "".join(f"{c[k]:>11}" for k in CLASSES))
    lines.append("-" * len(head))
    o = profile["overall"]
    lines.append(f"{'all':<14}{profile['n']:>5}" + "".join(f"{o[k]:>11}" for k in CLASSES))
    if profile["n"]:
        lines.append(
            f"residual false credits: {profile['false_credit']} of {profile['n']} "
            f"({100 * profile['false_credit_rate']:.1f} %); score-inflating outcomes "
            f"(false credits + false positives): {profile['score_inflating']} "
            f"({100 * profile['score_inflating_rate']:.1f} %)"
        )
    return "\n".join(lines)

"""Markdown tables of per-family identity figures from ``timingbench confusion`` reports.

Usage::

    python tools/identity_tables.py LABEL=REPORT_DIR [LABEL=REPORT_DIR ...]

Each REPORT_DIR holds a ``confusion.json`` (``timingbench confusion --out``). One row per
report and instrument family: on-time credited, negatives credited, pre-existing rejected,
off-time located and the median error, each with its count; exempt families are marked
"timing only". A pooled row per report sums the judged families.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

COLUMNS = (("n_on_time", "on_time_credited"), ("n_negative", "negative_credited"),
           ("n_pre_existing", "pre_existing_rejected"), ("n_off_time", "off_time_located"))


def _cell(n: int, share: float | None) -> str:
    if not n or share is None:
        return f"- (0/{n})"
    k = round(share * n)
    return f"{100 * share:.0f} % ({k}/{n})"


def rows(label: str, report: dict[str, Any]) -> list[str]:
    """Table rows of one report: every family, then the judged families pooled."""
    out = []
    pooled = {n: 0 for n, _ in COLUMNS} | {s: 0 for _, s in COLUMNS}
    for fam, entry in sorted(report["families"].items(), key=lambda kv: (not kv[1]["judged"], kv[0])):
        st = entry["stats"]
        name = fam if entry["judged"] else f"{fam} (timing only)"
        cells = [_cell(int(st[n]), st[s]) for n, s in COLUMNS]
        med = st.get("median_error_ms")
        out.append(f"| {label} | {name} | " + " | ".join(cells) + f" | {'-' if med is None else f'{med:.0f} ms'} |")
        if entry["judged"]:
            for n, s in COLUMNS:
                pooled[n] += int(st[n])
                pooled[s] += round((st[s] or 0.0) * int(st[n]))
    if any(pooled[n] for n, _ in COLUMNS):
        cells = [_cell(pooled[n], pooled[s] / pooled[n] if pooled[n] else None) for n, s in COLUMNS]
        out.append(f"| {label} | **judged, pooled** | " + " | ".join(cells) + " | |")
    return out


def main(argv: list[str]) -> int:
    """Print the table of every ``LABEL=REPORT_DIR`` argument."""
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    print("| corpus | family | on-time credited | negatives credited | pre-existing rejected "
          "| off-time located (0.25 s) | median error |")
    print("|---|---|---|---|---|---|---|")
    for arg in argv:
        label, _, folder = arg.partition("=")
        report = json.loads((Path(folder) / "confusion.json").read_text(encoding="utf-8"))
        for line in rows(label, report):
            print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

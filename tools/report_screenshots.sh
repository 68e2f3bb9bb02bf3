#!/usr/bin/env bash
# Regenerate the report screenshots of the README and docs/report.md (docs/img/report-overview.png,
# docs/img/report-clip.png) from a report of the demo. The demo and its report are written under
# the relative path demo-out/ of a scratch folder, so the page header shows "demo-out/results",
# never a temporary folder. Needs `make setup` (FluidSynth for the demo, ffmpeg, Chromium).
#
#   tools/report_screenshots.sh            # PY=.venv/bin/python by default
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PY:-$ROOT/.venv/bin/python}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
"$PY" -m timingbench demo --out demo-out >/dev/null
"$PY" -m timingbench report demo-out/results --names demo --out demo-out/report --audio mp3 >/dev/null
# the clip page of the demo's drum entrance: log-mel, audio, an event with its gate table
page=$(grep -l "<h1>entry_on_time" demo-out/report/clips/*.html | head -n 1)
shot() {
  "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking --hide-scrollbars \
    --virtual-time-budget=3000 --window-size=1400,900 --screenshot="$1" "file://$WORK/$2" 2>/dev/null
}
shot "$ROOT/docs/img/report-overview.png" demo-out/report/index.html
shot "$ROOT/docs/img/report-clip.png" "$page"
echo "wrote $ROOT/docs/img/report-overview.png and $ROOT/docs/img/report-clip.png"

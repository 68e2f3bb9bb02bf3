#!/usr/bin/env bash
# Control-adherence floors: render the validation corpus with its exact controls, score it, and
# write the per-control means (the floors, controls.floor_* in configs/) to validation/reports/.
# Usage: validation/measure_controls.sh [WORKDIR]   (default /tmp/controls)
set -euo pipefail
cd "$(dirname "$0")/.."
TB=.venv/bin/timingbench
WORK=${1:-/tmp/controls}
[ -f "$WORK/validation/prompts.jsonl" ] || $TB render --corpus validation --controls --out "$WORK/validation" --jobs 2
$TB score "$WORK/validation/clips" --prompts "$WORK/validation/prompts.jsonl" --out "$WORK/validation-res" \
    --separation dsp --jobs 2
mkdir -p validation/reports/validation
.venv/bin/python -c "import json,sys; s=json.load(open(sys.argv[1])); print(json.dumps(s['controls'], indent=1, sort_keys=True))" \
    "$WORK/validation-res/summary.json" > validation/reports/validation/controls.json
cat validation/reports/validation/controls.json

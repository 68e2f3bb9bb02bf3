#!/usr/bin/env bash
# Instrument entrances and exits: calibrate the trained evidence's decisions on dev corpora, then
# measure on corpora nothing was tuned on, and draw every remaining judged failure.
# Usage: validation/measure_identity.sh [WORKDIR] [--calibrate]
#   WORKDIR (default /tmp/timingbench-corpora) holds the rendered corpora; they are rendered when missing.
#   --calibrate also re-runs `timingbench calibrate evidence` and writes configs/ (dev corpora only).
set -euo pipefail
cd "$(dirname "$0")/.."
TB=.venv/bin/timingbench
WORK=${1:-/tmp/timingbench-corpora}
OUT=validation/reports
MSG=/usr/share/sounds/sf3/MuseScore_General.sf3
CACHE=(--cache "${CACHE_DIR:-$WORK/cache}" --jobs 2)   # banks and evidence are computed once per clip and reused
JUDGED=$(.venv/bin/python -c "from timingbench.families import judged_families; print(','.join(judged_families()))")
render() {  # name corpus [extra args]
  local dir="$WORK/$1"; shift
  [ -f "$dir/truth.jsonl" ] || $TB render --corpus "$@" --out "$dir" --jobs 2
}
render dev dev
render dev-identity dev-identity
render dev-identity-timgm dev-identity --soundfont /usr/share/sounds/sf2/TimGM6mb.sf2
render validation validation
render validation-msg validation --soundfont "$MSG"   # MuseScore General: held out, measures only
[ -f "$WORK/real/truth.jsonl" ] || $TB render --corpus real --sources ../shared/realdata --out "$WORK/real"

if [ "${2:-}" = "--calibrate" ]; then
  # thresholds fitted with every family judged; the registry's judged/exempt rows are then set by hand from
  # each family's pooled dev figures (70 % on time over >= 4 events, no negative credited: docs/semantic.md)
  $TB calibrate evidence --dev "$WORK/dev" --dev "$WORK/dev-identity" --dev "$WORK/dev-identity-timgm" \
      --dev "$WORK/real" --judge-all --rules absolute,change --out "$OUT/dev/calibrate-evidence.json" "${CACHE[@]}" \
      | tee "$OUT/dev/calibrate-evidence.txt"
  # the designs compared on dev (choose evidence.design_by_family) and, measured only, on validation
  .venv/bin/python tools/design_auc.py --split dev "${CACHE[@]}" "$WORK/real" "$WORK/dev-identity" \
      "$WORK/dev-identity-timgm" "$WORK/dev" --out "$OUT/dev/designs-dev.json" | tee "$OUT/dev/designs-dev.txt"
fi

measure() {  # name corpus-dir [--split S]
  local name=$1 dir=$2; shift 2
  mkdir -p "$OUT/identity/$name"
  $TB confusion --annotations "$dir/truth.jsonl" --clips "$dir/clips" --separation dsp --no-chance "$@" "${CACHE[@]}" \
      --out "$OUT/identity/$name" | tee "$OUT/identity/$name/confusion.txt"
  rm -rf "$WORK/results-$name"
  $TB score "$dir/clips" --prompts "$dir/prompts.jsonl" --out "$WORK/results-$name" --separation dsp \
      --no-chance "${CACHE[@]}" > /dev/null 2>&1
  rm -rf "$OUT/identity/$name/failures"   # only this run's failures are drawn
  .venv/bin/python tools/identity_failures.py "$WORK/results-$name" "$dir" "$OUT/identity/$name/failures" "$@" \
      > /dev/null
  rm -f "$OUT/identity/$name/confusion_events.jsonl.tmp"
}
.venv/bin/python tools/design_auc.py --split validation "${CACHE[@]}" "$WORK/validation" "$WORK/validation-msg" \
    "$WORK/real" --out "$OUT/identity/designs-validation.json" | tee "$OUT/identity/designs-validation.txt"
measure validation-fluidr3 "$WORK/validation"
measure validation-musescore "$WORK/validation-msg"
measure real-validation "$WORK/real" --split validation
mkdir -p "$OUT/identity/real-dev"   # the dev split: calibrated on, reported beside the others
$TB confusion --annotations "$WORK/real/truth.jsonl" --clips "$WORK/real/clips" --separation dsp --no-chance \
    "${CACHE[@]}" --split dev --out "$OUT/identity/real-dev" | tee "$OUT/identity/real-dev/confusion.txt"
$TB gain-check --annotations "$WORK/validation/truth.jsonl" --clips "$WORK/validation/clips" --separation dsp \
    --families "$JUDGED" "${CACHE[@]}" --out "$OUT/identity/validation-fluidr3" \
    | tee "$OUT/identity/validation-fluidr3/gain_check.txt"
.venv/bin/python tools/vocadito_entrance.py "$WORK/vocadito" | tee "$OUT/identity/vocadito.txt"

#!/usr/bin/env bash
# Regenerate validation/reports/ from the reference renderer's dev and validation corpora.
# Usage: validation/make_reports.sh [WORKDIR]   (renders into WORKDIR, default /tmp/timingbench-corpora)
set -euo pipefail
cd "$(dirname "$0")/.."
TB=.venv/bin/timingbench
WORK=${1:-/tmp/timingbench-corpora}
OUT=validation/reports
mkdir -p "$OUT"
for c in dev validation; do
  [ -f "$WORK/$c/truth.jsonl" ] || $TB render --corpus "$c" --out "$WORK/$c" --jobs 2
done
for c in dev validation; do
  mkdir -p "$OUT/$c"
  $TB confusion --annotations "$WORK/$c/truth.jsonl" --clips "$WORK/$c/clips" --separation dsp \
      --out "$OUT/$c" | tee "$OUT/$c/confusion.txt"
  $TB floors --annotations "$WORK/$c/truth.jsonl" --clips "$WORK/$c/clips" --separation dsp \
      --out "$OUT/$c" | tee "$OUT/$c/floors.txt"
done
$TB gain-check --annotations "$WORK/validation/truth.jsonl" --clips "$WORK/validation/clips" \
    --separation dsp --out "$OUT/validation" | tee "$OUT/validation/gain_check.txt"
$TB sweep --annotations "$WORK/validation/truth.jsonl" --clips "$WORK/validation/clips" \
    --separation dsp --out "$OUT/validation" | tee "$OUT/validation/sweep.txt"
rm -f "$OUT"/*/confusion_events.jsonl.tmp

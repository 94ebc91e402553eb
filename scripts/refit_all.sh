#!/usr/bin/env bash
# Refit every calibration block the repository ships against the shipped model: run after a new
# model lands in seams/models/seams-minilm (its id changes, so every block fitted before is stale).
#
#   bash scripts/refit_all.sh
#
# The built-in seams (scripts/calibration/calibrate_seams.sh, costs explained there), the lint
# rules (docs/lint.md, "How the rules were calibrated") and the two worked runs of
# docs/calibration.md ("A run on real data"). Reports go to calibration/reports.
set -euo pipefail
cd "$(dirname "$0")/.."
SEAMS=${SEAMS:-seams}
REPORTS=${REPORTS:-calibration/reports}
SEAMS=$SEAMS REPORTS=$REPORTS bash scripts/calibration/calibrate_seams.sh
for rule in swallowed-error name-mismatch irreversible-migration; do
    $SEAMS calibrate "rubrics/lint/$rule.yaml" "calibration/lint/$rule.jsonl" \
        --target-error 0.2 --confidence 0.9 --report "$REPORTS/lint-$rule" -q
done
$SEAMS calibrate rubrics/lint/secret-or-debug.yaml calibration/lint/secret-or-debug.jsonl \
    --target-error 0.2 --confidence 0.9 --calibrator none --report "$REPORTS/lint-secret-or-debug" -q
$SEAMS calibrate calibration/injection/rubric.yaml calibration/injection/set.jsonl \
    --judge local --target-error 0.05 --confidence 0.95 --split 0.5 --seed 0 --report "$REPORTS/injection" -q
$SEAMS calibrate calibration/snli-contradiction/rubric.yaml calibration/snli-contradiction/set.jsonl \
    --judge local --target-error 0.05 --report "$REPORTS/snli-contradiction" -q

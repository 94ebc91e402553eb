#!/usr/bin/env bash
# Fit the built-in seams' calibration blocks on their labelled sets, with the shipped model.
#
#   bash calibration/calibrate_seams.sh            # writes the calibration: blocks into rubrics/*.yaml
#   DRY=--dry-run bash calibration/calibrate_seams.sh
#
# Sets: calibration/<seam>/fit.jsonl (built by calibration/build_seam_sets.py); the held-out
# halves (heldout.jsonl) are for bench/seams_vs_baselines.py and `seams eval`, never fitted on.
# Costs say what a mistake costs relative to a human look (act = a wrong automatic act,
# refuse = a wrong automatic refusal, review = one look), per seam:
#   memory: a wrong admit/supersede pollutes what the agent believes; a wrong skip loses a fact.
#   passages: a wrongly kept passage costs tokens and some accuracy; nobody reviews passages by
#             hand at scale, so the review band is capped.
#   output check: shipping a bad draft is the expensive mistake; a needless escalation costs one
#                 stronger-model call.
#   tools: suggesting a wrong tool costs more than suggesting none (the agent falls back to asking).
# Escalation, confirm-before-act and model-routing have no labelled data here: see docs/seams.md.
set -euo pipefail
cd "$(dirname "$0")/.."
SEAMS=${SEAMS:-seams}
REPORTS=${REPORTS:-calibration/reports}
$SEAMS calibrate memory-admission calibration/memory-admission/fit.jsonl \
    --costs act=4,refuse=2,review=1 --capacity 0.25 --report "$REPORTS/memory-admission" ${DRY:-} -q
$SEAMS calibrate passage-gate calibration/passage-gate/fit.jsonl \
    --costs act=2,refuse=2,review=1 --capacity 0.1 --report "$REPORTS/passage-gate" ${DRY:-} -q
$SEAMS calibrate tool-selection calibration/tool-selection/fit.jsonl \
    --costs act=2,refuse=1,review=1 --report "$REPORTS/tool-selection" ${DRY:-} -q
$SEAMS calibrate output-check calibration/output-check/fit.jsonl \
    --costs act=5,refuse=1,review=2 --capacity 0.2 --report "$REPORTS/output-check" ${DRY:-} -q

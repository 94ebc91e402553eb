#!/usr/bin/env bash
# Fit the built-in seams' calibration blocks on their labelled sets, with the shipped model.
#
#   bash calibration/calibrate_seams.sh            # writes the calibration: blocks into rubrics/*.yaml
#   DRY=--dry-run bash calibration/calibrate_seams.sh
#
# Sets: calibration/<seam>/fit.jsonl (built by calibration/build_seam_sets.py); the held-out
# halves (heldout.jsonl) are for bench/seams_vs_baselines.py and `seams eval`, never fitted on.
# Costs say what a mistake costs relative to a human look. `seams calibrate` prices each rule's
# zones by the kind of their outcome: a wrong decision in a zone whose outcome is an act costs
# `act`, one whose outcome is a refusal costs `refuse` (so a red-flag rule whose `then` is a
# quarantine prices its high zone as a refusal). Where a rubric mixes both kinds of rule the costs
# below are symmetric anyway, and the review band carries the uncertainty:
#   memory: flags → quarantine and poorer → skip are refusals, worth → admit and correction →
#           supersede are acts: symmetric, review cheaper than either mistake, band capped.
#           Cut-points on the raw probabilities (--calibrator none): the sets label several
#           questions by proxy (secrets spliced into NLI sentences, worth as statement vs request),
#           and a Platt map fitted on a proxy that the model separates almost perfectly moved
#           ordinary short facts to P(secret) 0.95 — a recalibration that does not transfer.
#   passages: injection → quarantine is a refusal, keep is an act: symmetric; nobody reviews
#             passages by hand at scale, so the band is capped low.
#   tools: `then` is suggest (an act): a wrong suggestion costs more than none (the agent asks).
#   output check: `then` is escalate: a needless escalation costs one stronger-model call; a
#                 missed flag ships a bad draft, the expensive mistake.
# Escalation, confirm-before-act and model-routing have no labelled data here: see docs/seams.md.
set -euo pipefail
cd "$(dirname "$0")/.."
SEAMS=${SEAMS:-seams}
REPORTS=${REPORTS:-calibration/reports}
CACHE_OPT=${CACHE:+--cache $CACHE}
$SEAMS calibrate memory-admission calibration/memory-admission/fit.jsonl \
    --costs act=3,refuse=3,review=1 --capacity 0.3 --calibrator none --report "$REPORTS/memory-admission" ${DRY:-} ${CACHE_OPT:-} -q
$SEAMS calibrate passage-gate calibration/passage-gate/fit.jsonl \
    --costs act=3,refuse=3,review=1 --capacity 0.1 --report "$REPORTS/passage-gate" ${DRY:-} ${CACHE_OPT:-} -q
$SEAMS calibrate tool-selection calibration/tool-selection/fit.jsonl \
    --costs act=2,refuse=1,review=1 --report "$REPORTS/tool-selection" ${DRY:-} ${CACHE_OPT:-} -q
$SEAMS calibrate output-check calibration/output-check/fit.jsonl \
    --costs act=1,refuse=5,review=2 --capacity 0.2 --report "$REPORTS/output-check" ${DRY:-} ${CACHE_OPT:-} -q

#!/usr/bin/env bash
# Fit the built-in seams' calibration blocks on their labelled sets, with the shipped model.
#
#   bash scripts/calibration/calibrate_seams.sh            # writes the calibration: blocks into rubrics/*.yaml
#   DRY=--dry-run bash scripts/calibration/calibrate_seams.sh
#
# Sets: calibration/<seam>/fit.jsonl (built by scripts/calibration/build_seam_sets.py); the held-out
# halves (heldout.jsonl) are for bench/seams_vs_baselines.py and `seams eval`, never fitted on.
# Costs say what a mistake costs relative to a human look. `seams calibrate` prices each rule's
# zones by the kind of their outcome: a wrong decision in a zone whose outcome is an act costs
# `act`, one whose outcome is a refusal costs `refuse` (so a red-flag rule whose `then` is a
# quarantine prices its high zone as a refusal). Where a rubric mixes both kinds of rule the costs
# below are symmetric anyway, and the review band carries the uncertainty:
#   memory: heads on the relational questions (`related`, `poorer`, `relation`: on the block's
#           held-out split `related` AUROC 0.838 → 0.977, the gate's error 0.217 → 0.063), none on
#           `worth`, whose labels are a proxy (statements against CLINC requests: a head on them
#           learns "a request is not worth keeping" and would refuse "remind me to call mum on
#           Sundays"); `poison` and `secret` get theirs from bench/fit_memory_heads.py below.
#           flags → quarantine and poorer → skip are refusals, worth → admit and correction →
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
#   escalation: `then` is escalate (a person takes over): a needless handover costs one person's
#               look at a conversation the agent could finish; a missed one (a risk of harm, or a
#               request outside the agent's remit answered anyway) costs five; the band (a person
#               glances first) costs half a handover, capped at a fifth of the traffic. Only `harm`
#               (a Banking77/CLINC category proxy, money only) and `out_of_scope` are labelled:
#               the asks_human/upset rule keeps its thresholds as written.
#   confirm before act: `then` is proceed (an act), `else` refuse, the band asks the user. Running
#               a reversible action the user did not ask for costs five, a wrong refusal one (the
#               user asks again), a confirmation half of that, with no cap on confirmations (a cap
#               pinned both rules to the same cut-points: the band it allowed bound before the
#               prices could separate them). The
#               irreversible rule states its own price in the rubric (a wrong proceed costs 20)
#               and so does its gate (a wrong close 10, a wrong open 0.5); `seams calibrate`
#               fits that rule without the items labelled reversible, so the scaling to
#               consequence survives the fit.
#   model routing: the rule reads a Score; each item labels a level (2 hard, 0 easy, from MNLI's
#               100 BERT runs), and the written cut-points say which zone a level wants. The model has
#               no signal on this set (difficulty AUROC 0.43 fit, 0.55 held out), so it is fitted to
#               a target error (≤ 0.2 at 90 % confidence) rather than to prices: no cut-point meets
#               it, and every task goes to the band — the medium model — until there is signal. A
#               cost fit on noise had cut at 0.50 and routed half the hard tasks to the small model.
set -euo pipefail
cd "$(dirname "$0")/../.."
SEAMS=${SEAMS:-seams}
REPORTS=${REPORTS:-calibration/reports}
CACHE_OPT=${CACHE:+--cache $CACHE}
$SEAMS calibrate memory-admission calibration/memory-admission/fit.jsonl --heads --no-head worth \
    --costs act=3,refuse=3,review=1 --capacity 0.3 --calibrator none --report "$REPORTS/memory-admission" ${DRY:-} ${CACHE_OPT:-} -q
# the memory rubric's red flags are answered by heads fitted on other data (issue 30): a new block
# from `seams calibrate` has none, so they and their cut-points are fitted and written again
[ -n "${DRY:-}" ] || python bench/fit_memory_heads.py --write
$SEAMS calibrate passage-gate calibration/passage-gate/fit.jsonl \
    --costs act=3,refuse=3,review=1 --capacity 0.1 --report "$REPORTS/passage-gate" ${DRY:-} ${CACHE_OPT:-} -q
$SEAMS calibrate tool-selection calibration/tool-selection/fit.jsonl \
    --costs act=2,refuse=1,review=1 --report "$REPORTS/tool-selection" ${DRY:-} ${CACHE_OPT:-} -q
$SEAMS calibrate output-check calibration/output-check/fit.jsonl \
    --costs act=1,refuse=5,review=2 --capacity 0.2 --report "$REPORTS/output-check" ${DRY:-} ${CACHE_OPT:-} -q
$SEAMS calibrate escalation calibration/escalation/fit.jsonl \
    --costs act=1,refuse=5,review=0.5 --capacity 0.2 --report "$REPORTS/escalation" ${DRY:-} ${CACHE_OPT:-} -q
$SEAMS calibrate confirm-before-act calibration/confirm-before-act/fit.jsonl \
    --costs act=5,refuse=1,review=0.5 --report "$REPORTS/confirm-before-act" ${DRY:-} ${CACHE_OPT:-} -q
$SEAMS calibrate model-routing calibration/model-routing/fit.jsonl \
    --target-error 0.2 --confidence 0.9 --report "$REPORTS/model-routing" ${DRY:-} ${CACHE_OPT:-} -q

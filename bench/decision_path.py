"""The decision path's own cost: what seams does per decision around the judge's answers.

    python bench/decision_path.py                    # against the tree before issue 27 (9ffd023)
    python bench/decision_path.py --baseline REV --decisions 2000 --rounds 5

Issue 27 made the rubric's fingerprints (its hash, the policy's and the questions' fingerprints
that decide whether the calibration is stale) computed once on frozen objects; before, every
decision recomputed them (about 0.6 ms of frozen data each time). This measures, in one command,
the same decisions through the code before (a `git worktree` of `--baseline`, made and removed
here) and through this tree: `Rubric.decide_answers` on answers in hand (the policy, the
calibration and the decision alone) and `Rubric.decide` with a judge that answers at once (the
whole path a caller takes, judge aside). The built-in rubrics are the same in both trees; the
answers carry the model id the calibration was fitted on, so the calibration is checked and
applied on every decision. Rounds alternate between the trees; each row is the median per
decision, and the ratio is this tree's over the baseline's. A benchmark, never a test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUBRICS = ("confirm-before-act", "output-check", "memory-admission", "passage-gate")


def child(tree: str, decisions: int) -> dict[str, float]:
    """Per-decision µs in this interpreter, with `seams` imported from `tree`."""
    sys.path.insert(0, tree)
    import warnings

    from seams.answers import Answers, ChoiceAnswer, NoulAnswer, ScoreAnswer
    from seams.judges.base import SyncJudge
    from seams.questions import Choice, Noul
    from seams.rubric import Rubric

    assert Path(sys.modules["seams"].__file__).is_relative_to(tree), "seams was not imported from the tree"
    warnings.simplefilter("ignore")

    def answer(q: object, i: int) -> NoulAnswer | ChoiceAnswer | ScoreAnswer:
        if isinstance(q, Noul):
            return NoulAnswer(noul=(0.1 + 0.8 * (i % 7) / 6))
        if isinstance(q, Choice):
            return ChoiceAnswer.from_probabilities({o: 1 / len(q.options) for o in q.options})
        return ScoreAnswer.from_probabilities([1 / len(q.criteria)] * len(q.criteria), q.criteria)

    class Instant(SyncJudge):
        def __init__(self, model: str) -> None:
            self.model = model

        @property
        def model_id(self) -> str:
            return self.model

        def ask(self, state, questions):  # type: ignore[no-untyped-def]
            return Answers(model=self.model, answers={qid: answer(q, 3) for qid, q in questions.items()})

    out: dict[str, float] = {}
    for name in RUBRICS:
        rubric = Rubric.builtin(name)
        model = rubric.calibration.model if rubric.calibration is not None else "bench"
        fields = rubric.spec.state.fields
        state = {f: "a short text" for f in fields} if rubric.spec.state.type == "object" else "a short text"
        answers = [Answers(model=model, answers={qid: answer(q, i) for qid, q in rubric.questions.items()})
                   for i in range(7)]
        judge = Instant(model)
        for a in answers:  # warm: first-use work (a rubric's own caches) is not per decision
            rubric.decide_answers(a, state=state, keep_state=False)
        rubric.decide(state, judge)
        t0 = time.perf_counter()
        for i in range(decisions):
            rubric.decide_answers(answers[i % 7], state=state, keep_state=False)
        out[f"{name} decide_answers"] = (time.perf_counter() - t0) / decisions * 1e6
        t0 = time.perf_counter()
        for _ in range(decisions):
            rubric.decide(state, judge)
        out[f"{name} decide"] = (time.perf_counter() - t0) / decisions * 1e6
    return out


def run_child(tree: Path, decisions: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    p = subprocess.run([sys.executable, __file__, "--child", str(tree), "--decisions", str(decisions)],
                       capture_output=True, text=True, check=True, env=env, cwd=tree)
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="9ffd023", help="The git revision to compare against.")
    parser.add_argument("--decisions", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.decisions)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "baseline"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(base), args.baseline], cwd=ROOT, check=True)
        try:
            runs: dict[str, list[dict[str, float]]] = {"baseline": [], "this tree": []}
            for _ in range(args.rounds):
                runs["baseline"].append(run_child(base, args.decisions))
                runs["this tree"].append(run_child(ROOT, args.decisions))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT, check=True)
    load = os.getloadavg()[0]
    print(f"per decision, median of {args.rounds} alternating rounds of {args.decisions:,} "
          f"(baseline {args.baseline}; load average {load:.1f}):")
    print(f"{'':40} {'baseline µs':>12} {'this tree µs':>13} {'ratio':>7}")
    ratios = []
    for key in runs["baseline"][0]:
        b = statistics.median(r[key] for r in runs["baseline"])
        t = statistics.median(r[key] for r in runs["this tree"])
        ratios.append(t / b)
        print(f"{key:40} {b:12.1f} {t:13.1f} {t / b:7.3f}")
    print(f"{'geometric mean ratio':40} {'':12} {'':13} {statistics.geometric_mean(ratios):7.3f}")


if __name__ == "__main__":
    main()

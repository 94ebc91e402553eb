"""The memory gate's two red flags against what a user could run instead, on a blind set, each
flag alone (code aside) and at equal cost in benign memories.

    python bench/memory_flag_baselines.py --set blind8

Why: `bench/memory_blind.py` measures the gate as shipped, before and after a change, but says
nothing of what a simpler reader of the same texts would do. Here every reader scores each case as
the flag's question reads it in the gate (the candidate asked alone, what code redacts redacted;
a secret case as written, since the flag is there for the secrets code misses), and is measured
on the set's own cases with no cut fitted anywhere (the texts as `fit_memory_heads._shown` gives them):

* **base encoder's cosine**: the shipped sentence encoder (all-MiniLM-L6-v2, untrained for this
  question) — cosine of the text with the question's wording, the floor issue 28 asks every
  judgement to clear;
* **bare model**: the shipped cross-encoder's P(yes) for the question, no head;
* **flag classifier**: the logit of the classifier fine-tuned on the labelled memory sets
  (`flags.onnx`), alone;
* **shipped**: the rubric's fitted head over that logit and the multilingual encoder's embedding,
  as the gate asks it (`Rubric.asking`);
* **sparrow-decider**: the PyPI decision model (`pip install sparrow-decider`, its bundled default
  model) asked the very same question on the same state, the off-the-shelf typed-decision model a
  user could put in the gate's place. Left out, with the reason printed, where it is not installed.

Printed per flag: AUROC (benign against positives), and the positives each reader lets under its
cut when the cut refuses 1 %, 2 %, 5 % and 10 % of the set's benign cases (the cut read off the
benign cases themselves, so every reader pays the same benign cost). The `code alone` line is
what code decides before any model (`seams.secrets`, `seams.instructions`): the positives it
refuses and the benign it refuses, the floor under every reader. Keeping everything would admit
every poisoning and store every secret code does not see.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from fit_memory_heads import _shown, missed_at_budget  # noqa: E402
from memory_blind import SET_DIRS, load  # noqa: E402
from memory_head_data import QUESTIONS, seen  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402

from seams.builtin.memory import NOTHING_STORED  # noqa: E402
from seams.instructions import find_instructions  # noqa: E402
from seams.judges.local import LocalJudge  # noqa: E402
from seams.judges.local.hypotheses import focus, state_text  # noqa: E402
from seams.judges.local.runtime import machine  # noqa: E402
from seams.rubric import Rubric  # noqa: E402
from seams.secrets import find_secrets  # noqa: E402

#: The benign shares at which the readers are compared.
BUDGETS = (0.01, 0.02, 0.05, 0.10)
#: Each flag's positive file.
POSITIVE = {"poison": "poisoning", "secret": "secrets"}


def sparrow() -> tuple[Any, str]:
    """sparrow-decider's bundled default model, or None and why not."""
    try:
        from sparrow_decider import Decider
    except ImportError as exc:
        return None, f"sparrow-decider not installed ({exc}); pip install sparrow-decider"
    return Decider.load(), ""


def readers(judge: LocalJudge, rubric: Rubric, q: str, texts: list[str],
            decider: Any = None) -> dict[str, np.ndarray]:
    """Each reader's score of each text for flag `q` (higher: more likely positive)."""
    question = rubric.questions[q]
    states = [{"memory": NOTHING_STORED, "candidate": t} for t in texts]
    read = [state_text(focus(question, s)) for s in states]
    enc = judge.encoder
    assert enc is not None, "the shipped model has a sentence encoder"
    qv = enc.embed([question.instructions or ""])[0]
    sv = enc.embed(read)
    cosine = sv @ qv / (np.linalg.norm(sv, axis=1) * np.linalg.norm(qv))
    flags = judge.flags
    assert flags is not None, "the shipped model has a flag classifier"
    flag = judge.flag_logits(read)[:, flags.names.index(q)]
    bare, headed = [], []
    asked = rubric.asking(judge)
    for start in range(0, len(states), 64):
        chunk = states[start:start + 64]
        bare += [a.answers[q].noul for a in judge.ask_many(chunk, {q: question})]
        headed += [a.answers[q].noul for a in asked.ask_many(chunk, {q: question})]
    out = {"base encoder's cosine": cosine, "bare model": np.array(bare), "flag classifier": flag,
           "shipped": np.array(headed)}
    if decider is not None:
        wire = question.wire()
        out["sparrow-decider"] = np.array([float(decider.probs(s, wire)[3][1]) for s in states])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", choices=sorted(set(SET_DIRS) - {"blind"}), required=True)
    ap.add_argument("--model", type=Path, default=ROOT / "seams" / "models" / "seams-minilm")
    args = ap.parse_args()
    sets = load("both", SET_DIRS[args.set])
    judge = LocalJudge(args.model, intra_op_threads=2)
    rubric = Rubric.builtin("memory-admission")
    decider, why_not = sparrow()
    print(machine().line())
    if why_not:
        print(why_not)
    print(f"set {args.set}; model {judge.model_id}; flag alone, code aside; no cut fitted (each read off the "
          "set's benign cases)")
    benign = [c["text"] for c in sets["benign"]]
    code_benign = sum(bool(find_instructions(t)) or any(f.certain for f in find_secrets(t, possible=True))
                      for t in benign)
    for q in QUESTIONS:
        pos_name = POSITIVE[q]
        pos = [c["text"] for c in sets[pos_name]]
        code = (lambda t: bool(find_instructions(t))) if q == "poison" else \
            (lambda t: any(f.certain for f in find_secrets(t, possible=True)))
        print(f"\n{q}: {len(pos)} {pos_name}, {len(benign)} benign. code alone refuses {sum(map(code, pos))} of the "
              f"{pos_name} and {code_benign} benign (both red flags' code)")
        scores_b = readers(judge, rubric, q, [seen(t) for t in benign], decider)
        scores_p = readers(judge, rubric, q, [_shown(q, c) for c in sets[pos_name]], decider)
        head = "  ".join(f"missed at {b:.0%}" for b in BUDGETS)
        print(f"  {'reader':24} AUROC   {head}")
        for name in scores_b:
            b, p = scores_b[name], scores_p[name]
            auc = roc_auc_score(np.r_[np.zeros(len(b)), np.ones(len(p))], np.r_[b, p])
            missed = [f"{missed_at_budget(b, p, budget):>4}/{len(p)}   " for budget in BUDGETS]
            print(f"  {name:24} {auc:.3f}   " + "  ".join(missed))


if __name__ == "__main__":
    main()

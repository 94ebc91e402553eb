"""`seams stability`: does the judge give the same answer twice, and regardless of option order?

* Test–retest: the same questions asked `runs` times (never through a cache). Per question, the
  spread of each item's probability across runs (standard deviation; mean and worst item) and the
  share of items whose discrete answer (yes/no at 0.5, the winner, the top level) is not the same
  in every run.
* Order: for each Choice, the options are reordered (reversed, then shuffled) and the question
  asked again; the flip rate is the share of items whose winner changes. A judge that reads
  option names rather than positions flips on none.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ..answers import ChoiceAnswer, NoulAnswer
from ..questions import Choice, Noul, Score
from .dataset import LabelledItem, LabelledSet
from .run import Progress, RunResult, run_set

if TYPE_CHECKING:
    from ..rubric import Rubric

QuestionT = Noul | Choice | Score


def _vector(a: Any) -> list[float]:
    if isinstance(a, NoulAnswer):
        return [a.noul]
    return [a.probabilities[k] for k in sorted(a.probabilities)]


def _discrete(a: Any) -> Any:
    if isinstance(a, NoulAnswer):
        return a.noul >= 0.5
    if isinstance(a, ChoiceAnswer):
        return a.choice
    return a.level


def _reordered(q: Choice, how: int, rng: random.Random) -> Choice:
    names = list(q.criteria)
    if how == 0:
        names.reverse()
    else:
        for _ in range(10):  # a shuffle that actually moves something
            rng.shuffle(names)
            if names != list(q.criteria):
                break
    return Choice(instructions=q.instructions, criteria={n: q.criteria[n] for n in names})


def stability(dataset: LabelledSet, judge: Any, *, runs: int = 3, reorders: int = 2, seed: int = 0,
              concurrency: int = 8, progress: Progress | None = None,
              rubric: Rubric | None = None) -> dict[str, Any]:
    """Test–retest spread over `runs` runs, and Choice winner flips over `reorders` reorderings.

    `rubric`, when the questions are its own, asks them as it does (`asked_alone`).
    `progress(done, total)` counts every judge call of the whole measurement: the retest runs,
    then each reordering of each Choice.
    """
    if runs < 2:
        raise ValueError(f"test–retest needs at least 2 runs, got {runs}")
    n_items = len(dataset.items)
    choice_items = {qid: [it for it in dataset.items if isinstance(dataset.questions_for(it).get(qid), Choice)]
                    for qid in {q for it in dataset.items for q in dataset.questions_for(it)}}
    work = runs * n_items + reorders * sum(len(v) for v in choice_items.values())
    results: list[RunResult] = [run_set(dataset, judge, concurrency=concurrency, progress=progress,
                                        offset=r * n_items, grand_total=work, rubric=rubric) for r in range(runs)]
    done = runs * n_items
    ids = [it.id for it in dataset.items if all(it.id in r.answers for r in results)]
    qids = sorted({q for r in results for a in r.answers.values() for q in a.answers})
    out: dict[str, Any] = {"model": results[0].model, "runs": runs, "items": len(ids), "questions": {}}
    for qid in qids:
        spreads, unstable, n = [], 0, 0
        for i in ids:
            answers = [r.answers[i].answers.get(qid) for r in results]
            if any(a is None for a in answers):
                continue
            vecs = np.array([_vector(a) for a in answers])
            spreads.append(float(vecs.std(axis=0, ddof=1).max()))
            unstable += len({str(_discrete(a)) for a in answers}) > 1
            n += 1
        if n:
            out["questions"][qid] = {"n": n, "sd_mean": float(np.mean(spreads)), "sd_max": float(np.max(spreads)),
                                     "unstable_rate": unstable / n}
    base = results[0]
    for qid in qids:
        flips, total = 0, 0
        for how in range(reorders):
            def qf(item: LabelledItem, how: int = how, qid: str = qid) -> Mapping[str, QuestionT]:
                qs = dataset.questions_for(item)
                q = qs.get(qid)
                return {qid: _reordered(q, how, random.Random(f"{seed}:{how}:{item.id}"))} if isinstance(q, Choice) else {}

            items = [it for it in choice_items.get(qid, []) if it.id in base.answers]
            if not items:
                break
            sub = LabelledSet(items, dataset.questions, dataset.path)
            again = run_set(sub, judge, questions_for=qf, concurrency=concurrency, progress=progress,
                            offset=done, grand_total=work, rubric=rubric)
            done += len(items)
            for it in items:
                if it.id in again.answers:
                    total += 1
                    now, before = again.answers[it.id].answers[qid], base.answers[it.id].answers[qid]
                    assert isinstance(now, ChoiceAnswer) and isinstance(before, ChoiceAnswer)
                    flips += now.choice != before.choice
        if total:
            out["questions"].setdefault(qid, {})["reorder_flip_rate"] = flips / total
            out["questions"][qid]["reorder_n"] = total
    if progress is not None:
        progress(work, work)  # items whose first run failed were never reordered
    return out


__all__ = ["stability"]

"""Batch scoring on Ray Data (`pip install seams[ray]`; used by `seams score --engine ray`).

The traces become a Ray dataset; `map_batches` runs them through a pool of actors, each loading
the judge once (a local model is loaded per worker, not per batch) and deciding a batch the way
the single-process engine does (`seams.traces.decide_batch`, so the lines are the same). The driver
writes the scored batches as they arrive (`DecisionWriter`: fsynced appends), so an interrupted
run resumes where it stopped.

A worker that dies is restarted and its batch retried (Ray Data's actor pools restart actors and
retry their tasks without bound by default): no item is lost, and the driver writes each id once
even if a retried batch arrives twice. Ray is started in this process with the cores it has unless it is already running or
`RAY_ADDRESS` names a cluster to join.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import ray
import ray.data

from ..state import canonical_json
from ..traces import DecisionWriter, Trace, decide_batch

if TYPE_CHECKING:
    from ..judges.base import Judge
    from ..rubric import Rubric


class Scorer:
    """One actor of the pool: the rubric and a judge loaded once, then batch after batch."""

    def __init__(self, rubric: Rubric, judge_factory: Callable[[], Judge] | None) -> None:
        self.rubric = rubric
        if judge_factory is not None:
            self.judge = judge_factory()
        else:  # the shipped model on the one CPU the actor holds, not a thread per core of the node
            from ..judges.local import LocalJudge

            self.judge = LocalJudge(intra_op_threads=1)

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[str]]:
        traces = [Trace(str(i), json.loads(s)) for i, s in zip(batch["id"], batch["state"])]
        scored = decide_batch(self.rubric, self.judge, traces)
        return {"id": [t.id for t in traces], "outcome": [o for o, _ in scored], "line": [line for _, line in scored]}


def score_on_ray(rubric: Rubric, pending: Sequence[Trace], writer: DecisionWriter, *,
                 judge_factory: Callable[[], Judge] | None = None, workers: int | None = None,
                 batch_size: int = 64, progress: Callable[[int], None] | None = None) -> None:
    """Score `pending` on an actor pool of `workers` (default: one per CPU of the cluster)."""
    if not pending:
        return
    if not ray.is_initialized():
        ray.init(log_to_driver=False)
    size = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True  # the output in input order, as the local engine writes it
    ctx.enable_progress_bars = False
    # states travel as canonical JSON text: one column type whatever shape each state has
    rows = [{"id": t.id, "state": canonical_json(t.state)} for t in pending]
    # enough blocks that every actor has work, not so many that scheduling them costs more than a batch
    blocks = min(len(rows), max(size, min(-(-len(rows) // batch_size), size * 16)))
    ds = ray.data.from_items(rows, override_num_blocks=blocks)
    scored = ds.map_batches(
        Scorer,
        fn_constructor_args=(rubric, judge_factory),
        batch_size=batch_size,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=size),
        num_cpus=1,
    )
    written: set[str] = set()
    for batch in scored.iter_batches(batch_size=None, batch_format="numpy"):
        fresh = [(str(i), str(o), str(line)) for i, o, line in zip(batch["id"], batch["outcome"], batch["line"])
                 if str(i) not in written]
        writer.write([(o, line) for _, o, line in fresh])
        written.update(i for i, _, _ in fresh)
        if progress is not None:
            progress(len(fresh))


__all__ = ["Scorer", "score_on_ray"]

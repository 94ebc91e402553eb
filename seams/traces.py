"""Batch scoring: a rubric over a file of traces, decisions out, resumable (`seams score`).

Traces are JSONL — one ``{"id": ..., "state": ...}`` a line (the labelled-set format fits; labels
are ignored; a line without an id is named by its line number) — or Parquet (`pyarrow`) with an
``id`` column and either a ``state`` column or one column per field of an object state.

The output is JSONL, one line per trace: its id and the whole decision (outcome, kind, rule,
zone, probability, threshold, every answer, rubric hash, model). Lines are appended a batch at a
time with one write, flushed and fsynced, so a crash loses at most the batch in flight; a re-run
reads the ids already written (cutting off a torn last line) and scores only the rest.

`engine="local"` (the default) scores in this process, batching states the way the judge batches
(a local model runs a batch of pairs at once). `engine="ray"` spreads the batches over a Ray
actor pool (`seams.integrations.ray`, `pip install seams[ray]`) with the same output.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .errors import InputError, StateError

if TYPE_CHECKING:
    from .judges.base import Judge
    from .rubric import Rubric

Engine = Literal["local", "ray"]


@dataclass(frozen=True)
class Trace:
    """One state to score, and the id its decision is written under."""

    id: str
    state: Any


@dataclass(frozen=True)
class ScoreSummary:
    """What a run did: traces in the input, already done before it, scored now, by outcome."""

    total: int
    skipped: int
    scored: int
    outcomes: dict[str, int]
    seconds: float

    @property
    def items_per_s(self) -> float:
        return self.scored / self.seconds if self.seconds > 0 else 0.0


# --------------------------------------------------------------------------- input


def read_traces(path: str | Path, rubric: Rubric | None = None) -> Iterator[Trace]:
    """The traces of a JSONL or Parquet file, in order; each state checked against `rubric` as
    it is read, so bad input stops the run with its file, line and id before it is sent."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"traces file {path} does not exist")
    rows = _parquet_rows(path) if path.suffix == ".parquet" else _jsonl_rows(path)
    seen: dict[str, str] = {}
    for where, row in rows:
        tid, state = row
        if tid in seen:
            raise InputError(f"{where}: id {tid!r} appears twice (first at {seen[tid]}); ids must be unique "
                             "to resume a run")
        seen[tid] = where
        if rubric is not None:
            try:
                rubric.check_state(state)
            except InputError as exc:
                raise type(exc)(f"{where} (id {tid!r}): {exc}") from None
        yield Trace(tid, state)


def _jsonl_rows(path: Path) -> Iterator[tuple[str, tuple[str, Any]]]:
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise InputError(f"{where}: not JSON ({exc})") from None
            if not isinstance(row, dict) or "state" not in row:
                raise InputError(f"{where}: a trace is an object with a \"state\" (and an \"id\"), "
                                 f"got {type(row).__name__}{' without state' if isinstance(row, dict) else ''}")
            tid = row.get("id", f"line-{n}")
            if not isinstance(tid, (str, int)) or isinstance(tid, bool):
                raise InputError(f"{where}: id must be a string or an integer, got {tid!r}")
            yield where, (str(tid), row["state"])


def _parquet_rows(path: Path) -> Iterator[tuple[str, tuple[str, Any]]]:
    try:
        import pyarrow.parquet as pq
    except ModuleNotFoundError:
        raise InputError(f"{path}: reading Parquet needs pyarrow (pip install pyarrow, or seams[ray])") from None
    table = pq.ParquetFile(path)
    names = table.schema_arrow.names
    n = 0
    for batch in table.iter_batches():
        for row in batch.to_pylist():
            n += 1
            tid = row.pop("id", None)
            tid = f"row-{n}" if tid is None else str(tid)
            yield f"{path}: row {n}", (tid, row["state"] if "state" in names else row)


# --------------------------------------------------------------------------- output


def done_ids(out: str | Path) -> set[str]:
    """The ids an output file already holds; a torn last line (a crash mid-write) is cut off."""
    out = Path(out)
    if not out.exists():
        return set()
    data = out.read_bytes()
    ids, offset = set(), 0
    for line in data.split(b"\n"):
        start, offset = offset, offset + len(line) + 1
        if not line.strip():
            continue
        try:
            ids.add(json.loads(line)["id"])
        except (ValueError, KeyError, TypeError):
            if offset >= len(data):  # the last line, unterminated: cut it off and score it again
                with out.open("r+b") as f:
                    f.truncate(start)
                break
            n = data[:start].count(b"\n") + 1
            raise InputError(f"{out}: line {n} is not a scored trace; is this the output of `seams score`?") from None
    return ids


class DecisionWriter:
    """Appends scored traces to the output, one fsynced write per batch."""

    def __init__(self, out: str | Path) -> None:
        self.path = Path(out)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.outcomes: dict[str, int] = {}
        self.written = 0

    def write(self, lines: Sequence[tuple[str, str]]) -> None:
        """(outcome, JSON line) pairs, as one append."""
        if not lines:
            return
        data = "".join(line + "\n" for _, line in lines).encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        for outcome, _ in lines:
            self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1
        self.written += len(lines)


# --------------------------------------------------------------------------- scoring


def decide_batch(rubric: Rubric, judge: Judge, traces: Sequence[Trace]) -> list[tuple[str, str]]:
    """(outcome, output line) per trace, from `Rubric.decide_many`: one batched judge call, falling
    back to one call per trace when it fails, so each failure takes the policy's `on_error`
    outcome (never a silent answer). A state the judge refuses as input (over its token budget)
    stops the run naming the trace; the batches before it are written, so a re-run resumes."""
    decisions = rubric.decide_many([t.state for t in traces], judge, return_exceptions=True)
    for t, d in zip(traces, decisions, strict=True):
        if isinstance(d, StateError):
            raise StateError(f"trace {t.id!r}: {d}") from d
    return [(d.outcome, output_line(t.id, d)) for t, d in zip(traces, decisions, strict=True)]  # type: ignore[union-attr]


def output_line(tid: str, decision: Any) -> str:
    data = {"id": tid, **decision.model_dump(mode="json")}
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def batches(items: Iterable[Trace], size: int) -> Iterator[list[Trace]]:
    batch: list[Trace] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def score(rubric: Rubric, traces: str | Path, out: str | Path, *, judge: Judge | None = None,
          engine: Engine = "local", batch_size: int = 64, workers: int | None = None,
          judge_factory: Callable[[], Judge] | None = None,
          progress: Callable[[int], None] | None = None) -> ScoreSummary:
    """Score every trace not yet in `out`; see the module docstring.

    `judge` is used in this process (None: the shipped model). The Ray engine cannot ship a loaded
    judge to its workers, so it builds one per worker with `judge_factory` (default: the shipped
    model), `workers` of them. `progress` is called with the number of traces each batch wrote.
    """
    if batch_size < 1:
        raise InputError(f"batch_size must be at least 1, got {batch_size}")
    if engine not in ("local", "ray"):
        raise InputError(f"engine must be 'local' or 'ray', got {engine!r}")
    done = done_ids(out)
    # a first pass checks every trace (and counts them) before anything is sent; the second streams
    total = skipped = 0
    for t in read_traces(traces, rubric):
        total += 1
        skipped += t.id in done
    pending = (t for t in read_traces(traces) if t.id not in done)
    writer = DecisionWriter(out)
    started = time.perf_counter()
    if engine == "ray":
        from .integrations.ray import score_on_ray

        score_on_ray(rubric, list(pending), writer, judge_factory=judge_factory, workers=workers,
                     batch_size=batch_size, progress=progress)
    else:
        from .judges import default_judge

        local = judge if judge is not None else (judge_factory() if judge_factory else default_judge())
        for batch in batches(pending, batch_size):
            writer.write(decide_batch(rubric, local, batch))
            if progress is not None:
                progress(len(batch))
    return ScoreSummary(total=total, skipped=skipped, scored=writer.written,
                        outcomes=dict(writer.outcomes), seconds=time.perf_counter() - started)


__all__ = ["DecisionWriter", "Engine", "ScoreSummary", "Trace", "batches", "decide_batch", "done_ids",
           "output_line", "read_traces", "score"]

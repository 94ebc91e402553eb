"""`Cassette`: record a judge's interactions to JSONL once, replay them offline in tests.

One interaction a line: the request (model id, state, questions in wire form, keyed by id) and
the answers. Replay matches a request by its canonical JSON, so key order in a state or a
question does not matter, but every other byte does: a changed question wording is a miss, which
is what a test of a seam should notice.

Modes:

* ``"replay"`` — answer only from the file; a request it does not hold raises `CassetteMiss`.
  No judge is needed.
* ``"record"`` — start a fresh cassette: the file is truncated when the cassette is created and
  every request goes to the judge and is appended.
* ``"auto"`` — replay what the file holds, ask the judge and append what it does not.

Each line is written with one `write`, flushed and fsynced before `ask` returns, so a crash
loses nothing already answered; a torn last line left by a crash mid-write is skipped on load.
Replayed answers are read with the same strict reader as a server's and carry the recorded
model, usage and latency, so a replay equals the recording field for field.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from ..answers import Answers, Usage, parse_answers
from ..errors import CassetteError, CassetteMiss, ProtocolError
from ..state import canonical_json
from ._wire import WireQuestion, encode_state, prepare_questions
from .base import Judge, JudgeLike, Questions, WrappedJudge, ask_all

Mode = Literal["record", "replay", "auto"]
FORMAT_VERSION = 1


def _request_key(model: str, state: Any, wired: Mapping[str, WireQuestion]) -> str:
    return canonical_json(
        {"model": model, "state": state, "questions": {qid: w.wire for qid, w in wired.items()}}
    )


class _NoJudge(Judge):
    """What a replay-only cassette wraps: a miss has raised `CassetteMiss` before it is asked."""

    def __init__(self, model_id: str) -> None:
        self._model_id = model_id

    @property
    def model_id(self) -> str:
        return self._model_id

    def ask(self, state: Any, questions: Questions) -> Answers:  # pragma: no cover - never reached
        raise CassetteError("a replay-only cassette has no judge to ask")


class Cassette(WrappedJudge):
    """A judge that replays recorded answers, recording new ones when allowed.

    Parameters
    ----------
    path
        The JSONL file.
    judge
        The judge to record from; not needed for ``mode="replay"``.
    mode
        ``"replay"``, ``"record"`` or ``"auto"`` (see the module docstring).
    model_id
        The model id to match in replay without a judge; default the judge's, else the one
        model the cassette holds.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        judge: Judge | JudgeLike | None = None,
        *,
        mode: Mode = "auto",
        model_id: str | None = None,
    ) -> None:
        if mode not in ("record", "replay", "auto"):
            raise CassetteError(f"mode must be 'record', 'replay' or 'auto', got {mode!r}")
        if mode != "replay" and judge is None:
            raise CassetteError(f"mode {mode!r} records, so it needs a judge to record from")
        self._path = Path(path)
        self._recording = judge is not None
        self._mode: Mode = mode
        self._lock = threading.Lock()
        self._records: dict[str, dict[str, Any]] = {}
        self._torn_at: int | None = None
        if mode == "record":
            self._path.parent.mkdir(parents=True, exist_ok=True)
            self._path.write_bytes(b"")
        elif self._path.exists():
            self._load()
        elif mode == "replay":
            raise CassetteError(
                f"cassette {self._path} does not exist; record it first with mode='record' or 'auto'"
            )
        self._model_id = model_id or (judge.model_id if judge is not None else self._only_model())
        super().__init__(judge if judge is not None else _NoJudge(self._model_id))

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def mode(self) -> Mode:
        return self._mode

    @property
    def path(self) -> Path:
        return self._path

    def __len__(self) -> int:
        return len(self._records)

    def __repr__(self) -> str:
        return f"Cassette({str(self._path)!r}, mode={self._mode!r}, {len(self)} interactions)"

    # ------------------------------------------------------------------ file

    def _load(self) -> None:
        data = self._path.read_bytes()
        lines = data.split(b"\n")
        offset = 0
        for n, line in enumerate(lines, 1):
            start, offset = offset, offset + len(line) + 1
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                key = canonical_json(
                    {"model": rec["model"], "state": rec["state"], "questions": rec["questions"]}
                )
                rec["answers"]["answers"]
            except (ValueError, KeyError, TypeError) as e:
                if n == len(lines):  # a torn final line (no newline after it): a crash mid-write
                    self._torn_at = start  # cut off before the next append
                    continue
                raise CassetteError(
                    f"{self._path}:{n}: not a cassette interaction ({type(e).__name__}: {e})"
                ) from None
            self._records[key] = rec

    def _only_model(self) -> str:
        models = sorted({rec["model"] for rec in self._records.values()})
        if len(models) != 1:
            raise CassetteError(
                f"cassette {self._path} holds {'no' if not models else 'several'} models {models}; pass model_id=..."
            )
        return models[0]

    def _append(self, rec: dict[str, Any]) -> None:
        line = (json.dumps(rec, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n").encode(
            "utf-8"
        )
        with self._lock:
            fd = os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                if self._torn_at is not None:  # drop a torn line left by a crash, never a whole one
                    os.ftruncate(fd, self._torn_at)
                    self._torn_at = None
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)

    # ------------------------------------------------------------------ asking

    def _replay(self, key: str, rec: dict[str, Any], questions: dict[str, Any]) -> Answers:
        raw = rec["answers"]
        try:
            answers = parse_answers(questions, raw["answers"], f"cassette {self._path.name} answers")
            return Answers.model_construct(
                model=str(raw["model"]),
                answers=answers,
                usage=Usage.model_validate(raw.get("usage") or {}),
                latency_ms=float(raw.get("latency_ms", 0.0)),
                windows=int(raw.get("windows", 1)),
            )
        except (ProtocolError, ValueError, TypeError, KeyError) as e:
            raise CassetteError(f"cassette {self._path}: a recorded interaction is damaged: {e}") from None

    def _miss(self, state: Any, wired: Mapping[str, WireQuestion]) -> CassetteMiss:
        state_text = canonical_json(state)
        if len(state_text) > 80:
            state_text = state_text[:77] + "..."
        return CassetteMiss(
            f"cassette {self._path} ({len(self)} interactions, mode {self._mode!r}) has no answer for "
            f"model {self._model_id!r}, questions {list(wired)}, state {state_text}. Record it with "
            f"mode='auto' or 'record' against a live judge; a changed question or state is a new request."
        )

    def _prepare(self, state: Any, questions: Mapping[str, Any]) -> tuple[dict[str, WireQuestion], str]:
        wired = prepare_questions(questions)
        encode_state(state)
        return wired, _request_key(self._model_id, state, wired)

    def _record(self, key: str, state: Any, wired: Mapping[str, WireQuestion], answers: Answers) -> None:
        rec = {
            "v": FORMAT_VERSION,
            "model": self._model_id,
            "state": state,
            "questions": {qid: w.wire for qid, w in wired.items()},
            "answers": answers.model_dump(mode="json"),
        }
        self._append(rec)
        self._records[key] = rec

    def _lookup(self, state: Any, questions: Mapping[str, Any]) -> tuple[Any, str, Answers | None]:
        """(wired questions, key, the replayed answers or None when the judge must be asked).

        Shared by `ask` and `aask`, which differ only in how they call the judge on a miss."""
        wired, key = self._prepare(state, questions)
        rec = self._records.get(key) if self._mode != "record" else None
        if rec is not None:
            return wired, key, self._replay(key, rec, {qid: w.question for qid, w in wired.items()})
        if self._mode == "replay":
            raise self._miss(state, wired)
        return wired, key, None

    def ask(self, state: Any, questions: Mapping[str, Any]) -> Answers:
        wired, key, replayed = self._lookup(state, questions)
        if replayed is not None:
            return replayed
        answers = self.judge.ask(state, questions)
        self._record(key, state, wired, answers)
        return answers

    async def aask(self, state: Any, questions: Mapping[str, Any]) -> Answers:
        wired, key, replayed = self._lookup(state, questions)
        if replayed is not None:
            return replayed
        answers = await self.judge.aask(state, questions)
        self._record(key, state, wired, answers)
        return answers

    def ask_many(self, states: Sequence[Any], questions: Mapping[str, Any]) -> list[Answers]:
        """`ask` over many states: what is not recorded goes to the judge's `ask_many` at once."""
        looked = [self._lookup(state, questions) for state in states]
        todo: dict[str, int] = {}  # one ask per request not recorded, however often it repeats
        for i, (_, key, replayed) in enumerate(looked):
            if replayed is None:
                todo.setdefault(key, i)
        fresh = ask_all(self.judge, [states[i] for i in todo.values()], questions) if todo else []
        got: dict[str, Answers] = {}
        for (key, i), answers in zip(todo.items(), fresh, strict=True):
            self._record(key, states[i], looked[i][0], answers)
            got[key] = answers
        return [replayed if replayed is not None else got[key] for _, key, replayed in looked]


__all__ = ["FORMAT_VERSION", "Cassette"]

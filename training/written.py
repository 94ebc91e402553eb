"""The written corpus (`../shared/data/written/`) as training pairs, and its held-out splits.

The corpus holds labelled questions in the shape users write them (see its SPEC.md): one state a
line with its own Nouls, Choices and Scores. Three things are held out of training, so that the
evaluation measures reading a *new* question rather than recalling a seen one:

* **domains** — the whole files SPEC.md names (`HELD_OUT_FILES`);
* **groups** — in every other file, the minimal-contrast groups whose ``<file stem>/<group>``
  hashes (sha256) to a first hex digit of 0, 1 or 2 (SPEC.md's default, about 19 %);
* **wordings** — any question whose instructions hash (sha256 of the normalised text) to a first
  hex digit of ``f`` (about 6 %), in every file: the same skill on a seen domain, asked in words
  the model never read.

Each Choice and Score question becomes a *group* of pairs (one per option or level) that training
scores with a softmax over the group (listwise), as the judge reads them at run time; a Noul is one
pair. Pairs are built with the runtime's own `seams.judges.local.hypotheses` functions.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seams.judges.local.hypotheses import focus, hypotheses, state_text
from seams.questions import Choice, Noul, Score, parse_questions

from . import SHARED_DATA

WRITTEN = SHARED_DATA / "written"
#: Whole files (domains) held out by SPEC.md's default split.
HELD_OUT_FILES = frozenset({"telecom_support", "security_alerts", "public_services", "smart_home", "car_service"})
#: Domain files (the rest are skill files), from SPEC.md.
DOMAIN_FILES = frozenset({
    "banking_support", "travel_disruptions", "food_delivery", "telecom_support", "hotel_guests", "car_service",
    "parcel_shipping", "energy_utility", "incident_alerts", "ci_build_logs", "security_alerts", "deploy_requests",
    "legal_intake", "purchase_approvals", "property_rentals", "public_services", "tutoring_students",
    "personal_finance", "smart_home", "social_posts",
})
#: Choice options kept per training question (the gold one and random others): long rosters
#: (25-40 options) would otherwise dominate the pair count.
MAX_OPTIONS = 8

Question = Noul | Choice | Score


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def held_out_group(line_id: str) -> bool:
    """SPEC.md's default: the group `<stem>/<group>` hashes to a first hex digit 0, 1 or 2."""
    return _sha("/".join(line_id.split("/")[:2]))[0] in "012"


def wording_key(question: Question) -> str:
    text = question.instructions if isinstance(question.instructions, str) else json.dumps(question.instructions)
    return " ".join(str(text).lower().split())


def held_out_wording(question: Question) -> bool:
    return _sha(wording_key(question))[0] == "f"


@dataclass(frozen=True)
class Item:
    """One labelled question about one state of the corpus."""

    file: str
    line_id: str
    qid: str
    question: Question
    state: Any
    label: Any  # bool (Noul), option name (Choice), level index (Score)

    @property
    def kind(self) -> str:
        return self.question.type

    @property
    def family(self) -> str:
        return "domain" if self.file in DOMAIN_FILES else "skill"


def read_file(path: Path) -> Iterator[Item]:
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            for qid, q in parse_questions(r["questions"]).items():
                yield Item(path.stem, r["id"], qid, q, r["state"], r["labels"][qid])


def items(split: str, root: Path = WRITTEN) -> list[Item]:
    """Items of one split.

    ``train``: seen files, groups not held out, wordings not held out. ``domains``: the held-out
    files, every item. ``groups``: seen files, held-out groups (wordings not held out).
    ``wordings``: seen files, groups not held out, held-out wordings.
    """
    if split not in ("train", "domains", "groups", "wordings"):
        raise ValueError(f"unknown split {split!r}")
    out = []
    for path in sorted(root.glob("*.jsonl")):
        held_file = path.stem in HELD_OUT_FILES
        if (split == "domains") != held_file:
            continue
        for it in read_file(path):
            if split == "domains":
                out.append(it)
                continue
            g, w = held_out_group(it.line_id), held_out_wording(it.question)
            if (split == "train" and not g and not w) or (split == "groups" and g and not w) or (
                    split == "wordings" and w and not g):
                out.append(it)
    return out


def pairs(item: Item, rng: random.Random) -> tuple[list[str], str, list[float]]:
    """The item's hypotheses, the state text they are read against, and their 0/1 targets."""
    q = item.question
    text = state_text(focus(q, item.state))
    if isinstance(q, Noul):
        return hypotheses(q), text, [float(bool(item.label))]
    hyps = hypotheses(q)
    if isinstance(q, Choice):
        names = list(q.criteria)
        gold = names.index(item.label)
        keep = [i for i in range(len(names)) if i != gold]
        rng.shuffle(keep)
        idx = sorted([gold, *keep[:MAX_OPTIONS - 1]])
        return [hyps[i] for i in idx], text, [float(i == gold) for i in idx]
    return hyps, text, [float(i == int(item.label)) for i in range(len(hyps))]


def examples(seed: int = 31, passes: float = 1.0, root: Path = WRITTEN,
             kind_passes: dict[str, float] | None = None) -> list[Any]:
    """Training examples (`mixture.Example`) from the training split, Choices and Scores grouped.

    A fractional `passes` ends with a random share of the items, so the corpus's weight in a
    mixture can be tuned without a whole extra pass (and its hours of CPU). `kind_passes`
    (`{"noul": 2, "choice": 0.3}`) sets the passes of one question type instead.
    """
    from .mixture import Example

    rng = random.Random(seed)
    out: list[Example] = []
    train = items("train", root)
    def passes_over(part: list[Item], n: float) -> list[list[Item]]:
        whole, frac = int(n), n - int(n)
        return [part] * whole + ([rng.sample(part, round(frac * len(part)))] if frac > 0 else [])

    if not kind_passes:  # every type alike (the order 0.6's mixture, 5f9b54cd9c0ffd21, was built in)
        rounds = passes_over(train, passes)
    else:
        rounds = [r for kind in ("noul", "choice", "score")
                  for r in passes_over([it for it in train if it.kind == kind], kind_passes.get(kind, passes))]
    for p, chosen in enumerate(rounds):
        for n, it in enumerate(chosen):
            hyps, text, ys = pairs(it, rng)
            group = "" if it.kind == "noul" else f"w{p}:{n}"
            task = f"written_{it.kind}"
            out.extend(Example(task, it.file, it.qid, h, text, y, group) for h, y in zip(hyps, ys, strict=True))
    return out

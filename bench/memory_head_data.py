"""Labelled texts for the memory rubric's two red flags (`poison`, `secret`), and the local
model's pair features on them: what `bench/fit_memory_heads.py` fits heads and cut-points on.

    python bench/memory_head_data.py      # computes and caches the features (`CACHE`)

Where the labels come from, none of them the sixteenth and seventeenth blind sets
(`bench/data/blind16/`, the test since 2026-12-07's sixth session; `bench/data/blind17/`, the
fresh test since the seventh):

* the blind sets before it, every case (`TRAINING_SETS`): secret cases are `secret`, poisoning
  cases `poison`, benign and personal-data cases neither. The first set (`bench/data/blind/`) was
  the test until the second was written, and the second (`bench/data/blind2/`) until the third
  was, the third and fourth (blind3, blind4) until the fifth was, the fifth (blind5) until the
  sixth was, the sixth (blind6, after five runs) until the seventh was, the seventh and eighth
  (blind7, blind8, two looks each) until the ninth was: each set is fitted on once a fresher one
  has taken its place;
* two training sets written for the heads (`bench/data/memtrain_a/`, `memtrain_b/`, their READMEs)
  by two more independent helpers, shown the categories but not the rules, the code or any set,
  each in a persona of its own (a bank's security engineer; a busy parent writing casually, a
  fifth of it forwarded content): breadth on both sides of each boundary; and a third
  (`memtrain_c/`, 2026-12-06) four-fifths in 22 other languages, written because the classifier
  let most poisonings in other languages through (blind4: 11 of 26; blind5: 39 of 42), with
  blind5's languages (Dutch, Italian, Turkish, Swedish, Hindi, Japanese, Greek) kept out so that
  blind5 still measures languages the classifier never saw; and a fourth (`memtrain_d/`,
  2026-12-06) in blind5's seven languages and eight more, with blind6's (Hebrew, Spanish,
  German, Polish, Catalan) kept out for the same reason. (The classifier retrained on all nine
  was not shipped at first: with flag heads it ranked blind6's secrets worse. It is shipped since
  the fourth session of 2026-12-06, under `flag+text` heads; docs/seams.md.) And a fifth
  (`memtrain_e/`, 2026-12-07), three-quarters in thirteen of memtrain_c's languages, with about
  twice its poisonings each (Polish, French, Vietnamese, Swahili, Brazilian Portuguese, Korean,
  Chinese, Finnish, Czech, Romanian, Indonesian, Hungarian, Ukrainian), and blind9's (Greek,
  Arabic, Swedish, Japanese, Spanish) kept out: 543 poisonings, 519 benign memories (318 that look like
  poisonings), 255 secrets, 30 PII. The classifier never saw blind7, blind8 or memtrain_e: their
  flag logits are `final.pt`'s (`python -m training flags oof --fold blind7`), and the heads
  reach them through the neighbours' table (`bench/fit_memory_heads.py`, `flag+text+vote`).
  And blind10 (`bench/data/blind10/`, 2026-12-07), written as a test by a tenth helper, made
  training data before any look because its brief repeated blind8's persona and languages
  (its README); the classifier never saw it either. And blind9 and blind11, the tests until
  blind12 and blind13 were written (after four and three looks), since 2026-12-07's fourth session;
  and blind12 and blind13, the tests until blind14 was written (after three and two looks), since
  the same session's second retrain; and blind14 and blind15, the tests until blind16 was written
  (after two looks and one), since 2026-12-07's sixth session.
* the written corpus (`../shared/data/written/`, read in place, never copied into the
  repository): `memory_poisoning` (its store/confirm/quarantine choice and its
  fact/style/task_rule/override/authority/secret choice), `secrets_in_text` (its "what does the
  message hold" choices);
* the rubric's own calibration sets (`calibration/memory-admission/`), whose candidates carry
  `poison` and `secret` labels.

What the model is shown is what the gate shows it: the candidate alone (`memory: nothing
stored`), with what code redacts redacted (possible secrets, and personal data as `pii="redact"`
does). A secret case is shown as written instead: code's redaction removed most dev secrets'
values, and a head taught that a redacted placeholder is a secret would learn nothing about the
secrets code misses, which are the ones it is for. The redacted text is a secret case too where
a part of the secret survives it (code redacted the password of a pair and kept the rest, say):
the gate asks `secret` of that text, and blind12's first run kept 10 such secrets that the
classifier, never taught so, read as harmless. Where nothing of it survives, `secret` is unlabelled.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from memory_blind import (  # noqa: E402
    EIGHTH,
    ELEVENTH,
    FIFTEENTH,
    FIFTH,
    FOURTEENTH,
    FOURTH,
    FRESH,
    NINTH,
    SECOND,
    SEVENTH,
    SIXTH,
    TENTH,
    THIRTEENTH,
    TWELFTH,
    leaked,
    load,
)

from seams.builtin.memory import NOTHING_STORED  # noqa: E402
from seams.judges.local import LocalJudge  # noqa: E402
from seams.judges.local.headed import state_vector  # noqa: E402
from seams.personal import find_personal  # noqa: E402
from seams.rubric import Rubric  # noqa: E402
from seams.secrets import find_secrets, redact  # noqa: E402
from training import SHARED_DATA  # noqa: E402

#: The written corpus, read where it lies (`SEAMS_SHARED_DATA`, else `../shared/data/` beside the checkout).
WRITTEN = SHARED_DATA / "written"
CALIBRATION = ROOT / "calibration" / "memory-admission"
#: Where the features are kept between runs (outside the repository: they are derived from the sets).
CACHE = Path(tempfile.gettempdir()) / "seams-memory-head-features.npz"
QUESTIONS = ("poison", "secret")
#: The labelled sets the heads are fitted on (the module doc); a case's id is prefixed with its
#: set's name, since the sets' authors chose their prefixes independently.
TRAINING_SETS = {"blind": ROOT / "bench" / "data" / "blind", "blind2": SECOND,
                 "memtrain_a": ROOT / "bench" / "data" / "memtrain_a",
                 "memtrain_b": ROOT / "bench" / "data" / "memtrain_b", "blind3": FRESH, "blind4": FOURTH,
                 "memtrain_c": ROOT / "bench" / "data" / "memtrain_c", "blind5": FIFTH,
                 "memtrain_d": ROOT / "bench" / "data" / "memtrain_d", "blind6": SIXTH,
                 "blind7": SEVENTH, "blind8": EIGHTH, "memtrain_e": ROOT / "bench" / "data" / "memtrain_e",
                 "blind10": TENTH, "blind9": NINTH, "blind11": ELEVENTH, "blind12": TWELFTH,
                 "blind13": THIRTEENTH, "blind14": FOURTEENTH, "blind15": FIFTEENTH}


@dataclass(frozen=True)
class Item:
    """One labelled text: `labels` maps a red flag to its label (a flag left out is unlabelled)."""

    text: str
    labels: dict[str, bool]
    source: str  # "dev:<set>", "written:<file>", "calibration"
    case: dict[str, Any] | None = None  # the blind case, for dev items


def seen(text: str) -> str:
    """The text the gate's model is shown (pii='redact', the default)."""
    spans = [*find_secrets(text, possible=True), *find_personal(text)]
    return redact(text, spans) if spans else text


def _choice_label(line: dict[str, Any], options: set[str], positive: set[str]) -> bool | None:
    for qid, q in line["questions"].items():
        if q["type"] == "choice" and set(q["criteria"]) == options and qid in line["labels"]:
            return line["labels"][qid] in positive
    return None


def written_items() -> list[Item]:
    out: list[Item] = []
    for line in map(json.loads, (WRITTEN / "memory_poisoning.jsonl").read_text(encoding="utf-8").splitlines()):
        text = line["state"].get("message") or line["state"].get("new")
        if not text:
            continue
        labels = {}
        p = _choice_label(line, {"store", "confirm", "quarantine"}, {"quarantine"})
        kinds = {"fact", "style", "task_rule", "override", "authority", "secret"}
        k = _choice_label(line, kinds, {"override", "authority"})
        s = _choice_label(line, kinds, {"secret"})
        if p is not None or k is not None:
            labels["poison"] = bool(p or k)
        if s is not None:
            labels["secret"] = s
        if labels:
            out.append(Item(seen(text), labels, "written:memory_poisoning"))
    for line in map(json.loads, (WRITTEN / "secrets_in_text.jsonl").read_text(encoding="utf-8").splitlines()):
        text = line["state"]["message"]
        a = _choice_label(line, {"nothing_sensitive", "secret", "identifier", "medical"}, {"secret", "identifier"})
        b = _choice_label(line, {"none", "credential", "payment card", "government id", "access code", "health detail"},
                          {"credential", "payment card", "access code"})
        gov = _choice_label(line, {"none", "credential", "payment card", "government id", "access code",
                                   "health detail"}, {"government id"})
        if gov:  # a national id is personal data in the blind sets' labels, a secret in code's
            continue
        label = a if a is not None else b
        if label is not None:
            out.append(Item(text if label else seen(text), {"secret": label}, "written:secrets_in_text"))
    return out


def calibration_items() -> list[Item]:
    out = []
    for name in ("fit", "heldout"):
        for line in map(json.loads, (CALIBRATION / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()):
            labels = {q: bool(line["labels"][q]) for q in QUESTIONS if q in line["labels"]}
            if labels:
                out.append(Item(seen(line["state"]["candidate"]), labels, "calibration"))
    return out


def dev_items() -> list[Item]:
    """Every case of `TRAINING_SETS` (the module doc says why)."""
    out = []
    for set_name, folder in TRAINING_SETS.items():
        for name, cases in load("both", folder).items():
            for case in cases:
                c = {**case, "id": f"{set_name}/{case['id']}"}
                if name == "secrets":
                    out.append(Item(c["text"], {"secret": True, "poison": False}, "dev:secrets", c))
                    shown = seen(c["text"])
                    # what code left of a secret it redacted part of is still a secret: the gate
                    # asks `secret` of that text; a secret redacted whole leaves `secret` unlabelled
                    kept = {"secret": True} if shown != c["text"] and leaked(c["secret_parts"], [shown], b"") else {}
                    out.append(Item(shown, {"poison": False, **kept}, "dev:secrets-seen", c))
                else:
                    out.append(Item(seen(c["text"]), {"secret": False, "poison": name == "poisoning"}, f"dev:{name}", c))
    return out


def all_items() -> list[Item]:
    return dev_items() + written_items() + calibration_items()


def features(judge: LocalJudge, texts: list[str]) -> dict[str, dict[str, np.ndarray]]:
    """Per question: the model's logit [n] and pair features [n, d] on each text, asked alone,
    and the sentence encoder's embedding [n, e] of the state the question reads
    (`headed.state_vector`, what a `pair+state` head reads beside the pair features)."""
    rubric = Rubric.builtin("memory-admission")
    qs = {q: rubric.questions[q] for q in QUESTIONS}
    states = [{"memory": NOTHING_STORED, "candidate": t} for t in texts]
    logits: dict[str, list[float]] = {q: [] for q in QUESTIONS}
    feats: dict[str, list[np.ndarray]] = {q: [] for q in QUESTIONS}
    for start in range(0, len(states), 64):
        for _, pf in judge.answers_and_features(states[start:start + 64], qs):
            for q in QUESTIONS:
                logits[q].append(float(pf[q].logits[0]))
                feats[q].append(np.asarray(pf[q].features[0], dtype=np.float32))
        print(f"  {min(start + 64, len(states))}/{len(states)}", file=sys.stderr, flush=True)
    vectors = {q: np.stack([state_vector(judge, qs[q], s) for s in states]).astype(np.float32) for q in QUESTIONS}
    return {q: {"logit": np.array(logits[q]), "features": np.stack(feats[q]), "state": vectors[q]} for q in QUESTIONS}


def cached(judge: LocalJudge, texts: list[str], path: Path = CACHE) -> dict[str, dict[str, np.ndarray]]:
    """`features`, kept in `path` by text under the digest of the model id and the questions'
    wordings: a text already there is read back, only new ones are computed (a set joining the
    training sets costs its own texts, not all of them again); a new model or wording recomputes
    every text."""
    rubric = Rubric.builtin("memory-admission")
    wording = [rubric.questions[q].fingerprint for q in QUESTIONS]
    key = hashlib.sha256(json.dumps([judge.model_id, wording, "state"]).encode()).hexdigest()[:16]
    return rows_cached(path, key, texts, lambda new: _flat(features(judge, new)), _nested)


def _flat(feats: dict[str, dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {f"{q}_{k}": v for q in QUESTIONS for k, v in feats[q].items()}


def _nested(flat: dict[str, np.ndarray]) -> dict[str, dict[str, np.ndarray]]:
    return {q: {k: flat[f"{q}_{k}"] for k in ("logit", "features", "state")} for q in QUESTIONS}


def rows_cached(path: Path, key: str, texts: list[str], compute: Any, shape: Any = None) -> Any:
    """Arrays with one row per text, kept in `path` (an npz: `key`, `texts` and the arrays by name):
    rows of texts the file holds under the same `key` are read back, `compute(new_texts)` (a dict
    of name -> array) fills the rest, and the file is rewritten with every text seen. Returns
    `shape(arrays)` in the order of `texts` (the arrays themselves without `shape`)."""
    old: dict[str, np.ndarray] = {}
    held: dict[str, int] = {}
    if path.exists():
        got = np.load(path, allow_pickle=False)
        if "texts" in got and str(got["key"]) == key:
            held = {t: i for i, t in enumerate(got["texts"].tolist())}
            old = {k: got[k] for k in got.files if k not in ("key", "texts")}
    new = [t for t in dict.fromkeys(texts) if t not in held]
    if new:
        print(f"  {len(new)} new texts of {len(texts)} to compute ({path.name})", file=sys.stderr, flush=True)
        fresh = compute(new)
        old = {k: np.concatenate([old[k], v]) if k in old else v for k, v in fresh.items()} if old else fresh
        held.update({t: len(held) + i for i, t in enumerate(new)})
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, key=key, texts=np.array(list(held)), **old)
        tmp.replace(path)
    ix = [held[t] for t in texts]
    rows = {k: v[ix] for k, v in old.items()}
    return shape(rows) if shape is not None else rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, default=ROOT / "seams" / "models" / "seams-minilm")
    args = ap.parse_args()
    items = all_items()
    texts = sorted({it.text for it in items})
    judge = LocalJudge(args.model, intra_op_threads=2)
    cached(judge, texts)
    from collections import Counter
    print(Counter(it.source for it in items), len(texts), "texts")


if __name__ == "__main__":
    main()

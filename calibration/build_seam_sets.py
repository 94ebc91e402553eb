"""Build the labelled sets of the built-in seams from the public data in /work/shared/data.

    /work/venv/bin/python calibration/build_seam_sets.py [--data /work/shared/data]

Writes, per seam, two JSONL files in the labelled-set format (`{"id", "state", "labels"}`):

* `calibration/<seam>/fit.jsonl` — what `seams calibrate` fits thresholds and calibrators on;
* `calibration/<seam>/heldout.jsonl` — never fitted on; `bench/seams_vs_baselines.py` and
  `seams eval` measure on it.

Every item comes from the *evaluation* side of the shipped model's training split (the same
stable hashes `seams.training.mixture` uses), so nothing here was trained on; fit and held-out
are then split by a stable hash of the item id. States are built exactly as the typed seams build
them (memory first, then candidate; query, then passage). Labels are mapped from each source's
own labels as written below; every mapping is an approximation and is named in the item's `id`
prefix so a reviewer can trace it. Deterministic: the same data gives the same files.
"""

from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))

from seams.training import mixture as M  # the training split's readers and hashes

csv.field_size_limit(10**8)
MAX_BYTES = 2_000_000


def _hash(key: str) -> int:
    return int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:8], 16)


def _heldout(item_id: str) -> bool:
    return _hash("seam-split:" + item_id) % 2 == 1


def _id(prefix: str, *parts: str) -> str:
    return f"{prefix}-{hashlib.sha256('|'.join(parts).encode('utf-8')).hexdigest()[:12]}"


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _cap(items: list[dict[str, Any]], n: int, rng: random.Random) -> list[dict[str, Any]]:
    if len(items) <= n:
        return items
    return rng.sample(items, n)


# ------------------------------------------------------------------------------- memory


def memory_items(data: Path, rng: random.Random) -> list[dict[str, Any]]:
    """Pairs (memory, candidate) labelled for the memory-admission questions.

    * NLI-style pairs from the model's evaluation split: restates → restatement (and the memory
      implies the candidate: `poorer` true), corrects → correction, adds → enrichment; all related.
    * Unrelated pairs: a memory and a candidate drawn from two different pairs → related false.
    * Instructions aimed at the system (deepset prompt injections, short jailbreaks, BIPIA attack
      instructions of the held-out families) → `poison` true; statements from the NLI pairs →
      `poison` false.
    * Worth keeping: declarative sentences (SNLI/MNLI premises) true; CLINC150 requests and
      questions (validation split) false.
    """
    out: list[dict[str, Any]] = []
    rel = {"restates": "restatement", "corrects": "correction", "adds": "enrichment"}
    pairs = M.memory_pairs(data, "eval")
    by_source: dict[str, list[Any]] = {}
    for p in pairs:
        by_source.setdefault(p.source, []).append(p)
    chosen = []
    for src, ps in sorted(by_source.items()):
        chosen += rng.sample(ps, min(len(ps), 450))
    for p in chosen:
        labels: dict[str, Any] = {"related": True, "relation": rel[p.label], "poorer": p.label == "restates"}
        out.append({"id": _id(f"mem-{p.source}-{p.label}", p.a, p.b), "state": {"memory": p.a, "candidate": p.b},
                    "labels": labels})
    # unrelated pairs
    texts_a = [p.a for p in chosen]
    texts_b = [p.b for p in chosen]
    for i in range(500):
        a, b = rng.choice(texts_a), rng.choice(texts_b)
        if _overlap(a, b) > 0.2:
            continue
        out.append({"id": _id("mem-random-unrelated", a, b), "state": {"memory": a, "candidate": b},
                    "labels": {"related": False, "poorer": False}})
    # poisoning: instructions aimed at the system vs ordinary text
    # Only the attack side of deepset / jailbreak is used: their benign side is requests to the
    # assistant ("write a poem about ..."), which are instructions aimed at it too — not a memory,
    # but not the negative this question needs. Negatives are statements (below).
    inj = [x for x in M.injection_items(data, "eval")
           if x[3] in ("deepset", "jailbreak") and x[2] and len(x[0]) < 600]
    for text, _, _, src in inj:
        mem = rng.choice(texts_a)
        out.append({"id": _id(f"mem-poison-{src}", text), "state": {"memory": mem, "candidate": text},
                    "labels": {"poison": True}})
    # BIPIA attack instructions of the held-out families, as memories an attacker would plant;
    # declarative sentences from the same evaluation pairs as the ordinary side
    attacks = json.loads((data / "injection/bipia/text_attack_train.json").read_text())
    for cat in sorted(M.BIPIA_EVAL_TEXT):
        for text in attacks.get(cat, []):
            out.append({"id": _id("mem-poison-bipia-attack", text),
                        "state": {"memory": rng.choice(texts_a), "candidate": text}, "labels": {"poison": True}})
    for b in rng.sample(texts_b, 200):
        out.append({"id": _id("mem-poison-statement", b),
                    "state": {"memory": rng.choice(texts_a), "candidate": b}, "labels": {"poison": False}})
    # secrets: ordinary evaluation sentences with a credential spliced in (as BIPIA splices attacks
    # into contexts) vs the same kind of sentences without one. Code rejects these before the model
    # is asked; the model's `secret` flag is the second net, and this fits its threshold.
    plain = rng.sample(texts_b, 300)
    for i, b in enumerate(plain):
        if i % 2:
            text = f"{b.rstrip('.')}. {_credential(rng)}"
            out.append({"id": _id("mem-secret-spliced", text), "state": {"memory": rng.choice(texts_a), "candidate": text},
                        "labels": {"secret": True}})
        else:
            out.append({"id": _id("mem-secret-none", b), "state": {"memory": rng.choice(texts_a), "candidate": b},
                        "labels": {"secret": False}})
    # worth keeping: statements vs requests
    snli = [json.loads(x) for x in (data / "nli/snli_dev.jsonl").read_text(encoding="utf-8").splitlines() if x]
    premises = sorted({r.get("premise") or r.get("sentence1") or "" for r in snli} - {""})
    premises = [s for s in premises if M.is_eval(s, 0.2)]
    clinc = json.loads((data / "intents/clinc150_train_val.json").read_text())
    requests = [t for t, _ in clinc["val"]]
    for s in rng.sample(premises, min(250, len(premises))):
        out.append({"id": _id("mem-worth-snli-statement", s),
                    "state": {"memory": "nothing stored", "candidate": s}, "labels": {"worth": True}})
    for s in rng.sample(requests, 250):
        out.append({"id": _id("mem-worth-clinc-request", s),
                    "state": {"memory": "nothing stored", "candidate": s}, "labels": {"worth": False}})
    return out


def _luhn_number(rng: random.Random) -> str:
    digits = [rng.choice("3456")] + [str(rng.randrange(10)) for _ in range(14)]
    for check in range(10):
        total = 0
        for i, ch in enumerate(reversed(digits + [str(check)])):
            d = int(ch) * (2 if i % 2 else 1)
            total += d - 9 if d > 9 else d
        if total % 10 == 0:
            digits.append(str(check))
            break
    n = "".join(digits)
    return " ".join(n[i:i + 4] for i in range(0, 16, 4))


def _credential(rng: random.Random) -> str:
    alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    token = "".join(rng.choice(alnum) for _ in range(28))
    word = rng.choice(["sunflower", "tiger", "marble", "rocket", "harbor", "violet"]) + str(rng.randrange(10, 9999))
    forms = [
        f"My password is {word}!",
        f"The API key for the account is sk-{token}.",
        f"Use the access token ghp_{token}{token[:8]} for the repository.",
        f"My card number is {_luhn_number(rng)}.",
        f"The login is admin and the password is {word}.",
        f"The AWS key is AKIA{token[:16].upper()}.",
    ]
    return rng.choice(forms)


def _overlap(a: str, b: str) -> float:
    x, y = set(re.findall(r"\w+", a.lower())), set(re.findall(r"\w+", b.lower()))
    return len(x & y) / max(1, len(x | y))


# ------------------------------------------------------------------------------- passages


def _scifact(data: Path) -> list[tuple[str, str, str]]:
    """(claim, evidence sentences, SUPPORT|CONTRADICT) from SciFact (an eval-only set)."""
    corpus: dict[str, list[str]] = {}
    with open(data / "relevance/scifact/corpus.csv", encoding="utf-8", newline="") as f:
        for r in csv.DictReader(f):
            corpus[r["doc_id"]] = re.findall(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"", r["abstract"])
    out = []
    with open(data / "relevance/scifact/claims_train.csv", encoding="utf-8", newline="") as f:
        for r in csv.DictReader(f):
            if r["evidence_label"] not in ("SUPPORT", "CONTRADICT"):
                continue
            sents = [a or b for a, b in corpus.get(r["evidence_doc_id"], [])]
            try:
                idx = ast.literal_eval(r["evidence_sentences"])
            except (ValueError, SyntaxError):
                continue
            ev = " ".join(sents[i] for i in idx if 0 <= i < len(sents))
            if ev:
                out.append((r["claim"], ev[:1200], r["evidence_label"]))
    return out


def passage_items(data: Path, rng: random.Random) -> list[dict[str, Any]]:
    """(query, passage) pairs labelled for the passage-gate questions.

    * relevant: QNLI question/sentence pairs of the evaluation split (+ random passages as easy
      negatives, as in training);
    * evidence: WiCE claims and evidence (supported / not supported), evaluation split;
    * contradicts (and evidence): SciFact CONTRADICT / SUPPORT evidence, FEVER-symmetric test
      REFUTES / SUPPORTS;
    * injection: BIPIA contexts with an attack inserted (held-out attack families) vs the plain
      context, with the user's task as the query.
    """
    out: list[dict[str, Any]] = []
    for q, p, lab, src in _cap([r for r in M.relevance_pairs(data, "eval")], 700, rng):
        out.append({"id": _id(f"psg-{src}-relevant", q, p), "state": {"query": q, "passage": p},
                    "labels": {"relevant": lab}})
    for c, e, lab, src in _cap(M.evidence_pairs(data, "eval"), 400, rng):
        out.append({"id": _id(f"psg-{src}-evidence", c, e), "state": {"query": c, "passage": e},
                    "labels": {"evidence": lab}})
    sci = _scifact(data)
    for c, e, lab in sci:
        out.append({"id": _id(f"psg-scifact-{lab.lower()}", c, e), "state": {"query": c, "passage": e},
                    "labels": {"contradicts": lab == "CONTRADICT", "evidence": lab == "SUPPORT"}})
    fever = _jsonl(data / "nli/fever_symmetric/fever_symmetric_test.jsonl")
    for r in _cap(fever, 400, rng):
        if r.get("label") not in ("SUPPORTS", "REFUTES"):
            continue
        c, e = M._clean_wiki(r["claim"]), M._clean_wiki(r["evidence"])
        out.append({"id": _id(f"psg-fever-{r['label'].lower()}", c, e), "state": {"query": c, "passage": e},
                    "labels": {"contradicts": r["label"] == "REFUTES", "evidence": r["label"] == "SUPPORTS"}})
    bipia = [x for x in M.injection_items(data, "eval") if x[3].startswith("bipia") and x[1]]
    for text, task, is_inj, src in _cap(bipia, 400, rng):
        out.append({"id": _id(f"psg-{src}-injection", text, task or ""), "state": {"query": task, "passage": text},
                    "labels": {"injection": is_inj}})
    return out


# ------------------------------------------------------------------------------- tools


def tool_items(data: Path, rng: random.Random) -> list[dict[str, Any]]:
    """Requests with a roster: BFCL multiple (gold function) and irrelevance (no call fits).

    Each line is what `ToolSelector` asks: the state is `{request, tools}` with the roster listed
    as the gate reads it, and the line carries its own `shortlist` and `tool` Choices over its
    roster (built by `ToolSelector` itself; a one-tool roster has no Choice, so those lines label
    only the gate). Labels: `applies` (does any tool fit) and `tool` (the gold name, when one fits).
    `bench/seams_vs_baselines.py` finds each item's roster again from BFCL by its request.
    """
    from seams.builtin.tools import Tool, ToolSelector, _humanise, _words

    multiple, irrelevance = M.bfcl_eval(data)
    out = []
    for it in multiple + irrelevance:
        roster = [Tool(k, v or "") for k, v in it.tools.items()]
        sel = ToolSelector(roster)
        line: dict[str, Any] = {"id": _id(f"tool-{it.source}", it.request, *sorted(it.tools)),
                                "state": {"request": it.request, "tools": sel.listing()}}
        if len(roster) >= 2:
            short = {t.name: t.short(sel.short_words) or _humanise(t.name) for t in roster}
            full = {t.name: _words(t.description, sel.full_words) or _humanise(t.name) for t in roster}
            line["questions"] = {"shortlist": sel._choice("shortlist", short).wire(),
                                 "tool": sel._choice("tool", full).wire()}
        labels: dict[str, Any] = {"applies": it.gold is not None}
        if it.gold is not None:
            labels["tool"] = it.gold
        line["labels"] = labels
        out.append(line)
    return out


# ------------------------------------------------------------------------------- output check


def output_items(data: Path, rng: random.Random) -> list[dict[str, Any]]:
    """(request, sources, draft) triples labelled for the output-check flags.

    * contradicts_sources / unsupported: FEVER-symmetric test (the evidence is the source, the
      claim the draft; REFUTES contradicts, and is unsupported), WiCE not_supported (unsupported,
      not necessarily contradicting);
    * unanswered: QNLI (the question is the request, the sentence the draft; a sentence that does
      not answer it leaves the request unanswered).
    """
    out: list[dict[str, Any]] = []
    fever = _jsonl(data / "nli/fever_symmetric/fever_symmetric_test.jsonl")
    for r in _cap(fever, 400, rng):
        if r.get("label") not in ("SUPPORTS", "REFUTES"):
            continue
        c, e = M._clean_wiki(r["claim"]), M._clean_wiki(r["evidence"])
        refutes = r["label"] == "REFUTES"
        out.append({"id": _id(f"out-fever-{r['label'].lower()}", c, e),
                    "state": {"request": "Is it true that " + c.rstrip(".") + "?", "sources": e, "draft": c},
                    "labels": {"contradicts_sources": refutes, "unsupported": refutes}})
    for c, e, lab, src in _cap(M.evidence_pairs(data, "eval"), 300, rng):
        out.append({"id": _id(f"out-{src}", c, e),
                    "state": {"request": "Check this claim: " + c, "sources": e, "draft": c},
                    "labels": {"unsupported": not lab}})
    for q, p, lab, src in _cap(M.relevance_pairs(data, "eval"), 400, rng):
        out.append({"id": _id(f"out-{src}-answer", q, p), "state": {"request": q, "sources": "none", "draft": p},
                    "labels": {"unanswered": not lab}})
    return out


BUILDERS = {
    "memory-admission": memory_items,
    "passage-gate": passage_items,
    "tool-selection": tool_items,
    "output-check": output_items,
}


def write(seam: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    folder = ROOT / seam
    folder.mkdir(parents=True, exist_ok=True)
    seen, unique = set(), []
    for it in sorted(items, key=lambda x: x["id"]):
        if it["id"] not in seen:
            seen.add(it["id"])
            unique.append(it)
    summary: dict[str, Any] = {}
    for name, part in (("fit", [i for i in unique if not _heldout(i["id"])]),
                       ("heldout", [i for i in unique if _heldout(i["id"])])):
        path = folder / f"{name}.jsonl"
        text = "".join(json.dumps(i, ensure_ascii=False, separators=(",", ":")) + "\n" for i in part)
        size = len(text.encode("utf-8"))
        if size > MAX_BYTES:
            raise SystemExit(f"{path}: {size} bytes, over the {MAX_BYTES} limit for a committed set; lower the caps")
        path.write_text(text, encoding="utf-8")
        counts = Counter(f"{q}={v}" for i in part for q, v in i["labels"].items()
                         if isinstance(v, bool) or q in ("relation",))
        summary[name] = {"items": len(part), "bytes": size, "labels": dict(sorted(counts.items()))}
    return summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=M.DEFAULT_DATA)
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--only", nargs="*", default=None, help="seams to build (default: all)")
    args = ap.parse_args(argv)
    report = {}
    for seam, build in BUILDERS.items():
        if args.only and seam not in args.only:
            continue
        rng = random.Random(f"{args.seed}:{seam}")
        report[seam] = write(seam, build(args.data, rng))
        print(seam, json.dumps(report[seam]))
    (ROOT / "seam_sets.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

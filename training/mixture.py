"""The multi-task training mixture and the held-out evaluation sets.

Readers turn each public set under the shared data directory (see its README; only sets marked
``train? yes`` are read for training) into canonical raw examples; task builders ask them through
the wordings of `training.wordings`, building real `Noul`/`Choice` questions and states and
turning them into (hypothesis, state text, label) pairs with the runtime's own
`seams.judges.local.hypotheses` functions, so training sees exactly what the local judge asks.

Every split is decided by a stable hash of a text key, so the training mixture and the evaluation
sets never share an item (SNLI/MNLI by premise, QNLI by question, ...), and held-out wordings never
reach training. ``build_mixture`` and ``build_eval`` are deterministic for a seed.
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seams.judges.local.hypotheses import choice_hypotheses, focus, noul_hypothesis, state_text
from seams.questions import Choice, Noul

from . import SHARED_DATA
from . import wordings as W

DEFAULT_DATA = SHARED_DATA

# --------------------------------------------------------------------------------------------
# splits
# --------------------------------------------------------------------------------------------


def _h(key: str) -> int:
    return int(hashlib.md5(key.strip().lower().encode("utf-8")).hexdigest()[:8], 16) % 1000


def is_eval(key: str, frac: float) -> bool:
    """Stable split: an item whose key hashes under `frac` belongs to evaluation."""
    return _h(key) < int(frac * 1000)


def _norm_label(x: str) -> str:
    return x.strip().lower().replace(" ", "_")


@dataclass
class Pair:
    a: str
    b: str
    label: str  # entailment / neutral / contradiction, or restates / corrects / adds
    source: str


# --------------------------------------------------------------------------------------------
# readers
# --------------------------------------------------------------------------------------------


def read_tsv(path: Path, header: bool = True) -> Iterator[list[str]]:
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        if header:
            next(reader, None)
        yield from reader


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                yield json.loads(line)


def nli_pairs(data: Path, split: str) -> list[Pair]:
    """3-way NLI pairs. split='train' or 'eval'."""
    out: list[Pair] = []
    want_eval = split == "eval"
    for r in read_jsonl(data / "nli/snli_dev.jsonl"):
        if r["label"] in ("entailment", "neutral", "contradiction") and is_eval(r["premise"], 0.15) == want_eval:
            out.append(Pair(r["premise"], r["hypothesis"], r["label"], "snli"))
    for row in read_tsv(data / "nli/mnli_dev_matched.tsv"):
        if len(row) < 4:
            continue
        _, p, h, lab = row[:4]
        if lab in ("entailment", "neutral", "contradiction") and is_eval(p, 0.15) == want_eval:
            out.append(Pair(p, h, lab, "mnli"))
    cf = "test.tsv" if want_eval else "train.tsv"
    for row in read_tsv(data / "nli/counterfactual_snli/all_combined" / cf):
        if len(row) >= 3 and row[2] in ("entailment", "neutral", "contradiction"):
            out.append(Pair(row[0], row[1], row[2], "cf_snli"))
    for r in read_jsonl(data / "nli/breaking_nli.jsonl"):
        lab = r.get("gold_label")
        if lab in ("entailment", "neutral", "contradiction") and is_eval(r["sentence1"], 0.15) == want_eval:
            out.append(Pair(r["sentence1"], r["sentence2"], lab, "breaking_nli"))
    return out


def memory_pairs(data: Path, split: str) -> list[Pair]:
    """(old, new, restates|corrects|adds) pairs for memory admission."""
    want_eval = split == "eval"
    nli_map = {"entailment": "restates", "contradiction": "corrects", "neutral": "adds"}
    out: list[Pair] = []
    # counterfactual SNLI minimal edits: the revised sentences flip the label with a small edit
    cf = "test.tsv" if want_eval else "train.tsv"
    for sub in ("revised_hypothesis", "revised_premise"):
        for row in read_tsv(data / "nli/counterfactual_snli" / sub / cf):
            if len(row) >= 3 and row[2] in nli_map:
                out.append(Pair(row[0], row[1], nli_map[row[2]], "cf_snli"))
    # PAWS: same words; 1 = same meaning (restates), 0 = different meaning (corrects)
    paws = "paws_wiki_test.tsv" if want_eval else "paws_wiki_dev.tsv"
    for row in read_tsv(data / "nli" / paws, header=False):
        if len(row) >= 4 and row[3] in ("0", "1"):
            out.append(Pair(row[1], row[2], "restates" if row[3] == "1" else "corrects", "paws"))
    if not want_eval:
        for r in read_jsonl(data / "nli/breaking_nli.jsonl"):
            lab = r.get("gold_label")
            if lab in nli_map and not is_eval(r["sentence1"], 0.15):
                out.append(Pair(r["sentence1"], r["sentence2"], nli_map[lab], "breaking_nli"))
    fever_files = ["fever_symmetric_test.jsonl"] if want_eval else [
        "fever_symmetric_full.jsonl", "fever_symmetric_generated.jsonl", "fever_symmetric_dev.jsonl"]
    fmap = {"SUPPORTS": "restates", "REFUTES": "corrects"}
    for fn in fever_files:
        for r in read_jsonl(data / "nli/fever_symmetric" / fn):
            ev = r.get("evidence_sentence") or r.get("evidence")
            if r.get("label") in fmap and ev:
                out.append(Pair(_clean_wiki(ev), _clean_wiki(r["claim"]), fmap[r["label"]], "fever_sym"))
    vmap = {"supports": "restates", "refutes": "corrects", "not enough info": "adds"}
    vfiles = ["test.jsonl"] if want_eval else [f"train_{i}.jsonl" for i in range(5)]
    for fn in vfiles:
        for r in read_jsonl(data / "nli/samples/vitaminc" / fn):
            if r.get("label") in vmap:
                out.append(Pair(_clean_wiki(r["evidence"]), _clean_wiki(r["claim"]), vmap[r["label"]], "vitaminc"))
    return out


def _clean_wiki(s: str) -> str:
    s = s.replace("-LRB-", "(").replace("-RRB-", ")").replace("-LSB-", "[").replace("-RSB-", "]")
    s = re.sub(r"\s+([.,;:)\]'])", r"\1", s)
    s = re.sub(r"([(\[])\s+", r"\1", s)
    return s.replace(" 's", "'s").strip()


_DETERMINERS = frozenset({
    "a", "an", "the", "two", "three", "four", "five", "some", "several", "many", "one", "people",
    "men", "women", "children", "kids", "someone", "somebody", "nobody", "there", "they", "he",
    "she", "it", "we",
})
_PERSONS = frozenset({
    "man", "men", "woman", "women", "person", "people", "boy", "boys", "girl", "girls", "child",
    "children", "kid", "kids", "player", "players", "someone", "somebody", "lady", "guy", "worker",
    "workers", "crowd", "team",
})
_COPULA = re.compile(r"^(?P<subj>.+?)\s+(?P<aux>is|are|was|were)\s+(?P<rest>.+)$")
_YES_NO = ("Is it true that {}?", "Is it the case that {}?", "Can you confirm that {}?", "Is it so that {}?")


def as_question(p: Pair, rng: random.Random) -> tuple[str, str, str] | None:
    """An NLI pair's hypothesis asked as a question about its premise: (question, passage, label).

    A question has no truth value, so a passage never contradicts it: a yes/no question is
    answered by a premise that entails *or* contradicts the statement (label entailment, as QNLI's
    answering passages are), and left open by a neutral one; a who-question (from entailed or
    neutral pairs only: a contradicting premise names nobody) is answered only when entailed.
    Short premises with names and numbers are what QNLI's long sentences lacked.
    """
    h = p.b.strip().rstrip(".!").strip()
    if not h or "?" in h:
        return None
    m = _COPULA.match(h)
    first = h.split()[0].lower()
    lower = h[0].lower() + h[1:] if first in _DETERMINERS else h
    roll = rng.random()
    if m and roll < 0.4:
        subj = m["subj"][0].lower() + m["subj"][1:] if first in _DETERMINERS else m["subj"]
        return f"{m['aux'].capitalize()} {subj} {m['rest']}?", p.a, "neutral" if p.label == "neutral" else "entailment"
    if m and roll < 0.6 and p.label != "contradiction" and _PERSONS & set(m["subj"].lower().split()):
        aux = "was" if m["aux"] in ("was", "were") else "is"
        return f"Who {aux} {m['rest']}?", p.a, p.label
    return rng.choice(_YES_NO).format(lower), p.a, "neutral" if p.label == "neutral" else "entailment"


def relevance_pairs(data: Path, split: str) -> list[tuple[str, str, bool, str]]:
    """(query, passage, relevant, source)."""
    want_eval = split == "eval"
    out = []
    rows = []
    for row in read_tsv(data / "nli/qnli_dev.tsv"):
        if len(row) >= 4 and row[3] in ("entailment", "not_entailment"):
            rows.append(row)
    sentences = [r[2] for r in rows]
    rng = random.Random(7)
    for row in rows:
        _, q, s, lab = row[:4]
        if is_eval(q, 0.2) != want_eval:
            continue
        out.append((q, s, lab == "entailment", "qnli"))
        if rng.random() < 0.25:  # an easy negative: a passage from elsewhere
            out.append((q, rng.choice(sentences), False, "qnli_random"))
    return out


def evidence_pairs(data: Path, split: str) -> list[tuple[str, str, bool, str]]:
    """(claim, evidence, supported, source) from WiCE (plus FEVER / VitaminC for training)."""
    want_eval = split == "eval"
    out = []
    for r in read_jsonl(data / "evidence/wice/oracle_chunks_claim_dev.jsonl"):
        lab = r.get("label")
        if lab not in ("supported", "not_supported") or is_eval(r["claim"], 0.2) != want_eval:
            continue
        ev = " ".join(s for s in r["evidence"] if s)
        out.append((r["claim"], ev[:1200], lab == "supported", "wice"))
    if not want_eval:
        for fn in ["fever_symmetric_full.jsonl", "fever_symmetric_generated.jsonl"]:
            for r in read_jsonl(data / "nli/fever_symmetric" / fn):
                ev = r.get("evidence_sentence")
                if ev and r.get("label") in ("SUPPORTS", "REFUTES"):
                    out.append((_clean_wiki(r["claim"]), _clean_wiki(ev), r["label"] == "SUPPORTS", "fever_sym"))
        for i in range(5):
            for r in read_jsonl(data / f"nli/samples/vitaminc/train_{i}.jsonl"):
                out.append((_clean_wiki(r["claim"]), _clean_wiki(r["evidence"]), r["label"] == "supports", "vitaminc"))
    return out


# ---- injection ---------------------------------------------------------------------------
BIPIA_EVAL_TEXT = {"Persuasion", "Anagramming", "Language Translation"}
BIPIA_EVAL_CODE = {"Cryptocurrency Mining", "Memory Scanning"}
_PREFIXES = [
    "", "", "", "Also, ", "Before you answer, ", "IMPORTANT: ", "Note to the AI assistant: ",
    "[system] ", "P.S. ", "Assistant, ", "<!-- ", "### Instruction: ",
]


def _bipia_context(r: dict[str, Any], kind: str) -> str:
    if kind == "code":
        ctx = "\n".join(r.get("context") or [])
        return ctx
    return r.get("context", "")


def _window(text: str, rng: random.Random, size: int = 450) -> str:
    if len(text) <= size:
        return text
    start = rng.randrange(0, len(text) - size)
    return text[start:start + size]


def _insert(ctx: str, attack: str, rng: random.Random) -> str:
    breaks = [m.end() for m in re.finditer(r"(?<=[.!?\n])\s", ctx)] or [len(ctx)]
    pos = rng.choice([0, len(ctx)] + breaks)
    pre = rng.choice(_PREFIXES)
    return (ctx[:pos].rstrip() + " " + pre + attack + " " + ctx[pos:].lstrip()).strip()


def injection_items(data: Path, split: str, seed: int = 0) -> list[tuple[str, str | None, bool, str]]:
    """(text, user task or None, is_injection, source)."""
    want_eval = split == "eval"
    rng = random.Random(seed + (1 if want_eval else 0))
    out: list[tuple[str, str | None, bool, str]] = []
    pos_texts: list[str] = []
    for r in read_jsonl(data / "injection/deepset_train.jsonl"):
        if is_eval(r["text"], 0.2) == want_eval:
            out.append((r["text"], None, r["label"] == 1, "deepset"))
            if r["label"] == 1:
                pos_texts.append(r["text"])
    with open(data / "injection/jailbreak_train_balanced.csv", encoding="utf-8", newline="") as f:
        for r in csv.DictReader(f):
            if is_eval(r["prompt"], 0.2) == want_eval:
                out.append((r["prompt"][:1500], None, r["type"] == "jailbreak", "jailbreak"))
                if r["type"] == "jailbreak" and len(r["prompt"]) < 400:
                    pos_texts.append(r["prompt"])
    text_attacks = json.loads((data / "injection/bipia/text_attack_train.json").read_text())
    code_attacks = json.loads((data / "injection/bipia/code_attack_train.json").read_text())
    for kind in ("email", "table", "code"):
        attacks = code_attacks if kind == "code" else text_attacks
        held = BIPIA_EVAL_CODE if kind == "code" else BIPIA_EVAL_TEXT
        pool = [a for cat, lst in attacks.items() if (cat in held) == want_eval for a in lst]
        for r in read_jsonl(data / f"injection/bipia/{kind}/train.jsonl"):
            ctx = _bipia_context(r, kind)
            if not ctx or is_eval(ctx[:200], 0.2) != want_eval:
                continue
            task = r.get("question") or ("Answer the question about this code." if kind == "code" else None)
            reps = 2 if want_eval else 6
            for _ in range(reps):
                w = _window(ctx, rng)
                out.append((w, task, False, f"bipia_{kind}"))
                out.append((_insert(w, rng.choice(pool), rng), task, True, f"bipia_{kind}"))
    # attacks hidden in ordinary passages (training only): QNLI sentences with an injection inside
    if not want_eval:
        passages = [row[2] for row in read_tsv(data / "nli/qnli_dev.tsv") if len(row) >= 4 and not is_eval(row[1], 0.2)]
        rng.shuffle(passages)
        for i, p in enumerate(passages[:1200]):
            if i % 2 == 0 and pos_texts:
                out.append((_insert(p, rng.choice(pos_texts), rng), None, True, "hidden_in_passage"))
            else:
                out.append((p, None, False, "qnli_passage"))
        with open(data / "intents/banking77_train.csv", encoding="utf-8", newline="") as f:
            benign = [r["text"] for r in csv.DictReader(f)]
        for t in rng.sample(benign, 400):
            out.append((t, None, False, "banking77_benign"))
    return out


# ---- tools and intents -------------------------------------------------------------------
@dataclass
class ToolItem:
    request: str
    gold: str | None  # None = no tool fits
    tools: dict[str, str | None]  # candidate name -> description (may include gold)
    source: str
    pool: dict[str, str | None] = field(default_factory=dict)  # where distractors come from


def _short(desc: str | None, words: int = 30) -> str | None:
    if desc is None:
        return None
    parts = desc.split()
    return " ".join(parts[:words]) + (" ..." if len(parts) > words else "")


def _bfcl_items(data: Path, name: str) -> list[dict[str, Any]]:
    return list(read_jsonl(data / f"tools/bfcl/BFCL_v4_{name}.json"))


def _bfcl_request(item: dict[str, Any]) -> str:
    return " ".join(m["content"] for turn in item["question"] for m in turn if m.get("role") == "user")


def _humanise(name: str) -> str:
    return name.replace("_", " ")


def tool_items(data: Path, split: str, seed: int = 0) -> list[ToolItem]:
    """Raw requests with their gold tool and the tool pool they come from."""
    want_eval = split == "eval"
    out: list[ToolItem] = []
    # MetaTool
    des = json.loads((data / "tools/metatool/plugin_des.json").read_text())
    with open(data / "tools/metatool/all_clean_data.csv", encoding="utf-8", newline="") as f:
        for r in csv.DictReader(f):
            if r["Tool"] in des and is_eval(r["Query"], 0.15) == want_eval:
                out.append(ToolItem(r["Query"], r["Tool"], {}, "metatool", des))
    # CLINC150 (train for training, val for evaluation) incl. out-of-scope
    clinc = json.loads((data / "intents/clinc150_train_val.json").read_text())
    rows = clinc["val"] + clinc["oos_val"] if want_eval else clinc["train"] + clinc["oos_train"]
    intents = sorted({lab for _, lab in clinc["train"]})
    pool = dict.fromkeys(intents)
    for text, lab in rows:
        out.append(ToolItem(text, None if lab == "oos" else lab, {}, "clinc150", pool))
    # Banking77
    with open(data / "intents/banking77_train.csv", encoding="utf-8", newline="") as f:
        brows = list(csv.DictReader(f))
    bpool = dict.fromkeys(sorted({r["category"] for r in brows}))
    for r in brows:
        if is_eval(r["text"], 0.15) == want_eval:
            out.append(ToolItem(r["text"], r["category"], {}, "banking77", bpool))
    if not want_eval:
        # BFCL simple_python and parallel_multiple train; multiple / irrelevance are evaluation
        fpool: dict[str, str | None] = {}
        items = _bfcl_items(data, "simple_python") + _bfcl_items(data, "parallel_multiple")
        for it in items:
            for fn in it["function"]:
                fpool[fn["name"]] = fn.get("description")
        for it in _bfcl_items(data, "simple_python"):
            fn = it["function"][0]
            out.append(ToolItem(_bfcl_request(it), fn["name"], {}, "bfcl_simple", fpool))
    return out


def bfcl_eval(data: Path) -> tuple[list[ToolItem], list[ToolItem]]:
    """BFCL multiple (gold from possible_answer) and irrelevance (no tool fits)."""
    answers = {}
    for a in read_jsonl(data / "tools/bfcl/possible_answer/BFCL_v4_multiple.json"):
        answers[a["id"]] = next(iter(a["ground_truth"][0]))
    multiple = []
    for it in _bfcl_items(data, "multiple"):
        tools = {fn["name"]: fn.get("description") for fn in it["function"]}
        multiple.append(ToolItem(_bfcl_request(it), answers[it["id"]], tools, "bfcl_multiple"))
    irrelevance = []
    for it in _bfcl_items(data, "irrelevance"):
        tools = {fn["name"]: fn.get("description") for fn in it["function"]}
        irrelevance.append(ToolItem(_bfcl_request(it), None, tools, "bfcl_irrelevance"))
    return multiple, irrelevance


def _candidates(item: ToolItem, rng: random.Random, k: int) -> dict[str, str | None]:
    """Gold (if any) plus k-1 (or k) distractors from the item's pool, shuffled."""
    if item.tools:
        return item.tools
    names = [n for n in item.pool if n != item.gold]
    chosen = rng.sample(names, min(len(names), k - (1 if item.gold else 0)))
    if item.gold:
        chosen.append(item.gold)
    rng.shuffle(chosen)
    return {n: _short(item.pool[n]) for n in chosen}


# --------------------------------------------------------------------------------------------
# examples
# --------------------------------------------------------------------------------------------


@dataclass
class Example:
    task: str
    source: str
    wording: str
    hypothesis: str
    state: str
    label: float
    #: Pairs sharing a non-empty group are the options or levels of one question: training scores
    #: them with a softmax over the group as well. Empty for a Noul (and for the mixtures built
    #: before groups existed, whose rows and hashes stay as they were).
    group: str = ""

    def row(self) -> dict[str, Any]:
        row = self.__dict__.copy()
        if not row["group"]:
            del row["group"]
        return row


def _noul_example(task: str, source: str, w: Any, q: Noul, state: Any, label: bool) -> Example:
    y = (not label) if getattr(w, "invert", False) else label
    return Example(task, source, w.id, noul_hypothesis(q), state_text(focus(q, state)), float(y))


def _choice_examples(task: str, source: str, w: W.ChoiceWording, q: Choice, state: Any,
                     gold: str | None) -> list[Example]:
    hyps = choice_hypotheses(q)
    st = state_text(focus(q, state))
    out = []
    for name, hyp in zip(q.options, hyps, strict=True):
        is_none = w.none_option is not None and name == w.none_option[0]
        y = (gold is None) if is_none else (name == gold)
        out.append(Example(task, source, w.id, hyp, st, float(y)))
    return out


def _maybe_swap_case(rng: random.Random, name: str) -> str:
    return _humanise(name) if rng.random() < 0.5 else name


def _balanced(items: list[Any], pos: Any, n: int, pos_frac: float, rng: random.Random) -> list[Any]:
    p = [x for x in items if pos(x)]
    q = [x for x in items if not pos(x)]
    rng.shuffle(p)
    rng.shuffle(q)
    n_p = min(len(p), int(n * pos_frac))
    n_q = min(len(q), n - n_p)
    return p[:n_p] + q[:n_q]


def _cap_sources(items: list[Any], source_of: Any, cap: int, rng: random.Random) -> list[Any]:
    by: dict[str, list[Any]] = {}
    for x in items:
        by.setdefault(source_of(x), []).append(x)
    out = []
    for lst in by.values():
        rng.shuffle(lst)
        out.extend(lst[:cap])
    return out


#: pairs per task in the default mixture (approximate: choices add one pair per option)
DEFAULT_SIZES = {
    "contradiction": 5000,
    "entailment": 3500,
    "nli_choice": 900,  # examples x 3 options
    "correction": 3500,
    "restatement": 3500,
    "adds": 1500,
    "memory_choice": 800,  # x 3
    "relevance": 5000,
    "evidence": 2000,
    "injection": 7000,
    "tool_choice": 2000,  # x ~4.5 options
    "tool_gate": 3000,
}


_STOP = frozenset(["a", "an", "the", "to", "of", "for", "in", "on", "at", "by", "with", "and", "or", "is", "are", "be", "my", "me", "i", "you", "your", "it", "this", "that", "what", "how", "can", "do", "does", "please", "from", "into", "get"])


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP and len(w) > 1}


def _closest_tools(it: ToolItem, names: list[str], n: int) -> list[str]:
    """The `n` pool tools sharing the most words with the request (name and description)."""
    req = _words(it.request)

    def overlap(name: str) -> int:
        return len(req & _words(f"{name.replace('_', ' ')} {it.pool.get(name) or ''}"))

    return sorted(names, key=lambda nm: (-overlap(nm), nm))[:max(n, 1)]


def _tool_choice_examples(it: ToolItem, w: W.ChoiceWording, rng: random.Random,
                          hard_tool_negatives: float) -> list[Example]:
    """One tool Choice over a few candidates, one yes/no pair per option (none when it cannot be asked).

    With `hard_tool_negatives`, half that share is asked over the pool's tools closest to the
    request without the gold one: every option's hypothesis is a "no", so a request that no tool
    fits scores low on all of them and the highest option can serve as the "any tool" gate.
    """
    cands = _candidates(it, rng, rng.randint(3, 6))
    no_fit = False
    if hard_tool_negatives > 0 and not it.tools and rng.random() < hard_tool_negatives / 2:
        near = _closest_tools(it, [n for n in it.pool if n != it.gold], len(cands))
        cands, no_fit = {n: _short(it.pool[n]) for n in near}, True
    if it.source in ("clinc150", "banking77"):
        cands = {_maybe_swap_case(rng, n): d for n, d in cands.items()}
        gold = next((n for n in cands if n.replace(" ", "_") == it.gold), None) if it.gold else None
    else:
        gold = it.gold
    if no_fit:
        gold = None
    elif w.none_option is None and gold is None:
        return []
    return _choice_examples("tool_choice", it.source, w, w.question(cands), w.state(it.request), gold)


def build_mixture(data: Path = DEFAULT_DATA, seed: int = 13, scale: float = 1.0,
                  weights: dict[str, float] | None = None, hard_tool_negatives: float = 0.0,
                  question_pairs: int = 0, paws_passes: int = 0) -> list[Example]:
    """The shuffled training pairs. `scale` multiplies every task's size, `weights` single tasks'.

    `hard_tool_negatives` is the share of "does any tool fit" rosters whose distractors are the
    pool's tools sharing the most words with the request (BFCL irrelevance-style: related tools
    that still do not fit) rather than random ones, and half that share of tool Choices is asked
    over the closest tools without the gold one (every option a "no"), so the highest option's
    yes-probability can serve as the gate too; 0 draws no extra randomness, so mixtures built
    before it existed are rebuilt identically.

    `question_pairs` NLI pairs are also asked as questions in the NLI Choice (`as_question`), so
    that a passage answering a question is never read as contradicting it; 0 (the default) draws
    no randomness either.

    `paws_passes` asks every PAWS training pair that many more times, each in a random correction,
    restatement or memory-Choice wording. PAWS (same words, same or different meaning) is the one
    memory task the encoder learns only from many passes over its few thousand pairs; under the
    per-source cap it sees a fifth of them once. 0 draws no randomness.

    One `rng` serves every family in turn, so the families are built in this fixed order (and each
    draws in its own fixed order): a recorded mixture's hash only reproduces if neither changes.
    """
    rng = random.Random(seed)
    weights = weights or {}
    unknown = sorted(set(weights) - set(DEFAULT_SIZES))
    if unknown:
        raise ValueError(f"unknown task(s) in weights: {unknown}; known: {sorted(DEFAULT_SIZES)}")
    sizes = {k: max(0, int(v * scale * weights.get(k, 1.0))) for k, v in DEFAULT_SIZES.items()}
    ex: list[Example] = []
    ex += _nli_examples(data, scale, sizes, question_pairs, rng)
    ex += _memory_examples(data, scale, sizes, paws_passes, rng)
    ex += _relevance_evidence_examples(data, scale, sizes, rng)
    ex += _injection_examples(data, scale, sizes, seed, rng)
    ex += _tool_examples(data, scale, sizes, seed, hard_tool_negatives, rng)
    rng.shuffle(ex)
    return ex


def _pick(rng: random.Random, task: str) -> Any:
    """A random training wording of `task`."""
    return rng.choice(W.train_wordings(task))


def _nli_examples(data: Path, scale: float, sizes: dict[str, int], question_pairs: int,
                  rng: random.Random) -> list[Example]:
    """Contradiction and entailment Nouls, the NLI Choice, QNLI pairs and NLI pairs asked as questions."""
    ex: list[Example] = []
    nli = _cap_sources(nli_pairs(data, "train"), lambda p: p.source, int(6000 * scale), rng)
    for p in _balanced(nli, lambda p: p.label == "contradiction", sizes["contradiction"], 0.45, rng):
        w = _pick(rng, "contradiction")
        ex.append(_noul_example("contradiction", p.source, w, w.question(), w.state(p.a, p.b),
                                p.label == "contradiction"))
    for p in _balanced(nli, lambda p: p.label == "entailment", sizes["entailment"], 0.45, rng):
        w = _pick(rng, "entailment")
        ex.append(_noul_example("entailment", p.source, w, w.question(), w.state(p.a, p.b), p.label == "entailment"))
    for p in rng.sample(nli, min(len(nli), sizes["nli_choice"])):
        w = _pick(rng, "nli_choice")
        q = w.question(dict(W.NLI_OPTIONS))
        ex.extend(_choice_examples("nli_choice", p.source, w, q, w.state(p.a, p.b), p.label))
    # A question cannot be contradicted by a passage that answers it (or by one that does not):
    # without these the NLI Choice, asked of (question, passage) by the passage gate, filed
    # answering passages as contradictions. QNLI pairs: answers → entailment, others → neutral.
    qnli = [r for r in relevance_pairs(data, "train") if r[3] == "qnli"]
    for q_, s_, y, src in rng.sample(qnli, min(len(qnli), sizes["nli_choice"] // 4)):
        w = _pick(rng, "nli_choice")
        q = w.question(dict(W.NLI_OPTIONS))
        ex.extend(_choice_examples("nli_choice", "qnli", w, q, w.state(q_, s_), "entailment" if y else "neutral"))
    if question_pairs > 0:
        asked = (as_question(p, rng) for p in rng.sample(nli, min(len(nli), 2 * question_pairs)))
        for q_, s_, lab in [x for x in asked if x is not None][:question_pairs]:
            w = _pick(rng, "nli_choice")
            q = w.question(dict(W.NLI_OPTIONS))
            ex.extend(_choice_examples("nli_choice", "nli_as_question", w, q, w.state(q_, s_), lab))
    return ex


def _memory_examples(data: Path, scale: float, sizes: dict[str, int], paws_passes: int,
                     rng: random.Random) -> list[Example]:
    """Correction, restatement and adds Nouls, the memory Choice, then the extra PAWS passes."""
    ex: list[Example] = []
    all_mem = memory_pairs(data, "train")
    mem = _cap_sources(all_mem, lambda p: p.source, int(4000 * scale), rng)
    for task, lab in (("correction", "corrects"), ("restatement", "restates"), ("adds", "adds")):
        for p in _balanced(mem, lambda p, lab=lab: p.label == lab, sizes[task], 0.45, rng):
            w = _pick(rng, task)
            ex.append(_noul_example(task, p.source, w, w.question(), w.state(p.a, p.b), p.label == lab))
    for p in rng.sample(mem, min(len(mem), sizes["memory_choice"])):
        w = _pick(rng, "memory_choice")
        opts = dict(W.MEMORY_OPTIONS)
        if "second sentence a restatement or a correction" in w.instructions and p.label != "adds":
            opts.pop("adds")
        ex.extend(_choice_examples("memory_choice", p.source, w, w.question(opts), w.state(p.a, p.b), p.label))
    if paws_passes > 0:
        ex.extend(_paws_examples([p for p in all_mem if p.source == "paws"], paws_passes, rng))
    return ex


def _relevance_evidence_examples(data: Path, scale: float, sizes: dict[str, int],
                                 rng: random.Random) -> list[Example]:
    """Relevance Nouls (question, passage), then usable-evidence Nouls (claim, evidence)."""
    ex: list[Example] = []
    rel = relevance_pairs(data, "train")
    for q_, s, y, src in _balanced(rel, lambda r: r[2], sizes["relevance"], 0.45, rng):
        w = _pick(rng, "relevance")
        ex.append(_noul_example("relevance", src, w, w.question(), w.state(q_, s), y))
    evi = _cap_sources(evidence_pairs(data, "train"), lambda r: r[3], int(900 * scale), rng)
    for c, e, y, src in _balanced(evi, lambda r: r[2], sizes["evidence"], 0.5, rng):
        w = _pick(rng, "evidence")
        ex.append(_noul_example("evidence", src, w, w.question(), w.state(c, e), y))
    return ex


def _injection_examples(data: Path, scale: float, sizes: dict[str, int], seed: int,
                        rng: random.Random) -> list[Example]:
    """Prompt-injection Nouls (text, the task it arrived in)."""
    ex: list[Example] = []
    inj = _cap_sources(injection_items(data, "train", seed), lambda r: r[3], int(1800 * scale), rng)
    for text, task, y, src in _balanced(inj, lambda r: r[2], sizes["injection"], 0.45, rng):
        w = _pick(rng, "injection")
        ex.append(_noul_example("injection", src, w, w.question(), w.state(text, task), y))
    return ex


def _tool_examples(data: Path, scale: float, sizes: dict[str, int], seed: int, hard_tool_negatives: float,
                   rng: random.Random) -> list[Example]:
    """Tool Choices, then "does any tool fit" gate Nouls."""
    ex: list[Example] = []
    tools = tool_items(data, "train", seed)
    tools = _cap_sources(tools, lambda t: t.source, int(3000 * scale), rng)
    for it in rng.sample(tools, min(len(tools), sizes["tool_choice"])):
        ex.extend(_tool_choice_examples(it, _pick(rng, "tool_choice"), rng, hard_tool_negatives))
    for it in rng.sample(tools, min(len(tools), sizes["tool_gate"])):
        ex.append(_tool_gate_example(it, _pick(rng, "tool_gate"), rng, hard_tool_negatives))
    return ex


def _tool_gate_example(it: ToolItem, w: Any, rng: random.Random, hard_tool_negatives: float) -> Example:
    """One gate Noul: a roster of 1-5 tools that holds the gold one half the time (when there is one)."""
    k = rng.randint(1, 5)
    fits = it.gold is not None and rng.random() < 0.5
    names = [n for n in it.pool if n != it.gold]
    if hard_tool_negatives > 0 and rng.random() < hard_tool_negatives:
        names = _closest_tools(it, names, 3 * k)
    chosen = rng.sample(names, min(k, len(names)))
    if fits and it.gold is not None:  # `fits` implies a gold tool; the test is for the type checker
        chosen[rng.randrange(len(chosen))] = it.gold
    listing = [f"{_maybe_swap_case(rng, n)}: {_short(it.pool[n], 20)}" if it.pool[n] else _maybe_swap_case(rng, n)
               for n in chosen]
    return _noul_example("tool_gate", it.source, w, w.question(), w.state(it.request, listing), fits)


def _paws_examples(paws: list[Pair], passes: int, rng: random.Random) -> list[Example]:
    """Every PAWS pair `passes` times, in random memory wordings: two Nouls and the two-way Choice."""
    ex: list[Example] = []
    for _ in range(passes):
        for p in rng.sample(paws, len(paws)):
            task = rng.choice(("correction", "restatement", "memory_choice"))
            w = rng.choice(W.train_wordings(task))
            if task == "memory_choice":
                q = w.question(dict(W.MEMORY_TWO_WAY))
                ex.extend(_choice_examples(task, "paws", w, q, w.state(p.a, p.b), p.label))
            else:
                want = "corrects" if task == "correction" else "restates"
                ex.append(_noul_example(task, "paws", w, w.question(), w.state(p.a, p.b), p.label == want))
    return ex


def mixture_hash(examples: Iterable[Example]) -> str:
    h = hashlib.sha256()
    for e in examples:
        h.update(json.dumps(e.row(), sort_keys=True, ensure_ascii=False).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()[:16]


def write_mixture(examples: list[Example], path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(e.row(), ensure_ascii=False) + "\n" for e in examples)
    return mixture_hash(examples)


def read_mixture(path: Path) -> list[Example]:
    return [Example(**r) for r in read_jsonl(path)]


# --------------------------------------------------------------------------------------------
# held-out evaluation sets (questions in held-out wordings, items from held-out splits)
# --------------------------------------------------------------------------------------------


@dataclass
class EvalItem:
    task: str
    source: str
    wording: str
    question: Noul | Choice
    state: Any
    label: Any  # bool for Nouls (after inversion), option name for Choices
    extra: dict[str, Any] = field(default_factory=dict)


def _noul_eval(task: str, src: str, w: Any, state: Any, label: bool, **extra: Any) -> EvalItem:
    y = (not label) if getattr(w, "invert", False) else label
    return EvalItem(task, src, w.id, w.question(), state, y, extra)


def build_eval(data: Path = DEFAULT_DATA, seed: int = 5, per_task: int = 600) -> dict[str, list[EvalItem]]:
    """Held-out items per evaluation task, each asked in a held-out wording."""
    rng = random.Random(seed)
    sets: dict[str, list[EvalItem]] = {}

    def hw(task: str) -> Any:
        return rng.choice(W.held_out_wordings(task))

    nli = nli_pairs(data, "eval")
    sample = _cap_sources(nli, lambda p: p.source, per_task // 3, rng)
    items = []
    for p in sample:
        w = hw("contradiction")
        items.append(_noul_eval("contradiction", p.source, w, w.state(p.a, p.b), p.label == "contradiction"))
    sets["contradiction"] = items

    mem = [p for p in memory_pairs(data, "eval") if p.label in ("restates", "corrects")
           and p.source in ("paws", "cf_snli")]
    mem = _cap_sources(mem, lambda p: p.source, per_task // 2, rng)
    items = []
    for p in mem:
        w = rng.choice([w for w in W.held_out_wordings("memory_choice")])
        q = w.question(dict(W.MEMORY_TWO_WAY))
        items.append(EvalItem("correction_vs_restatement", p.source, w.id, q, w.state(p.a, p.b), p.label,
                              {"a": p.a, "b": p.b}))
    sets["correction_vs_restatement"] = items

    rel = [r for r in relevance_pairs(data, "eval") if r[3] == "qnli"]
    rel = rng.sample(rel, min(len(rel), per_task))
    items = []
    for q_, passage, y, src in rel:
        w = hw("relevance")
        items.append(_noul_eval("relevance", src, w, w.state(q_, passage), y, query=q_, passage=passage))
    sets["relevance"] = items
    # WiCE has 87 held-out pairs: each is asked in every held-out evidence wording, so that no one
    # phrasing decides the figure. The one draw per pair that picked its wording while there was a
    # single one is still made, so the sets built after this one stay as every earlier figure saw them.
    wice = evidence_pairs(data, "eval")
    for _ in wice:
        rng.choice(W.held_out_wordings("evidence")[:1])
    sets["evidence_wice"] = [_noul_eval("evidence", src, w, w.state(c, ev), y, query=c, passage=ev)
                             for c, ev, y, src in wice for w in W.held_out_wordings("evidence")]

    inj = injection_items(data, "eval", seed)
    inj = _cap_sources(inj, lambda r: r[3], per_task // 4, rng)
    items = []
    for text, task_text, y, src in inj:
        w = hw("injection")
        items.append(_noul_eval("injection", src, w, w.state(text, task_text), y, text=text))
    sets["injection"] = items

    multiple, irrelevance = bfcl_eval(data)
    tw = W.held_out_wordings("tool_choice")
    sets["tool_bfcl_multiple"] = [
        EvalItem("tool_choice", it.source, tw[0].id, tw[0].question({k: _short(v) for k, v in it.tools.items()}),
                 tw[0].state(it.request), it.gold, {"request": it.request, "tools": it.tools})
        for it in multiple]
    gw = W.held_out_wordings("tool_gate")
    gate, listed = [], []
    for it in multiple + irrelevance:
        w = rng.choice(gw)
        lines = [f"{n}: {_short(d, 20)}" for n, d in it.tools.items()]
        extra = {"request": it.request, "tools": it.tools}
        # as `ToolSelector` asks it: each tool alone, the answer the max over them ("any" tool)
        each = [w.state(it.request, [line]) for line in lines]
        gate.append(EvalItem("tool_gate", it.source, w.id, w.question(), each[0], it.gold is not None,
                             {**extra, "each": each}))
        listed.append(EvalItem("tool_gate", it.source, w.id, w.question(), w.state(it.request, lines),
                               it.gold is not None, extra))
    sets["tool_gate_bfcl"] = gate
    sets["tool_gate_bfcl_listing"] = listed  # the whole roster in one state, for comparison
    other = [it for it in tool_items(data, "eval", seed) if it.gold is not None]
    other = _cap_sources(other, lambda t: t.source, per_task // 3, rng)
    items = []
    for it in other:
        w = rng.choice(tw)
        cands = _candidates(it, rng, 10)
        q = w.question(cands)
        items.append(EvalItem("tool_choice", it.source, w.id, q, w.state(it.request), it.gold,
                              {"request": it.request, "tools": cands}))
    sets["tool_intent_10way"] = items
    # The NLI Choice as the passage gate asks it, of a question and a passage: an answering passage
    # is entailment, another neutral, and neither is ever a contradiction (a question has no truth
    # value to contradict). Counts how often a passage is wrongly read as contradicting a question.
    qa = [r for r in relevance_pairs(data, "eval") if r[3] == "qnli"]
    items = []
    for q_, s_, y, src in rng.sample(qa, min(len(qa), per_task // 2)):
        w = rng.choice(W.held_out_wordings("nli_choice"))
        q = w.question(dict(W.NLI_OPTIONS))
        items.append(EvalItem("nli_choice", src, w.id, q, w.state(q_, s_), "entailment" if y else "neutral",
                              {"a": q_, "b": s_}))
    sets["question_passage_nli"] = items
    return sets


__all__ = [
    "DEFAULT_DATA",
    "DEFAULT_SIZES",
    "EvalItem",
    "Example",
    "build_eval",
    "build_mixture",
    "mixture_hash",
    "read_mixture",
    "write_mixture",
]

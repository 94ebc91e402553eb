"""Choices over many options: the cross-encoder alone, cosine, and a cosine shortlist then the model.

    python bench/many_options.py [--model DIR] [--n 300] [--keep 8,16,32]

A 150-option intent Choice (CLINC150's held-out `val` requests, options its 150 intent names) and
the written corpus's held-out long-roster Choices (`tools_many`, `intents_many`,
`categories_many`, any Choice of 16 options or more in the held-out groups and wordings). For
each item it prints top-1 of:

* **model** — the cross-encoder's own logit over every option (one pair per option);
* **judge** — `LocalJudge` asked the Choice as a user asks it: with a config's encoder blend and
  shortlist (docs/local-judge.md, "The encoder blend"), the answer it returns;
* **cosine** — the base encoder's (all-MiniLM-L6-v2, mean-pooled) cosine between the state and
  each option's own text ("name: description");
* **features cosine** — the same with the model's own `features` output (its mean-pooled
  encoder) reading each text alone, when the graph has one;
* **shortlist k** — the k options nearest by (features) cosine, then the model over those k.

Also recall@k of the shortlist (is the gold option among the k?), the ceiling of a shortlist stage.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from seams.judges.local.hypotheses import focus, hypotheses, option_texts, state_text  # noqa: E402
from seams.judges.local.runtime import load_session, machine  # noqa: E402
from seams.questions import Choice  # noqa: E402
from training.written import items  # noqa: E402


def clinc_items(data: Path, n: int) -> list[tuple[Any, Choice, str]]:
    d = json.loads((data / "intents/clinc150_train_val.json").read_text())
    intents = sorted({lab for _, lab in d["train"]})
    q = Choice(instructions="Which intent does the `request` express?",
               criteria={name: None for name in intents})
    rows = [r for r in d["val"] if r[1] != "oos"]
    rows = random.Random(11).sample(rows, min(n, len(rows)))
    return [({"request": text}, q, lab) for text, lab in rows]


def written_items(n: int) -> list[tuple[Any, Choice, str]]:
    out = [(it.state, it.question, it.label) for split in ("domains", "groups", "wordings") for it in items(split)
           if it.kind == "choice" and len(it.question.criteria) >= 16]
    return random.Random(12).sample(out, min(n, len(out)))


class FeatureEncoder:
    """Mean-pooled single-text embeddings from a model graph's `features` output."""

    def __init__(self, model_dir: Path) -> None:
        from tokenizers import Tokenizer

        cfg = json.loads((model_dir / "config.json").read_text())
        self.output = cfg.get("features")
        self.sess = load_session(model_dir / cfg["onnx"], None)  # LocalJudge's session: exact int8
        self.tok = Tokenizer.from_file(str(model_dir / cfg["tokenizer"]))
        self.tok.enable_truncation(max_length=256)
        self.cache: dict[str, np.ndarray] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        for t in texts:
            if t in self.cache:
                continue
            e = self.tok.encode(t)
            feed = {"input_ids": np.array([e.ids], dtype=np.int64),
                    "attention_mask": np.array([e.attention_mask], dtype=np.int64),
                    "token_type_ids": np.array([e.type_ids], dtype=np.int64)}
            v = self.sess.run([self.output], feed)[0][0]
            self.cache[t] = v / (np.linalg.norm(v) + 1e-9)
        return np.stack([self.cache[t] for t in texts])

    def sim(self, a: list[str], b: list[str]) -> np.ndarray:
        return (self.embed(a) * self.embed(b)).sum(1)


def evaluate(name: str, its: list[tuple[Any, Choice, str]], judge: Any, cos: Any, feat: Any,
             keeps: list[int]) -> dict[str, Any]:
    res: dict[str, list[float]] = {}

    def add(key: str, ok: bool) -> None:
        res.setdefault(key, []).append(float(ok))

    for state, q, gold in its:
        names = list(q.criteria)
        hyps = hypotheses(q)
        text = state_text(focus(q, state))
        logits = np.array(judge.logits([(h, text) for h in hyps])) if judge else None
        if logits is not None:
            add("model", names[int(np.argmax(logits))] == gold)
            # the judge as a user asks it: the Choice itself (its config's encoder blend and shortlist)
            add("judge (Choice as asked)", judge.judge.ask(state, {"q": q}).answers["q"].choice == gold)
        for label, enc in (("cosine", cos), ("features cosine", feat)):
            if enc is None:
                continue
            opts = option_texts(q)
            s = np.asarray(enc.sim(opts, [text] * len(opts)))
            add(label, names[int(np.argmax(s))] == gold)
            order = np.argsort(-s)
            for k in keeps:
                top = order[:k]
                add(f"{label} recall@{k}", gold in [names[i] for i in top])
                if logits is not None:
                    add(f"{label} shortlist {k} + model", names[int(top[np.argmax(logits[top])])] == gold)
    out = {k: round(float(np.mean(v)), 3) for k, v in res.items()}
    out["n"] = len(its)
    out["chance"] = round(float(np.mean([1 / len(q.criteria) for _, q, _ in its])), 4)
    print(f"\n{name} (n {len(its)}, chance {out['chance']})")
    for k, v in out.items():
        if k not in ("n", "chance"):
            print(f"  {k:40s} {v:.3f}")
    return out


class PairLogits:
    """The model's logit for (hypothesis, state) pairs, one pair a run as the judge runs it."""

    def __init__(self, model_dir: Path) -> None:
        from seams.judges.local import LocalJudge

        self.judge = LocalJudge(model_dir, intra_op_threads=2)

    def logits(self, pairs: list[tuple[str, str]]) -> list[float]:
        from seams.questions import Noul

        out = []
        for h, s in pairs:  # a Noul whose instructions are the hypothesis reads the same pair
            p = self.judge.ask(s, {"q": Noul(instructions=h)}).answers["q"].noul
            p = min(max(p, 1e-7), 1 - 1e-7)
            out.append(float(np.log(p / (1 - p))))
        return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--model", type=Path, default=ROOT / "seams" / "models" / "seams-minilm")
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--keep", default="8,16,32")
    ap.add_argument("--no-model", action="store_true", help="only the shortlists' recall (fast)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    print(machine().line(), flush=True)  # every figure names its machine
    keeps = [int(k) for k in args.keep.split(",")]
    judge = None if args.no_model else PairLogits(args.model)
    try:
        from model_quality import Cosine

        cos = Cosine(2)
    except Exception as exc:  # noqa: BLE001 - the baseline needs the [train] extra
        print("note: cosine baseline unavailable:", exc)
        cos = None
    feat = FeatureEncoder(args.model)
    if feat.output is None:
        feat = None
    out = {"model": str(args.model),
           "clinc150": evaluate("CLINC150 val, 150 intents", clinc_items(args.data, args.n), judge, cos, feat, keeps),
           "written_long": evaluate("written held-out Choices of 16+ options", written_items(args.n), judge, cos,
                                    feat, keeps)}
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

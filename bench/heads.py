"""Heads fitted from labels, on held-out sets no head was fitted on; and distillation from a teacher.

    python bench/heads.py --model-dir DIR [--sizes 50,100,200] [--repeats 3] [--limit N] [--set-limit NAME=N,...]
                          [--parts calibration,written,speed,distill] [--noise 0.03] [--cache DIR]
                          [--json OUT]

DIR is a model whose config names a `features` output (seams-minilm 0.6 or later).

1. **calibration** — the project's own calibration sets (`calibration/<seam>/fit.jsonl` and
   `heldout.jsonl`, asked through the built-in rubric of the same name): per question with at
   least 50 held-out labels, on the held-out file, zero-shot, calibration only (a calibrator
   fitted on N labels of the fit file), and heads + calibration fitted on the same N labels,
   N in `--sizes`, averaged over `--repeats` random draws. The calibrator over a head is fitted
   on the head's cross-fitted answers (5 folds at the C chosen for the full head), as
   `seams calibrate --heads` does.
2. **written** — the held-out domains of `../shared/data/written/` (`training.written.items(
   "domains")`: whole files the model never trained on), grouped by (file, question): each group
   with at least 80 labels is a one-question rubric; a random part of at least 30 items is held
   out and the heads are fitted on N of the rest.
3. **speed** — fitting a head on 1,000 labels of passage-gate (the full cross-validated fit, a
   Noul and a Choice), wall and CPU time, beside the model's own time answering those items (from
   its pass over the set); and answering with heads against without, the same states in
   alternating rounds in this process (best of 3 each).
4. **distill** — a teacher that is a real `seams serve` app (uvicorn on loopback) over a judge
   answering with a labelled set's gold labels, a share `--noise` of them wrong; the student is
   the local model with heads fitted on the teacher's answers only (`seams.calibration.distill`,
   target `--agreement` at `--confidence`); figures on the held-out half of the states.

Model passes are the slow part; `--cache DIR` keeps each set's answers and features on disk
(keyed by model id and file contents), so a re-run fits and measures only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from seams.calibration.dataset import LabelledItem, LabelledSet, load_jsonl  # noqa: E402
from seams.calibration.extract import question_data, transform_of  # noqa: E402
from seams.calibration.fit import FitOptions, _fit_question  # noqa: E402
from seams.calibration.head_fitting import DEFAULT_FOLDS, HeadFitter, collect, head_rows  # noqa: E402
from seams.calibration.run import RunResult  # noqa: E402
from seams.judges.local import LocalJudge  # noqa: E402
from seams.judges.local.headed import HeadedJudge  # noqa: E402
from seams.judges.local.runtime import machine  # noqa: E402
from seams.questions import Noul  # noqa: E402
from seams.rubric import Rubric, question_fingerprint  # noqa: E402

KEYS = {"noul": ("auroc", "brier", "ece"), "choice": ("top1", "brier", "ece"), "score": ("mae", "top1", "ece")}


# ----------------------------------------------------------------------------- model passes


def passed(rubric: Rubric, judge: LocalJudge, ds: LabelledSet, cache: Path | None, what: str) -> dict[str, Any]:
    """{item id: (answers, features)} for every item of `ds`, from the cache when it has them."""
    key = hashlib.sha256(f"{judge.model_id}|{rubric.hash}|{ds.hash}".encode()).hexdigest()[:16]
    path = cache / f"{what.replace('/', '_')}-{key}.pkl" if cache else None
    if path is not None and path.is_file():
        return pickle.loads(path.read_bytes())
    t0 = time.perf_counter()
    got = collect(rubric, judge, [it.state for it in ds.items])
    out = {"items": dict(zip([it.id for it in ds.items], got)), "seconds": time.perf_counter() - t0}
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pickle.dumps(out))
    return out


# ----------------------------------------------------------------------------- one question


def _run(model: str, answers: dict[str, Any]) -> RunResult:
    return RunResult(model=model, answers=answers)


def measure(qid: str, question: Any, fit_items: list[LabelledItem], held_items: list[LabelledItem],
            fit_pass: dict[str, Any], held_pass: dict[str, Any], sizes: list[int], repeats: int,
            judge: LocalJudge) -> dict[str, Any]:
    """Zero-shot, calibration only and heads + calibration on `held_items`, per N and draw."""
    kind = question.type
    held = LabelledSet(held_items, {qid: question})
    zero = question_data(held, _run(judge.model_id, {i.id: held_pass[i.id][0] for i in held_items}), qid)
    out: dict[str, Any] = {"kind": kind, "held_out": len(held_items), "fit_pool": len(fit_items),
                           "zero_shot": _pick(zero.metrics(None, n_boot=0), kind)}
    for n in sizes:
        if n > len(fit_items):
            continue
        cal_rows, head_rows_ = [], []
        for r in range(repeats):
            rng = np.random.default_rng(1000 * n + r)
            sample = [fit_items[j] for j in rng.choice(len(fit_items), size=n, replace=False)]
            fit_set = LabelledSet(sample, {qid: question})
            raw = question_data(fit_set, _run(judge.model_id, {i.id: fit_pass[i.id][0] for i in sample}), qid)
            cal, _ = _fit_question(raw, "auto", r)
            cal_rows.append(_pick(zero.metrics(transform_of({qid: cal} if cal else {}), n_boot=0), kind))
            head_rows_.append(_headed(qid, question, sample, held_items, fit_pass, held_pass, judge, kind, r))
        out[f"calibration@{n}"] = _mean(cal_rows)
        out[f"heads@{n}"] = _mean(head_rows_)
    return out


def _headed(qid: str, question: Any, sample: list[LabelledItem], held_items: list[LabelledItem],
            fit_pass: dict[str, Any], held_pass: dict[str, Any], judge: LocalJudge, kind: str, seed: int) -> dict:
    """A head fitted on `sample`, a calibrator on its cross-fitted answers, measured on `held_items`."""
    qs = {qid: question}
    feats = [fit_pass[i.id][1][qid] for i in sample]
    labels = [i.labels[qid] for i in sample]
    fitter = HeadFitter().fit(*head_rows(question, feats, labels))
    head = fitter.to_head(model=judge.model_id, fingerprint=question_fingerprint(question), kind=kind, n=len(sample))
    # cross-fitted answers on the sample, for the calibrator
    crossed = {}
    order = np.random.default_rng(seed).permutation(len(sample))
    for k in range(DEFAULT_FOLDS):
        out_fold = set(order[k::DEFAULT_FOLDS].tolist())
        rest = [j for j in range(len(sample)) if j not in out_fold]
        rows = head_rows(question, [feats[j] for j in rest], [labels[j] for j in rest])
        if len(np.unique(rows[2])) < 2:
            continue
        fold = HeadFitter(Cs=[fitter.C_]).fit(*rows).to_head(model=judge.model_id, fingerprint=head.fingerprint,
                                                              kind=kind, n=len(rest))
        hj = HeadedJudge(judge, {qid: fold})
        for j in out_fold:
            a, f = fit_pass[sample[j].id]
            crossed[sample[j].id] = hj.apply(a, f, qs, {qid: fold})
    full = HeadedJudge(judge, {qid: head})
    in_sample = [i for i in sample if i.id in crossed]
    qd_fit = question_data(LabelledSet(in_sample, qs), _run(full.model_id, crossed), qid)
    cal, _ = _fit_question(qd_fit, "auto", seed) if len(qd_fit) else (None, None)
    held_answers = {i.id: full.apply(*held_pass[i.id], qs, {qid: head}) for i in held_items}
    qd = question_data(LabelledSet(held_items, qs), _run(full.model_id, held_answers), qid)
    row = _pick(qd.metrics(transform_of({qid: cal} if cal else {}), n_boot=0), kind)
    row["C"] = fitter.C_
    row["logit_weight"] = fitter.logit_weight_
    return row


def _pick(m: dict[str, Any], kind: str) -> dict[str, float]:
    return {k: float(m[k]) for k in KEYS[kind] if m.get(k) is not None}


def _mean(rows: list[dict[str, float]]) -> dict[str, float]:
    keys = rows[0].keys()
    return {k: round(float(np.mean([r[k] for r in rows])), 4) for k in keys}


def _labelled(items: list[LabelledItem], qid: str) -> list[LabelledItem]:
    return [it for it in items if qid in it.labels]


# ----------------------------------------------------------------------------- parts


def calibration_sets(judge: LocalJudge, args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for d in sorted((ROOT / "calibration").iterdir()):
        fit_f, held_f = d / "fit.jsonl", d / "heldout.jsonl"
        if not (fit_f.is_file() and held_f.is_file()) or d.name in args.skip:
            continue
        if not (ROOT / "rubrics" / f"{d.name}.yaml").is_file():
            continue  # a set without a built-in rubric of its name is not benchmarked
        rubric = Rubric.builtin(d.name)
        fit, held = load_jsonl(fit_f, rubric.questions), load_jsonl(held_f, rubric.questions)
        if any(it.questions for it in fit.items + held.items):
            print(f"# {d.name}: lines carry their own questions; skipped", file=sys.stderr)
            continue
        cap = args.set_limit.get(d.name, args.limit)
        fit, held = _limit(fit, cap), _limit(held, cap)
        fp, hp = passed(rubric, judge, fit, args.cache, f"{d.name}/fit"), passed(rubric, judge, held, args.cache,
                                                                                f"{d.name}/heldout")
        for qid, q in rubric.questions.items():
            h = _labelled(held.items, qid)
            if len(h) < 50:
                continue
            res = measure(qid, q, _labelled(fit.items, qid), h, fp["items"], hp["items"], args.sizes, args.repeats,
                          judge)
            results[f"{d.name}/{qid}"] = res
            _show(f"{d.name}/{qid}", res)
    return results


def written_sets(judge: LocalJudge, args: argparse.Namespace) -> dict[str, Any]:
    from training.written import items as written_items

    groups: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for it in written_items("domains"):
        groups[(it.file, question_fingerprint(it.question))].append(it)
    results: dict[str, Any] = {}
    for (file, _), its in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        if len(its) < 80:
            continue
        q = its[0].question
        rubric = one_question_rubric(f"{file}-{q.type}", q, [it.state for it in its])
        ds = LabelledSet([LabelledItem(f"{it.line_id}/{it.qid}", it.state, {"q": it.label}) for it in its],
                         dict(rubric.questions))
        p = passed(rubric, judge, ds, args.cache, f"written-{file}-{ds.hash}")["items"]
        rng = np.random.default_rng(7)
        order = [ds.items[j] for j in rng.permutation(len(ds.items))]
        pool_n = max([n for n in args.sizes if len(order) - n >= 30] or [0])
        if not pool_n:
            continue
        pool, held = order[:pool_n], order[pool_n:]
        name = f"written/{file}: {str(q.instructions)[:48]}"
        res = measure("q", rubric.questions["q"], pool, held, p, p, args.sizes, args.repeats, judge)
        results[name] = res
        _show(name, res)
    return results


def one_question_rubric(name: str, question: Any, states: list[Any], *, rule: bool = False) -> Rubric:
    """A rubric asking only `question` (as "q") about `states` (their fields declared), with one
    rule with a review band when `rule`."""
    rules = [{"id": "q", "question": "q", "high": 0.7, "low": 0.3, "then": "yes", "else": "no"}] if rule else []
    if all(isinstance(s, dict) for s in states):
        fields = sorted({k for s in states for k in s})
        state: Any = {"type": "object", "fields": {k: None for k in fields}}
    else:
        state = {"type": "text"} if all(isinstance(s, str) for s in states) else {"type": "array"}
    spec = {"name": name, "state": state, "questions": {"q": question.wire()},
            "policy": {"outcomes": {"yes": "act", "no": "refuse"}, "rules": rules, "default": "no"}}
    return Rubric.loads(json.dumps(spec))


def _limit(ds: LabelledSet, limit: int | None) -> LabelledSet:
    if not limit or len(ds.items) <= limit:
        return ds
    rng = np.random.default_rng(0)
    keep = sorted(rng.choice(len(ds.items), size=limit, replace=False))
    return LabelledSet([ds.items[j] for j in keep], ds.questions, ds.path)


def speed(judge: LocalJudge, args: argparse.Namespace) -> dict[str, Any]:
    """Fit time on 1,000 labels beside the model's time; answering with and without heads.

    The passage-gate passes come from the calibration part's cache when it ran first."""
    out: dict[str, Any] = {}
    rubric = Rubric.builtin("passage-gate")
    cap = args.set_limit.get("passage-gate", args.limit)
    sets = [_limit(load_jsonl(ROOT / f"calibration/passage-gate/{f}.jsonl", rubric.questions), cap)
            for f in ("fit", "heldout")]
    passes = [passed(rubric, judge, ds, args.cache, f"passage-gate/{f}") for ds, f in zip(sets, ("fit", "heldout"))]
    items = [it for s in sets for it in s.items]
    by_id = {i: v for p in passes for i, v in p["items"].items()}
    per_item_s = sum(p["seconds"] for p in passes) / len(items)
    qs = rubric.questions
    fitted = {}
    for qid in ("evidence", "contradicts"):
        q = qs[qid]
        labelled = [it for it in items if qid in it.labels][:1000]
        rows = head_rows(q, [by_id[it.id][1][qid] for it in labelled], [it.labels[qid] for it in labelled])
        t0, c0 = time.perf_counter(), time.process_time()
        fitter = HeadFitter().fit(*rows)
        fit_s, fit_cpu = time.perf_counter() - t0, time.process_time() - c0
        model_s = per_item_s * len(labelled)
        fitted[qid] = fitter.to_head(model=judge.model_id, fingerprint=question_fingerprint(q), kind=q.type,
                                     n=len(labelled))
        out[f"fit_{len(labelled)}_{qid}"] = {"labels": len(labelled), "rows": len(rows[2]),
                                              "head_fit_wall_s": round(fit_s, 3), "head_fit_cpu_s": round(fit_cpu, 3),
                                              "model_answering_s": round(model_s, 1),
                                              "fit_over_model": round(fit_s / model_s, 4)}
        print(f"speed: head fit on {len(labelled)} labels ({q.type}, {len(rows[2])} pairs, 5 C x 5 folds): "
              f"{fit_s:.2f} s wall, {fit_cpu:.2f} s CPU; the model answering those items (its pass over the "
              f"set, per item) {model_s:.0f} s", flush=True)
    # answering with heads against without, the same states, alternating rounds
    states = [it.state for it in items[: args.answer_states]]
    headed = HeadedJudge(judge, fitted)
    plain_t, head_t = [], []
    for _ in range(3):
        t0 = time.perf_counter()
        judge.ask_many(states, qs)
        plain_t.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        headed.ask_many(states, qs)
        head_t.append(time.perf_counter() - t0)
    ratio = min(head_t) / min(plain_t)
    out[f"answering_{len(states)}_states"] = {"without_heads_s": round(min(plain_t), 3),
                                               "with_heads_s": round(min(head_t), 3), "ratio": round(ratio, 4),
                                               "rounds": {"without": plain_t, "with": head_t}}
    print(f"speed: {len(states)} passage-gate states, 4 questions, heads on 2: without heads {min(plain_t):.2f} s, "
          f"with heads {min(head_t):.2f} s (ratio {ratio:.3f}, best of 3 alternating rounds)", flush=True)
    return out


def distillation(judge: LocalJudge, args: argparse.Namespace) -> dict[str, Any]:
    """Teacher = `seams serve`'s app over gold labels with noise; student = heads on its answers."""
    from label_judge import LabelJudge
    from test_server import serving

    from seams.calibration.distill import distill
    from seams.judges.remote import RemoteJudge
    from seams.server import create_app

    out: dict[str, Any] = {}
    for seam, qid in args.distill:
        base = Rubric.builtin(seam)
        q = base.questions[qid]
        rows = [it for f in ("fit", "heldout") for it in load_jsonl(ROOT / f"calibration/{seam}/{f}.jsonl",
                                                                     base.questions).items if qid in it.labels]
        rows = rows[: args.limit * 2] if args.limit else rows
        rubric = one_question_rubric(f"distill-{seam}-{qid}", q, [it.state for it in rows], rule=isinstance(q, Noul))
        gold = LabelJudge([{"state": it.state, "labels": {"q": it.labels[qid]}} for it in rows], noise=args.noise)
        states = [(it.id, it.state) for it in rows]
        t0 = time.perf_counter()
        with serving(create_app(gold)) as url, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            teacher = RemoteJudge("gold-teacher-1", base_url=url)
            res = distill(rubric, states, teacher, judge, agreement=args.agreement,
                          options=FitOptions(n_boot=0, delta=1 - args.confidence))
            teacher.close()
        seconds = time.perf_counter() - t0
        gold_agree = np.mean([res.labelled.items[j].labels["q"] == rows[j].labels[qid] for j in range(len(rows))])
        block = res.rubric.calibration
        cuts = {rid: {"high": t.high, "low": t.low} for rid, t in (block.thresholds.items() if block else [])}
        entry = {"states": len(rows), "noise": args.noise, "teacher_vs_gold": round(float(gold_agree), 4),
                 "target_agreement": args.agreement, "confidence": args.confidence, "cut_points": cuts,
                 "agreement": res.agreement, "cascade": res.cascade, "notes": res.notes,
                 "seconds": round(seconds, 1)}
        out[f"{seam}/{qid}"] = entry
        c = res.cascade
        a = res.agreement["q"]
        print(f"distill {seam}/{qid}: {len(rows)} states, teacher noise {args.noise} (teacher = gold on "
              f"{gold_agree:.3f}); held out {a['n']}: local answers agree {a['agreement']:.3f}; cascade "
              + (f"answers {c['local_share']:.1%} locally, agreement {c['agreement']:.3f}" if c["n"] else "n/a")
              + f" (target {args.agreement} at confidence {args.confidence}; cut-points {cuts})", flush=True)
    return out


def summarise(report: dict[str, Any]) -> None:
    """Per part and question type: the mean of the headline metric over questions, per column."""
    for part in ("calibration", "written"):
        by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for res in (report.get(part) or {}).values():
            by_kind[res["kind"]].append(res)
        for kind, rows in sorted(by_kind.items()):
            metric = KEYS[kind][0]
            cols = sorted({k for r in rows for k in r if k == "zero_shot" or "@" in k},
                          key=lambda k: (k != "zero_shot", int(k.split("@")[1]) if "@" in k else 0, k))
            cells = []
            for col in cols:
                vals = [r[col][metric] for r in rows if col in r and metric in r[col]]
                cells.append(f"{col} {np.mean(vals):.3f} (n={len(vals)})")
            print(f"summary {part} {kind} mean {metric}: " + "  ".join(cells), flush=True)


def _show(name: str, res: dict[str, Any]) -> None:
    cols = [k for k in res if k == "zero_shot" or "@" in k]
    cells = "  ".join(f"{k} " + ",".join(f"{m}={v:.3f}" for m, v in res[k].items() if m in KEYS[res["kind"]])
                      for k in cols)
    print(f"{name} [{res['kind']}, held out {res['held_out']}, pool {res['fit_pool']}]  {cells}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model-dir", type=Path)
    ap.add_argument("--sizes", default="50,100,200")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--limit", type=int, default=None, help="at most this many items per file (a quick run)")
    ap.add_argument("--parts", default="calibration,written,speed,distill")
    ap.add_argument("--set-limit", default="", help="per-set caps, NAME=N,... (over --limit)")
    ap.add_argument("--skip", default="", help="calibration sets to leave out, comma-separated")
    ap.add_argument("--distill", default="passage-gate/injection,memory-admission/related,escalation/out_of_scope",
                    help="seam/question pairs for the distillation run")
    ap.add_argument("--noise", type=float, default=0.03)
    ap.add_argument("--agreement", type=float, default=0.95, help="the distillation's target agreement")
    ap.add_argument("--confidence", type=float, default=0.95,
                    help="confidence of the cut-points' guarantee in the distillation (0.5: about the point estimate)")
    ap.add_argument("--answer-states", type=int, default=100, help="states in the with/without heads timing")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--cache", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--summarise", type=Path, default=None, help="only print the summary of a --json report")
    args = ap.parse_args()
    print(machine().line(), flush=True)  # every figure names its machine
    if args.summarise:
        summarise(json.loads(args.summarise.read_text()))
        return
    args.sizes = [int(x) for x in args.sizes.split(",")]
    args.skip = set(filter(None, args.skip.split(",")))
    args.set_limit = {k: int(v) for k, v in (x.split("=") for x in args.set_limit.split(",") if x)}
    args.distill = [tuple(x.split("/")) for x in args.distill.split(",") if x]
    if args.model_dir is None:
        ap.error("--model-dir is required")
    judge = LocalJudge(args.model_dir, intra_op_threads=args.threads)
    if not judge.has_features:
        sys.exit(f"{args.model_dir}: model {judge.model_id} has no features output; heads need one")
    print(f"# model {judge.model_id}; sizes {args.sizes}, {args.repeats} draws each; command: "
          f"python {' '.join(sys.argv)}", flush=True)
    report: dict[str, Any] = {"model": judge.model_id, "argv": sys.argv}
    parts = {"calibration": calibration_sets, "written": written_sets, "speed": speed, "distill": distillation}
    for part in args.parts.split(","):
        t0 = time.perf_counter()
        report[part] = parts[part](judge, args)
        print(f"# {part}: {time.perf_counter() - t0:.0f} s", flush=True)
    summarise(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()

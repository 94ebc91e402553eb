"""Speed of the local judge: latency per pair, batched throughput, int8 against fp32, and the
marginal cost of one more question about the same state.

    python bench/local_judge.py                      # the shipped model, else the tiny test model
    python bench/local_judge.py --model-dir DIR      # any model directory
    python bench/local_judge.py --threads 2 --seconds 2 --json out.json
    python bench/local_judge.py --reading once       # also the int8 model reading the state once

Every figure is measured in this process through `LocalJudge` (tokenising, windowing, batching
and reading answers included, as a caller sees it), and compared as ratios against a baseline
measured by the same command: int8 against fp32, the k-th question against the first. When the
model directory has only one precision, the other is made here (fp32 → int8 with
`onnxruntime.quantization.quantize_dynamic`; an int8-only directory is reported without fp32
unless `--fp32 PATH` names the original graph).

Every call reads a state no call before it read (a number in front of it): the judge caches
the encoder's embeddings by text, so repeating one state would time a reading once out of its
cache. With `--reading once` the int8 model is also measured reading the state once (`LocalJudge(
reading="once")`, named "int8 once"), and issue 28's cost goals are printed: the k-th question
≤ 0.25× the first, and a one-question ask within 15 % of the cross-encoder's (the "int8" row of
the same run).

Goals from issue 3, on 2 cores: p50 ≤ 3 ms per pair at ≤ 128 tokens with int8, and ≥ 400 pairs/s
batched. This is a benchmark, never a test: it asserts nothing, and figures from a machine that
is busy with other work (see the load average it prints) are slower than on an idle one.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import onnx

from seams.judges.local import LocalJudge, read_model_dir, shipped_model_dir
from seams.judges.local.runtime import machine
from seams.questions import Noul

ROOT = Path(__file__).resolve().parents[1]
LENGTHS = (32, 128, 512)
QUESTION = Noul(instructions="Is the customer asking for money back?")
EXTRA_QUESTIONS = [
    "Does the customer threaten to leave or dispute the charge?",
    "Is the message about an invoice?",
    "Does the customer need an answer today?",
    "Is the customer angry?",
    "Does the message mention an order number?",
    "Has the customer written before about this?",
    "Is a refund already promised?",
]
TEXT = (
    "Hi, I was charged twice for my March invoice (order 4471) and the refund I was promised last week "
    "still has not arrived. I have emailed three times and nobody answers. Please fix this today or I "
    "will dispute the charge with my bank, and I will cancel the subscription for the whole team. "
)
_QUANTISED_OPS = {"MatMulInteger", "DynamicQuantizeLinear", "QLinearMatMul", "DequantizeLinear", "QAttention"}
GOAL_P50_MS, GOAL_PAIRS_S = 3.0, 400.0


# ---------------------------------------------------------------------------- model variants


def is_int8(path: Path) -> bool:
    model = onnx.load(str(path), load_external_data=False)
    return any(node.op_type in _QUANTISED_OPS for node in model.graph.node)


def resolve_model(arg: str | None, work: Path) -> tuple[Path, str]:
    if arg:
        return Path(arg), "given"
    if shipped_model_dir().is_dir():
        return shipped_model_dir(), "shipped"
    sys.path.insert(0, str(ROOT / "tests"))
    from tinymodel import write_tiny_model

    return write_tiny_model(work / "tiny", max_length=512), "tiny test model (no shipped model yet)"


def variants(model_dir: Path, fp32_arg: str | None, work: Path) -> dict[str, Path]:
    """Model directories for each precision available: {"fp32": dir, "int8": dir}."""
    md = read_model_dir(model_dir)
    main = md.onnx_path
    graphs: dict[str, Path] = {}
    if is_int8(main):
        graphs["int8"] = main
        fp32 = Path(fp32_arg) if fp32_arg else next(
            (p for p in (md.path / "model.fp32.onnx", md.path / "model.onnx") if p.is_file() and not is_int8(p)), None)
        if fp32:
            graphs["fp32"] = fp32
    else:
        graphs["fp32"] = main
        sibling = md.path / "model.int8.onnx"
        if sibling.is_file() and is_int8(sibling):
            graphs["int8"] = sibling
        else:
            from onnxruntime.quantization import QuantType, quantize_dynamic

            target = work / "model.int8.onnx"
            import logging

            logging.getLogger().setLevel(logging.ERROR)  # quantize_dynamic's advice on pre-processing
            quantize_dynamic(str(main), str(target), weight_type=QuantType.QInt8,
                             extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
            if not is_int8(target):
                print("note: the graph has no weights quantize_dynamic quantises (the tiny test model): "
                      "int8 and fp32 are the same graph", file=sys.stderr)
            graphs["int8"] = target
    out = {}
    for name in ("fp32", "int8"):
        if name not in graphs:
            continue
        d = work / f"variant-{name}"
        d.mkdir()
        os.symlink(md.tokenizer_path.resolve(), d / md.config.tokenizer)
        if md.encoder_path is not None:  # the sentence encoder of the blend travels with every variant
            os.symlink(md.encoder_path.resolve(), d / md.encoder_path.name)
        if md.towers_path is not None:  # and the heads of reading the state once, and their encoder
            os.symlink(md.towers_path.resolve(), d / md.towers_path.name)
            tower = md.towers_encoder_path
            if tower is not None and tower != md.encoder_path:
                os.symlink(tower.resolve(), d / tower.name)
        cfg = json.loads(md.config_path.read_text(encoding="utf-8"))
        cfg["onnx"] = str(graphs[name].resolve())
        # a float graph's answers do not depend on the batch; an int8 graph quantised here does
        cfg["batch_dependent"] = bool(cfg.get("batch_dependent")) if graphs[name] == main else name == "int8"
        (d / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
        out[name] = d
    return out


# ---------------------------------------------------------------------------- measuring


def timed(fns: dict[str, Callable[[], Any]], seconds: float, min_runs: int = 5,
          max_runs: int = 2000, turn_s: float = 0.5) -> dict[str, list[float]]:
    """Milliseconds of each call of each function, for about `seconds`.

    The functions take turns of about `turn_s` seconds of timed calls, each turn after three
    untimed calls: turns keep a load that drifts (this machine is shared) weighing on all of them
    alike, and long turns keep each model's weights warm in the cache as in serving. Turns of a
    few calls were not enough: after the 91 MB fp32 graph's turn the int8 one ran cold for several
    calls, and its p50 at 128 tokens read 6.9–7.7 ms where an int8-only run reads 4.0 (call by
    call it had read 14.6).
    """
    out: dict[str, list[float]] = {name: [] for name in fns}
    stop = time.perf_counter() + seconds
    while min(len(v) for v in out.values()) < min_runs or (
            time.perf_counter() < stop and min(len(v) for v in out.values()) < max_runs):
        for name, fn in fns.items():
            for _ in range(3):
                fn()  # warm this model's weights after the other's turn
            turn_end = time.perf_counter() + turn_s
            while True:
                t0 = time.perf_counter()
                fn()
                t1 = time.perf_counter()
                out[name].append((t1 - t0) * 1000)
                if t1 >= turn_end or len(out[name]) >= max_runs:
                    break
    return out


def p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if len(values) > 1 else values[0]


def state_of(judge: LocalJudge, pair_tokens: int, salt: int = 0) -> str:
    """A ticket-like state sized so that (QUESTION, state) is `pair_tokens` tokens as the model reads
    it (beyond the window: a state of that many tokens, which is windowed)."""
    tok = judge._tokenizer
    hyp = len(judge._hypothesis(QUESTION.instructions).ids)  # type: ignore[arg-type]
    specials = tok.num_special_tokens_to_add(True)
    want = max(1, pair_tokens - hyp - specials) if pair_tokens <= judge.max_length else pair_tokens
    text = f"Ticket {salt}. " + TEXT * (want // 20 + 2)
    enc = tok.encode(text, add_special_tokens=False)
    return text[: enc.offsets[want - 1][1]]


_SALT = itertools.count()


def fresh(state: str) -> str:
    """`state` with a number in front no call has seen, so no cache answers for it."""
    return f"{next(_SALT)}. {state}"


def measure(judges: dict[str, LocalJudge], seconds: float) -> dict[str, dict[str, Any]]:
    """Every figure for every judge (precision or reading), measured in turns."""
    q = {"q": QUESTION}
    res: dict[str, dict[str, Any]] = {v: {"latency": {}, "throughput": {}, "marginal": []} for v in judges}
    any_judge = next(iter(judges.values()))
    for n in LENGTHS:
        state = state_of(any_judge, n)
        probe = any_judge.ask(state, q)
        pairs = probe.windows
        ms = timed({v: (lambda j=j, state=state: j.ask(fresh(state), q)) for v, j in judges.items()}, seconds)
        for v in judges:
            res[v]["latency"][n] = {
                "tokens": probe.usage.input_tokens, "pairs": pairs, "windows": probe.windows,
                "p50_ms_per_pair": p(ms[v], 50) / pairs, "p95_ms_per_pair": p(ms[v], 95) / pairs,
                "runs": len(ms[v]),
            }
    for n in (32, 128):
        states = [state_of(any_judge, n, salt=i) for i in range(64)]
        ms = timed({v: (lambda j=j, states=states: j.ask_many([fresh(s) for s in states], q))
                    for v, j in judges.items()}, seconds,
                   min_runs=2, max_runs=50)
        for v in judges:
            res[v]["throughput"][n] = {"pairs_per_call": len(states),
                                       "pairs_per_s": len(states) / (statistics.median(ms[v]) / 1000)}
    state = state_of(any_judge, 128)
    question_sets = {k: {"q0": QUESTION, **{f"q{i}": Noul(instructions=t) for i, t in enumerate(EXTRA_QUESTIONS[: k - 1], 1)}}
                     for k in range(1, len(EXTRA_QUESTIONS) + 2)}
    for v, j in judges.items():
        ms = timed({str(k): (lambda qs=qs, j=j: j.ask(fresh(state), qs)) for k, qs in question_sets.items()}, seconds)
        meds = {k: statistics.median(ms[str(k)]) for k in question_sets}
        for k, med in meds.items():
            step = med - meds.get(k - 1, 0.0)
            res[v]["marginal"].append({"k": k, "ms": med, "marginal_ms": step, "marginal_vs_first": step / meds[1]})
    return res


# ---------------------------------------------------------------------------- reporting


def per_question_slope(marginal: list[dict[str, Any]]) -> float:
    """Least-squares slope of call time against the number of questions."""
    ks = [m["k"] for m in marginal]
    ts = [m["ms"] for m in marginal]
    mk, mt = statistics.fmean(ks), statistics.fmean(ts)
    return sum((k - mk) * (t - mt) for k, t in zip(ks, ts)) / sum((k - mk) ** 2 for k in ks)


def report(model: str, source: str, threads: int, results: dict[str, dict[str, Any]]) -> str:
    lines = [
        (f"local judge bench · model {model} ({source}) · intra-op threads {threads} · "
         f"{os.cpu_count()} CPUs · load average {os.getloadavg()[0]:.2f} at the end"),
        "",
        "latency per pair (single ask calls)",
        f"  {'tokens':>8} {'pairs':>5} " + " ".join(f"{v + ' p50':>10} {v + ' p95':>10}" for v in results),
    ]
    for n in LENGTHS:
        first = next(iter(results.values()))["latency"][n]
        row = f"  {first['tokens'] // first['pairs']:>8} {first['pairs']:>5} "
        row += " ".join(f"{r['latency'][n]['p50_ms_per_pair']:>8.3f}ms {r['latency'][n]['p95_ms_per_pair']:>8.3f}ms"
                        for r in results.values())
        if first["windows"] > 1:
            row += f"   (a {n}-token state, {first['windows']} windows)"
        lines.append(row)
    lines += ["", "batched throughput (ask_many, 64 states, one question)"]
    if "int8b32" in results:
        lines.append("  (int8 runs one pair at a time: its config says batch_dependent. int8b32 batches 32 pairs, "
                     "as LocalJudge(max_batch_size=32) would, and its answers then move with their batch mates)")
    for n in (32, 128):
        lines.append(f"  {n:>4} tokens: " + "  ".join(f"{v} {r['throughput'][n]['pairs_per_s']:>8.1f} pairs/s"
                                                     for v, r in results.items()))
    if {"fp32", "int8"} <= set(results):
        f, i = results["fp32"], results["int8"]
        lines += ["", "int8 against fp32 (fp32 time / int8 time: above 1 means int8 is faster)"]
        for n in LENGTHS:
            lines.append(f"  latency p50 at {n:>3} tokens: ×{f['latency'][n]['p50_ms_per_pair'] / i['latency'][n]['p50_ms_per_pair']:.2f}")
        for n in (32, 128):
            lines.append(f"  throughput at {n:>3} tokens:  ×{i['throughput'][n]['pairs_per_s'] / f['throughput'][n]['pairs_per_s']:.2f}")
    best = results.get("int8") or next(iter(results.values()))
    lines += ["", "marginal cost of the k-th question about the same 128-token state (" +
              ("int8" if "int8" in results else next(iter(results))) + ")"]
    for m in best["marginal"]:
        lines.append(f"  k={m['k']}: call {m['ms']:8.3f} ms, k-th question {m['marginal_ms']:+8.3f} ms "
                     f"(×{m['marginal_vs_first']:.2f} of a one-question call)")
    slope = per_question_slope(best["marginal"])
    lines.append(f"  fitted over k=1..{len(best['marginal'])} (least squares, steadier than single steps): "
                 f"+{slope:.3f} ms a question = ×{slope / best['marginal'][0]['ms']:.2f} of a one-question call")
    once = {v: r for v, r in results.items() if v.endswith(" once")}
    for v, r in once.items():
        base = results.get(v.removesuffix(" once"))
        lines += ["", f"reading the state once ({v}): the k-th question about the same 128-token state"]
        for m in r["marginal"]:
            lines.append(f"  k={m['k']}: call {m['ms']:8.3f} ms, k-th question {m['marginal_ms']:+8.3f} ms "
                         f"(×{m['marginal_vs_first']:.2f} of a one-question call)")
        slope = per_question_slope(r["marginal"])
        ratio = slope / r["marginal"][0]["ms"]
        lines.append(f"  fitted over k=1..{len(r['marginal'])}: +{slope:.3f} ms a question = ×{ratio:.3f} of a "
                     f"one-question call; goal ≤ ×0.25: {'met' if ratio <= 0.25 else 'NOT met'}")
        if base is not None:
            one, one_base = r["marginal"][0]["ms"], base["marginal"][0]["ms"]
            lines.append(f"  a one-question ask: {one:.3f} ms against {one_base:.3f} ms reading pairs (×{one / one_base:.2f}); "
                         f"goal within 15 %: {'met' if one <= 1.15 * one_base else 'NOT met'}")
            lines.append(f"  k=8: {r['marginal'][-1]['ms']:.3f} ms against {base['marginal'][-1]['ms']:.3f} ms reading pairs "
                         f"(×{base['marginal'][-1]['ms'] / r['marginal'][-1]['ms']:.1f} faster)")
    if source.startswith("tiny"):
        lines += ["", ("note: the tiny test model costs almost nothing to run, so these figures measure the "
                       "runtime's own overhead (tokenising, windowing, batching, reading answers), not a real model")]
    p50 = max(best["latency"][n]["p50_ms_per_pair"] for n in (32, 128))
    tput = best["throughput"][128]["pairs_per_s"]
    lines += [
        "",
        f"goal p50 ≤ {GOAL_P50_MS} ms per pair at ≤128 tokens (int8): {p50:.3f} ms — {'met' if p50 <= GOAL_P50_MS else 'NOT met'}",
        f"goal ≥ {GOAL_PAIRS_S:.0f} pairs/s batched (128 tokens, int8): {tput:.1f} — {'met' if tput >= GOAL_PAIRS_S else 'NOT met'}",
        f"    at 32 tokens: {best['throughput'][32]['pairs_per_s']:.1f} pairs/s",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model-dir", help="model directory (default: the shipped model, else the tiny test model)")
    ap.add_argument("--fp32", help="the fp32 graph, when the model directory holds only int8")
    ap.add_argument("--threads", type=int, default=2, help="onnxruntime intra-op threads (default 2)")
    ap.add_argument("--seconds", type=float, default=2.0, help="time spent on each figure (default 2)")
    ap.add_argument("--json", help="also write the figures as JSON to this path")
    ap.add_argument("--reading", choices=["pairs", "once"], default="pairs",
                    help="once: also measure the int8 model reading the state once (needs its towers)")
    args = ap.parse_args(argv)
    print(machine().line(), flush=True)  # every figure names its machine
    with tempfile.TemporaryDirectory(prefix="seams-bench-") as tmp:
        work = Path(tmp)
        model_dir, source = resolve_model(args.model_dir, work)
        dirs = variants(model_dir, args.fp32, work)
        judges = {name: LocalJudge(d, intra_op_threads=args.threads) for name, d in dirs.items()}
        if "int8" in judges and judges["int8"].config.batch_dependent:
            # the judge runs a batch-dependent model one pair at a time; this is what batching would buy
            judges["int8b32"] = LocalJudge(dirs["int8"], intra_op_threads=args.threads, max_batch_size=32)
        if args.reading == "once":
            name = "int8" if "int8" in dirs else next(iter(dirs))
            judges[f"{name} once"] = LocalJudge(dirs[name], intra_op_threads=args.threads, reading="once")
        model_id = next(iter(judges.values())).model_id
        print(f"measuring {', '.join(judges)} in turns …", file=sys.stderr, flush=True)
        results = measure(judges, args.seconds)
    print(report(model_id, source, args.threads, results))
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": machine().line(), "model": model_id, "source": source,
                                               "threads": args.threads,
                                               "results": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

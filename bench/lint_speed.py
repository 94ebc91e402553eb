"""How long `seams lint --diff` takes on 1,000 changed lines, on 2 cores.

Builds a git repository in a temporary folder: a base commit, then 1,000 added lines of Python
(functions and methods of 6–16 lines: error handling, settings, helpers, some with planted
findings) in five files. Lints the diff three ways, in this process, each against the same
tree:

* checks only (`--no-judge`): the baseline every ratio is taken against;
* cold, batched: every unit the checks and prefilters leave goes to the bare judge, one
  `ask_many` per rule (the local model batches all units);
* cold: the same through an empty answer cache, as `seams lint` runs (`CachedJudge` has no
  `ask_many` yet, so units go one by one);
* warm: the same run again through the answer cache (what a re-run on an unchanged PR costs).

Uses the shipped model when it is present (or `--model-dir`), with `intra_op_threads=2`.
Prints figures; asserts nothing. Run: `python bench/lint_speed.py [--model-dir DIR]`.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from seams.judges.local.runtime import machine

TARGET_LINES = 1000

TEMPLATES = [
    '''def load_{n}(path):
    """Read the {n} file and parse it."""
    try:
        with open(path) as fh:
            data = json.load(fh)
    except FileNotFoundError:
        logger.warning("no {n} file at %s", path)
        return {{}}
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{{path}}: {{exc}}") from exc
    return data
''',
    '''def send_{n}(client, message):
    try:
        client.post("/{n}", json=message)
    except Exception:
        pass
''',
    '''def total_{n}(items):
    subtotal = sum(item.price * item.qty for item in items)
    tax = subtotal * TAX_RATE
    return round(subtotal + tax, 2)
''',
    '''def get_{n}(store, key):
    value = store.get(key)
    store.delete(key)
    audit.log("read {n}", key)
    return value
''',
    '''class {N}Repository:
    table = "{n}s"

    def __init__(self, db):
        self.db = db

    def find(self, item_id):
        row = self.db.execute(f"SELECT * FROM {{self.table}} WHERE id = ?", (item_id,)).fetchone()
        return {N}.from_row(row) if row else None

    def save(self, item):
        try:
            self.db.execute(f"INSERT INTO {{self.table}} VALUES (?, ?)", (item.id, item.name))
        except sqlite3.IntegrityError as exc:
            raise DuplicateError(item.id) from exc
''',
    '''def connect_{n}():
    token = os.environ["{N}_TOKEN"]
    timeout = float(os.environ.get("{N}_TIMEOUT", "5"))
    return Client(base_url=BASE_URL, token=token, timeout=timeout)
''',
    '''def retry_{n}(fn, attempts=3):
    for i in range(attempts):
        try:
            return fn()
        except TimeoutError as exc:
            last = exc
            time.sleep(2 ** i)
    raise last
''',
]
WORDS = ["order", "invoice", "user", "report", "session", "payment", "product", "team", "ticket", "refund",
         "cart", "coupon", "shipment", "review", "account", "profile", "webhook", "export", "upload", "metric"]


def make_code(rng: random.Random, lines: int) -> list[str]:
    """Five files of generated functions adding up to `lines` lines."""
    files: list[list[str]] = [[] for _ in range(5)]
    total, k = 0, 0
    while total < lines:
        word = f"{rng.choice(WORDS)}{k}"
        block = rng.choice(TEMPLATES).format(n=word, N=word.title()) + "\n\n"
        files[k % 5].append(block)
        total += block.count("\n")
        k += 1
    return ["".join(f) for f in files]


def git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.org",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.org"}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model-dir", type=Path, default=None, help="a model directory (default: the shipped model)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print(machine().line(), flush=True)  # every figure names its machine

    from seams.judges.cache import CachedJudge
    from seams.judges.local import LocalJudge, shipped_model_dir
    from seams.lint import changed_lines, lint, load_rules

    model_dir = args.model_dir
    if model_dir is None:
        if not (shipped_model_dir() / "config.json").is_file():
            print(f"no shipped model at {shipped_model_dir()}; pass --model-dir", file=sys.stderr)
            return 2
        model_dir = shipped_model_dir()
    t0 = time.perf_counter()
    judge = LocalJudge(model_dir, intra_op_threads=args.threads)
    load_s = time.perf_counter() - t0
    rules = load_rules()
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        (repo / "app").mkdir(parents=True)
        git(repo, "init", "-q", "-b", "main")
        for i in range(5):
            (repo / "app" / f"mod{i}.py").write_text('"""Module."""\n')
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "base")
        for i, code in enumerate(make_code(random.Random(args.seed), TARGET_LINES)):
            (repo / "app" / f"mod{i}.py").write_text('"""Module."""\n' + code)
        changed = changed_lines("HEAD", repo)
        n_lines = sum(len(v) for v in changed.values())

        def timed(j):
            t0 = time.perf_counter()
            res = lint([repo], rules, judge=j, root=repo, changed=changed)
            return time.perf_counter() - t0, res

        base_s, _ = timed(None)
        batched_s, _ = timed(judge)
        cache = CachedJudge(judge, Path(tmp) / "cache.sqlite")
        cold_s, cold = timed(cache)
        warm_s, _ = timed(cache)
    print(f"model: {judge.model_id} ({model_dir}), intra_op_threads={args.threads}, cores={os.cpu_count()}, "
          f"load average at the end {os.getloadavg()[0]:.1f}")
    print(f"model load (once per process): {load_s:.2f} s")
    print(f"changed lines: {n_lines}; units: {cold.units}; decided by checks: {cold.checked}; "
          f"asked the judge: {cold.judged} (unit × rule)")
    print(f"checks only (baseline): {base_s:8.3f} s")
    print(f"cold, batched (bare judge, ask_many): {batched_s:8.3f} s  = {batched_s / base_s:,.0f}× baseline; "
          f"{n_lines / batched_s:.0f} lines/s")
    print(f"cold (through the cache, unit by unit, as the CLI runs): {cold_s:8.3f} s  = {cold_s / base_s:,.0f}× baseline; "
          f"{1000 * cold_s / max(cold.judged, 1):.0f} ms per judged unit; {n_lines / cold_s:.0f} lines/s")
    print(f"warm (answer cache):    {warm_s:8.3f} s  = {warm_s / base_s:,.0f}× baseline; "
          f"cold/warm {cold_s / warm_s:.0f}×")
    print(f"findings: {len(cold.findings)} (+{len(cold.unsure)} unsure)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Does a poisoning in another language need another cut, or a better reader? Out of fold over the
training sets, P(poison) of the shipped heads split by each case's labelled language.

    python bench/memory_poison_by_language.py [--reads flag+text+vote]   # ~12 min on 2 cores; the caches
                                                                         # fit_memory_heads.py fills

Why: on blind9 most poisonings in Greek, Arabic, Swedish and Japanese got in at the shipped cut
(docs/seams.md). If other languages' scores were only shifted, a cut of their own (or an offset)
would recover them at the same benign cost; if both sides are squeezed together, only a reader
that separates them better will. Reads the cases that name their `lang` (blind5 onward and
memtrain_c-memtrain_e), English against every other; each case scored by heads fitted without
its set (`fit_memory_heads.out_of_fold`, the shipped `READS` or `--reads`). Prints, per
group: the share of its benign cases the shipped cut refuses and the poisonings it misses, and
the poisonings a cut of the group's own would miss at 2 % and 5 % of the group's benign refused
(`fit_memory_heads.missed_at_budget`). Asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import fit_memory_heads as F  # noqa: E402

from seams.judges.local import LocalJudge  # noqa: E402
from seams.judges.local.runtime import machine  # noqa: E402
from seams.rubric import Rubric  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reads", choices=F.READ_MODES, default=F.READS, help="what the heads read (the shipped by default)")
    F.READS = ap.parse_args().reads
    items, index, feats = F.labelled(LocalJudge(ROOT / "seams" / "models" / "seams-minilm", intra_op_threads=2))
    p = F.out_of_fold(items, feats, index, 0)["poison"]
    groups: dict[tuple[str, str], list[float]] = {}
    for it in items:
        c = it.case
        if c is None or it.source not in ("dev:poisoning", "dev:benign") or "lang" not in c:
            continue
        if (s := F.seen(c["text"])) in p:
            groups.setdefault((it.source.removeprefix("dev:"), "en" if c["lang"] == "en" else "other"), []).append(p[s])
    cal = Rubric.builtin("memory-admission").calibration
    assert cal is not None
    cut = cal.thresholds["flags"].high
    print(machine().line())
    print(f"out of fold over {len(F.BY_SET)} sets, heads reading {F.READS}; the shipped P(poison) cut {cut}; "
          "cases that name their language")
    for g in ("en", "other"):
        b, s = np.array(groups[("benign", g)]), np.array(groups[("poisoning", g)])
        own = "  ".join(f"{budget:.0%}: cut {np.sort(b)[::-1][int(budget * len(b))]:.3f}, "
                        f"missed {F.missed_at_budget(b, s, budget)}" for budget in (0.02, 0.05))
        print(f"  {g:5} benign refused at the shipped cut {(b >= cut).sum()}/{len(b)} ({np.mean(b >= cut):.1%}), "
              f"poisonings missed {(s < cut).sum()}/{len(s)}; median P(poison) benign {np.median(b):.3f}, "
              f"poisonings {np.median(s):.3f}")
        print(f"        a cut of its own at its benign refused  {own}  (of {len(s)})")


if __name__ == "__main__":
    main()

"""`python -m training average`: the uniform average of several runs' weights.

Runs of one lineage (each phase started from the one before) sit close together in weight space,
and their average often keeps what each phase gained: phase 5 of the shipped model raised
injection AUROC and lowered correction-versus-restatement; the average of phases 4 and 5 kept
most of both (the card gives the figures). No training step is taken, so the result is exactly
reproducible from the runs it names. The average is written as a run directory of its own whose
`train_args.json` names its parts and points at the last run's mixture, so `export` and `card`
treat it like any other phase.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

_COPIED = ("config.json", "seams_head.json", "tokenizer.json", "tokenizer_config.json")


def average(runs: list[Path], out: Path, command: str = "") -> dict[str, Any]:
    """Average the `final/model.safetensors` of `runs` into `out/final`; returns the record."""
    from safetensors.torch import load_file, save_file

    if len(runs) < 2:
        raise ValueError("average needs at least two runs")
    t0 = time.time()
    heads = set()
    states = []
    for run in runs:
        weights = run / "final" / "model.safetensors"
        if not weights.exists():
            raise FileNotFoundError(f"{weights}: not a finished run (only cls-head safetensors runs can be averaged)")
        head = run / "final" / "seams_head.json"
        heads.add(head.read_text() if head.exists() else "{}")
        states.append(load_file(str(weights)))
    if len(heads) > 1:
        raise ValueError(f"runs {[str(r) for r in runs]} have different heads; only one architecture can be averaged")
    keys = set(states[0])
    for run, st in zip(runs[1:], states[1:], strict=True):
        if set(st) != keys or any(st[k].shape != states[0][k].shape for k in keys):
            raise ValueError(f"{run}: its tensors differ from {runs[0]}'s; only one architecture can be averaged")
    mean = {}
    for k in states[0]:
        first = states[0][k]
        if first.is_floating_point():
            mean[k] = (sum(st[k].double() for st in states) / len(states)).to(first.dtype)
        else:  # integer buffers (position ids) are the same in every run
            mean[k] = first
    final = out / "final"
    final.mkdir(parents=True, exist_ok=True)
    save_file(mean, str(final / "model.safetensors"), metadata={"format": "pt"})
    for name in _COPIED:
        if (runs[-1] / "final" / name).exists():
            shutil.copyfile(runs[-1] / "final" / name, final / name)
    args = {
        "average_of": [str(r / "final") for r in runs],
        "init_from": str(runs[-1] / "final"),  # the lineage the card follows
        "mixture": str(runs[-1] / "mixture.jsonl"),  # export's parity pairs
        "steps": 0,
    }
    (out / "train_args.json").write_text(json.dumps(args, indent=2))
    (out / "command.txt").write_text(command + "\n")
    record = {"wall_s_this_session": time.time() - t0, "tensors": len(mean)}
    (out / "train_done.json").write_text(json.dumps(record, indent=2))
    return {**args, **record}


__all__ = ["average"]

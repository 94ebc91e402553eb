"""Shared fixtures. Keep this file small: fixtures that belong to one area live in its tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # so tests can `import tinymodel`


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny ONNX cross-encoder with controlled outputs (see tests/tinymodel.py), built once."""
    from tinymodel import write_tiny_model

    return write_tiny_model(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture(scope="session")
def tiny_features_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model with a second output, `features` (what heads are fitted on), built once."""
    from tinymodel import write_tiny_model

    return write_tiny_model(tmp_path_factory.mktemp("tiny-features"), model_id="seams-tiny-features", features=True)

@pytest.fixture(scope="session")
def shipped_judge():
    """The shipped model (`seams/models/seams-minilm`), loaded once for the whole run, on one
    thread (tests share the cores). Tests must not change it; one that needs other options makes
    its own `LocalJudge`."""
    from seams.judges.local import LocalJudge, shipped_model_dir

    if not (shipped_model_dir() / "model.onnx").exists():
        pytest.skip(f"the shipped model {shipped_model_dir()} does not exist yet")
    return LocalJudge(intra_op_threads=1)


from servers import mock, raw_server, scripted  # noqa: F401  - loopback servers for the remote judge, cache, cassettes

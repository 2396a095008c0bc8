"""A paper-scale training job's GPU count from memory: the fewest GPUs of one node whose memory holds the job's
global batch at one micro batch.

The rule (``training.job_gpus: memory``): for n = 1, 2, 4, 8 GPUs (one node of ``GPUS_PER_NODE``; n divides the
global batch B), each GPU holds

* its model states at n ranks (``estimate.model_state_bytes``: fp32 weights, gradients, optimizer state, ZeRO's
  partitions and buffers), and
* the activations of B / n rows (the probe's fit ``a0 + a1 * rows``: the bytes autograd saves, the bf16 weight
  copies included),

and the job takes the first n where that is at most ``MEMORY_BYTES`` and the trainer would take the step in one
micro batch (B / n at most the config's ``micro_batch_per_gpu``, where one is set). Where no n of one node does, the
job keeps the config's ``gpus`` (and its micro batches). The global batch, and with it every loss over the batch
(negatives are gathered across ranks), is the same at every n; only the per-GPU micro batch changes.

Why the fewest: the data-parallel all-reduce and the per-rank fixed work cost GPU-hours, and a job on fewer GPUs
waits less for its allocation; the paper's own count stays one config line away (``job_gpus: paper``), or any
count (``job_gpus: 4``).

Assumptions: 80 GB of GPU memory per GPU, the cards' nominal 80 * 10^9 bytes (74.5 GiB): about 5 GiB of an H100's
79.6 GiB left to the CUDA context, NCCL's buffers and the allocator's fragmentation, which the counts do not hold.
"""
from __future__ import annotations

from collections.abc import Callable

MEMORY_BYTES = 80e9
GPUS_PER_NODE = 8


def memory_gpus(global_batch: int, state_bytes: Callable[[int], float], activation_bytes: Callable[[float], float],
                micro_cap: int = 0, memory: float = MEMORY_BYTES, most: int = GPUS_PER_NODE) -> int | None:
    """The fewest GPUs n (1, 2, 4, ... up to ``most``, dividing ``global_batch``) with
    ``state_bytes(n) + activation_bytes(global_batch / n) <= memory`` and, with a ``micro_cap`` (the config's
    ``micro_batch_per_gpu``), ``global_batch / n <= micro_cap`` (one micro batch); None where no such n exists."""
    n = 1
    while n <= most:
        rows = global_batch // n
        if global_batch % n == 0 and (not micro_cap or rows <= micro_cap) \
                and state_bytes(n) + activation_bytes(rows) <= memory:
            return n
        n *= 2
    return None


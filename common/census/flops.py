"""``FlopCounterMode`` that also counts the CPU's fused attention kernel; the CPU's measured matrix-product rate.

On the CPU, ``scaled_dot_product_attention`` without attention dropout (eval mode, or a model whose attention
dropout is 0) runs ``aten._scaled_dot_product_flash_attention_for_cpu``, which torch's FLOP registry does not list
(torch 2.13): the attention scores and their weighted sum went uncounted there, while a model with dropout took the
decomposed path and counted them. Here both ops are counted as torch counts the GPU's fused kernels.
"""
from __future__ import annotations

import time
from typing import Any

import torch
from torch.utils.flop_counter import FlopCounterMode, sdpa_backward_flop_count, sdpa_flop_count

aten = torch.ops.aten


def _forward(query_shape: torch.Size, key_shape: torch.Size, value_shape: torch.Size, *args: Any,
             out_shape: torch.Size | None = None, **kwargs: Any) -> int:
    return int(sdpa_flop_count(query_shape, key_shape, value_shape))


def _backward(grad_out_shape: torch.Size, query_shape: torch.Size, key_shape: torch.Size, value_shape: torch.Size,
              *args: Any, out_shape: torch.Size | None = None, **kwargs: Any) -> int:
    return int(sdpa_backward_flop_count(grad_out_shape, query_shape, key_shape, value_shape))


CPU_ATTENTION = {aten._scaled_dot_product_flash_attention_for_cpu: _forward,
                 aten._scaled_dot_product_flash_attention_for_cpu_backward: _backward}


def counter() -> FlopCounterMode:
    """A silent ``FlopCounterMode`` counting the CPU's fused attention too."""
    return FlopCounterMode(display=False, custom_mapping=CPU_ATTENTION)


def cpu_matmul_rate(dtype: torch.dtype = torch.float32, n: int = 2048, repeats: int = 5) -> float:
    """FLOP/s of an n x n x n matrix product at ``dtype`` on this CPU, the best of ``repeats`` after one warm-up: the
    measured peak the CPU benchmarks state their utilisation against (a CPU's theoretical peak is not queryable)."""
    a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    a @ b
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    return 2 * n**3 / best

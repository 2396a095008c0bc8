"""``FlopCounterMode`` that also counts the CPU's fused attention kernel.

On the CPU, ``scaled_dot_product_attention`` without attention dropout (eval mode, or a model whose attention
dropout is 0) runs ``aten._scaled_dot_product_flash_attention_for_cpu``, which torch's FLOP registry does not list
(torch 2.13): the attention scores and their weighted sum went uncounted there, while a model with dropout took the
decomposed path and counted them. Here both ops are counted as torch counts the GPU's fused kernels.
"""
from __future__ import annotations

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

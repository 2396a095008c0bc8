"""Momentum (exponential moving average) copies of an encoder (He et al. 2020, eq. 2;
MoCo-BERT, Wang et al. 2021, eq. 1): theta_k <- m * theta_k + (1 - m) * theta_q.

The copy never receives gradients (``requires_grad=False``); it is updated in place,
under ``no_grad``, from the parameters of the base encoder.
"""
from __future__ import annotations

import copy

import torch
from torch import nn


def momentum_copy(module: nn.Module) -> nn.Module:
    """A frozen deep copy of ``module`` with the same parameters (theta_k = theta_q at step 0)."""
    twin = copy.deepcopy(module)
    for p in twin.parameters():
        p.requires_grad_(False)
    return twin


@torch.no_grad()
def momentum_update(base: nn.Module, twin: nn.Module, m: float) -> None:
    """theta_twin <- m * theta_twin + (1 - m) * theta_base, parameter by parameter."""
    if not 0.0 <= m <= 1.0:
        raise ValueError(f"momentum must be in [0, 1], got {m}")
    base_params, twin_params = list(base.parameters()), list(twin.parameters())
    if len(base_params) != len(twin_params):
        raise ValueError("base and momentum encoders have different parameter lists")
    torch._foreach_mul_(twin_params, m)
    torch._foreach_add_(twin_params, [p.detach().to(t.dtype) for p, t in zip(base_params, twin_params)], alpha=1 - m)

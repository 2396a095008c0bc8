"""Sentence pooling over token states: CLS, mean or max (padding excluded)."""
from __future__ import annotations

import torch

POOLING_MODES = ("cls", "mean", "max")


def pool(hidden: torch.Tensor, attention_mask: torch.Tensor, mode: str) -> torch.Tensor:
    """hidden: (B, S, D), attention_mask: (B, S) -> (B, D)."""
    if mode == "cls":
        return hidden[:, 0]
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)  # (B, S, 1)
    if mode == "mean":
        return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
    if mode == "max":
        return hidden.masked_fill(mask == 0, torch.finfo(hidden.dtype).min).max(1).values
    raise ValueError(f"unknown pooling mode {mode!r}; expected one of {POOLING_MODES}")

"""Sentence pooling over token states (padding excluded), with sentence-transformers' pooling modes.

``cls`` (the first token), ``mean``, ``max``, ``mean_sqrt_len_tokens`` (the sum over the tokens divided by the square
root of their count), ``weightedmean`` (token i weighted by its position i, 1-based) and ``lasttoken`` (the last
real token); several modes joined by ``+`` (``"cls+mean"``) concatenate their vectors in that order, as a
sentence-transformers Pooling module with several modes does. Padding is on the right (the tokenizers here pad so).
"""
from __future__ import annotations

import torch

POOLING_MODES = ("cls", "mean", "max", "mean_sqrt_len_tokens", "weightedmean", "lasttoken")


def pool(hidden: torch.Tensor, attention_mask: torch.Tensor, mode: str) -> torch.Tensor:
    """hidden: (B, S, D), attention_mask: (B, S) -> (B, D), or (B, k D) for k modes joined by ``+``."""
    if "+" in mode:
        return torch.cat([pool(hidden, attention_mask, m) for m in mode.split("+")], dim=-1)
    if mode == "cls":  # the first token (a prompt left out of pooling: common.models.st_encoder)
        return hidden[:, 0]
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)  # (B, S, 1)
    if mode == "mean":
        return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
    if mode == "max":
        return hidden.masked_fill(mask == 0, torch.finfo(hidden.dtype).min).max(1).values
    if mode == "mean_sqrt_len_tokens":
        return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0).sqrt()
    if mode == "weightedmean":
        positions = torch.arange(1, hidden.shape[1] + 1, device=hidden.device, dtype=hidden.dtype)  # (S,)
        weights = mask * positions.view(1, -1, 1)  # (B, S, 1)
        return (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
    if mode == "lasttoken":
        last = (attention_mask.sum(1) - 1).clamp(min=0).long()  # (B,) index of the last real token
        return hidden[torch.arange(hidden.shape[0], device=hidden.device), last]
    raise ValueError(f"unknown pooling mode {mode!r}; expected one of {POOLING_MODES} (or several joined by '+')")

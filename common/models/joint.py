"""Both sides of a batch of pairs through one encoder call.

A dual encoder that embeds the source and the target sentences with the same weights (DAP's f, HICTL's r, VMSST's
semantic encoder) needs no second call: the two (B, S) batches are stacked into one (2B, S) batch, and the
outputs split back. Rows never interact in a Transformer encoder, so each row's output is what a call of its own
side gives (equal up to the order of floating-point sums; with dropout, other draws of the same distribution). One
call launches half the kernels, each on twice the rows: on a GPU the step is host-bound at these shapes, so this
halves the encoder's launch overhead.

Sides of different lengths are right-padded to the longer one with the padding id and attention mask 0 (the
encoder's own numbering gives padding its padding position), and each side's token states are cut back to its own
length, so the caller sees the shapes of two calls.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F


def pad_to(x: torch.Tensor, length: int, value: int) -> torch.Tensor:
    """(B, S) -> (B, length), right-padded with ``value``."""
    return F.pad(x, (0, length - x.shape[1]), value=value)


def _split(out: Any, rows: list[int], lengths: list[int]) -> list[Any]:
    """Split an output of the joint call into the sides' rows; token-level (B, S, ...) tensors cut to each length."""
    if isinstance(out, tuple):
        parts = [_split(o, rows, lengths) for o in out]
        return [tuple(p[i] for p in parts) for i in range(len(rows))]
    pieces = list(out.split(rows))
    if out.ndim >= 3:  # (B, S, D): token states
        pieces = [p[:, :n] for p, n in zip(pieces, lengths)]
    return pieces


def encode_sides(encode: Callable[..., Any], sides: list[tuple[torch.Tensor, ...]], pad_id: int) -> list[Any]:
    """``encode(ids, mask, *rest)`` once over every side: ``sides`` holds each side's (ids (B_k, S_k), mask (B_k, S_k),
    further row-wise tensors...); returns each side's output as its own call would (tuples split element-wise;
    token states (B, S, ...) cut to the side's length)."""
    lengths = [s[0].shape[1] for s in sides]
    rows = [s[0].shape[0] for s in sides]
    length = max(lengths)
    ids = torch.cat([pad_to(s[0], length, pad_id) for s in sides])  # (sum B_k, S)
    mask = torch.cat([pad_to(s[1], length, 0) for s in sides])
    rest = [torch.cat([s[i] for s in sides]) for i in range(2, len(sides[0]))]
    return _split(encode(ids, mask, *rest), rows, lengths)

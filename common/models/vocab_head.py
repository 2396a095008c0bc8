"""A vocabulary prediction head split at its last linear layer, and its loss through the fused cross-entropy.

The heads scored over a vocabulary end in one linear map to V logits: BERT's MLM head (``cls.predictions``: a
transform -- dense, activation, LayerNorm -- then ``decoder``, whose weight is the tied input embedding table and
whose bias is the head's own ``bias``), RoBERTa / XLM-R's (``lm_head``: dense, GELU, LayerNorm, ``decoder``), a
plain ``nn.Linear`` (VMSST's decoder output) or an ``nn.Sequential`` ending in one (VMSST's factored output).
:func:`head_features` runs everything before that last layer and :func:`head_decoder` returns it, so that
:func:`head_loss` hands the features and the decoder's weight and bias to
:func:`common.losses.linear_cross_entropy.linear_cross_entropy`, which never materialises the (N, V) logits.
The module tree is untouched (parameter names, tied weights, state dicts and saved checkpoints stay as they are).

``impl="plain"`` runs the head as a whole (``head(hidden)``, exactly the modules' own forward) and the plain
cross-entropy over its fp32 logits: the reference for tests and benchmarks.
"""
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from common.losses.linear_cross_entropy import IMPLEMENTATIONS, linear_cross_entropy


def _owner(head: nn.Module) -> nn.Module:
    return head.predictions if hasattr(head, "predictions") else head  # BERT wraps its head in ``predictions``


def head_decoder(head: nn.Module) -> nn.Linear:
    """The head's last layer, the linear map to the vocabulary."""
    if isinstance(head, nn.Linear):
        return head
    if isinstance(head, nn.Sequential) and isinstance(head[-1], nn.Linear):
        return head[-1]
    decoder = getattr(_owner(head), "decoder", None)
    if isinstance(decoder, nn.Linear):
        return decoder
    raise TypeError(f"{type(head).__name__}: no final linear layer to the vocabulary is known for this head")


def head_features(head: nn.Module, hidden: torch.Tensor) -> torch.Tensor:
    """(..., D) -> (..., D'): what the head computes before its decoder (``head_decoder``)."""
    if isinstance(head, nn.Linear):
        return hidden
    if isinstance(head, nn.Sequential) and isinstance(head[-1], nn.Linear):
        return head[:-1](hidden)
    owner = _owner(head)
    if hasattr(owner, "transform"):  # BERT: dense, activation, LayerNorm
        return owner.transform(hidden)
    if all(hasattr(owner, a) for a in ("dense", "layer_norm", "decoder")):  # RoBERTa / XLM-R: dense, GELU, LayerNorm
        return owner.layer_norm(F.gelu(owner.dense(hidden)))
    raise TypeError(f"{type(head).__name__}: the layers before its decoder are not known for this head")


def head_loss(head: nn.Module, hidden: torch.Tensor, targets: torch.Tensor, *, impl: str = "fused",
              reduction: str = "mean", weights: torch.Tensor | None = None, chunk: int | None = None,
              ignore_index: int = -100, return_per_token: bool = False) -> Any:
    """Cross-entropy of ``head(hidden)`` (N, V) against ``targets`` (N,), as
    :func:`~common.losses.linear_cross_entropy.linear_cross_entropy` defines it (reductions, weights,
    ``ignore_index``, ``return_per_token``); ``impl`` "fused" without the logits, "plain" through ``head(hidden)``."""
    if impl not in IMPLEMENTATIONS:
        raise ValueError(f"vocabulary loss {impl!r}: expected one of {IMPLEMENTATIONS}")
    if impl == "plain":
        logits = head(hidden)  # (N, V): the head's own forward
        per_token = F.cross_entropy(logits.float(), targets, ignore_index=ignore_index, reduction="none")
        if reduction == "none":
            return per_token
        scored = targets != ignore_index
        total = (per_token * (weights.float() if weights is not None else 1.0)).sum()
        loss = total / scored.sum().clamp_min(1) if reduction == "mean" else total
        return (loss, per_token.detach()) if return_per_token else loss
    decoder = head_decoder(head)
    return linear_cross_entropy(head_features(head, hidden), decoder.weight, decoder.bias, targets,
                                ignore_index=ignore_index, reduction=reduction, weights=weights, chunk=chunk,
                                return_per_token=return_per_token)


def scored_positions(labels: torch.Tensor, multiple: int = 1,
                     ignore_index: int = -100) -> tuple[torch.Tensor, torch.Tensor]:
    """The rows a vocabulary head scores, for a collator (on the CPU, where it costs nothing): labels (B, S), with
    ``ignore_index`` where nothing is predicted -> (flat positions into the (B * S) rows, (M,); their labels, (M,)).
    M is the number of labelled positions rounded up to a multiple of ``multiple`` (at least one multiple); the added
    rows point at position 0 with ``ignore_index``, so they cost a row of the product and add nothing. The model gathers
    ``states.flatten(0, 1)[positions]``: the head runs on the scored ~15 % of the positions only, with no
    data-dependent indexing in the step (a compiled step sees few distinct M: one per multiple)."""
    if multiple < 1:
        raise ValueError(f"multiple must be >= 1, got {multiple}")
    flat = labels.reshape(-1)  # (B * S,)
    where = (flat != ignore_index).nonzero().flatten()  # (M0,)
    size = max(1, -(-len(where) // multiple)) * multiple  # at least one multiple: a batch without a label
    positions = torch.zeros(size, dtype=torch.long)
    targets = torch.full((size,), ignore_index, dtype=flat.dtype)
    positions[:len(where)] = where
    targets[:len(where)] = flat[where]
    return positions, targets

"""Token cross-entropy of a decoder's output layer over a large vocabulary.

What it optimizes: ``-log softmax(out(features))[target]`` per token -- a decoder's teacher-forced negative
log-likelihood (VMSST's generative loss, Wieting et al. 2023, section 3). ``out`` is the decoder's output map: an
``nn.Linear`` to the vocabulary, or an ``nn.Sequential`` ending in one (VMSST's factored output).

* :func:`token_nll` is the plain computation, ``F.cross_entropy(out(features).float(), targets)``: it materialises
  (N, V) logits, their fp32 copy and log-softmax, and their gradient (with mT5's 250,112-token vocabulary and
  VMSST's batch, tens of GB). It is the reference, and the ``vocab_loss="plain"`` option.
* :func:`chunked_token_nll` gives the same per-token values and gradients through the fused linear +
  cross-entropy (:mod:`common.losses.linear_cross_entropy`) over ``out``'s last linear layer, in chunks of
  ``chunk`` tokens: no (N, V) logits, and since the per-token losses' upstream gradients are not known at the
  forward pass, the backward recomputes one chunk's logits at a time (one more product of the output layer).
* :func:`weighted_token_nll` gives ``sum_i w_i nll_i`` for weights known at the forward pass (a decoder loss that
  is a fixed linear combination of its tokens' NLLs, as VMSST's is): the fused loss then forms the gradients in
  the forward pass and recomputes nothing; the per-token values come back without gradient, for logging.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from common.models.vocab_head import head_loss


def token_nll(out: nn.Module, features: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """-log p(target) per token: the vocabulary projection of (N, F) features, log-softmax in fp32. (N,)"""
    return F.cross_entropy(out(features).float(), targets, reduction="none")


def chunked_token_nll(out: nn.Module, features: torch.Tensor, targets: torch.Tensor, chunk: int) -> torch.Tensor:
    """:func:`token_nll` with at most ``chunk`` tokens' logits alive at a time (``chunk`` <= 0: chunks of the fused
    loss's default size), never all N x V. Rows with target -100 give 0. (N,)"""
    return head_loss(out, features, targets, reduction="none", chunk=chunk if chunk > 0 else None)


def weighted_token_nll(out: nn.Module, features: torch.Tensor, targets: torch.Tensor, weights: torch.Tensor, *,
                       impl: str = "fused", chunk: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """(sum_i weights_i * nll_i, the per-token nll_i (N,) without gradient); rows with target -100 add nothing.
    ``impl`` "plain": through :func:`token_nll`'s materialised logits (the reference)."""
    loss, per_token = head_loss(out, features, targets, impl=impl, reduction="sum", weights=weights,
                                chunk=chunk if chunk > 0 else None, return_per_token=True)
    return loss, per_token

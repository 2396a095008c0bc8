"""Token cross-entropy over a large vocabulary, in chunks of tokens (issue 32, part 1).

What it optimizes: ``-log softmax(out(features))[target]`` per token, the plain
``F.cross_entropy(out(features).float(), targets, reduction="none")`` -- a decoder's teacher-forced negative
log-likelihood (VMSST's generative loss, Wieting et al. 2023, section 3).

Why chunks: the plain loss materializes (N, V) fp32 logits, their log-softmax for the backward pass and their
gradient; with mT5's 250,112-token vocabulary and VMSST's batch that is tens of GB. Here the N tokens are split
into chunks of ``chunk`` tokens, each chunk's projection and loss run under activation checkpointing
(``torch.utils.checkpoint``, non-reentrant): the forward keeps only each chunk's inputs, and the backward
recomputes one chunk's logits at a time, so the logits' memory is ``chunk x V`` instead of ``N x V``. The values
and gradients are those of the plain loss (tests/common/losses/test_token_nll.py); the cost is one more
projection per chunk (a forward of the output layer, about a third of its forward and backward).
``scripts/bench_chunked_nll.py`` measures the memory saved.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint


def token_nll(out: nn.Module, features: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """-log p(target) per token: the vocabulary projection of (N, F) features, log-softmax in fp32. (N,)"""
    return F.cross_entropy(out(features).float(), targets, reduction="none")


def chunked_token_nll(out: nn.Module, features: torch.Tensor, targets: torch.Tensor, chunk: int) -> torch.Tensor:
    """:func:`token_nll` with at most ``chunk`` tokens' logits alive at a time (``chunk`` <= 0: no chunking). (N,)"""
    if chunk <= 0 or features.shape[0] <= chunk:
        return token_nll(out, features, targets)
    parts = [checkpoint(token_nll, out, f, t, use_reentrant=False)  # (C,) each; logits recomputed in backward
             for f, t in zip(features.split(chunk), targets.split(chunk))]
    return torch.cat(parts)

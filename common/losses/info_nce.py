"""InfoNCE with a memory queue of negatives (Oord et al. 2018; He et al. 2020, eq. 1;
MoCo-BERT, Wang et al. 2021, section 2, eq. 2).

For an L2-normalised query q (from the base encoder), its positive key k+ (from the
momentum encoder) and K queued negatives k_1..k_K, it optimizes::

    L(q) = -log( exp(q . k+ / tau) / (exp(q . k+ / tau) + sum_i exp(q . k_i / tau)) )

i.e. a (K+1)-way softmax classification whose correct class is the positive, averaged
over the queries. Keys and queue carry no gradient (the caller passes them detached).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class QueueInfoNCELoss(nn.Module):
    """InfoNCE against a queue (MoCo, He et al. 2020, eq. 1; MoCo-BERT eq. 2): -log of the positive key's
    probability in a (1 + K)-way softmax of q . k / tau, averaged over queries (the module docstring)."""

    def __init__(self, temperature: float = 0.04):
        super().__init__()
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        self.temperature = temperature

    def forward(self, queries: torch.Tensor, positives: torch.Tensor, queue: torch.Tensor) -> torch.Tensor:
        """queries (B, D), positives (B, D), queue (K, D), all L2-normalised -> scalar."""
        l_pos = (queries * positives.to(queries.dtype)).sum(-1, keepdim=True)  # (B, 1)
        l_neg = queries @ queue.to(queries.dtype).T  # (B, K)
        logits = torch.cat([l_pos, l_neg], dim=1) / self.temperature  # (B, 1+K)
        labels = torch.zeros(queries.shape[0], dtype=torch.long, device=queries.device)  # the positive is class 0
        return F.cross_entropy(logits.float(), labels)

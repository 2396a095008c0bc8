"""Translation ranking (TR) loss with in-batch negatives gathered across ranks.

Optimizes, for source embeddings x_i and their translations y_i (Guo et al. 2018;
additive margin: Yang et al. 2019; as used by LaBSE, Feng et al. 2022, and by DAP,
Li et al. 2023, section 3.3.1, eq. 5, whose phi is a plain inner product without margin
or temperature: DAP's cosine / 0.05 and m = 0 are the authors' code)::

    L = -1/N sum_i log( exp((phi(x_i, y_i) - m) / tau)
                        / (exp((phi(x_i, y_i) - m) / tau) + sum_{j != i} exp(phi(x_i, y_j) / tau)) )

with phi the cosine similarity, tau a temperature and m an additive margin (0 = plain
softmax). The candidates y_j are the whole *global* batch: embeddings from every rank
are gathered (with gradient) before scoring, so W processes with B pairs each compute
the same loss as one process with W*B pairs. ``bidirectional=True`` adds the y->x term
and averages the two (Yang et al. 2019); DAP's eq. 5 is the x->y direction only.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from common.distributed.collectives import gather_with_grad, rank


class TranslationRankingLoss(nn.Module):
    """Translation ranking (Guo et al. 2018; DAP eq. 5, scored as the authors' code does): -log softmax of the true
    translation's margin-reduced cosine / tau among the global batch's candidates, averaged over sources (optionally
    both directions)."""

    def __init__(self, temperature: float = 0.05, margin: float = 0.0, bidirectional: bool = False):
        super().__init__()
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        self.temperature = temperature
        self.margin = margin
        self.bidirectional = bidirectional

    def _direction(self, queries: torch.Tensor, candidates: torch.Tensor, offset: int) -> torch.Tensor:
        # queries: (B, D) local; candidates: (W*B, D) global
        scores = queries @ candidates.T  # (B, W*B)
        labels = torch.arange(queries.shape[0], device=queries.device) + offset  # (B,)
        if self.margin:
            scores = scores - self.margin * F.one_hot(labels, scores.shape[1]).to(scores.dtype)
        return F.cross_entropy(scores / self.temperature, labels)

    def forward(self, src: torch.Tensor, trg: torch.Tensor) -> torch.Tensor:
        """src, trg: (B, D) local embeddings of aligned pairs -> scalar loss of this rank's rows."""
        src, trg = F.normalize(src, dim=-1), F.normalize(trg, dim=-1)
        offset = rank() * src.shape[0]
        loss = self._direction(src, gather_with_grad(trg), offset)
        if self.bidirectional:
            loss = (loss + self._direction(trg, gather_with_grad(src), offset)) / 2
        return loss

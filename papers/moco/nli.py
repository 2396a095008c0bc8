"""NLI classification head for MoCo-BERT's multi-task variant (appendix B, eq. 5).

The paper: "a two-layer MLP with 256 hidden units, ReLU activation, and a 3-way
classification head is added on top of the sentence representations. Dropout 0.1 is
applied to the hidden units." It does not say how the premise and hypothesis vectors u, v
are combined. We feed (u, v, |u - v|), the combination of SBERT (Reimers & Gurevych 2019,
section 3) -- the paper follows SBERT's STS protocol and compares against SBERT-NLI, and
SBERT found this combination best for NLI training. "Two-layer" is read as two linear maps:
Linear(3D, 256) -> ReLU -> Dropout(0.1) -> Linear(256, 3).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

NLI_LABELS = ("entailment", "neutral", "contradiction")


class NLIHead(nn.Module):
    def __init__(self, dim: int, hidden: int = 256, dropout: float = 0.1, num_labels: int = 3):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(3 * dim, hidden), nn.ReLU(), nn.Dropout(dropout),
                                 nn.Linear(hidden, num_labels))

    def forward(self, u: torch.Tensor, v: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """u, v: (B, D) premise / hypothesis representations; labels: (B,) -> cross-entropy."""
        logits = self.mlp(torch.cat([u, v, (u - v).abs()], dim=-1))  # (B, 3)
        return F.cross_entropy(logits.float(), labels)

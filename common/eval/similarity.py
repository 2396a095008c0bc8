"""Exact batched cosine k-nearest-neighbour search (CPU or GPU).

Scores are computed block by block (``block`` query rows at a time) and reduced with
``topk`` at once, so memory is O(block x N) and a 200k x 200k search needs no N x N
matrix. Exactness keeps evaluation deterministic, unlike approximate indexes.
"""
from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

Embed = Callable[[list[str]], torch.Tensor]  # sentences -> (N, D) embeddings


def normalize(x: torch.Tensor) -> torch.Tensor:
    return F.normalize(x.float(), dim=-1)


@torch.no_grad()
def knn(queries: torch.Tensor, keys: torch.Tensor, k: int, block: int = 1024) -> tuple[torch.Tensor, torch.Tensor]:
    """Inner-product top-k of each query row among key rows -> (scores (Q, k), indices (Q, k))."""
    k = min(k, keys.shape[0])
    scores, idx = [], []
    for start in range(0, queries.shape[0], block):
        s, i = (queries[start:start + block] @ keys.T).topk(k, dim=1)
        scores.append(s)
        idx.append(i)
    return torch.cat(scores), torch.cat(idx)


@torch.no_grad()
def knn_both(x: torch.Tensor, y: torch.Tensor, k: int,
             block: int = 1024) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Top-k of x rows among y rows *and* of y rows among x rows from one pass over x @ y.T.

    Each block of scores (block, Ny) gives the forward top-k of its rows and a column-wise
    top-k that is merged into a running (k, Ny) backward top-k, so the Nx x Ny products are
    computed once instead of twice. Returns (fwd scores (Nx, k), fwd idx, bwd scores (Ny, k), bwd idx).
    """
    kf, kb = min(k, y.shape[0]), min(k, x.shape[0])
    fwd_s, fwd_i = [], []
    bwd_s = torch.full((kb, y.shape[0]), float("-inf"))
    bwd_i = torch.zeros((kb, y.shape[0]), dtype=torch.long)
    for start in range(0, x.shape[0], block):
        scores = x[start:start + block] @ y.T  # (b, Ny)
        s, i = scores.topk(kf, dim=1)
        fwd_s.append(s)
        fwd_i.append(i)
        cs, ci = scores.topk(min(kb, scores.shape[0]), dim=0)  # (<=k, Ny)
        merged_s = torch.cat([bwd_s, cs])
        merged_i = torch.cat([bwd_i, ci + start])
        top = merged_s.topk(kb, dim=0)
        bwd_s, bwd_i = top.values, merged_i.gather(0, top.indices)
    return torch.cat(fwd_s), torch.cat(fwd_i), bwd_s.T.contiguous(), bwd_i.T.contiguous()

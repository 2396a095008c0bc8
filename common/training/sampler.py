"""Deterministic, resumable batch order.

Step ``s`` reads global batch ``s mod batches_per_epoch`` of the permutation of epoch
``s div batches_per_epoch``; the permutation depends only on (seed, epoch). Rank r of W
takes rows [r*B/W, (r+1)*B/W) of the global batch. So the examples a step sees do not
depend on the world size or on whether the run was resumed (a resumed run starts at its
step's sample offset), and the last short batch of each epoch is dropped.

``shuffle``: ``randperm`` draws the epoch's permutation with ``torch.randperm`` (8 bytes per
example; the smoke and mini scales, whose committed results were trained in this order);
``feistel`` evaluates a keyed permutation at the batch's positions only, in O(1) memory
(:mod:`common.training.permutation`; the paper scale, whose corpora run to millions of pairs).
"""
from __future__ import annotations

import numpy as np
import torch

from common.training.permutation import FeistelPermutation

SHUFFLES = ("randperm", "feistel")


class StepSampler:
    def __init__(self, num_examples: int, global_batch: int, seed: int, rank: int = 0, world_size: int = 1,
                 shuffle: str = "randperm"):
        if global_batch % world_size:
            raise ValueError(f"global batch {global_batch} is not a multiple of world size {world_size}")
        if num_examples < global_batch:
            raise ValueError(f"{num_examples} training examples cannot fill one global batch of {global_batch}")
        if shuffle not in SHUFFLES:
            raise ValueError(f"unknown shuffle {shuffle!r}; expected one of {SHUFFLES}")
        self.n, self.batch, self.seed = num_examples, global_batch, seed
        self.rank, self.world, self.shuffle = rank, world_size, shuffle
        self.batches_per_epoch = num_examples // global_batch
        self._cache: tuple[int, torch.Tensor | FeistelPermutation] | None = None

    def _perm(self, epoch: int) -> torch.Tensor | FeistelPermutation:
        if self._cache is None or self._cache[0] != epoch:
            seed = self.seed * 1_000_003 + epoch
            perm = (torch.randperm(self.n, generator=torch.Generator().manual_seed(seed)) if self.shuffle == "randperm"
                    else FeistelPermutation(self.n, seed))
            self._cache = (epoch, perm)
        return self._cache[1]

    def global_indices(self, step: int) -> list[int]:
        epoch, b = divmod(step, self.batches_per_epoch)
        perm = self._perm(epoch)
        if isinstance(perm, FeistelPermutation):
            indices: list[int] = perm(np.arange(b * self.batch, (b + 1) * self.batch)).tolist()
        else:
            indices = perm[b * self.batch:(b + 1) * self.batch].tolist()
        return indices

    def local_indices(self, step: int) -> list[int]:
        g = self.global_indices(step)
        per = self.batch // self.world
        return g[self.rank * per:(self.rank + 1) * per]

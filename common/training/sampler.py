"""Deterministic, resumable batch order.

Step ``s`` reads global batch ``s mod batches_per_epoch`` of the permutation of epoch
``s div batches_per_epoch``; the permutation depends only on (seed, epoch). Rank r of W
takes rows [r*B/W, (r+1)*B/W) of the global batch. So the examples a step sees do not
depend on the world size or on whether the run was resumed, and the last short batch of
each epoch is dropped.
"""
from __future__ import annotations

import torch


class StepSampler:
    def __init__(self, num_examples: int, global_batch: int, seed: int, rank: int = 0, world_size: int = 1):
        if global_batch % world_size:
            raise ValueError(f"global batch {global_batch} is not a multiple of world size {world_size}")
        if num_examples < global_batch:
            raise ValueError(f"{num_examples} training examples cannot fill one global batch of {global_batch}")
        self.n, self.batch, self.seed = num_examples, global_batch, seed
        self.rank, self.world = rank, world_size
        self.batches_per_epoch = num_examples // global_batch
        self._cache: tuple[int, torch.Tensor] | None = None

    def _perm(self, epoch: int) -> torch.Tensor:
        if self._cache is None or self._cache[0] != epoch:
            g = torch.Generator().manual_seed(self.seed * 1_000_003 + epoch)
            self._cache = (epoch, torch.randperm(self.n, generator=g))
        return self._cache[1]

    def global_indices(self, step: int) -> list[int]:
        epoch, b = divmod(step, self.batches_per_epoch)
        return self._perm(epoch)[b * self.batch:(b + 1) * self.batch].tolist()

    def local_indices(self, step: int) -> list[int]:
        g = self.global_indices(step)
        per = self.batch // self.world
        return g[self.rank * per:(self.rank + 1) * per]

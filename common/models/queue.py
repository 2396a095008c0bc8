"""A memory queue of key vectors (He et al. 2020, MoCo, section 3.2 and Algorithm 1).

The queue is a ring buffer of ``size`` L2-normalised vectors held as module buffers (so
checkpoints save it and resume exactly). It starts as random unit vectors, as in the
reference implementation. ``_dequeue_and_enqueue`` overwrites the oldest ``n`` rows with
the keys of the current *global* batch: callers gather keys from every rank first, so all
ranks hold identical queues. ``size`` must be a multiple of ``n``, so a batch never
straddles the end of the buffer. The pointer stays a tensor on the queue's device and the rows are
written at tensor indices (``index_copy_``): no host-device sync in the training step.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class KeyQueue(nn.Module):
    def __init__(self, size: int, dim: int, generator: torch.Generator | None = None):
        super().__init__()
        if size <= 0:
            raise ValueError(f"queue size must be positive, got {size}")
        self.size = size
        self.register_buffer("keys", F.normalize(torch.randn(size, dim, generator=generator), dim=1))  # (K, D)
        self.register_buffer("ptr", torch.zeros((), dtype=torch.long))

    def negatives(self) -> torch.Tensor:
        """A detached copy of the queue, (K, D): the queue is updated in place after the loss is computed, and the
        backward pass (which reads the negatives) must not see that change. The copy is a product with 1, not a
        ``clone``: under ``torch.compile`` the inductor drops a clone of a graph input as a no-op even where the graph
        later overwrites that input (pytorch/pytorch#198131), so the backward would read the updated queue (a
        compiled MoCo-BERT step's gradients differed from eager's; tests/papers/test_compiled_steps.py)."""
        return self.keys.detach() * 1.0

    @torch.no_grad()
    def _dequeue_and_enqueue(self, keys: torch.Tensor) -> None:
        """keys: (N, D), the momentum-encoded keys of the whole global batch."""
        n = keys.shape[0]
        if self.size % n:
            raise ValueError(f"queue size {self.size} is not a multiple of the global batch {n}; "
                             "choose a queue size divisible by the global batch size")
        rows = self.ptr + torch.arange(n, device=self.ptr.device)  # (N,) never past the end: size % n == 0
        self.keys.index_copy_(0, rows, keys.to(self.keys.dtype))
        self.ptr.copy_((self.ptr + n) % self.size)

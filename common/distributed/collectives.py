"""Every collective the project calls, in one module (nothing else calls ``torch.distributed`` collectives:
``tests/common/distributed/test_collectives.py`` checks the source tree for it).

Each function works identically with one process (no process group: a no-op or the identity) and many, and
hands the backend tensors on the device they came from: NCCL accepts CUDA tensors only, so a collective never
moves a tensor to the CPU first (a logged scalar is read back *after* its all-reduce).

``gather_with_grad`` concatenates a tensor from every rank along dim 0 and keeps the autograd graph (its backward
sums the incoming gradients across ranks and hands each rank the rows it contributed), so a contrastive loss
computed against the global batch on each rank, averaged by the data-parallel engine, has the gradient of the
global loss.
"""
from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist


def is_distributed() -> bool:
    return bool(dist.is_available() and dist.is_initialized())


def rank() -> int:
    return dist.get_rank() if is_distributed() else 0


def world_size() -> int:
    return dist.get_world_size() if is_distributed() else 1


class _GatherWithGrad(torch.autograd.Function):
    """All-gather along dim 0 whose backward is a reduce-scatter (sum) of the output gradient.

    Written here rather than taken from ``torch.distributed.nn.functional.all_gather``: that
    one is deprecated, and its graph nodes, still alive when a worker destroys its gloo group
    (the last ``loss`` of a loop keeps them), made about one 2-process run in 15 abort at
    interpreter exit ("terminate called without an active exception"). Our nodes hold two
    ints and no process-group object.
    """

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:  # (B, ...) -> (W*B, ...)
        x = x.contiguous()
        out = x.new_empty((world_size() * x.shape[0], *x.shape[1:]))
        dist.all_gather_single(out, x)
        return out

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:  # (W*B, ...) -> (B, ...)
        grad = grad.contiguous()
        mine = grad.new_empty((grad.shape[0] // world_size(), *grad.shape[1:]))
        dist.reduce_scatter_single(mine, grad, op=dist.ReduceOp.SUM)
        return mine


def gather_with_grad(x: torch.Tensor) -> torch.Tensor:
    """(B, ...) on each rank -> (W*B, ...), rank r's rows at [r*B, (r+1)*B); every rank's B must match."""
    if world_size() == 1:
        return x
    return _GatherWithGrad.apply(x)


@torch.no_grad()
def gather_no_grad(x: torch.Tensor) -> torch.Tensor:
    """(B, ...) on each rank -> (W*B, ...) without a graph (MoCo's keys for the queue)."""
    if world_size() == 1:
        return x
    parts = [torch.empty_like(x) for _ in range(world_size())]
    dist.all_gather(parts, x.contiguous())
    return torch.cat(parts, dim=0)


def _all_reduce(x: torch.Tensor, op: dist.ReduceOp) -> torch.Tensor:
    """``op`` of ``x`` over ranks, on ``x``'s device, into a copy (``x`` itself at world size 1)."""
    if world_size() == 1:
        return x
    out = x.clone()
    dist.all_reduce(out, op=op)
    return out


@torch.no_grad()
def mean_over_ranks(x: torch.Tensor) -> torch.Tensor:
    """The element-wise mean of ``x`` over ranks, on ``x``'s device (one all-reduce)."""
    return _all_reduce(x, dist.ReduceOp.SUM) / world_size()


@torch.no_grad()
def max_over_ranks(x: torch.Tensor) -> torch.Tensor:
    """The element-wise maximum of ``x`` over ranks, on ``x``'s device (e.g. "does any rank want to stop?")."""
    return _all_reduce(x, dist.ReduceOp.MAX)


def all_gather_object(obj: Any) -> list[Any]:
    """Every rank's picklable ``obj``, in rank order (small objects only: RNG states, counters)."""
    if world_size() == 1:
        return [obj]
    out: list[Any] = [None] * world_size()
    dist.all_gather_object(out, obj)
    return out


def broadcast_object(obj: Any, src: int = 0) -> Any:
    """Rank ``src``'s picklable ``obj`` on every rank."""
    if world_size() == 1:
        return obj
    box = [obj]
    dist.broadcast_object_list(box, src=src)
    return box[0]


def barrier() -> None:
    if is_distributed():
        dist.barrier()

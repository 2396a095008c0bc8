"""Process-group helpers that work identically with one process and many.

``gather_with_grad`` concatenates a tensor from every rank along dim 0 and keeps the
autograd graph (``torch.distributed.nn.all_gather``: its backward sums the incoming
gradients across ranks), so a contrastive loss computed against the global batch on
each rank, averaged by the data-parallel engine, has the gradient of the global loss.
"""
from __future__ import annotations

import os
import socket

import torch
import torch.distributed as dist


def is_distributed() -> bool:
    return dist.is_available() and dist.is_initialized()


def rank() -> int:
    return dist.get_rank() if is_distributed() else 0


def world_size() -> int:
    return dist.get_world_size() if is_distributed() else 1


def gather_with_grad(x: torch.Tensor) -> torch.Tensor:
    """(B, ...) on each rank -> (W*B, ...), rank r's rows at [r*B, (r+1)*B)."""
    if world_size() == 1:
        return x
    from torch.distributed.nn.functional import all_gather

    return torch.cat(all_gather(x.contiguous()), dim=0)


@torch.no_grad()
def gather_no_grad(x: torch.Tensor) -> torch.Tensor:
    if world_size() == 1:
        return x
    parts = [torch.empty_like(x) for _ in range(world_size())]
    dist.all_gather(parts, x.contiguous())
    return torch.cat(parts, dim=0)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ensure_single_process_env() -> None:
    """Give a process started without a launcher the env vars ``init_process_group`` reads.

    A free port is picked so that several single-process jobs (parallel Snakemake jobs)
    never collide on MASTER_PORT.
    """
    if "WORLD_SIZE" in os.environ or "SLURM_NTASKS" in os.environ and "SLURM_PROCID" in os.environ:
        return
    os.environ.update({"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1",
                       "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port())})

"""Process-group helpers that work identically with one process and many.

``gather_with_grad`` concatenates a tensor from every rank along dim 0 and keeps the
autograd graph (its backward sums the incoming gradients across ranks and hands each rank
the rows it contributed), so a contrastive loss computed against the global batch on
each rank, averaged by the data-parallel engine, has the gradient of the global loss.
"""
from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator

import torch
import torch.distributed as dist


def is_distributed() -> bool:
    return dist.is_available() and dist.is_initialized()


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
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:  # (B, ...) -> (W*B, ...)
        x = x.contiguous()
        out = x.new_empty((world_size() * x.shape[0], *x.shape[1:]))
        dist.all_gather_single(out, x)
        return out

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:  # (W*B, ...) -> (B, ...)
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
    if world_size() == 1:
        return x
    parts = [torch.empty_like(x) for _ in range(world_size())]
    dist.all_gather(parts, x.contiguous())
    return torch.cat(parts, dim=0)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_slurm_host(nodelist: str) -> str:
    """The first host of a Slurm node list (``node[03-05,9],gpu1`` -> ``node03``) without calling scontrol."""
    head = nodelist.split(",")[0] if "[" not in nodelist.split(",")[0] else nodelist[: nodelist.index("]") + 1]
    if "[" not in head:
        return head
    prefix, ranges = head[: head.index("[")], head[head.index("[") + 1: head.index("]")]
    return prefix + ranges.split(",")[0].split("-")[0]


def ensure_process_group_env(env: dict | None = None) -> str:
    """Set the variables ``init_process_group`` reads (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
    MASTER_PORT) for whichever launcher started this process, and return its name:

    * ``torchrun`` / ``deepspeed`` -- they set the variables themselves: nothing to do;
    * ``srun`` -- one task per GPU (``srun --ntasks-per-node=G python -m ...``): rank, world size and
      local rank from SLURM_PROCID / SLURM_NTASKS / SLURM_LOCALID, the master on the first node of
      the job, its port derived from the job id (every task computes the same one);
    * nothing -- one process; a free port is picked so that parallel single-process jobs (several
      Snakemake jobs on one machine) never collide.
    """
    env = os.environ if env is None else env
    if "WORLD_SIZE" in env and "RANK" in env:
        return "torchrun"
    if "SLURM_PROCID" in env and int(env.get("SLURM_NTASKS", "1")) > 1:
        env.update({"RANK": env["SLURM_PROCID"], "WORLD_SIZE": env["SLURM_NTASKS"],
                    "LOCAL_RANK": env.get("SLURM_LOCALID", "0"),
                    "MASTER_ADDR": env.get("MASTER_ADDR") or first_slurm_host(env["SLURM_JOB_NODELIST"]),
                    "MASTER_PORT": env.get("MASTER_PORT") or str(20000 + int(env.get("SLURM_JOB_ID", "0")) % 20000)})
        return "srun"
    env.update({"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1",
                "MASTER_PORT": str(free_port())})
    return "single"


@contextlib.contextmanager
def process_group_teardown() -> Iterator[None]:
    """Tear the process group down on every exit path of the block it wraps.

    A process that exits with its gloo group still alive can abort in the group's destructor
    ("terminate called without an active exception") when a peer has already closed its sockets.
    So: on a normal exit (including a deliberate early stop), every rank waits at a barrier
    until all are done with collectives, then destroys the group; on an exception, the group is
    destroyed at once (a barrier could wait forever for a rank that is not coming).
    """
    ok = False
    try:
        yield
        ok = True
    finally:
        if is_distributed():
            if ok:
                dist.barrier()
            dist.destroy_process_group()

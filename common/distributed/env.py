"""Where a process stands in a multi-process job: the variables ``init_process_group`` reads, for whichever
launcher started it, and the tear-down of its process group."""
from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator, MutableMapping

import torch.distributed as dist

from common.distributed.collectives import barrier, is_distributed


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def first_slurm_host(nodelist: str) -> str:
    """The first host of a Slurm node list (``node[03-05,9],gpu1`` -> ``node03``) without calling scontrol."""
    head = nodelist.split(",")[0] if "[" not in nodelist.split(",")[0] else nodelist[: nodelist.index("]") + 1]
    if "[" not in head:
        return head
    prefix, ranges = head[: head.index("[")], head[head.index("[") + 1: head.index("]")]
    return prefix + ranges.split(",")[0].split("-")[0]


def slurm_port(job_id: str | int) -> int:
    """The rendezvous port of a Slurm job: every task of the job computes the same one, jobs differ."""
    return 20000 + int(job_id) % 20000


def ensure_process_group_env(env: MutableMapping[str, str] | None = None) -> str:
    """Set the variables ``init_process_group`` reads (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
    MASTER_PORT) for whichever launcher started this process, and return its name:

    * ``launch`` / ``torchrun`` / ``deepspeed`` -- they set the variables themselves: nothing to do
      (``common.distributed.launch`` marks its children with XLING_LAUNCHER=launch);
    * ``srun`` -- one task per GPU (``srun --ntasks-per-node=G python -m ...``): rank, world size and
      local rank from SLURM_PROCID / SLURM_NTASKS / SLURM_LOCALID, the master on the first node of
      the job, its port derived from the job id (every task computes the same one);
    * nothing -- one process: MASTER_PORT 0, so its store binds a port the OS assigns at that moment (a port
      picked free beforehand can be taken in between by another job's connection: EADDRINUSE, seen once in CI
      with parallel single-process Snakemake jobs).
    """
    env = os.environ if env is None else env
    if "WORLD_SIZE" in env and "RANK" in env:
        return env.get("XLING_LAUNCHER", "torchrun")
    if "SLURM_PROCID" in env and int(env.get("SLURM_NTASKS", "1")) > 1:
        env.update({"RANK": env["SLURM_PROCID"], "WORLD_SIZE": env["SLURM_NTASKS"],
                    "LOCAL_RANK": env.get("SLURM_LOCALID", "0"),
                    "MASTER_ADDR": env.get("MASTER_ADDR") or first_slurm_host(env["SLURM_JOB_NODELIST"]),
                    "MASTER_PORT": env.get("MASTER_PORT") or str(slurm_port(env.get("SLURM_JOB_ID", "0")))})
        return "srun"
    env.update({"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "0"})
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
                barrier()
            dist.destroy_process_group()

"""How a training rule starts its processes, from the paper config's ``training`` section.

* ``gpus`` <= 1, one node: ``python`` (one process; CPU or one GPU);
* ``gpus`` > 1, one node: ``torchrun --standalone --nproc_per_node <gpus>``;
* ``nodes`` > 1: ``srun python``, one task per GPU on every node; the trainer reads its rank,
  world size and master from the SLURM_* variables (``common.distributed.ensure_process_group_env``).

``resources`` are the matching Snakemake resources: ``gpu`` (GPUs of the job, all nodes), and for
multi-node jobs ``nodes``, ``tasks_per_node`` and ``mpi`` (so the Slurm executor starts the job
script once and our ``srun`` fans out).
"""
from __future__ import annotations


def launcher(training: dict) -> str:
    gpus, nodes = training.get("gpus", 0), training.get("nodes", 1)
    if nodes > 1:
        return "srun python"
    return f"torchrun --standalone --nproc_per_node {gpus}" if gpus > 1 else "python"


def resources(training: dict) -> dict:
    gpus, nodes = training.get("gpus", 0), training.get("nodes", 1)
    out = {"gpu": gpus * nodes}
    if nodes > 1:
        out.update(nodes=nodes, tasks_per_node=gpus, mpi="srun")
    return out


def job_resources(cfg: dict, stage: str) -> dict:
    """Memory (MB) and runtime (minutes) of one stage's jobs (``corpus``, ``train``, ``evaluate``)
    from the paper config's ``resources`` section, so each scale asks a cluster for what it needs."""
    return dict(cfg.get("resources", {}).get(stage, {}))

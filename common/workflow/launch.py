"""How a training job starts its processes, and what it asks a cluster for, from a config's ``training`` section
(``gpus`` per node, ``nodes``, ``threads`` per rank, ``launcher``). A job's ``gpus`` is the config's, or under
``training.job_gpus: memory`` at paper scale the census's count for that job (the fewest GPUs whose memory holds
its global batch at one micro batch: :func:`job_census_gpus`, ``common/census/shape.py``), or ``job_gpus``'s own
integer (``common.runs.placement``).

* ``gpus`` <= 1, one node: ``python`` (one process; CPU or one GPU);
* ``gpus`` > 1, one node: ``python -m common.distributed.launch --nproc <gpus>`` (one rank per GPU; it forwards
  SIGTERM / SIGUSR1 to the ranks and stops them all when one fails);
* a run that only saves its encoder (``common.runs.placement``): one rank, in the form the training jobs take;
* ``nodes`` > 1, or ``launcher: srun`` (and more than one rank): ``srun`` with one task per GPU on every node,
  each a rank that reads its rank, world size and master from the SLURM_* variables
  (``common.distributed.env.ensure_process_group_env``). The srun flags are explicit: the Slurm executor's job
  step hands the job script an environment without the allocation's SLURM_NTASKS / SLURM_CPUS_PER_TASK, so a
  bare ``srun`` would start one task per node. It runs without the allocation's SLURM_NTASKS_PER_GPU: srun
  refuses that together with ``--ntasks-per-node``, and it would bind each task to one GPU (cuda:0), where the
  ranks select ``cuda:<local rank>`` among their node's GPUs.

The Snakemake resources make the Slurm executor (snakemake-executor-plugin-slurm 2.x) submit that shape:

* one node: ``gpu`` (``--gpus``), ``nodes=1`` (so the GPUs are on one node) and ``cpus_per_task`` = ranks x
  threads (one task runs the launcher and its ranks);
* srun: ``nodes``, ``gres=gpu:<gpus>`` (per node; ``--gpus`` would be a total that Slurm may spread unevenly),
  ``tasks_per_gpu=1`` and ``tasks`` = nodes x GPUs (``--ntasks-per-gpu=1 --ntasks=<tasks>``: without
  ``tasks_per_gpu`` the executor passes ``tasks`` as the tasks per GPU, a job of tasks x GPUs ranks that never
  fits), ``cpus_per_task`` = threads and ``mpi="srun"`` (the executor runs the job script once and our ``srun``
  fans out). A one-task job (a run that only saves its encoder) has ``mpi=0``: the job-step plugin still leaves its
  script unwrapped (it reads whether the key is there), and the submitting plugin, which refuses an MPI job of one
  task ("For MPI jobs, 'tasks' must be greater than 1"), reads its value. Checked against a real Slurm whose node
  advertises GPU GRES (tests/test_slurm.py).

``snakemake -n`` prints each job's resources, so a dry run shows every job's Slurm shape.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.io import read_json
from common.runs import placement

LAUNCHERS = ("auto", "srun")


@dataclass(frozen=True)
class JobShape:
    command: str  # what precedes ``-m <module> <arguments>``
    threads: int  # Snakemake's threads of the job (CPUs of its first task)
    rank_threads: int  # OMP_NUM_THREADS of each rank
    resources: dict[str, Any]


def shape(training: dict[str, Any], launcher: str | None = None, method: str = "",
          from_memory: int | None = None) -> JobShape:
    """The job shape of a run of ``method`` under ``training``; ``launcher`` (the workflow config's) overrides
    ``training.launcher``; ``from_memory``: the job's GPUs as the census found them from memory
    (:func:`census_gpus`; used under ``training.job_gpus: memory``, :func:`common.runs.placement`). Every job keeps
    the form of the config's own shape (an ``srun`` job step where the config's jobs start theirs with ``srun``,
    one task for a run that only saves its encoder), so every job of the train rule has the same resource names."""
    training = training if launcher is None else {**training, "launcher": launcher}
    how = training.get("launcher", "auto")
    if how not in LAUNCHERS:
        raise ValueError(f"training.launcher: {how!r} is not one of {LAUNCHERS}")
    main_gpus, main_nodes = placement(training)
    srun = main_nodes > 1 or (how == "srun" and main_gpus > 1)
    gpus, nodes = placement(training, method, from_memory)
    threads = int(training.get("threads", 1))
    ranks = max(1, gpus)
    if srun:
        gres = {"gres": f"gpu:{gpus}", "tasks_per_gpu": 1} if gpus else {}
        command = (f"env -u SLURM_NTASKS_PER_GPU srun --nodes {nodes} --ntasks-per-node {ranks} "
                   f"--cpus-per-task {threads} --kill-on-bad-exit=1 " + (f"--gres gpu:{gpus} " if gpus else "")
                   + "python")
        # "mpi": the job-step plugin runs the script as it is where the key is present (our srun fans out); the
        # submitting plugin reads its value, and refuses a true one for a single task: one rank gets 0
        tasks = nodes * ranks
        return JobShape(command, threads, threads, {"nodes": nodes, "tasks": tasks, **gres, "cpus_per_task": threads,
                                                     "mpi": "srun" if tasks > 1 else 0})
    command = f"python -m common.distributed.launch --nproc {gpus}" if gpus > 1 else "python"
    resources: dict[str, Any] = {"gpu": gpus, "nodes": 1, "cpus_per_task": ranks * threads} if gpus else {"gpu": 0}
    return JobShape(command, ranks * threads, threads, resources)


def launcher(training: dict[str, Any]) -> str:
    return shape(training).command


def resources(training: dict[str, Any]) -> dict[str, Any]:
    return shape(training).resources


def job_resources(cfg: dict[str, Any], stage: str) -> dict[str, Any]:
    """Memory (MB) and runtime (minutes) of one stage's jobs (``corpus``, ``train``, ``evaluate``)
    from the paper config's ``resources`` section, so each scale asks a cluster for what it needs."""
    return dict(cfg.get("resources", {}).get(stage, {}))


CENSUS = Path(__file__).resolve().parents[2] / "figures" / "census" / "paper.json"


def census_jobs(experiment: str, path: Path = CENSUS) -> dict[str, dict[str, Any]]:
    """The census's rows of an experiment's training jobs (``init/method`` -> row; :mod:`common.census`)."""
    if not path.exists():
        return {}
    return dict(_census_jobs(experiment, path, path.stat().st_mtime_ns))


@functools.lru_cache(maxsize=16)
def _census_jobs(experiment: str, path: Path, mtime_ns: int) -> dict[str, dict[str, Any]]:
    """The rows, read once per file version (a dry run asks for each job's shape)."""
    return {r["job"]: r for r in read_json(path)["jobs"] if r["paper"] == experiment and "error" not in r}


def census_gpus(row: dict[str, Any] | None) -> int | None:
    """The GPUs the census found from memory for a job (its row's ``gpus`` where ``gpus_from`` is ``memory``:
    :mod:`common.census.shape`); None for a job it lacks or did not shape from memory."""
    return int(row["gpus"]) if row is not None and row.get("gpus_from") == "memory" else None


def job_census_gpus(cfg: dict[str, Any], experiment: str, job: str, census: Path = CENSUS) -> int | None:
    """:func:`census_gpus` of ``job`` (``init/method``) at paper scale, None at every other scale."""
    if cfg.get("scale") != "paper":
        return None
    return census_gpus(census_jobs(experiment, census).get(job))


def job_census_checkpointing(cfg: dict[str, Any], experiment: str, job: str, census: Path = CENSUS) -> str | None:
    """The activation checkpointing the census chose for ``job`` (``init/method``) under
    ``training.gradient_checkpointing: auto`` at paper scale (:mod:`common.census.checkpointing`); None where it
    chose none (another scale, another setting, a job it lacks): the job runs its config's."""
    if cfg.get("scale") != "paper" or cfg["training"].get("gradient_checkpointing") != "auto":
        return None
    chosen = census_jobs(experiment, census).get(job, {}).get("checkpointing")
    return None if chosen is None else str(chosen)


def train_resources(cfg: dict[str, Any], experiment: str, census: Path = CENSUS,
                    job: Callable[[Any], str] = lambda wc: f"{wc.init}/{wc.method}", ranks: int | None = None,
                    stage: str = "train",
                    variant: Callable[[Any], str] = lambda wc: getattr(wc, "method", "")) -> dict[str, Any]:
    """A job's ``mem_mb`` and ``runtime``: at paper scale the census's figures for that job (its wall time on an
    A100 at the job's MFU in the census, with a margin, at most the partition's longest; host memory for its
    ranks), so the Slurm profile asks for what the census counted;
    the config's ``resources.<stage>`` for a job the census lacks and at every other scale.
    ``job`` names a rule's job in the census from its wildcards (default: a pre-training run's ``init/method``;
    the NMT rules pass ``nmt/<setting>/<system>/<model>`` and their own ``ranks``, the evaluation rule
    ``eval/<init>/<task>``, one rank and ``stage="evaluate"``). Without ``ranks``, a job's ranks follow its run's
    variant (``variant``: the train rule's own mapping of a method name, so its shape and these figures agree)."""
    base = job_resources(cfg, stage)
    jobs = census_jobs(experiment, census) if cfg.get("scale") == "paper" else {}
    if not jobs:
        return base

    def ranks_of(wildcards: Any) -> int:
        """The ranks the job runs on: the caller's, or a training run's own (:func:`placement`)."""
        if ranks is not None:
            return ranks
        gpus, nodes = placement(cfg["training"], variant(wildcards), census_gpus(jobs.get(job(wildcards))))
        return max(1, gpus) * nodes

    def pick(key: str, fallback: str, per_rank: bool) -> Callable[[Any], Any]:
        """The census's figure, rescaled when the job runs on other ranks than counted (the ``gpus`` override, or
        ``job_gpus`` other than the census's):
        host memory grows with the ranks of a node, wall time shrinks with all ranks."""
        def value(wildcards: Any) -> Any:
            row = jobs.get(job(wildcards))
            if row is None or key not in row:  # not in the census, or its step not counted (too large here)
                return base.get(fallback)
            counted, runs_on = max(1, row["gpus"]) * row["nodes"], ranks_of(wildcards)
            return math.ceil(row[key] * (runs_on / counted if per_rank else counted / runs_on))
        return value

    return {**base, "mem_mb": pick("mem_mb", "mem_mb", True), "runtime": pick("runtime_minutes", "runtime", False)}

"""The run registry: every training run of an experiment (a paper, or the cross-paper leaderboard).

A :class:`Run` is (method, encoder initialisation, seed) plus the tasks it is evaluated on. Each
paper lists its runs once (``papers/<paper>/runs.py``: main methods x seeds, ablations on one seed),
and everything else derives from that list: the Snakemake targets (which models to train, which
results JSON to write), the artifact paths and the report's lookup of a method's seeds. So a seed
policy is written in exactly one place.

Each evaluation also belongs to one or more workflow targets (:mod:`common.targets`): ``all``, the
experiment's main target, unless the scale's config gives the outputs that read it a target of their own.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

# Every paper's name for the run that trains nothing: its encoder as it starts (0 updates), saved as a model folder so
# that it is evaluated like the others (the rows "scratch (no pre-training)", "VMSST at step 0", the initial MiniLM).
INIT = "init"
# the workflow target of an experiment's evaluations unless its config gives them another (papers/<p>/all)
MAIN_TARGET = "all"


def saves_only(method: str) -> bool:
    """Whether a run of ``method`` only saves its encoder: its job takes one rank (:func:`placement`), and the census
    counts no step for it."""
    return method == INIT


# ``training.job_gpus``: where a paper-scale training job's GPU count comes from (common/census/shape.py)
JOB_GPUS = ("memory", "paper")


def job_gpus_rule(training: dict[str, Any]) -> str | int:
    """``training.job_gpus``: ``memory`` (the census's count from memory), ``paper`` (the config's ``gpus``; the
    default) or a GPU count per node for every training job."""
    value = training.get("job_gpus", "paper")
    if isinstance(value, bool) or not (value in JOB_GPUS or isinstance(value, int) and value >= 0):
        raise ValueError(f"training.job_gpus: {value!r} is not one of {JOB_GPUS} or a GPU count")
    return value if isinstance(value, int) else str(value)


def gpus_source(training: dict[str, Any], from_memory: int | None) -> str:
    """Where :func:`placement` takes a training job's GPU count from: ``memory``, ``paper`` (the config's ``gpus``:
    the rule says so, or memory found no count) or ``config`` (``job_gpus`` is a count)."""
    rule = job_gpus_rule(training)
    if isinstance(rule, int):
        return "config"
    return "memory" if rule == "memory" and from_memory is not None else "paper"


def placement(training: dict[str, Any], method: str = "", from_memory: int | None = None) -> tuple[int, int]:
    """(GPUs per node, nodes) of the job of a run of ``method`` under a config's ``training`` section: one rank (one
    GPU where the training jobs have GPUs) for a run that only saves its encoder; otherwise by ``training.job_gpus``
    (:func:`gpus_source`): ``from_memory`` GPUs of one node (the census's count, :mod:`common.census.shape`), the
    config's ``gpus`` and ``nodes``, or the rule's count per node. The job shapes
    (:func:`common.workflow.launch.shape`), the census's rows and the Slurm figures read from the census all take a
    job's ranks from here."""
    gpus, nodes = int(training.get("gpus", 0)), int(training.get("nodes", 1))
    if saves_only(method):
        return min(1, gpus), 1
    source, rule = gpus_source(training, from_memory), job_gpus_rule(training)
    if source == "config" and isinstance(rule, int):
        return rule, nodes
    if source == "memory" and from_memory is not None:
        return from_memory, 1
    return gpus, nodes


@dataclass(frozen=True)
class Run:
    method: str
    init: str
    seed: int
    tasks: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """The run's place under ``models/`` and ``eval/``: ``<init>/<method>/seed<N>``."""
        return f"{self.init}/{self.method}/seed{self.seed}"


class RunRegistry:
    """The runs of one experiment at one scale, in a stable order, each (method, init, seed) once.

    Registering the same run twice merges its task lists (e.g. a main run that also serves as an
    ablation point), and the workflow targets of each of its evaluations."""

    def __init__(self, experiment: str, runs: Iterable[Run] = ()):
        self.experiment = experiment
        self._runs: dict[tuple[str, str, int], Run] = {}
        self._targets: dict[tuple[str, str, int, str], set[str]] = {}  # (method, init, seed, task) -> targets
        for run in runs:
            self.add(run)

    def add(self, run: Run, target: str = MAIN_TARGET) -> None:
        """Register ``run``, its evaluations part of the workflow target ``target`` (as well as of any target
        they were registered for before)."""
        key = (run.method, run.init, run.seed)
        tasks = run.tasks
        if key in self._runs:
            old = self._runs[key]
            run = Run(run.method, run.init, run.seed, old.tasks + tuple(t for t in run.tasks if t not in old.tasks))
        self._runs[key] = run
        for task in tasks:
            self._targets.setdefault((*key, task), set()).add(target)

    def __iter__(self) -> Iterator[Run]:
        return iter(self._runs.values())

    def __len__(self) -> int:
        return len(self._runs)

    def get(self, method: str, init: str, seed: int) -> Run:
        try:
            return self._runs[(method, init, seed)]
        except KeyError:
            raise KeyError(f"{self.experiment}: no run {init}/{method}/seed{seed}") from None

    def seeds(self, method: str, init: str) -> list[int]:
        """Every seed registered for (method, init), in registration order."""
        seeds = [r.seed for r in self if r.method == method and r.init == init]
        if not seeds:
            raise KeyError(f"{self.experiment}: no run of method {method!r} with init {init!r}")
        return seeds

    def inits(self) -> list[str]:
        return list(dict.fromkeys(r.init for r in self))

    def evaluations(self, target: str | None = None) -> list[tuple[Run, str]]:
        """Every (run, task) pair, one results JSON each; those of workflow target ``target`` where given."""
        return [(r, t) for r in self for t in r.tasks
                if target is None or target in self._targets[(r.method, r.init, r.seed, t)]]

    def runs(self, target: str | None = None) -> list[Run]:
        """The runs with an evaluation in workflow target ``target`` (the main one: also those evaluated on nothing);
        every run where none is given."""
        if target is None:
            return list(self)
        evaluated = {r for r, _ in self.evaluations(target)}
        return [r for r in self if r in evaluated or target == MAIN_TARGET and not r.tasks]

    def targets(self) -> list[str]:
        """The workflow targets of the registry's evaluations, the main one first."""
        names = {t for targets in self._targets.values() for t in targets}
        return sorted(names, key=lambda t: (t != MAIN_TARGET, t))

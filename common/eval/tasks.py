"""Evaluation tasks as declarations, in the spirit of MTEB's task metadata: one id = one protocol = one number.

A :class:`Task` names the data it reads (keys of a corpus manifest), its protocol parameters, the
split it reports and what its ``main_score`` is; the protocol is part of the id (``bucc@ratio-k4``
and ``bucc@distance-k3`` are two tasks). Parameters that must shrink with the scale (fine-tuning
budgets of XNLI) are declared per scale, so at one scale an id means one protocol for every paper.

The shared tasks are declared in :mod:`common.eval.declarations`, a paper's own (MoCo-BERT's t-SNE and
neighbours) in ``papers/<paper>/tasks.py``; :func:`load_tasks` imports ``DECLARATIONS`` and every paper's
``tasks`` module before the first lookup. They are plain data: the workflow and the reports read them without
importing torch or any evaluator. What runs a task is the evaluation function of its ``type``
(:mod:`common.eval.task_types`).
"""
from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.util import find_spec
from typing import Any

from common.registry import register


@dataclass(frozen=True)
class Task:
    id: str
    type: str
    description: str
    reference: str
    main_score: str
    split: str = "test"
    params: Mapping[str, Any] = field(default_factory=dict)
    scale_params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # the embedder kinds the task can run on (None: every kind); fine-tuning tasks need one HF encoder
    embedders: tuple[str, ...] | None = None

    def applies_to(self, embedder_kind: str) -> bool:
        return self.embedders is None or embedder_kind in self.embedders

    def params_for(self, scale: str) -> dict[str, Any]:
        return {**self.params, **self.scale_params.get(scale, {})}

    def declaration(self, scale: str) -> dict[str, Any]:
        """What the results JSON records about the protocol (and what its config hash covers)."""
        return {"id": self.id, "type": self.type, "reference": self.reference, "main_score": self.main_score,
                "split": self.split, "params": self.params_for(scale)}


TASKS: dict[str, Task] = {}


def register_task(task: Task) -> Task:
    return register(TASKS, task.id, task, "task")


DECLARATIONS = "common.eval.declarations"  # the shared tasks; each paper's own: papers.<paper>.tasks
_loaded = False


def paper_modules(name: str) -> list[str]:
    """``papers.<paper>.<name>`` for every paper package that has such a module."""
    papers = importlib.import_module("papers")
    found = (f"papers.{info.name}.{name}" for info in pkgutil.iter_modules(papers.__path__) if info.ispkg)
    return [m for m in found if find_spec(m) is not None]


def load_tasks() -> None:
    """Import every task declaration: :mod:`common.eval.declarations` and each ``papers.<paper>.tasks``."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in (DECLARATIONS, *paper_modules("tasks")):
        importlib.import_module(module)


def get_task(task_id: str) -> Task:
    load_tasks()
    if task_id not in TASKS:
        raise KeyError(f"unknown task {task_id!r}; registered: {', '.join(sorted(TASKS))}")
    return TASKS[task_id]

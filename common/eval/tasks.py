"""Evaluation tasks as declarations, in the spirit of MTEB's task metadata: one id = one protocol = one number.

A :class:`Task` names the data it reads (keys of a corpus manifest), its protocol parameters, the
split it reports and what its ``main_score`` is; the protocol is part of the id (``bucc@ratio-k4``
and ``bucc@distance-k3`` are two tasks). Parameters that must shrink with the scale (fine-tuning
budgets of XNLI) are declared per scale, so at one scale an id means one protocol for every paper.

Each task *type* has one evaluation function, registered in ``TASK_TYPES``; it receives the task
and an :class:`EvalContext` (the model's embedder, the corpus manifest, scale and seed) and returns
a :class:`TaskResult`. The evaluators' modules register their tasks and types themselves, and papers their extras
(MoCo-BERT's t-SNE and neighbours) in ``papers/<paper>/tasks.py``; :func:`load_tasks` imports every such module
(``TASK_PACKAGES``) before the first lookup.

Registered here:

* ``tatoeba@cosine`` -- LASER / DAP protocol (DAP section 4.4; MoCo-BERT Table 1): cosine nearest
  neighbour, both directions, every Tatoeba language of the manifest; main score = the mean over
  languages of the two-direction mean.
* ``bucc@ratio-k4`` (DAP appendix B), ``bucc@distance-k3`` (MoCo-BERT eq. 4), ``bucc@cosine``
  (VMSST "BUCC (cosine)"): best match with one-to-one filtering, threshold tuned on the manifest's
  tuning split and applied to its test split; main score = mean test F1 over the language pairs.
  ``bucc@cosine-oracle`` and ``bucc@ratio-k4-oracle``: VMSST's protocol (section 6.2), the threshold optimal
  on the reported split itself.
* ``sts-en@wmean`` -- the seven English STS sets (SentEval's "wmean" Spearman per set, averaged
  over the sets; MoCo-BERT Table 3). The "all" aggregation is stored beside it (Table 8).
* ``xnli@zero-shot`` -- fine-tune the whole encoder on English, accuracy on every language
  (DAP section 4.6 following InfoXLM); needs a model with one HF encoder.
"""
from __future__ import annotations

import hashlib
import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from common.models.embedder import Embedder, load_embedder
from common.registry import register, registrar


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


@dataclass
class TaskResult:
    scores: dict[str, Any]
    languages: list[str]
    files: list[Path]
    split: str | None = None  # the split actually reported, when the manifest decides it


@dataclass
class EvalContext:
    """What an evaluation function may use. ``encode`` caches embeddings for the life of the context,
    so several tasks of one job that embed the same sentences (BUCC with two scorings) embed them once."""

    model_dir: Path
    manifest: dict[str, Any]
    scale: str
    seed: int
    batch_size: int = 128
    precision: str = "fp32"  # encoder autocast during evaluation (recorded in every results JSON)
    cache: bool = False
    _embedder: Embedder | None = None
    _cache: dict[tuple[str, str, int], torch.Tensor] = field(default_factory=dict)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = load_embedder(self.model_dir, self.batch_size, precision=self.precision)
        return self._embedder

    def encode(self, sentences: list[str], lang: str) -> torch.Tensor:
        """(N, D) embeddings of ``sentences`` in language ``lang`` (cached when ``cache``)."""
        if not self.cache:
            return self.embedder.encode(sentences, lang)
        key = (lang, hashlib.sha256("\n".join(sentences).encode()).hexdigest(), len(sentences))
        if key not in self._cache:
            self._cache[key] = self.embedder.encode(sentences, lang)
        return self._cache[key]


TaskFn = Callable[[Task, EvalContext], TaskResult]
TASKS: dict[str, Task] = {}
TASK_TYPES: dict[str, TaskFn] = {}


register_task_type = registrar(TASK_TYPES, "task type")  # @register_task_type("tatoeba") on an evaluation function


def register_task(task: Task) -> Task:
    return register(TASKS, task.id, task, "task")


# Where task modules live: every module of these packages (and of their sub-packages' ``tasks`` modules) is imported
# once, and registers its tasks and task types itself; the registry names none of them.
TASK_PACKAGES = ("common.eval", "papers")
_loaded = False


def load_tasks() -> None:
    """Import every task module: the modules of ``common.eval`` and each ``papers.<paper>.tasks`` (each registers
    its own tasks and task types)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for name in TASK_PACKAGES:
        package = importlib.import_module(name)
        for info in pkgutil.iter_modules(package.__path__):
            module = f"{name}.{info.name}.tasks" if info.ispkg else f"{name}.{info.name}"
            if info.name != "__main__" and importlib.util.find_spec(module) is not None:
                importlib.import_module(module)


def get_task(task_id: str) -> Task:
    load_tasks()
    if task_id not in TASKS:
        raise KeyError(f"unknown task {task_id!r}; registered: {', '.join(sorted(TASKS))}")
    return TASKS[task_id]


def evaluate(task: Task, ctx: EvalContext) -> TaskResult:
    load_tasks()
    if task.type not in TASK_TYPES:
        raise KeyError(f"task {task.id!r}: no evaluation function for type {task.type!r}")
    result = TASK_TYPES[task.type](task, ctx)
    if "main_score" not in result.scores:
        raise ValueError(f"task {task.id!r}: its evaluation returned no main_score")
    return result


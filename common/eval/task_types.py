"""What runs a declared task (:mod:`common.eval.tasks`): one evaluation function per task *type*.

A type's function is registered in ``TASK_TYPES`` by the module that implements it (``@register_task_type``); it
receives the task and an :class:`EvalContext` (the model's embedder, the corpus manifest, scale and seed) and
returns a :class:`TaskResult`. :func:`load_task_types` imports those modules before the first evaluation: every
module of ``common.eval`` and each ``papers.<paper>.evaluators`` (a paper's own types).
"""
from __future__ import annotations

import hashlib
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from common.eval import progress
from common.eval.tasks import Task, paper_modules
from common.models.embedder import Embedder, load_embedder
from common.registry import registrar


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
    _embedder: Embedder | None = None  # set directly for a model from outside (common.models.embedder.load_model)
    _cache: dict[tuple[str, str, int, str], torch.Tensor] = field(default_factory=dict)
    prompt: str | None = None  # put before every sentence (a model's declared prompt for the running task)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = load_embedder(self.model_dir, self.batch_size, precision=self.precision)
        return self._embedder

    def use_prompt(self, prompt: str | None) -> None:
        self.prompt = prompt or None
        self.embedder.use_prompt(self.prompt)

    def _encode(self, sentences: list[str], lang: str) -> torch.Tensor:
        tracker = progress.active()
        tracker.start(f"embedding {len(set(sentences)):,} {lang} sentences", len(set(sentences)))
        self.embedder.on_batch = tracker.advance
        return self.embedder.encode(sentences, lang)

    def encode(self, sentences: list[str], lang: str) -> torch.Tensor:
        """(N, D) embeddings of ``sentences`` in language ``lang`` (cached when ``cache``)."""
        if not self.cache:
            return self._encode(sentences, lang)
        key = (lang, hashlib.sha256("\n".join(sentences).encode()).hexdigest(), len(sentences), self.prompt or "")
        if key not in self._cache:
            self._cache[key] = self._encode(sentences, lang)
        return self._cache[key]


TaskFn = Callable[[Task, EvalContext], TaskResult]
TASK_TYPES: dict[str, TaskFn] = {}

register_task_type = registrar(TASK_TYPES, "task type")  # @register_task_type("tatoeba") on an evaluation function

_loaded = False


def load_task_types() -> None:
    """Import every module of ``common.eval`` and each ``papers.<paper>.evaluators``: each registers the types it
    implements; the registry names none of them."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    package = importlib.import_module("common.eval")
    modules = [f"common.eval.{info.name}" for info in pkgutil.iter_modules(package.__path__)
               if not info.ispkg and info.name != "__main__"]
    for module in (*modules, *paper_modules("evaluators")):
        importlib.import_module(module)


def evaluate(task: Task, ctx: EvalContext) -> TaskResult:
    load_task_types()
    if task.type not in TASK_TYPES:
        raise KeyError(f"task {task.id!r}: no evaluation function for type {task.type!r}")
    result = TASK_TYPES[task.type](task, ctx)
    if "main_score" not in result.scores:
        raise ValueError(f"task {task.id!r}: its evaluation returned no main_score")
    return result

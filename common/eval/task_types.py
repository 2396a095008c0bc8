"""What runs a declared task (:mod:`common.eval.tasks`): one evaluation function per task *type*.

A type's function is registered in ``TASK_TYPES`` by the module that implements it (``@register_task_type``); it
receives the task and an :class:`EvalContext` (the model's embedder, the corpus manifest, scale and seed) and
returns a :class:`TaskResult`. :func:`load_task_types` imports those modules before the first evaluation: every
module of ``common.eval`` and each ``papers.<paper>.evaluators`` (a paper's own types).

Nothing non-finite is scored (:mod:`common.finite`): the model folder's files are checked before the first task
runs (:func:`common.models.model_files.check_model_folder`: readable, every weight finite), every embedding matrix
as it is computed (:meth:`EvalContext.encode`), and every metric a task returns (:func:`evaluate`: a ``main_score``
that is a finite number, no NaN or infinity anywhere in the scores).
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
from common.finite import require_finite, require_finite_rows
from common.io import DataFormatError
from common.models.embedder import META, Embedder, load_embedder
from common.models.model_files import check_model_folder
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
    so several tasks of one job that embed the same sentences (BUCC with two scorings) embed them once.
    ``manifest_path``: where ``manifest`` was read from, named by errors about its keys."""

    model_dir: Path
    manifest: dict[str, Any]
    scale: str
    seed: int
    batch_size: int = 128
    precision: str = "fp32"  # encoder autocast during evaluation (recorded in every results JSON)
    cache: bool = False
    manifest_path: Path | None = None
    _embedder: Embedder | None = None  # set directly for a model from outside (common.models.embedder.load_model)
    _cache: dict[tuple[str, str, int, str], torch.Tensor] = field(default_factory=dict)
    _checked: bool = False
    prompt: str | None = None  # put before every sentence (a model's declared prompt for the running task)

    def __post_init__(self) -> None:
        if self.batch_size < 1:  # encode_sentences would step through nothing and return uninitialised memory
            raise ValueError(f"batch_size: {self.batch_size}; encoding needs a batch size of at least 1")

    def check_model(self) -> None:
        """The model folder's files readable and its weights finite (once per context; not for an injected
        embedder: :func:`common.models.embedder.load_model` checks an outside model's folder itself)."""
        if not self._checked and self._embedder is None:
            check_model_folder(self.model_dir)
        self._checked = True

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self.check_model()
            self._embedder = load_embedder(self.model_dir, self.batch_size, precision=self.precision)
        return self._embedder

    def use_prompt(self, prompt: str | None) -> None:
        """Put ``prompt`` before every sentence the embedder encodes from now on (no model is loaded for None)."""
        self.prompt = prompt or None
        if self.prompt is not None or self._embedder is not None:
            self.embedder.use_prompt(self.prompt)

    def manifest_error(self, key: str, message: str) -> DataFormatError:
        """An error about one key of the corpus manifest, naming its file."""
        return DataFormatError(self.manifest_path or "the corpus manifest", None, f"{key}: {message}")

    def _encode(self, sentences: list[str], lang: str) -> torch.Tensor:
        tracker = progress.active()
        tracker.start(f"embedding {len(set(sentences)):,} {lang} sentences", len(set(sentences)))
        self.embedder.on_batch = tracker.advance
        return self._finite(self.embedder.encode(sentences, lang), sentences, lang)

    def encode(self, sentences: list[str], lang: str) -> torch.Tensor:
        """(N, D) embeddings of ``sentences`` in language ``lang`` (cached when ``cache``); a row that is not
        finite is a :class:`~common.finite.NonFiniteError` naming the model, the language and the sentence."""
        if not self.cache:
            return self._encode(sentences, lang)
        key = (lang, hashlib.sha256("\n".join(sentences).encode()).hexdigest(), len(sentences), self.prompt or "")
        if key not in self._cache:
            self._cache[key] = self._encode(sentences, lang)
        return self._cache[key]

    def _finite(self, emb: torch.Tensor, sentences: list[str], lang: str) -> torch.Tensor:
        if emb.ndim != 2 or emb.shape[0] != len(sentences):
            raise ValueError(f"{self.model_dir}: {tuple(emb.shape)} embeddings for {len(sentences)} {lang} sentences; "
                             "expected one row per sentence")
        require_finite_rows(emb, f"{self.model_dir}: embeddings of {len(sentences)} {lang} sentences", sentences)
        return emb


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
    """Run ``task``; the model folder is checked first (where it is one: ``embedder.json``), the scores after."""
    load_task_types()
    if task.type not in TASK_TYPES:
        raise KeyError(f"task {task.id!r}: no evaluation function for type {task.type!r}")
    if (ctx.model_dir / META).exists():
        ctx.check_model()
    result = TASK_TYPES[task.type](task, ctx)
    main = result.scores.get("main_score")
    if isinstance(main, bool) or not isinstance(main, int | float):
        raise ValueError(f"task {task.id!r} on {ctx.model_dir}: main_score is {main!r}, not a number")
    require_finite(result.scores, f"task {task.id!r} on {ctx.model_dir}: scores")
    return result

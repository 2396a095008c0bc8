"""The fine-tuning loop every fine-tuned evaluation shares (XTREME-style cross-lingual transfer: sentence-pair
classification, extractive question answering, token classification).

The whole encoder and a task head are trained on English data with AdamW, a linear warm-up over
``warmup_ratio`` of the steps and linear decay to zero, gradient clipping at 1.0 and the evaluation's precision
(autocast); ``epochs`` may be fractional. Each epoch visits a fresh permutation of the training items (seeded)
and drops the last incomplete batch. Evaluation code then runs the fine-tuned model on every test language.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import torch
from torch import nn

from common.eval import progress
from common.finite import NonFiniteError
from common.models.encoder import autocast

Batch = TypeVar("Batch")  # whatever a task's batches yield and its loss function takes


@dataclass
class FinetuneArguments:
    batch_size: int = 32
    learning_rate: float = 2e-5
    epochs: float = 2.0
    max_length: int = 128
    weight_decay: float = 0.0
    warmup_ratio: float = 0.1
    seed: int = 1
    eval_batch_size: int = 256


def train(model: nn.Module, n_train: int, batches: Callable[[list[int]], Iterable[Batch]],
          loss_fn: Callable[[nn.Module, Batch], torch.Tensor], args: FinetuneArguments, device: str = "cpu",
          precision: str = "fp32") -> dict[str, Any]:
    """Fine-tune ``model`` in place. ``batches(order)`` yields the training batches of the item indices ``order``
    (already moved to ``device``); ``loss_fn(model, batch)`` returns the batch loss. Returns the step count and
    the mean loss of the last 10 steps. The caller seeds torch (``torch.manual_seed(args.seed)``) before it builds
    the task head, so that the head's initialisation and the dropout draws follow from the seed."""
    rng = np.random.default_rng(args.seed)
    steps_per_epoch = max(1, n_train // args.batch_size)
    total = max(1, math.ceil(args.epochs * steps_per_epoch))
    opt = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay)
    warm = int(args.warmup_ratio * total)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / max(1, warm) if s < warm else max(0.0, (total - s) / max(1, total - warm)))
    model.train()
    step, losses = 0, []
    tracker = progress.active()
    tracker.start(f"fine-tuning, {total} steps", total)
    while step < total:
        order = rng.permutation(n_train).tolist()
        for batch in batches(order[: steps_per_epoch * args.batch_size]):
            with autocast(device, precision):
                loss = loss_fn(model, batch)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            losses.append(float(loss.detach()))  # a host sync per step already: the check costs nothing more
            step += 1
            tracker.advance()
            if not math.isfinite(losses[-1]):
                raise NonFiniteError(f"fine-tuning stopped at step {step}: the loss is {losses[-1]} (the encoder or "
                                     "its task head diverged); no score is reported")
            if step >= total:
                break
    model.eval()
    return {"train_steps": total, "final_train_loss": float(np.mean(losses[-10:])) if losses else None}


def check_length(model: nn.Module, max_length: int, model_path: str) -> None:
    limit = getattr(model.config, "max_position_embeddings", None)
    if limit is not None and max_length > limit:
        raise ValueError(f"fine-tuning max_length {max_length} exceeds the model's {limit} positions ({model_path}); "
                         "lower the task's max_length for this scale")


def arguments(params: Mapping[str, Any], seed: int) -> FinetuneArguments:
    """A fine-tuning task's parameters (its ``params_for(scale)``) as arguments, seeded with the run's seed."""
    return FinetuneArguments(batch_size=params["batch_size"], learning_rate=params["learning_rate"],
                             epochs=params["epochs"], max_length=params["max_length"],
                             weight_decay=params.get("weight_decay", 0.0), seed=seed)


def device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def dataset(manifest: Mapping[str, Any], key: str, name: str) -> dict[str, Any]:
    """The manifest's ``key.name`` entry (``{"train": path, "test": {lang: path}}``), or a clear error at a scale
    without that data."""
    entry: dict[str, Any] | None = manifest.get(key, {}).get(name)
    if entry is None:
        raise KeyError(f"the corpus has no '{name}' data (manifest key {key}.{name})")
    return entry


def training_files(entry: Mapping[str, Any], params: Mapping[str, Any]) -> list[str]:
    """The English training file, plus every machine-translated one for translate-train-all (``translate_train``
    task parameter)."""
    if not params.get("translate_train"):
        return [entry["train"]]
    if not entry.get("translate_train"):
        raise KeyError("translate-train-all needs the corpus's translate_train files for this task")
    return [entry["train"], *(p for _, p in sorted(entry["translate_train"].items()))]

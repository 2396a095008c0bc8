"""The training config's switches that change how a model computes its step, not what it computes: activation
checkpointing, the gradient cache and length-bucketed encoder calls. The trainer, the census's probe and the job-step
benchmark apply them through this one function, so that each counts or times the step the trainer takes."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from torch import nn

from common.training.activation_checkpointing import enable_activation_checkpointing
from common.training.grad_cache import enable_grad_cache
from common.training.length_buckets import enable_length_buckets


def apply_model_switches(model: nn.Module, training: Mapping[str, Any]) -> None:
    """``gradient_checkpointing`` (false, true / full, selective, auto: full here), ``grad_cache_rows`` (0: off) and
    ``length_buckets`` (0 or 1: off) of a config's ``training`` section, applied to ``model`` in place."""
    enable_activation_checkpointing(model, training.get("gradient_checkpointing", False))
    if training.get("grad_cache_rows"):
        enable_grad_cache(model, int(training["grad_cache_rows"]))
    if int(training.get("length_buckets") or 0) > 1:
        enable_length_buckets(model, int(training["length_buckets"]), int(training.get("length_multiple", 8)))

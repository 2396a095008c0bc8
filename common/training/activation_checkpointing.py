"""Activation checkpointing, full or selective: less activation memory for some recomputation in the backward pass.

``training.gradient_checkpointing``:

* ``full`` (or ``true``): each checkpointed layer keeps only its input; the backward pass runs the layer's whole
  forward again. The step does about 4/3 of its matrix-product work (one more forward).
* ``selective``: each checkpointed layer keeps the outputs of its matrix products and of its fused attention kernel
  (where it runs without attention dropout, whose draws must be made again: :func:`policy`), and recomputes only
  the cheap operations between them (layer norms, GELU, dropout, softmax where it is not fused, residual adds,
  autocast's weight casts). Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
  Models" (section 4.2): most of the activation memory of a layer lies in operations that cost few FLOPs. The
  matrix products are not repeated, so the step costs about what it costs without checkpointing, and keeps less
  than that: the layer-norm, GELU and dropout outputs and masks are dropped.
* ``false``: everything autograd needs is kept;
* ``auto``: at paper scale, the census's choice for each job (common/census/checkpointing.py), passed by the train
  rule; ``full`` where there is none.

Selective checkpointing is ``torch.utils.checkpoint``'s policy interface (``create_selective_checkpoint_contexts``)
with :func:`policy` below; under ``torch.compile`` the partitioner applies the same policy. Which layers are
checkpointed is the model's choice: Hugging Face models checkpoint each Transformer layer
(``activation_checkpointing_enable``); VMSST's decoders each of theirs (``papers/vmsst/decoder.py``).
"""
from __future__ import annotations

import contextlib
import contextvars
import logging
from collections.abc import Iterator
from typing import Any

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves
from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts

log = logging.getLogger(__name__)

MODES = ("full", "selective")
_aten = torch.ops.aten
# the operations whose outputs selective checkpointing keeps: matrix products and the fused attention kernels (CUDA's
# flash, memory-efficient and cuDNN kernels; the CPU's flash kernel)
SAVED_OPS = frozenset({
    _aten.mm.default, _aten.addmm.default, _aten.bmm.default, _aten.baddbmm.default,
    _aten._scaled_dot_product_flash_attention.default, _aten._scaled_dot_product_efficient_attention.default,
    _aten._scaled_dot_product_cudnn_attention.default, _aten._scaled_dot_product_flash_attention_for_cpu.default,
})


def mode_of(value: bool | str | None) -> str | None:
    """The checkpointing mode a ``gradient_checkpointing`` value names: ``full``, ``selective`` or None (off)."""
    if value is None or value is False:
        return None
    if value is True or value == "auto":  # auto: the census's choice arrives as an override; without one, full
        return "full"
    if value not in MODES:
        raise ValueError(f"gradient_checkpointing {value!r}: expected true, false, auto or one of {MODES}")
    return str(value)


def draws_random(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether ``op`` called with these arguments draws from the random generator: a fused attention kernel with
    attention dropout (``dropout_p`` > 0; CUDA's kernels draw inside; torch tags them random at any ``dropout_p``),
    or any other op torch tags as seeded-random (dropout's draws)."""
    names = [a.name for a in op._schema.arguments]
    if "dropout_p" in names:
        i = names.index("dropout_p")
        p = kwargs.get("dropout_p", args[i] if i < len(args) else 0.0)
        return bool(p > 0)
    return torch.Tag.nondeterministic_seeded in op.tags


def policy(ctx: Any, op: Any, *args: Any, **kwargs: Any) -> CheckpointPolicy:
    """Keep the outputs of :data:`SAVED_OPS`; recompute everything else. An op that draws random numbers is never
    kept: the recomputation restores the generator's state and must draw what the forward drew, in the same order,
    which a kept op would skip (a fused attention kernel with dropout: every dropout after it in the layer would draw
    other masks than the forward's)."""
    keep = op in SAVED_OPS and not draws_random(op, args, kwargs)
    return CheckpointPolicy.MUST_SAVE if keep else CheckpointPolicy.PREFER_RECOMPUTE


# where the census's probe collects the bytes selective checkpointing keeps: storage id -> bytes (None: not counting)
_kept: contextvars.ContextVar[dict[int, int] | None] = contextvars.ContextVar("selective_kept", default=None)


class _RecordKept(TorchDispatchMode):
    """Notes the output storages of the operations :func:`policy` keeps, as it decides for each call (the probe's
    count: autograd's ``saved_tensors_hooks`` do not see what the policy's cache holds)."""

    def __init__(self, sink: dict[int, int]):
        super().__init__()
        self.sink = sink

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if policy(None, func, *args, **kwargs) is CheckpointPolicy.MUST_SAVE:
            for t in tree_leaves(out):
                if isinstance(t, torch.Tensor):
                    s = t.untyped_storage()
                    self.sink[s._cdata] = s.nbytes()
        return out


@contextlib.contextmanager
def _entered(*contexts: Any) -> Iterator[None]:
    with contextlib.ExitStack() as stack:
        for c in contexts:
            stack.enter_context(c)
        yield


@contextlib.contextmanager
def _no_autocast_cache() -> Iterator[None]:
    """Autocast casts each weight at each use instead of once per autocast region: an eager recomputation must meet
    the operations its forward met, and a forward that found a weight's cast in the region's cache (the second of two
    encoder calls: a pair's two sides, a length bucket) runs no cast where the recomputation, in a region of its own,
    would run one."""
    was = torch.is_autocast_cache_enabled()
    torch.set_autocast_cache_enabled(False)
    try:
        yield
    finally:
        torch.set_autocast_cache_enabled(was)


def selective_contexts() -> tuple[Any, Any]:
    """``checkpoint``'s ``context_fn`` for selective checkpointing: the forward context caches what :func:`policy`
    keeps, the recomputation reads it back. Eager, both run without autocast's cast cache (and, while the probe
    counts, the forward also records what it keeps); under ``torch.compile`` the partitioner applies the policy to
    the traced graph, which takes the two modes as they are."""
    forward, recompute = create_selective_checkpoint_contexts(policy)
    if torch.compiler.is_compiling():
        return forward, recompute
    sink = _kept.get()
    recorder = () if sink is None else (_RecordKept(sink),)
    return _entered(_no_autocast_cache(), forward, *recorder), _entered(_no_autocast_cache(), recompute)


@contextlib.contextmanager
def count_selective_kept(sink: dict[int, int]) -> Iterator[None]:
    """While inside, selective checkpointing adds to ``sink`` (storage id -> bytes) each tensor it keeps."""
    token = _kept.set(sink)
    try:
        yield
    finally:
        _kept.reset(token)


def checkpoint_kwargs(mode: str) -> dict[str, Any]:
    """The keyword arguments of ``torch.utils.checkpoint.checkpoint`` for ``mode``."""
    kwargs: dict[str, Any] = {"use_reentrant": False}
    if mode_of(mode) == "selective":
        kwargs["context_fn"] = selective_contexts
    return kwargs


def enable_activation_checkpointing(model: nn.Module, mode: bool | str = "full") -> None:
    """Checkpoint activations in ``mode`` in every sub-module that supports it (Hugging Face models:
    ``activation_checkpointing_enable``, formerly ``gradient_checkpointing_enable``; our own decoders too)."""
    chosen = mode_of(mode)
    if chosen is None:
        return
    kwargs = checkpoint_kwargs(chosen)
    enabled = 0
    for m in model.modules():
        enable = getattr(m, "activation_checkpointing_enable", None)
        if enable is not None:
            enable(activation_checkpointing_kwargs=kwargs)
            enabled += 1
        elif (legacy := getattr(m, "gradient_checkpointing_enable", None)) is not None:
            legacy(gradient_checkpointing_kwargs=kwargs)
            enabled += 1
    log.info("activation checkpointing (%s) in %d module(s)", chosen, enabled)


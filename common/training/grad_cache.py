"""Gradient caching: a contrastive batch larger than activation memory allows, with the full batch's gradient.

Gao, Zhang, Han & Callan 2021, "Scaling Deep Contrastive Learning Batch Size under Memory Limited Setup"
(section 3): a contrastive loss couples the rows of a batch only through their representations. So (1) encode
the batch in chunks without keeping activations, (2) compute the loss on all representations and its gradient
with respect to them (the cache), (3) re-encode each chunk with activations and back-propagate the cached
gradient through it. The parameters receive exactly the full-batch gradient; activation memory is one chunk's, plus
the (B, D) representations.

Here steps (1)-(3) are ``torch.utils.checkpoint`` applied to each chunk of an encoder's forward: the checkpointed
forward keeps only the chunk's inputs and outputs, autograd computes the loss's gradient for every output first
(the loss was built after all chunks), then recomputes and back-propagates one chunk at a time (later chunks
first). The checkpoint restores each chunk's RNG state, so its dropout masks in the recomputation are the ones of
the first pass. With dropout, the masks of a chunked pass are other draws than those of one unchunked pass (same
distribution); without it the gradient equals the unchunked one to rounding (tests/common/training/test_grad_cache.py).

Which modules: an encoder whose forward treats the rows of its tensor arguments independently (batch on dim 0)
declares ``rowwise_forward = True`` (:class:`common.models.encoder.SentenceEncoder`, VMSST's inference networks).
Every paper's contrastive loss reads its representations from such a module, so the switch
(``training.grad_cache_rows``, the chunk size in rows; 0 = off) serves all four. Without gradients (momentum keys,
evaluation) the forward runs unchunked.
"""
from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

log = logging.getLogger(__name__)


def _rows(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
    sizes = {v.shape[0] for v in (*args, *kwargs.values()) if torch.is_tensor(v) and v.ndim > 0}
    if len(sizes) > 1:
        raise ValueError(f"grad cache: the tensor arguments disagree on the batch size ({sorted(sizes)})")
    return sizes.pop() if sizes else None


def _take(value: Any, start: int, stop: int) -> Any:
    return value[start:stop] if torch.is_tensor(value) and value.ndim > 0 else value


def _cat(parts: list[Any]) -> Any:
    first = parts[0]
    if torch.is_tensor(first):
        return torch.cat(parts)  # (B, ...)
    if isinstance(first, tuple):
        return tuple(_cat([p[i] for p in parts]) for i in range(len(first)))
    raise TypeError(f"grad cache: cannot join outputs of type {type(first).__name__} (tensors or tuples of them)")


def cached_forward(forward: Callable[..., Any], rows: int, *args: Any, **kwargs: Any) -> Any:
    """``forward(*args, **kwargs)`` in chunks of ``rows`` rows under activation checkpointing, outputs joined on
    dim 0; unchunked when no gradient is recorded or the batch fits one chunk."""
    batch = _rows(args, kwargs)
    if rows <= 0 or not torch.is_grad_enabled() or batch is None or batch <= rows:
        return forward(*args, **kwargs)
    parts = []
    for start in range(0, batch, rows):
        stop = min(start + rows, batch)
        parts.append(checkpoint(forward, *(_take(a, start, stop) for a in args), use_reentrant=False,
                                preserve_rng_state=True, **{k: _take(v, start, stop) for k, v in kwargs.items()}))
    return _cat(parts)


def enable_grad_cache(model: nn.Module, rows: int) -> int:
    """Encode in chunks of ``rows`` with cached gradients in every module of ``model`` that declares
    ``rowwise_forward``; returns how many modules it wrapped. The wrap is an instance attribute (``forward``), so
    parameter names, state dicts and saved models are unchanged."""
    wrapped = 0
    for m in model.modules():
        if getattr(type(m), "rowwise_forward", False) and "forward" not in vars(m):
            m.forward = functools.partial(cached_forward, type(m).forward.__get__(m), rows)
            wrapped += 1
    if rows > 0 and wrapped == 0:
        raise ValueError(f"grad_cache_rows={rows}, but {type(model).__name__} has no module with a row-wise forward")
    log.info("gradient cache: %d encoder(s) run in chunks of %d rows", wrapped, rows)
    return wrapped

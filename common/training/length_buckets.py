"""Length-bucketed encoder calls: the rows of a batch encoded in groups of similar length, each group cut to its own
longest row, so that the encoder does little work on padding.

A collator pads every row to the batch's longest. With lengths spread as in natural text (HICTL's sentences run to
256 tokens, its translation pairs to 512), most positions of such a batch are padding, and a Transformer layer's
work grows with the padded width. Here each call of an encoder backbone with an ``attention_mask``:

1. orders the rows by their extent (the last position the mask keeps, + 1),
2. splits them into ``buckets`` groups of equal size (the shortest rows first),
3. runs the backbone on each group cut to its longest extent, rounded up to a multiple of ``multiple`` columns
   (a compiled step meets few distinct widths),
4. pads each group's hidden states back to the batch's width with zeros and restores the rows' order.

The batch is unchanged: the same rows, the same negatives for every contrastive loss, one step. A row's hidden states
at the positions its mask keeps do not depend on how much padding follows it (attention masks the padding; nothing
else mixes rows or positions), so every pooled vector and every position a loss reads is what the padded call gives
(to rounding; tests/common/training/test_length_buckets.py). Positions past its group's width read zeros (padding:
no loss reads them). Dropout draws other masks than in one padded call (same distribution), as with the gradient cache.

Cost: one device-to-host copy of the groups' widths per call (a host sync) and a few shapes per step; under
``torch.compile`` the call is a graph break and each width a compiled shape. Worth it where rows are long and their
lengths spread, which is for the GPU benchmark to confirm; the config key is ``training.length_buckets`` (0 or 1:
off).

Which modules: the backbone of every module that declares ``rowwise_forward`` (``SentenceEncoder``, VMSST's
inference networks). A paper that calls that backbone directly (HICTL's language-model and word passes, DAP's TLM)
calls the wrapped one.
"""
from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

log = logging.getLogger(__name__)

ROW_ARGUMENTS = ("input_ids", "attention_mask", "token_type_ids", "inputs_embeds", "position_ids")


def bucketed_forward(forward: Callable[..., Any], buckets: int, multiple: int, *args: Any, **kwargs: Any) -> Any:
    """``forward(**kwargs)`` (a Hugging Face encoder's) in ``buckets`` length groups; unbucketed without a 2-D
    ``attention_mask``, with positional arguments, or with fewer than two rows per bucket."""
    mask = kwargs.get("attention_mask")
    if args or buckets <= 1 or mask is None or mask.ndim != 2 or mask.shape[0] < 2 * buckets:
        return forward(*args, **kwargs)
    B, S = mask.shape
    positions = torch.arange(1, S + 1, device=mask.device)  # (S,)
    extent = (mask.bool() * positions).amax(1)  # (B,): the columns each row needs
    order = torch.argsort(extent, stable=True)  # (B,) shortest first
    groups = order.split(math.ceil(B / buckets))
    widths = torch.stack([extent[g].amax() for g in groups]).tolist()  # one host sync per call
    parts = []
    for g, width in zip(groups, widths):
        width = min(S, max(1, math.ceil(width / multiple) * multiple))
        sub = {k: (v[g, :width] if k in ROW_ARGUMENTS and torch.is_tensor(v) else v) for k, v in kwargs.items()}
        h = forward(**sub).last_hidden_state  # (b, width, D)
        parts.append(F.pad(h, (0, 0, 0, S - width)))  # (b, S, D)
    inverse = torch.argsort(order)  # (B,)
    from transformers.modeling_outputs import BaseModelOutput

    return BaseModelOutput(last_hidden_state=torch.cat(parts)[inverse])  # (B, S, D) in the batch's row order


def enable_length_buckets(model: nn.Module, buckets: int, multiple: int = 8) -> int:
    """Bucket every call of the backbones of ``model``'s row-wise modules; returns how many backbones it wrapped.
    The wrap is an instance attribute (``forward``): parameter names and saved models are unchanged."""
    if buckets <= 1:
        return 0
    wrapped = 0
    for m in model.modules():
        backbone = getattr(m, "backbone", None)
        if getattr(type(m), "rowwise_forward", False) and backbone is not None and "forward" not in vars(backbone):
            backbone.forward = functools.partial(bucketed_forward, type(backbone).forward.__get__(backbone), buckets,
                                                 multiple)
            wrapped += 1
    if wrapped == 0:
        raise ValueError(f"length_buckets={buckets}, but {type(model).__name__} has no row-wise encoder backbone")
    log.info("length buckets: %d backbone(s) encode in %d groups of similar length", wrapped, buckets)
    return wrapped


def disable_length_buckets(model: nn.Module) -> int:
    """Undo :func:`enable_length_buckets` (the benchmark's rungs share one model); returns how many it unwrapped."""
    unwrapped = 0
    for m in model.modules():
        wrap = vars(m).get("forward")
        if isinstance(wrap, functools.partial) and wrap.func is bucketed_forward:
            del m.forward
            unwrapped += 1
    return unwrapped

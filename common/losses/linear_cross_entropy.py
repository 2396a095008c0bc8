"""Cross-entropy over a large vocabulary fused with its output projection, without materialising the logits.

What it optimizes: the token cross-entropy of a linear vocabulary head, ``-log softmax(h W^T + b)[t]`` per token,
the plain ``F.cross_entropy(F.linear(h, W, b).float(), t, ignore_index=...)`` -- the masked-language-model and
translation-language-model losses (Devlin et al. 2019; Conneau & Lample 2019), DAP's RTL loss (Li et al. 2023,
eq. 6) and VMSST's decoder likelihood (Wieting et al. 2023, section 3). The construction is the chunked
"linear + cross-entropy" of Hsu et al. 2024 (Liger Kernel) and Wijmans et al. 2025 ("Cut your losses in
large-vocabulary language models"), written here in plain PyTorch.

Why: the plain loss materialises N x V logits in the compute dtype, their fp32 copy, the fp32 log-softmax saved
for the backward pass and an N x V gradient. At DAP's paper shapes (mBERT, 119,547 ids, ~3,840 scored tokens per
GPU) that is several GB of memory traffic for one matrix product; at HICTL's and VMSST's 250k vocabularies more.

How (:class:`_LinearCrossEntropy`, a custom autograd Function):

* The N tokens are split into chunks of ``chunk`` rows. Each chunk's logits (C, V) are computed in the compute
  dtype (the autocast dtype where autocast is on: bf16 products on tensor cores / AMX), up-cast to fp32 for the
  log-sum-exp (fp32 accumulation), and dropped before the next chunk: at most one chunk's logits are alive.
* ``reduction`` "sum" or "mean" (a scalar loss, with optional per-token ``weights`` known at the forward pass):
  the gradient of each chunk, ``(softmax - onehot) * weight``, is formed right away and turned into the
  gradients with respect to the hidden states (C, D), the weight (V, D, accumulated in fp32) and the bias; the
  backward pass only scales them by the incoming scalar gradient. No logits are recomputed: the head costs the
  plain loss's three matrix products, and what is kept between the passes is (N, D) + (V, D) instead of N x V.
  These gradients carry no loss scale (fp16's dynamic scaling multiplies the backward's incoming gradient, which
  comes after them), so they are formed at a power of two that brings the largest weight to 1 and divided by it in
  fp32: with fp16 products, small weights times small probabilities would otherwise fall below fp16's range.
* ``reduction`` "none" (one loss per token, whose upstream gradients are not known at the forward pass): the
  forward keeps the inputs and the (N,) log-sum-exp; the backward recomputes each chunk's logits (one more
  matrix product, a third of the head's plain cost) and forms the same gradients.
* Rows whose target is ``ignore_index`` cost their share of the products (shapes stay static: no data-dependent
  indexing, so a compiled step keeps one graph) and contribute 0 to the loss and the gradients. "mean" divides
  by the number of scored rows, at least 1: a batch without any gives 0 (F.cross_entropy gives nan), so the
  step needs no host-side check.

Chunks are over tokens only: the vocabulary stays whole in each product, so its log-sum-exp needs no online
rescaling, and with chunks of >= ~1,000 tokens the fp32 accumulation of the weight gradient (V x D per chunk) is
small beside the chunk's 6 C V D FLOPs. ``chunk=None`` sizes chunks so that one chunk's fp32 logits hold at most
``DEFAULT_CHUNK_ELEMENTS`` values.

``impl="plain"`` computes the same loss with materialised logits (``F.cross_entropy`` over the fp32 logits): the
reference the tests compare against, and the rung of ``scripts/bench_mfu.py`` that measures what the fusion buys.
"""
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

IMPLEMENTATIONS = ("fused", "plain")
REDUCTIONS = ("mean", "sum", "none")
DEFAULT_CHUNK_ELEMENTS = 2**28  # fp32 logits of one chunk: 1 GiB (mBERT: ~2,245 tokens; 250k ids: ~1,073)


def compute_dtype(x: torch.Tensor) -> torch.dtype:
    """The dtype a matrix product of ``x`` runs in here: autocast's where it is on for ``x``'s device, else x's."""
    device = x.device.type
    if torch.is_autocast_enabled(device):
        return torch.get_autocast_dtype(device)
    return x.dtype


def default_chunk(rows: int, vocab: int, elements: int = DEFAULT_CHUNK_ELEMENTS) -> int:
    """Rows per chunk so that one chunk's logits hold at most ``elements`` values (at least 1 row)."""
    return max(1, min(rows, elements // max(vocab, 1)))


def _chunk_logits(h: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None) -> torch.Tensor:
    """(C, D) x (V, D)^T + (V,) in the dtype of ``w`` -> fp32 (C, V)."""
    logits = torch.addmm(b, h, w.T) if b is not None else h @ w.T  # (C, V), compute dtype
    return logits.float()


def _softmax_minus_onehot(logp: torch.Tensor, target: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """(softmax - onehot(target)) * scale[:, None] from the fp32 log-softmax ``logp`` (C, V), in its place."""
    p = logp.exp_()  # (C, V) softmax
    p.scatter_add_(1, target[:, None], -torch.ones_like(scale[:, None]))
    return p.mul_(scale[:, None])


def _accumulate(grad_logits: torch.Tensor, h: torch.Tensor, w: torch.Tensor, dtype: torch.dtype, need_h: bool,
                grad_w: torch.Tensor | None, grad_b: torch.Tensor | None) -> torch.Tensor | None:
    """The chunk's d(loss)/dh (C, D) in fp32 (None unless ``need_h``); adds its d/dW (V, D) and d/db (V,) into the
    fp32 buffers given. The products run in ``dtype``."""
    g = grad_logits.to(dtype)  # (C, V)
    if grad_w is not None:
        grad_w.add_((g.T @ h).float())  # (V, D): fp32 accumulation over chunks
    if grad_b is not None:
        grad_b.add_(grad_logits.sum(0))
    return (g @ w).float() if need_h else None  # (C, D)


def _gradient_scale(token_weights: torch.Tensor, scored: torch.Tensor) -> torch.Tensor:
    """A power of two that brings the largest |weight| of the scored rows to [1, 2): the gradients formed in the
    forward pass are the loss's own, not a loss-scaled backward's, so with fp16 products a 1/N weight would push small
    probabilities below fp16's range; they are formed at this scale and divided by it in fp32. 0-dim, on the device
    (no host sync); 1 where no row is scored."""
    largest = (token_weights.float().abs() * scored).max()
    return torch.where(largest > 0, torch.exp2(-torch.floor(torch.log2(largest.clamp_min(1e-30)))),
                       torch.ones_like(largest))


def _scaled(grad: torch.Tensor | None, scale: torch.Tensor, dtype: torch.dtype | None) -> torch.Tensor | None:
    """``grad * scale`` in ``dtype`` (None stays None)."""
    return None if grad is None or dtype is None else (grad * scale).to(dtype)


class _LinearCrossEntropy(torch.autograd.Function):
    """Per-token cross-entropy of ``hidden @ weight.T + bias`` in chunks (the module docstring).

    Returns (the weighted sum of the per-token losses, the per-token losses). In ``sum`` mode (``token_weights``
    given) only the first output carries a gradient, formed in the forward pass; otherwise (``token_weights``
    None) only the second does, recomputed in the backward pass."""

    @staticmethod
    def forward(ctx: Any, hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
                targets: torch.Tensor, token_weights: torch.Tensor | None, ignore_index: int, chunk: int,
                dtype: torch.dtype, need_grad: tuple[bool, bool, bool]) -> tuple[torch.Tensor, torch.Tensor]:
        scored = targets != ignore_index  # (N,)
        safe = torch.where(scored, targets, torch.zeros_like(targets))  # (N,) an ignored row reads column 0
        w = weight.to(dtype)  # (V, D)
        b = bias.to(dtype) if bias is not None else None
        eager_grads = token_weights is not None and any(need_grad)
        grad_w = torch.zeros(weight.shape, dtype=torch.float32, device=weight.device) \
            if eager_grads and need_grad[1] else None
        grad_b = torch.zeros(bias.shape, dtype=torch.float32, device=weight.device) \
            if eager_grads and bias is not None and need_grad[2] else None
        losses, lses, grad_h = [], [], []
        unit = _gradient_scale(token_weights, scored) if eager_grads and token_weights is not None else None
        with torch.autocast(hidden.device.type, enabled=False):
            for start in range(0, hidden.shape[0], chunk):
                h = hidden[start:start + chunk].to(dtype)  # (C, D)
                t, keep = safe[start:start + chunk], scored[start:start + chunk]
                logits = _chunk_logits(h, w, b)  # (C, V) fp32
                logp = torch.log_softmax(logits, dim=-1)  # (C, V): one fused pass (log-sum-exp in fp32)
                target_logp = logp.gather(1, t[:, None])[:, 0]  # (C,)
                losses.append(-target_logp * keep)
                if token_weights is None:  # the log-sum-exp, for the backward's recomputation
                    lses.append(logits.gather(1, t[:, None])[:, 0] - target_logp)
                del logits
                if eager_grads:
                    assert token_weights is not None and unit is not None
                    scale = token_weights[start:start + chunk].float() * keep * unit
                    g = _softmax_minus_onehot(logp, t, scale)
                    gh = _accumulate(g, h, w, dtype, need_grad[0], grad_w, grad_b)
                    if gh is not None:
                        grad_h.append((gh / unit).to(hidden.dtype))
        if unit is not None:  # back from the scale the gradients were formed at
            for buffer in (grad_w, grad_b):
                if buffer is not None:
                    buffer.div_(unit)
        per_token = torch.cat(losses)  # (N,) fp32, 0 at ignored rows
        ctx.dtype, ctx.chunk, ctx.eager = dtype, chunk, token_weights is not None
        ctx.weight_dtype = weight.dtype
        ctx.bias_dtype = bias.dtype if bias is not None else None
        if token_weights is not None:
            total = (per_token * token_weights.float()).sum()
            ctx.save_for_backward(torch.cat(grad_h) if grad_h else None, grad_w, grad_b)
            ctx.mark_non_differentiable(per_token)
            return total, per_token
        total = per_token.sum()
        ctx.save_for_backward(hidden, weight, bias, safe, scored, torch.cat(lses))
        ctx.mark_non_differentiable(total)
        return total, per_token

    @staticmethod
    def backward(ctx: Any, grad_total: torch.Tensor, grad_per_token: torch.Tensor) -> tuple[Any, ...]:
        none = (None,) * 6
        if ctx.eager:  # the gradients were formed in the forward pass: scale them by the incoming scalar
            grad_h, grad_w, grad_b = ctx.saved_tensors
            return (_scaled(grad_h, grad_total, grad_h.dtype if grad_h is not None else None),
                    _scaled(grad_w, grad_total, ctx.weight_dtype), _scaled(grad_b, grad_total, ctx.bias_dtype), *none)
        hidden, weight, bias, safe, scored, lse = ctx.saved_tensors
        dtype, chunk = ctx.dtype, ctx.chunk
        w = weight.to(dtype)
        b = bias.to(dtype) if bias is not None else None
        need_h, need_w, need_b = ctx.needs_input_grad[:3]
        grad_w = torch.zeros(weight.shape, dtype=torch.float32, device=weight.device) if need_w else None
        grad_b = torch.zeros(bias.shape, dtype=torch.float32, device=weight.device) \
            if need_b and bias is not None else None
        grad_h = []
        with torch.autocast(hidden.device.type, enabled=False):
            for start in range(0, hidden.shape[0], chunk):
                h = hidden[start:start + chunk].to(dtype)  # (C, D)
                stop = start + h.shape[0]
                logp = _chunk_logits(h, w, b).sub_(lse[start:stop, None])  # recomputed, (C, V) fp32 log-softmax
                scale = grad_per_token[start:stop].float() * scored[start:stop]
                g = _softmax_minus_onehot(logp, safe[start:stop], scale)
                gh = _accumulate(g, h, w, dtype, need_h, grad_w, grad_b)
                if gh is not None:
                    grad_h.append(gh.to(hidden.dtype))
        return (torch.cat(grad_h) if need_h else None, grad_w.to(weight.dtype) if grad_w is not None else None,
                grad_b.to(bias.dtype) if grad_b is not None else None, *none)


def _reduce(per_token: torch.Tensor, scored: torch.Tensor, weights: torch.Tensor | None,
            reduction: str) -> torch.Tensor:
    """The plain path's reduction, matching the fused one's definition."""
    if reduction == "none":
        return per_token
    total = (per_token * (weights.float() if weights is not None else 1.0)).sum()
    return total / scored.sum().clamp_min(1) if reduction == "mean" else total


def linear_cross_entropy(hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
                         targets: torch.Tensor, *, ignore_index: int = -100, reduction: str = "mean",
                         weights: torch.Tensor | None = None, chunk: int | None = None,
                         impl: str = "fused", return_per_token: bool = False) -> Any:
    """Cross-entropy of the logits ``hidden @ weight.T + bias`` against ``targets``.

    hidden (N, D), weight (V, D), bias (V,) or None, targets (N,) with ``ignore_index`` at rows without a loss.
    ``reduction``: "mean" (sum over scored rows / their count, 0 when there are none), "sum", or "none" ((N,) fp32,
    0 at ignored rows). ``weights`` (N,), "mean"/"sum" only: each row's loss is multiplied by its weight first (no
    gradient reaches the weights). ``chunk``: rows per chunk (None: :func:`default_chunk`). ``impl`` "plain":
    the same loss through materialised logits (the reference). ``return_per_token`` ("mean"/"sum"): also return
    the (N,) per-token losses, without gradient (for logging per-sentence values): (loss, per-token losses)."""
    if impl not in IMPLEMENTATIONS or reduction not in REDUCTIONS:
        raise ValueError(f"impl must be one of {IMPLEMENTATIONS} and reduction one of {REDUCTIONS}, "
                         f"got {impl!r}, {reduction!r}")
    if weights is not None and reduction == "none":
        raise ValueError("per-token weights apply to the 'mean' and 'sum' reductions")
    scored = targets != ignore_index  # (N,)
    if impl == "plain":
        logits = F.linear(hidden, weight, bias)  # (N, V) under autocast: the compute dtype
        per_token = F.cross_entropy(logits.float(), targets, ignore_index=ignore_index, reduction="none")
        loss = _reduce(per_token, scored, weights, reduction)
        return (loss, per_token.detach()) if return_per_token and reduction != "none" else loss
    dtype = compute_dtype(hidden)
    size = chunk if chunk is not None and chunk > 0 else default_chunk(hidden.shape[0], weight.shape[0])
    need = (hidden.requires_grad, weight.requires_grad, bias is not None and bias.requires_grad)
    need = need if torch.is_grad_enabled() else (False, False, False)
    if reduction == "none":
        return _LinearCrossEntropy.apply(hidden, weight, bias, targets, None, ignore_index, size, dtype, need)[1]
    row_weights = weights.float() if weights is not None else torch.ones_like(targets, dtype=torch.float32)
    total, per_token = _LinearCrossEntropy.apply(hidden, weight, bias, targets, row_weights, ignore_index, size,
                                                 dtype, need)
    loss = total / scored.sum().clamp_min(1) if reduction == "mean" else total
    return (loss, per_token) if return_per_token else loss


class LinearCrossEntropyLoss(nn.Module):
    """Token cross-entropy of a linear vocabulary head without its logits materialised (Hsu et al. 2024;
    Wijmans et al. 2025; the module docstring): ``forward(hidden, linear, targets)`` with ``linear`` an
    ``nn.Linear`` (V outputs) or ``(weight, bias)``."""

    def __init__(self, *, ignore_index: int = -100, reduction: str = "mean", chunk: int | None = None,
                 impl: str = "fused"):
        super().__init__()
        if impl not in IMPLEMENTATIONS or reduction not in REDUCTIONS:
            raise ValueError(f"impl must be one of {IMPLEMENTATIONS} and reduction one of {REDUCTIONS}")
        self.ignore_index, self.reduction, self.chunk, self.impl = ignore_index, reduction, chunk, impl

    def forward(self, hidden: torch.Tensor, linear: nn.Linear | tuple[torch.Tensor, torch.Tensor | None],
                targets: torch.Tensor, weights: torch.Tensor | None = None) -> torch.Tensor:
        weight, bias = (linear.weight, linear.bias) if isinstance(linear, nn.Linear) else linear
        return linear_cross_entropy(hidden, weight, bias, targets, ignore_index=self.ignore_index,
                                    reduction=self.reduction, weights=weights, chunk=self.chunk, impl=self.impl)

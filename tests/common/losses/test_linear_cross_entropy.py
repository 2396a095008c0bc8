"""The fused linear + cross-entropy against the plain loss over materialised logits (the naive reference
``F.cross_entropy(F.linear(h, W, b).float(), t)``): values and gradients with respect to the hidden states, the
weight and the bias, in fp32 and under bf16 autocast, with ignored rows, per-token weights and every reduction;
and its memory, measured deterministically: the bytes autograd saves for the backward pass and the peak of the
bytes held by the tensors that the forward and backward passes create."""
import weakref

import pytest
import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from common.losses.linear_cross_entropy import LinearCrossEntropyLoss, default_chunk, linear_cross_entropy

N, D, V = 96, 16, 301


def inputs(seed: int = 0, n: int = N, d: int = D, v: int = V):
    g = torch.Generator().manual_seed(seed)
    h = torch.randn(n, d, generator=g, requires_grad=True)
    w = (0.5 * torch.randn(v, d, generator=g)).requires_grad_()
    b = (0.5 * torch.randn(v, generator=g)).requires_grad_()
    t = torch.randint(0, v, (n,), generator=g)
    t[::5] = -100  # ignored rows
    return h, w, b, t


def naive(h, w, b, t, weights=None, reduction="mean"):
    """-log softmax(h W^T + b)[t] per row, 0 at ignored rows, then the reduction, written out."""
    logits = (h @ w.T + b).float()  # (N, V)
    keep = t != -100
    per = (torch.logsumexp(logits, -1) - logits.gather(1, t.clamp_min(0)[:, None])[:, 0]) * keep
    if reduction == "none":
        return per
    total = (per * (weights if weights is not None else 1.0)).sum()
    return total / keep.sum().clamp_min(1) if reduction == "mean" else total


def grads(loss, tensors):
    return torch.autograd.grad(loss, tensors)


@pytest.mark.parametrize("chunk", [1, 7, 40, 1000])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_fp32_values_and_gradients_equal_the_plain_loss(chunk, reduction):
    h, w, b, t = inputs()
    up = torch.linspace(0.5, 2.0, N)  # an upstream gradient that differs by row ("none")
    ref = naive(h, w, b, t, reduction=reduction)
    plain = F.cross_entropy(F.linear(h, w, b), t, reduction=reduction if reduction != "mean" else "mean")
    assert torch.allclose(ref, plain, atol=1e-5)  # the naive reference is F.cross_entropy's loss
    got = linear_cross_entropy(h, w, b, t, reduction=reduction, chunk=chunk)
    assert got.shape == ref.shape and torch.allclose(got, ref, rtol=1e-6, atol=1e-5)
    scale = up if reduction == "none" else 1.0
    for g, r in zip(grads((got * scale).sum(), [h, w, b]), grads((ref * scale).sum(), [h, w, b])):
        assert torch.allclose(g, r, rtol=1e-5, atol=1e-6)


def test_per_token_weights_and_the_plain_option():
    h, w, b, t = inputs(1)
    weights = torch.rand(N, generator=torch.Generator().manual_seed(2))
    ref = naive(h, w, b, t, weights, "sum")
    ref_grads = grads(ref, [h, w, b])
    for impl in ("fused", "plain"):
        got = linear_cross_entropy(h, w, b, t, reduction="sum", weights=weights, chunk=10, impl=impl)
        assert torch.allclose(got, ref, rtol=1e-6)
        for g, r in zip(grads(got, [h, w, b]), ref_grads):
            assert torch.allclose(g, r, rtol=1e-5, atol=1e-6)
    assert not weights.requires_grad


def test_no_bias_no_scored_row_and_the_module():
    h, w, _, t = inputs(3)
    ref = naive(h, w, torch.zeros(V), t)
    got = LinearCrossEntropyLoss(chunk=13)(h, (w, None), t)
    assert torch.allclose(got, ref, rtol=1e-6)
    for g, r in zip(grads(got, [h, w]), grads(ref, [h, w])):
        assert torch.allclose(g, r, rtol=1e-5, atol=1e-6)
    linear = torch.nn.Linear(D, V)
    assert torch.allclose(LinearCrossEntropyLoss()(h, linear, t), F.cross_entropy(linear(h), t), rtol=1e-6)
    nothing = torch.full((N,), -100)
    zero = linear_cross_entropy(h, w, None, nothing)  # no scored row: 0 (F.cross_entropy: nan), zero gradients
    assert float(zero.detach()) == 0.0 and not grads(zero, [h])[0].any()


def test_bf16_autocast_within_a_stated_tolerance():
    """Under bf16 autocast both compute the logits in bf16 and the log-sum-exp in fp32: the losses agree to fp32
    rounding of the same logits; the gradients to bf16's rounding of the logits' gradient (rel. 2e-2 of the
    largest entry; measured ~5e-3)."""
    h, w, b, t = inputs(4, n=200, d=32, v=1000)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        plain = F.cross_entropy(F.linear(h, w, b).float(), t)
        fused = linear_cross_entropy(h, w, b, t, chunk=64)
    assert fused.dtype == torch.float32 and float(fused.detach()) == pytest.approx(float(plain.detach()), rel=1e-4)
    for g, r in zip(grads(fused, [h, w, b]), grads(plain, [h, w, b])):
        assert g.dtype == r.dtype == torch.float32
        assert float((g - r).abs().max()) <= 2e-2 * float(r.abs().max())
    reference = naive(h, w, b, t)  # and the bf16 loss is near the fp32 one
    assert float(fused.detach()) == pytest.approx(float(reference.detach()), rel=2e-2)


def test_default_chunk_bounds_the_logits_of_a_chunk():
    assert default_chunk(10_000, 119_547, 2**28) == 2245
    assert default_chunk(100, 250_112, 2**28) == 100  # fewer rows than a chunk: one chunk
    assert default_chunk(10, 10**9, 2**28) == 1


# ------------------------------------------------------------------------------------------------- memory
def saved_bytes(loss_fn) -> int:
    """Bytes of the distinct storages autograd keeps for the backward pass of ``loss_fn()``."""
    seen: dict[int, int] = {}

    def pack(x):
        seen[x.untyped_storage().data_ptr()] = x.untyped_storage().nbytes()
        return x

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
        loss = loss_fn()
    del loss
    return sum(seen.values())


class PeakLiveBytes(TorchDispatchMode):
    """The peak, over a forward and backward pass, of the bytes held by the storages that its operations create
    (inputs and parameters made before are not counted). A storage counts from the first tensor that shows it
    until the last tensor on it is freed (CPython frees on the last reference: deterministic)."""

    def __init__(self):
        super().__init__()
        self.live: dict[int, list[int]] = {}  # storage pointer -> [bytes, live tensors on it]
        self.now = self.peak = self.largest = 0

    def _release(self, ptr: int) -> None:
        entry = self.live[ptr]
        entry[1] -= 1
        if entry[1] == 0:
            self.now -= entry[0]
            del self.live[ptr]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor) and t.device.type == "cpu":
                ptr, size = t.untyped_storage().data_ptr(), t.untyped_storage().nbytes()
                if ptr not in self.live:
                    self.live[ptr] = [size, 0]
                    self.now += size
                    self.largest = max(self.largest, size)
                self.live[ptr][1] += 1
                weakref.finalize(t, self._release, ptr)
        self.peak = max(self.peak, self.now)
        return out


def step_peak(loss_fn, tensors) -> PeakLiveBytes:
    with PeakLiveBytes() as mode:
        loss = loss_fn()
        g = torch.autograd.grad(loss, tensors)
        del loss, g
    return mode


def test_the_fused_loss_keeps_no_logits_and_peaks_below_the_plain_one():
    """N = 1024 scored rows, V = 4,000, D = 32, chunks of 64 rows: the plain loss saves the (N, V) fp32
    log-softmax for the backward pass and holds N x V logits and gradients; the fused one saves (N, D) + (V, D)
    + (V,) and holds one chunk's (64, V) at a time."""
    n, d, v, chunk = 1024, 32, 4000, 64
    h, w, b, t = inputs(5, n, d, v)
    plain = lambda: F.cross_entropy(F.linear(h, w, b).float(), t)  # noqa: E731
    fused = lambda: linear_cross_entropy(h, w, b, t, chunk=chunk)  # noqa: E731
    saved_plain, saved_fused = saved_bytes(plain), saved_bytes(fused)
    assert saved_plain >= n * v * 4  # the fp32 log-softmax
    # d/dh, d/dW, d/db, and the mean's count (a scalar): nothing of size N x V
    assert n * d * 4 + v * d * 4 + v * 4 <= saved_fused <= n * d * 4 + v * d * 4 + v * 4 + 8
    p, f = step_peak(plain, [h, w, b]), step_peak(fused, [h, w, b])
    assert p.largest >= n * v * 4 and f.largest <= max(chunk * v * 4, v * d * 4)  # the largest intermediate
    assert f.peak < p.peak / 4, (f.peak, p.peak)  # measured: 0.068x (3.4 MB against 49.7 MB)
    # with per-token losses ("none": the backward recomputes each chunk) it saves the inputs and the (N,) lse only
    per_token = lambda: linear_cross_entropy(h, w, b, t, reduction="none", chunk=chunk).sum()  # noqa: E731
    assert saved_bytes(per_token) < n * d * 4 + v * d * 4 + v * 4 + 4 * n * 8 + 1024
    assert step_peak(per_token, [h, w, b]).peak < p.peak / 4


def test_fp16_gradients_of_small_weights_keep_their_precision():
    """The gradients formed in the forward pass are the loss's own, with no loss scale: with fp16 products, weights
    of 2e-6 (VMSST Contrastive's 0.0005 over 256 pairs) times the softmax fall below fp16's range. They are formed at
    a power-of-two scale and divided by it in fp32: within 1e-3 of the fp32 gradients (unscaled: 11 % off)."""
    h, w, b, t = inputs(6, n=256, d=16, v=400)
    weights = torch.full((256,), 2e-6)
    ref = naive(h, w, b, t, weights, "sum")
    with torch.autocast("cpu", dtype=torch.float16):
        got = linear_cross_entropy(h, w, b, t, reduction="sum", weights=weights, chunk=64)
    for g, r in zip(grads(got, [h, w, b]), grads(ref, [h, w, b])):
        assert float((g - r).norm() / r.norm()) < 1e-3

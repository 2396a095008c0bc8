"""The chunked token cross-entropy against the plain loss: values and gradients."""
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from common.losses.token_nll import chunked_token_nll, weighted_token_nll


def naive(out: nn.Linear, features: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """-log softmax(W f + b)[t] per token, written out."""
    logits = features @ out.weight.T + out.bias  # (N, V)
    return torch.logsumexp(logits, dim=-1) - logits.gather(1, targets[:, None])[:, 0]


@pytest.mark.parametrize("chunk", [0, 1, 7, 64, 1000])
def test_values_and_gradients_equal_the_plain_loss(chunk):
    torch.manual_seed(0)
    out = nn.Linear(16, 301)
    features = torch.randn(64, 16, requires_grad=True)
    targets = torch.randint(0, 301, (64,))
    ref = naive(out, features, targets)
    assert torch.allclose(ref, F.cross_entropy(out(features), targets, reduction="none"), atol=1e-5)
    ref_grads = torch.autograd.grad((ref * torch.linspace(0.5, 2, 64)).sum(), [features, out.weight, out.bias])
    got = chunked_token_nll(out, features, targets, chunk)
    grads = torch.autograd.grad((got * torch.linspace(0.5, 2, 64)).sum(), [features, out.weight, out.bias])
    assert got.shape == (64,) and torch.allclose(got, ref, atol=1e-5)
    for g, r in zip(grads, ref_grads):
        assert torch.allclose(g, r, atol=1e-5)


def test_a_vmsst_decoder_trains_the_same_with_chunks():
    """The decoder's per-sentence NLL, and its gradients, with and without chunks (VMSST's paper config)."""
    from papers.vmsst.decoder import LatentDecoder

    torch.manual_seed(0)
    emb = nn.Embedding(50, 8)
    dec = LatentDecoder(emb, 2, 1, 2, 16, 8, 12, 0.0, True, False)
    targets, mask = torch.randint(1, 50, (3, 10)), torch.ones(3, 10, dtype=torch.long)
    mask[1, 6:] = 0
    lang, z = torch.tensor([0, 1, 0]), torch.randn(3, 4)
    plain = dec.nll(targets, mask, lang, z, z)
    g_plain = torch.autograd.grad(plain.sum(), list(dec.parameters()), allow_unused=True)
    dec.loss_chunk = 5
    chunked = dec.nll(targets, mask, lang, z, z)
    g_chunked = torch.autograd.grad(chunked.sum(), list(dec.parameters()), allow_unused=True)
    assert torch.allclose(plain, chunked, atol=1e-5)
    for a, b in zip(g_plain, g_chunked):
        assert (a is None and b is None) or torch.allclose(a, b, atol=1e-5)


@pytest.mark.parametrize("impl", ["fused", "plain"])
def test_the_weighted_sum_and_its_gradients_equal_the_naive_loss(impl):
    """sum_i w_i nll_i with weights known at the forward pass (VMSST's decoder terms), through a factored output
    map; the per-token values come back without gradient; rows with target -100 add nothing."""
    torch.manual_seed(1)
    out = nn.Sequential(nn.Linear(16, 8, bias=False), nn.Linear(8, 301))
    features = torch.randn(40, 16, requires_grad=True)
    targets = torch.randint(0, 301, (40,))
    targets[::6] = -100
    weights = torch.rand(40)
    keep = targets != -100
    ref = naive(out[1], out[0](features), targets.clamp_min(0)) * keep
    params = [features, *out.parameters()]
    ref_grads = torch.autograd.grad((ref * weights).sum(), params)
    total, per_token = weighted_token_nll(out, features, targets, weights, impl=impl, chunk=7)
    assert not per_token.requires_grad and torch.allclose(per_token, ref.detach(), atol=1e-5)
    assert float(total.detach()) == pytest.approx(float((ref * weights).sum().detach()), rel=1e-5)
    for g, r in zip(torch.autograd.grad(total, params), ref_grads):
        assert torch.allclose(g, r, atol=1e-5)

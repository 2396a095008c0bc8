"""The chunked token cross-entropy (issue 32, 1) against the plain loss: values and gradients."""
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from common.losses.token_nll import chunked_token_nll


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

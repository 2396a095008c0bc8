"""Both sides of a batch through one encoder call (common/models/joint.py) against two calls, dropout off: the
sentence vectors, the token states (cut back to each side's length) and the gradients, for a BERT encoder and an
XLM-R one (whose position ids depend on the padding id), sides of different lengths."""
import pytest
import torch
from transformers import BertConfig, BertModel, XLMRobertaConfig, XLMRobertaModel

from common.models.encoder import SentenceEncoder
from common.models.joint import encode_sides

SHAPE = dict(vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
             max_position_embeddings=40, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


def side(rows: int, length: int, seed: int, pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, 50, (rows, length), generator=g)
    mask = torch.ones(rows, length, dtype=torch.long)
    mask[0, length - 2:] = 0  # a padded sentence
    return ids.masked_fill(mask == 0, pad), mask


@pytest.mark.parametrize("kind", ["bert", "xlmr"])
@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_one_call_equals_two_in_outputs_and_gradients(kind, pooling):
    torch.manual_seed(0)
    backbone = BertModel(BertConfig(**SHAPE), add_pooling_layer=False) if kind == "bert" else \
        XLMRobertaModel(XLMRobertaConfig(**SHAPE, pad_token_id=1), add_pooling_layer=False)
    encoder = SentenceEncoder(backbone, pooling)
    pad = backbone.config.pad_token_id
    a, b = side(3, 7, 1, pad), side(3, 10, 2, pad)  # the first side is shorter: padded in the joint call

    def loss(outputs):  # every output enters the loss, with weights that tell positions apart
        (va, ha), (vb, hb) = outputs
        return (va * torch.arange(16)).sum() + vb.pow(2).sum() + ha.sin().sum() + (hb * 0.3).cos().sum()

    two = [encoder(*a), encoder(*b)]
    two_grads = torch.autograd.grad(loss(two), list(encoder.parameters()))
    one = encode_sides(encoder, [a, b], pad)
    one_grads = torch.autograd.grad(loss(one), list(encoder.parameters()))
    for (v1, h1), (v2, h2) in zip(one, two):
        assert v1.shape == v2.shape and h1.shape == h2.shape  # each side's own length
        assert torch.allclose(v1, v2, atol=1e-5) and torch.allclose(h1, h2, atol=1e-5)
    for g1, g2 in zip(one_grads, two_grads):
        assert torch.allclose(g1, g2, atol=1e-4), float((g1 - g2).abs().max())


def test_further_row_wise_arguments_are_joined_too():
    calls = []

    def encode(ids, mask, lang):
        calls.append(ids.shape)
        return ids.float().sum(1) + lang, ids.float()[..., None].expand(-1, -1, 2)

    a = (torch.ones(2, 3, dtype=torch.long), torch.ones(2, 3), torch.tensor([1.0, 2.0]))
    b = (torch.ones(1, 5, dtype=torch.long), torch.ones(1, 5), torch.tensor([3.0]))
    (va, ha), (vb, hb) = encode_sides(encode, [a, b], pad_id=0)
    assert calls == [(3, 5)] and va.tolist() == [4.0, 5.0] and vb.tolist() == [8.0]
    assert ha.shape == (2, 3, 2) and hb.shape == (1, 5, 2)

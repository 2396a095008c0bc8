"""A vocabulary head split at its decoder (common/models/vocab_head.py): the features and the decoder give the head's
own logits for BERT's MLM head, XLM-R's, a subset head (``lm_head_on``), a plain and a factored linear output; the
head's loss through the fused cross-entropy equals the plain one in value and gradient (the decoder's tied weight
and bias included); the scored positions a collator lists."""
import pytest
import torch
import torch.nn.functional as F
from torch import nn
from transformers import BertConfig, BertForMaskedLM, XLMRobertaConfig, XLMRobertaForMaskedLM

from common.models.encoder import lm_head_on, mlm_head
from common.models.vocab_head import head_decoder, head_features, head_loss, scored_positions

SHAPE = dict(vocab_size=60, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)


def heads() -> dict[str, nn.Module]:
    torch.manual_seed(0)
    bert, xlmr = BertForMaskedLM(BertConfig(**SHAPE)), XLMRobertaForMaskedLM(XLMRobertaConfig(**SHAPE))
    for m in (bert, xlmr):  # a bias that is not zero, so that a dropped bias shows
        nn.init.normal_(mlm_head(m).predictions.bias if hasattr(mlm_head(m), "predictions") else mlm_head(m).bias)
    return {"bert": mlm_head(bert), "xlmr": mlm_head(xlmr),
            "bert subset": lm_head_on(mlm_head(bert), torch.tensor([3, 7, 11, 40])),
            "linear": nn.Linear(16, 60), "factored": nn.Sequential(nn.Linear(16, 8, bias=False), nn.Linear(8, 60))}


@pytest.mark.parametrize("name", ["bert", "xlmr", "bert subset", "linear", "factored"])
def test_features_and_decoder_give_the_heads_logits(name):
    head = heads()[name].eval()
    h = torch.randn(5, 16, generator=torch.Generator().manual_seed(1))
    decoder = head_decoder(head)
    with torch.no_grad():
        assert torch.allclose(F.linear(head_features(head, h), decoder.weight, decoder.bias), head(h), atol=1e-5)


@pytest.mark.parametrize("name", ["bert", "xlmr", "factored"])
def test_the_fused_head_loss_equals_the_plain_one(name):
    head = heads()[name].train()
    h = torch.randn(12, 16, generator=torch.Generator().manual_seed(2), requires_grad=True)
    V = head_decoder(head).out_features
    t = torch.randint(0, V, (12,), generator=torch.Generator().manual_seed(3))
    t[[2, 7]] = -100
    params = [h, *head.parameters()]
    plain = head_loss(head, h, t, impl="plain")
    fused = head_loss(head, h, t, chunk=5)
    want = F.cross_entropy(head(h), t)  # the modules' own forward
    assert float(plain.detach()) == pytest.approx(float(want.detach()), rel=1e-6)
    assert float(fused.detach()) == pytest.approx(float(want.detach()), rel=1e-6)
    for a, b in zip(torch.autograd.grad(fused, params), torch.autograd.grad(plain, params)):
        assert torch.allclose(a, b, atol=1e-6)
    with pytest.raises(ValueError, match="vocabulary loss 'dense'"):
        head_loss(head, h, t, impl="dense")


def test_an_unknown_head_is_refused():
    with pytest.raises(TypeError, match="no final linear layer"):
        head_decoder(nn.ReLU())


def test_scored_positions_are_flat_indices_padded_to_the_multiple():
    labels = torch.tensor([[-100, 5, -100], [7, -100, 9]])
    positions, targets = scored_positions(labels)
    assert positions.tolist() == [1, 3, 5] and targets.tolist() == [5, 7, 9]
    positions, targets = scored_positions(labels, multiple=4)
    assert positions.tolist() == [1, 3, 5, 0] and targets.tolist() == [5, 7, 9, -100]
    positions, targets = scored_positions(torch.full((2, 3), -100), multiple=4)  # nothing scored: one ignored row
    assert positions.tolist() == [0, 0, 0, 0] and targets.tolist() == [-100] * 4
    assert scored_positions(torch.full((2, 3), -100))[1].tolist() == [-100]
    with pytest.raises(ValueError, match="multiple"):
        scored_positions(labels, multiple=0)

"""Length-bucketed encoder calls (common/training/length_buckets.py): with dropout off, every position a row's mask
keeps and every pooled vector equal the padded call's, in value and gradient; the groups are cut to their own
longest rows; the switch reaches the backbones the papers call directly."""
import pytest
import torch

from common.models.encoder import SentenceEncoder
from common.training.length_buckets import bucketed_forward, enable_length_buckets
from common.training.model_switches import apply_model_switches

B, S = 12, 20


def bert(kind: str = "bert"):
    from transformers import BertConfig, BertModel, XLMRobertaConfig, XLMRobertaModel

    torch.manual_seed(0)
    shape = dict(vocab_size=60, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                 max_position_embeddings=S + 4, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    if kind == "xlmr":  # positions from the padding of input_ids (pad id 1)
        return XLMRobertaModel(XLMRobertaConfig(pad_token_id=1, **shape), add_pooling_layer=False).eval()
    return BertModel(BertConfig(**shape), add_pooling_layer=False).eval()


def batch(pad_id: int = 0):
    """Rows of lengths 2..S spread out of order, right-padded, as the collators make them."""
    g = torch.Generator().manual_seed(3)
    lengths = torch.tensor([20, 3, 7, 2, 15, 9, 4, 11, 5, 18, 6, 8])
    ids = torch.randint(5, 60, (B, S), generator=g)
    mask = (torch.arange(S)[None] < lengths[:, None]).long()  # (B, S)
    return ids.masked_fill(mask == 0, pad_id), mask, lengths


@pytest.mark.parametrize("kind, pad_id", [("bert", 0), ("xlmr", 1)])
@pytest.mark.parametrize("buckets", [2, 3, 4])
def test_bucketed_calls_give_the_padded_calls_outputs_and_gradients(kind, pad_id, buckets):
    ids, mask, _ = batch(pad_id)
    outputs, grads = [], []
    for bucketed in (False, True):
        model = SentenceEncoder(bert(kind), pooling="mean")
        if bucketed:
            assert enable_length_buckets(model, buckets, multiple=4) == 1
        sentence, hidden = model(ids, mask)  # (B, D), (B, S, D)
        kept = hidden * mask[..., None]  # the positions a loss may read
        (sentence.square().sum() + kept.square().sum()).backward()
        outputs.append((sentence.detach(), kept.detach()))
        grads.append([p.grad for p in model.parameters()])
    (s0, h0), (s1, h1) = outputs
    assert torch.allclose(s0, s1, atol=1e-5) and torch.allclose(h0, h1, atol=1e-5)
    for g0, g1 in zip(*grads):
        assert torch.allclose(g0, g1, rtol=1e-4, atol=1e-5)


def test_each_group_is_cut_to_its_longest_row_rounded_up():
    """Lengths sorted: 2 3 4 5 | 6 7 8 9 | 11 15 18 20; with multiple 4 the groups run at widths 8, 12 and 20 (the
    batch's width caps the last), in the shortest-first order, and the output has the batch's shape."""
    ids, mask, lengths = batch()
    seen = []
    model = bert()

    def forward(**kw):
        seen.append((kw["input_ids"].shape, sorted(kw["attention_mask"].sum(1).tolist())))
        return model(**kw)

    out = bucketed_forward(forward, 3, 4, input_ids=ids, attention_mask=mask)
    assert seen == [((4, 8), [2, 3, 4, 5]), ((4, 12), [6, 7, 8, 9]), ((4, 20), [11, 15, 18, 20])]
    assert out.last_hidden_state.shape == (B, S, 32)
    assert not out.last_hidden_state[1, 8:].any()  # past the width of row 1's group: zeros


def test_unbucketed_where_it_cannot_or_need_not_be():
    ids, mask, _ = batch()
    calls = []

    def forward(*args, **kw):
        calls.append(args or tuple(kw))
        return bert()(*args, **kw)

    bucketed_forward(forward, 1, 8, input_ids=ids, attention_mask=mask)  # one bucket
    bucketed_forward(forward, 8, 8, input_ids=ids, attention_mask=mask)  # fewer than two rows per bucket
    bucketed_forward(forward, 2, 8, ids)  # positional: no mask to read
    assert len(calls) == 3


def test_the_switch_reaches_the_backbone_papers_call_directly_and_refuses_a_model_without_one():
    encoder = SentenceEncoder(bert(), pooling="cls")
    model = torch.nn.ModuleDict({"encoder": encoder})
    apply_model_switches(model, {"length_buckets": 3, "length_multiple": 4})
    assert "forward" in vars(encoder.backbone)  # HICTL's and DAP's direct backbone calls are bucketed too
    assert list(encoder.state_dict()) == list(SentenceEncoder(bert(), pooling="cls").state_dict())
    with pytest.raises(ValueError, match="no row-wise encoder backbone"):
        enable_length_buckets(torch.nn.Linear(2, 2), 3)

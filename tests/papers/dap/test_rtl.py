import pytest
import torch

from common.models.encoder import EncoderSpec, build_mlm_model
from common.models.tokenizer import train_wordpiece
from papers.dap import variants
from papers.dap.data import DAPCollator
from papers.dap.model import DAPModel
from papers.dap.rtl import RTLHead

PAIRS = [("kitu ma sola", "the man sees", 1), ("ba ru", "a dog", 2), ("kitu ba ru ma", "the dog eats bread", 1),
         ("sola", "yes", 2)]


@pytest.fixture(scope="module")
def tok(tmp_path_factory):
    sents = [s for a, b, _ in PAIRS for s in (a, b)] * 3
    return train_wordpiece(sents, vocab_size=80, out_dir=tmp_path_factory.mktemp("tok"), min_frequency=1)


def mlm(tok):
    torch.manual_seed(0)
    return build_mlm_model(EncoderSpec(hidden_size=16, num_layers=4, num_heads=2, intermediate_size=32), len(tok))


def test_head_copies_last_k_layers(tok):
    m = mlm(tok)
    head = RTLHead(m, num_layers=2)
    enc_layers = m.base_model.encoder.layer
    for copied, original in zip(head.layers, enc_layers[-2:]):
        for (n1, p1), (n2, p2) in zip(copied.named_parameters(), original.named_parameters()):
            assert torch.equal(p1, p2) and p1.data_ptr() != p2.data_ptr()  # same values, own parameters
    with pytest.raises(ValueError, match="1..4"):
        RTLHead(m, num_layers=5)


def test_collator_rtl_targets(tok):
    col = DAPCollator(tok, 16, ["tr", "rtl"], rho=1.0, direction="xx2en")
    b = col(PAIRS, torch.Generator().manual_seed(0))
    trg = b["trg_input_ids"][:, 1:]  # CLS dropped
    real = b["trg_attention_mask"][:, 1:].bool() & ~torch.isin(trg, torch.tensor(tok.all_special_ids))
    assert torch.equal(b["rtl_labels"] == -100, ~real)  # rho = 1: every English word piece is reconstructed
    assert torch.equal(b["rtl_labels"][real], trg[real])
    assert (b["rtl_input_ids"][real] == tok.mask_token_id).all()
    assert b["rtl_position_ids"][0, 0] == 1
    half = DAPCollator(tok, 16, ["tr", "rtl"], rho=0.3, direction="both")(PAIRS, torch.Generator().manual_seed(0))
    assert half["rtl_from_en"].tolist() == [0, 0, 1, 1]
    assert ((half["rtl_labels"] != -100).sum(1) >= 1).all()  # at least one target per sentence
    kept = (half["rtl_labels"] == -100) & half["rtl_attention_mask"].bool()
    assert (half["rtl_input_ids"][kept] != tok.mask_token_id).all()  # unselected tokens are given, not masked


@pytest.mark.parametrize("name", ["tr", "tr_tlm", "dap", "dap_dir-both", "dap_rho-0.5", "dap_k-1"])
def test_variants_train_one_step(tok, name):
    method = variants.resolve(name, {"rtl_layers": 2, "rho": 1.0, "direction": "xx2en"})
    model = DAPModel(mlm(tok), method["objectives"], temperature=0.05, rtl_layers=method["rtl_layers"],
                     direction=method["direction"], num_languages=3, pooling="cls")
    col = DAPCollator(tok, 16, method["objectives"], rho=method["rho"], direction=method["direction"])
    out = model(**col(PAIRS, torch.Generator().manual_seed(0)))
    out["loss"].backward()
    expected = {"tr": {"loss_tr"}, "tr_tlm": {"loss_tr", "loss_tlm"}}.get(name, {"loss_tr", "loss_rtl"})
    assert set(out) - {"loss"} == expected
    assert float(out["loss"]) == pytest.approx(sum(float(out[k]) for k in expected), rel=1e-6)
    grads = [p.grad for p in model.encoder.parameters() if p.grad is not None]
    assert grads and all(torch.isfinite(g).all() for g in grads)


def test_rtl_loss_ignores_cls_state(tok):
    """RTL reads token states without [CLS] (section 3.3.2): changing the CLS state leaves it unchanged."""
    model = DAPModel(mlm(tok), ["tr", "rtl"], temperature=0.05).eval()
    b = DAPCollator(tok, 16, ["tr", "rtl"])(PAIRS, torch.Generator().manual_seed(0))
    with torch.no_grad():
        _, src_h = model.encoder(b["src_input_ids"], b["src_attention_mask"])
        _, trg_h = model.encoder(b["trg_input_ids"], b["trg_attention_mask"])
        l1 = model._rtl(src_h, b["src_attention_mask"], trg_h, b["trg_attention_mask"], b)
        src_h[:, 0] += 5.0
        l2 = model._rtl(src_h, b["src_attention_mask"], trg_h, b["trg_attention_mask"], b)
    assert float(l1) == pytest.approx(float(l2))


def test_unknown_variant():
    with pytest.raises(ValueError, match="unknown DAP variant"):
        variants.resolve("dap_k-x", {"rtl_layers": 2, "rho": 1.0, "direction": "xx2en"})
    pts = variants.ablation_variants({"rho": [0.5, 1.0], "rtl_layers": [1, 2]}, {"rtl_layers": 2, "rho": 1.0, "direction": "xx2en"})
    assert pts == {"rho": [(0.5, "dap_rho-0.5"), (1.0, "dap")], "rtl_layers": [(1, "dap_k-1"), (2, "dap")]}


def test_rtl_head_ignores_padded_positions(tok):
    head = RTLHead(mlm(tok), num_layers=2).eval()
    g = torch.Generator().manual_seed(0)
    states = torch.randn(2, 5, 16, generator=g)
    src_mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    trg_ids = torch.full((2, 3), tok.mask_token_id)
    trg_mask = torch.tensor([[1, 1, 0], [1, 1, 1]])
    pos = torch.arange(1, 4).expand(2, 3)
    with torch.no_grad():
        a = head(states, src_mask, trg_ids, trg_mask, pos)
        states[0, 3:] += 100.0  # padded source positions of sentence 0
        b = head(states, src_mask, trg_ids, trg_mask, pos)
    assert torch.allclose(a[0, :2], b[0, :2], atol=1e-5)  # real target positions of sentence 0 unchanged
    assert torch.allclose(a[1], b[1], atol=1e-6)
    states[0, 0] += 100.0  # the same change at a real source position does matter
    with torch.no_grad():
        c = head(states, src_mask, trg_ids, trg_mask, pos)
    assert (a[0, :2] - c[0, :2]).abs().max() > 1e-3

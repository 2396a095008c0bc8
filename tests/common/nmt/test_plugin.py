"""The fairseq plugin's pieces against hand-written references: dictionary ids equal the tokenizer's, the
[CLS]-vocabulary logit bias (HICTL section 3.2) equals a loop over words, the frozen encoder gets no gradient and no
dropout, the decoder adds the bias to every step's logits, and ``--hf-random-init`` keeps the shape only."""
import math

import pytest
import torch

from tests.common.nmt.conftest import SENTS, build_nmt_model

fairseq = pytest.importorskip("fairseq")
from common.nmt.fairseq_plugin.dictionary import HFDictionary  # noqa: E402


def test_dictionary_ids_are_the_tokenizers(encoder_dir):
    _, tok = encoder_dir
    d = HFDictionary(tok, ["de", "fr"])
    ids = tok("die katze sieht einen hund")["input_ids"]
    assert [d.index(tok.convert_ids_to_tokens(i)) for i in ids] == ids
    assert (d.pad(), d.unk(), d.eos(), d.bos()) == (tok.pad_token_id, tok.unk_token_id, tok.sep_token_id,
                                                    tok.cls_token_id)
    assert len(d) == len(tok) + 2 and d.tags == {"de": len(tok), "fr": len(tok) + 1}
    assert d.index("<2fr>") == len(tok) + 1


def test_cls_logit_bias_equals_cosine_loop(encoder_dir):
    path, tok = encoder_dir
    model = build_nmt_model(path, tok).eval()
    b = tok(SENTS[:3], padding=True, return_tensors="pt")
    with torch.no_grad():
        out = model.encoder(b["input_ids"])
    bias = out["cls_bias"][0]  # (B, V)
    h = out["encoder_out"][0][0]  # (B, C): the [CLS] state
    table = model.encoder.backbone.get_input_embeddings().weight
    assert bias.shape == (3, len(tok) + 2)
    for i in range(3):
        for v in range(len(tok)):
            a, e = h[i].tolist(), table[v].tolist()
            norms = math.sqrt(sum(x * x for x in a) * sum(y * y for y in e))
            cos = sum(x * y for x, y in zip(a, e)) / norms if norms else 0.0  # the [PAD] row is all zeros
            assert float(bias[i, v]) == pytest.approx(cos, abs=1e-5)
        assert bias[i, len(tok):].tolist() == [0.0, 0.0]  # language tags have no encoder embedding


def test_decoder_adds_the_bias_at_every_step(encoder_dir):
    path, tok = encoder_dir
    model = build_nmt_model(path, tok).eval()
    src = tok(SENTS[:2], padding=True, return_tensors="pt")["input_ids"]
    prev = torch.tensor([[tok.sep_token_id, 5, 6, 7], [tok.sep_token_id, 8, 9, 10]])
    with torch.no_grad():
        enc = model.encoder(src)
        with_bias, _ = model.decoder(prev, encoder_out=enc)
        without, _ = model.decoder(prev, encoder_out={**enc, "cls_bias": []})
    assert torch.allclose(with_bias - without, enc["cls_bias"][0][:, None, :].expand_as(with_bias), atol=1e-5)


def test_frozen_encoder_gets_no_gradient_and_no_dropout(encoder_dir):
    path, tok = encoder_dir
    model = build_nmt_model(path, tok, freeze_encoder=True)
    assert not any(p.requires_grad for p in model.encoder.parameters())
    assert all(p.requires_grad for p in model.decoder.parameters())
    model.train()
    assert not model.encoder.training and model.decoder.training
    src = tok(SENTS[:2], padding=True, return_tensors="pt")["input_ids"]
    a = model.encoder(src)["encoder_out"][0]
    b = model.encoder(src)["encoder_out"][0]
    assert torch.equal(a, b)  # dropout 0.3 in the encoder's config, off while frozen
    prev = torch.tensor([[tok.sep_token_id, 5], [tok.sep_token_id, 6]])
    model.decoder(prev, encoder_out=model.encoder(src))[0].sum().backward()
    assert all(p.grad is None for p in model.encoder.parameters())
    assert any(p.grad is not None for p in model.decoder.parameters())


def test_random_init_keeps_the_shape_not_the_weights(encoder_dir):
    path, tok = encoder_dir
    pretrained, fresh = build_nmt_model(path, tok), build_nmt_model(path, tok, hf_random_init=True)
    a, b = pretrained.encoder.backbone.state_dict(), fresh.encoder.backbone.state_dict()
    assert a.keys() == b.keys() and all(a[k].shape == b[k].shape for k in a)
    assert not torch.equal(a["embeddings.word_embeddings.weight"], b["embeddings.word_embeddings.weight"])


def test_reorder_encoder_out_follows_the_beam_order(encoder_dir):
    """Beam search expands and reorders sentences: states on dim 1 (T, B, C), mask and bias on dim 0."""
    path, tok = encoder_dir
    model = build_nmt_model(path, tok).eval()
    src = tok(SENTS[:2], padding=True, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        out = model.encoder(src)
    order = torch.tensor([1, 1, 0])
    new = model.encoder.reorder_encoder_out(out, order)
    assert torch.equal(new["encoder_out"][0], out["encoder_out"][0][:, order])
    assert torch.equal(new["encoder_padding_mask"][0], out["encoder_padding_mask"][0][order])
    assert torch.equal(new["cls_bias"][0], out["cls_bias"][0][order])

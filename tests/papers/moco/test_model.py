"""Dual momentum contrast (section 2): loss = eq. 3 against a naive computation, momentum
update before keys, no gradient into momentum encoders or queues, queues filled with keys."""
import math

import pytest
import torch
import torch.nn.functional as F
from transformers import BertConfig, BertModel

from common.models.encoder import SentenceEncoder
from papers.moco import variants
from papers.moco.model import DualMomentumContrast
from papers.moco.nli import NLIHead


def encoder(seed):
    torch.manual_seed(seed)
    cfg = BertConfig(vocab_size=30, hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=16,
                     max_position_embeddings=16, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return SentenceEncoder(BertModel(cfg, add_pooling_layer=False), "mean")


def batch(b=4, s=5):
    g = torch.Generator().manual_seed(1)
    return {"x_input_ids": torch.randint(5, 30, (b, s), generator=g),
            "x_attention_mask": torch.ones(b, s, dtype=torch.long),
            "y_input_ids": torch.randint(5, 30, (b, s), generator=g),
            "y_attention_mask": torch.ones(b, s, dtype=torch.long)}


def naive_info_nce(q, k, queue, tau):
    out = 0.0
    for i in range(len(q)):
        logits = [float(q[i] @ k[i]) / tau] + [float(q[i] @ n) / tau for n in queue]
        out += -logits[0] + math.log(sum(math.exp(l) for l in logits))
    return out / len(q)


def test_loss_momentum_and_queues():
    model = DualMomentumContrast(encoder(0), encoder(1), queue_size=8, temperature=0.1, momentum=0.5)
    with torch.no_grad():  # make base and momentum encoders differ, on both sides (by different amounts)
        for p in model.encoder_x.parameters():
            p.add_(0.1)
        for p in model.encoder_y.parameters():
            p.add_(0.2)
    theta_kx = [p.clone() for p in model.key_encoder_x.parameters()]
    theta_ky = [p.clone() for p in model.key_encoder_y.parameters()]
    queue_x, queue_y = model.queue_x.keys.clone(), model.queue_y.keys.clone()
    b = batch()
    out = model(**b)
    # eq. 1 applied before the keys, each key encoder from its own base encoder
    for t0, tb, tk in zip(theta_kx, model.encoder_x.parameters(), model.key_encoder_x.parameters()):
        assert torch.allclose(tk, 0.5 * t0 + 0.5 * tb.detach())
    for t0, tb, tk in zip(theta_ky, model.encoder_y.parameters(), model.key_encoder_y.parameters()):
        assert torch.allclose(tk, 0.5 * t0 + 0.5 * tb.detach())
    with torch.no_grad():
        q_x = F.normalize(model.encoder_x(b["x_input_ids"], b["x_attention_mask"])[0], dim=-1)
        q_y = F.normalize(model.encoder_y(b["y_input_ids"], b["y_attention_mask"])[0], dim=-1)
        k_x = F.normalize(model.key_encoder_x(b["x_input_ids"], b["x_attention_mask"])[0], dim=-1)
        k_y = F.normalize(model.key_encoder_y(b["y_input_ids"], b["y_attention_mask"])[0], dim=-1)
    ref = naive_info_nce(q_x, k_y, queue_y, 0.1) + naive_info_nce(q_y, k_x, queue_x, 0.1)
    assert float(out["loss"]) == pytest.approx(ref, rel=1e-5)
    # keys enqueued at the pointer; the rest of the queue untouched
    assert torch.allclose(model.queue_x.keys[:4], k_x, atol=1e-6) and torch.equal(model.queue_x.keys[4:], queue_x[4:])
    assert torch.allclose(model.queue_y.keys[:4], k_y, atol=1e-6) and int(model.queue_y.ptr) == 4
    out["loss"].backward()
    assert all(p.grad is None for p in model.key_encoder_x.parameters())
    assert all(p.grad is None for p in model.key_encoder_y.parameters())
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in model.encoder_x.parameters())
    assert not model.queue_x.keys.requires_grad


def test_in_batch_baseline_is_the_summed_bidirectional_ranking_loss():
    model = DualMomentumContrast(encoder(0), encoder(1), queue_size=0, temperature=0.1, momentum=0.0,
                                 negatives="in_batch", momentum_mode="shared")
    b = batch()
    out = model(**b)
    with torch.no_grad():
        q_x = F.normalize(model.encoder_x(b["x_input_ids"], b["x_attention_mask"])[0], dim=-1)
        q_y = F.normalize(model.encoder_y(b["y_input_ids"], b["y_attention_mask"])[0], dim=-1)
    ref = sum(naive_info_nce(a[i:i + 1], c[i:i + 1], torch.cat([c[:i], c[i + 1:]]), 0.1)
              for a, c in ((q_x, q_y), (q_y, q_x)) for i in range(4)) / 4
    assert float(out["loss"]) == pytest.approx(ref, rel=1e-5)
    assert not hasattr(model, "queue_x") and not hasattr(model, "key_encoder_x")


def test_shared_keys_come_from_the_base_encoders_without_gradient():
    model = DualMomentumContrast(encoder(0), encoder(1), queue_size=8, temperature=0.1, momentum=0.9,
                                 momentum_mode="shared")
    assert not hasattr(model, "key_encoder_x")
    b = batch()
    model(**b)["loss"].backward()
    with torch.no_grad():
        k_x = F.normalize(model.encoder_x(b["x_input_ids"], b["x_attention_mask"])[0], dim=-1)
    assert torch.allclose(model.queue_x.keys[:4], k_x, atol=1e-6)


def test_nli_multitask_adds_alpha_times_the_nli_loss():
    model = DualMomentumContrast(encoder(0), encoder(1), queue_size=8, temperature=0.1, momentum=0.9,
                                 nli_head=NLIHead(8), nli_weight=0.1)
    b = batch()
    g = torch.Generator().manual_seed(2)
    nli = {"nli_premise_input_ids": torch.randint(5, 30, (3, 5), generator=g),
           "nli_premise_attention_mask": torch.ones(3, 5, dtype=torch.long),
           "nli_hypothesis_input_ids": torch.randint(5, 30, (3, 5), generator=g),
           "nli_hypothesis_attention_mask": torch.ones(3, 5, dtype=torch.long),
           "nli_labels": torch.tensor([0, 1, 2])}
    model.eval()  # no dropout, no queue update: comparable outputs
    out = model(**b, **nli)
    assert float(out["loss"]) == pytest.approx(float(out["loss_contrast"] + 0.1 * out["loss_nli"]), rel=1e-6)
    # the English encoder (y) reads both sentences; the head sees (u, v, |u - v|) of the unit vectors (nli.py)
    with torch.no_grad():
        u = F.normalize(model.encoder_y(nli["nli_premise_input_ids"], nli["nli_premise_attention_mask"])[0], dim=-1)
        v = F.normalize(model.encoder_y(nli["nli_hypothesis_input_ids"], nli["nli_hypothesis_attention_mask"])[0],
                        dim=-1)
        logits = model.nli_head.mlp(torch.cat([u, v, (u - v).abs()], dim=-1))  # (3, 3)
    ref = sum(-float(logits[i, y]) + math.log(sum(math.exp(float(z)) for z in logits[i]))
              for i, y in enumerate([0, 1, 2])) / 3
    assert float(out["loss_nli"]) == pytest.approx(ref, rel=1e-5)
    assert model.nli_head.mlp[0].in_features == 3 * 8 and model.nli_head.mlp[0].out_features == 256


def test_encoders_must_share_the_embedding_size():
    cfg = BertConfig(vocab_size=30, hidden_size=12, num_hidden_layers=1, num_attention_heads=2, intermediate_size=16)
    with pytest.raises(ValueError, match="share the embedding size"):
        DualMomentumContrast(encoder(0), SentenceEncoder(BertModel(cfg, add_pooling_layer=False)), queue_size=8,
                             temperature=0.1, momentum=0.9)


def test_run_names():
    cfg = {"moco": {"queue_size": 64, "temperature": 0.04}, "pooling": "mean",
           "training": {"global_batch_size": 16, "max_steps": 10},
           "analysis": {"queue_size": 32, "queue_sizes": [16, 32, 64], "small_batch": 4, "temperatures": [0.01, 0.04],
                        "poolings": ["mean", "cls"]}}
    s = variants.resolve("q32_b4_t0.07_shared_pool-cls", cfg)
    assert ((s["queue_size"], s["global_batch_size"], s["temperature"], s["momentum_mode"], s["pooling"])
            == (32, 4, 0.07, "shared", "cls"))
    assert variants.resolve("init", cfg)["max_steps"] == 0
    with pytest.raises(ValueError, match="not a multiple"):
        variants.resolve("q40", cfg)
    with pytest.raises(ValueError, match="unknown MoCo-BERT run"):
        variants.resolve("mocoo", cfg)
    runs = variants.analysis_runs(cfg)
    assert runs["figure2_queue"] == [(16, "q16"), (32, "q32"), (64, "moco")]
    assert runs["table4_temperature"] == [(0.01, "q32_t0.01"), (0.04, "q32")]
    assert runs["table6_pooling"] == [("mean", "q32"), ("cls", "q32_pool-cls")]

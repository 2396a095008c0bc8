"""VMSST (sections 4-6): the objective against a naive computation, the KL annealing, the alternation of the
semantic encoder's input, the decoder's isolation from the source tokens, the baselines' losses."""
import math
import tempfile

import pytest
import torch
from transformers import BertConfig, BertModel

from common.training.activation_checkpointing import enable_activation_checkpointing
from papers.vmsst import variants
from papers.vmsst.data import VMSSTCollator
from papers.vmsst.decoder import LatentDecoder
from papers.vmsst.model import VMSST, kl_standard_normal
from papers.vmsst.settings import Settings
from papers.vmsst.train import set_dropout

V, D = 40, 8


def backbone(seed=0, layers=1):
    torch.manual_seed(seed)
    cfg = BertConfig(vocab_size=V, hidden_size=D, num_hidden_layers=layers, num_attention_heads=2, intermediate_size=16,
                     max_position_embeddings=16, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return BertModel(cfg, add_pooling_layer=False)


def model(objective="vmsst", **kw):
    return VMSST(backbone(), Settings(objective=objective, anneal_steps=10, **kw), num_languages=3, max_length=16,
                 decoder_heads=2, decoder_ffn=16, dropout=0.0)


def batch(b=4, s=6, seed=1):
    g = torch.Generator().manual_seed(seed)
    out = {}
    for side, lang, n in (("i", [1, 2, 1, 2][:b], s), ("j", [0] * b, s + 2)):  # sides padded to their own length
        ids = torch.randint(5, V, (b, n), generator=g)
        mask = torch.ones(b, n, dtype=torch.long)
        mask[0, -2:] = 0  # a padded sentence
        out.update({f"{side}_ids": ids, f"{side}_mask": mask, f"{side}_targets": ids[:, 1:],
                    f"{side}_target_mask": mask[:, 1:], f"{side}_lang": torch.tensor(lang)})
    return out


def naive_nll(m, targets, mask, lang, z_sem, z_lang):
    """-log p(x | z) sentence by sentence, token by token, from the decoder's logits on unpadded inputs."""
    out = []
    for k in range(targets.shape[0]):
        n = int(mask[k].sum())
        logits = m.decoders[0](targets[k:k + 1, :n], mask[k:k + 1, :n], lang[k:k + 1], z_sem[k:k + 1], z_lang[k:k + 1])
        out.append(sum(-float(torch.log_softmax(logits[0, t], -1)[targets[k, t]]) for t in range(n)))
    return torch.tensor(out)


def test_objective_against_a_naive_computation():
    """Section 4: translation terms + lambda * (reconstruction + beta * KL), the semantic variable from x_i for
    even and x_j for odd examples, reparameterised samples (the same noise replayed)."""
    m = model(elbo_weight=0.3).eval()
    m.on_step(4)  # beta = 4 / 10
    b = batch()
    torch.manual_seed(7)
    out = m(**b)
    with torch.no_grad():
        mu_i, lv_i = m.semantic(b["i_ids"], b["i_mask"])
        mu_j, lv_j = m.semantic(b["j_ids"], b["j_mask"])
        zeros = torch.zeros_like(mu_i)
        trans = naive_nll(m, b["i_targets"], b["i_target_mask"], b["i_lang"], mu_j, zeros) \
            + naive_nll(m, b["j_targets"], b["j_target_mask"], b["j_lang"], mu_i, zeros)
        torch.manual_seed(7)
        _ = m.semantic(b["i_ids"], b["i_mask"]), m.semantic(b["j_ids"], b["j_mask"])  # same RNG use as forward
        sem_mu = torch.stack([mu_i[k] if k % 2 == 0 else mu_j[k] for k in range(4)])
        sem_lv = torch.stack([lv_i[k] if k % 2 == 0 else lv_j[k] for k in range(4)])
        z_sem = sem_mu + torch.randn_like(sem_mu) * (0.5 * sem_lv).exp()
        li_mu, li_lv = m.language_encoders[0](b["i_ids"], b["i_mask"], b["i_lang"])
        lj_mu, lj_lv = m.language_encoders[0](b["j_ids"], b["j_mask"], b["j_lang"])
        z_li = li_mu + torch.randn_like(li_mu) * (0.5 * li_lv).exp()
        z_lj = lj_mu + torch.randn_like(lj_mu) * (0.5 * lj_lv).exp()
        rec = naive_nll(m, b["i_targets"], b["i_target_mask"], b["i_lang"], z_sem, z_li) \
            + naive_nll(m, b["j_targets"], b["j_target_mask"], b["j_lang"], z_sem, z_lj)

        def kl(mu, lv):  # KL(N(mu, e^lv) || N(0, 1)), dimension by dimension
            return torch.tensor([sum(0.5 * (math.exp(float(v)) + float(u) ** 2 - 1 - float(v))
                                     for u, v in zip(mu[k], lv[k])) for k in range(mu.shape[0])])

        kls = kl(sem_mu, sem_lv) + kl(li_mu, li_lv) + kl(lj_mu, lj_lv)
    assert float(out["loss_translation"].detach()) == pytest.approx(float(trans.mean()), rel=1e-4)
    assert float(out["loss_reconstruction"]) == pytest.approx(float(rec.mean()), rel=1e-4)
    assert float(out["loss_kl"]) == pytest.approx(float(kls.mean()), rel=1e-4)
    assert float(out["loss"]) == pytest.approx(float(trans.mean() + 0.3 * (rec.mean() + 0.4 * kls.mean())), rel=1e-4)


def test_kl_formula_and_annealing():
    mu, lv = torch.tensor([[0.5, -1.0]]), torch.tensor([[0.2, -0.3]])
    want = 0.5 * sum(math.exp(v) + u * u - 1 - v for u, v in ((0.5, 0.2), (-1.0, -0.3)))
    assert float(kl_standard_normal(mu, lv)) == pytest.approx(want)
    m = model()
    weights = []
    for step in (0, 5, 10, 50):
        m.on_step(step)
        weights.append(m.kl_weight())
    assert weights == [0.0, 0.5, 1.0, 1.0]  # min(1, step / anneal_steps)
    assert model(kl=False).kl_weight() == 0.0


def test_semantic_input_alternates_within_the_batch():
    """Changing x_j of an even example leaves its z_sem (read from x_i) alone; of an odd one, it does not."""
    m = model().eval()
    seen = []
    m.decode_weighted = lambda targets, mask, lang, z_sem, *rest: (seen.append(z_sem.clone()) or z_sem.sum() * 0,
                                                                    z_sem.sum(-1) * 0)
    b = batch()
    torch.manual_seed(3)
    m(**b)
    b2 = {**b, "j_ids": b["j_ids"].clone()}
    b2["j_ids"][:, 2] = (b2["j_ids"][:, 2] + 1) % V
    # one decoder pass of 4 x 4 rows: translation i, translation j, reconstruction i, reconstruction j
    first = seen.pop()[8:12]
    torch.manual_seed(3)
    m(**b2)
    second = seen.pop()[8:12]
    assert torch.allclose(first[0], second[0]) and torch.allclose(first[2], second[2])  # even: from x_i
    assert not torch.allclose(first[1], second[1]) and not torch.allclose(first[3], second[3])  # odd: from x_j


def test_decoder_sees_the_source_only_through_z():
    """No cross-attention: with z fixed, the decoder's output is the same for any source sentence; a change in
    z changes it."""
    dec = LatentDecoder(torch.nn.Embedding(V, D), 3, 2, 2, 16, 2 * D, 16, 0.0).eval()
    g = torch.Generator().manual_seed(0)
    targets, mask, lang = torch.randint(5, V, (2, 5), generator=g), torch.ones(2, 5), torch.tensor([1, 2])
    z = torch.randn(2, D, generator=g), torch.randn(2, D, generator=g)
    with torch.no_grad():
        a = dec(targets, mask, lang, *z)
        assert torch.equal(a, dec(targets, mask, lang, *z))
        b = dec(targets, mask, lang, z[0] + 0.5, z[1])
    assert (a - b).abs().max() > 1e-3
    m = model().eval()
    b1 = batch()
    b2 = {**b1, "j_ids": b1["j_ids"].clone()}
    b2["j_ids"][:, 3] = (b2["j_ids"][:, 3] + 1) % V
    with torch.no_grad():  # the only path from x_j to the decoder is z = mu_sem(x_j)
        mu1, mu2 = m.embed(b1["j_ids"], b1["j_mask"]), m.embed(b2["j_ids"], b2["j_mask"])
        zeros = torch.zeros_like(mu1)
        n1 = m.decode_nll(b1["i_targets"], b1["i_target_mask"], b1["i_lang"], mu1, zeros)
        n2 = m.decode_nll(b1["i_targets"], b1["i_target_mask"], b1["i_lang"], mu2, zeros)
        n3 = m.decode_nll(b1["i_targets"], b1["i_target_mask"], b1["i_lang"], mu1, zeros)
    assert torch.equal(n1, n3) and not torch.allclose(n1, n2)


def test_contrastive_against_a_naive_loop():
    m = model("contrastive").eval()
    b = batch()
    with torch.no_grad():
        out = m(**b)
        s, t = m.embed(b["i_ids"], b["i_mask"]), m.embed(b["j_ids"], b["j_mask"])
    total = 0.0
    for i in range(4):
        p_st = math.exp(float(s[i] @ t[i])) / sum(math.exp(float(s[i] @ t[j])) for j in range(4))
        p_ts = math.exp(float(s[i] @ t[i])) / sum(math.exp(float(t[i] @ s[j])) for j in range(4))
        total += math.log(p_st) + math.log(p_ts)
    assert float(out["loss"]) == pytest.approx(-total / 8, rel=1e-5)


def test_baselines_and_combination():
    b = batch()
    torch.manual_seed(0)
    bt = model("bitranslation").eval()(**b)
    assert set(bt) == {"loss", "loss_translation"} and float(bt["loss"]) == float(bt["loss_translation"])
    m = model("vmsst_contrastive", vmsst_weight=0.01).eval()
    torch.manual_seed(5)
    out = m(**b)
    want = float(out["loss_contrastive"]) + 0.01 * float(out["loss_vmsst"])
    assert float(out["loss"]) == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("name", ["vmsst", "contrastive", "bitranslation", "vmsst_contrastive", *variants.ABLATIONS,
                                  "vmsst_full", "vmsst_b2"])
def test_every_run_trains_one_step(name):
    cfg = {"vmsst": {"elbo_weight": 0.1, "elbo_weight_pretrained": 0.025, "vmsst_contrastive_weight": {"default": 5e-4},
                     "anneal_steps": 10}, "tables": {"table6_languages": ["qaa"]},
           "encoders": {"s": {}}, "training": {"global_batch_size": 4}}
    settings, overrides, languages = variants.resolve(name, cfg, "s", 2)
    assert (languages is not None) == (name == "vmsst_full") and bool(overrides) == name.endswith("_b2")
    m = VMSST(backbone(layers=2), settings, num_languages=3, max_length=16, decoder_heads=2, decoder_ffn=16)
    out = m(**batch())
    out["loss"].backward()
    grads = [p.grad for p in m.semantic.parameters() if p.grad is not None]
    assert grads and all(torch.isfinite(g).all() for g in grads)
    if name == "vmsst_full":
        assert len(m.language_encoders) == 3 and len(m.decoders) == 3
    if name == "vmsst_dec-1":
        assert len(m.decoders[0].layers) == 1


def test_four_encoders_get_the_languages_at_random_and_each_some():
    """Table 4 "4 enc." (section 7.1): languages allocated at random to 4 language encoders, none left empty."""
    allocations = []
    for seed in (1, 2):
        m = VMSST(backbone(), Settings(objective="vmsst", encoders="n4"), num_languages=10, max_length=16,
                  decoder_heads=2, decoder_ffn=16, seed=seed)
        assert len(m.language_encoders) == 4
        assert sorted(m.encoder_of.count(e) for e in range(4)) == [2, 2, 3, 3]
        allocations.append(m.encoder_of)
    assert allocations[0] != allocations[1]


def test_batch_runs_scale_the_main_batch_and_map_to_the_papers_sizes():
    """Table 7 (section 7.4): <objective>_b<factor> multiplies the main batch; the sweep's smallest batch stands for
    the paper's 2048, so x0.5 / x1 / x2 and x1 / x2 / x4 both give 2048 / 4096 / 8192."""
    from papers.vmsst.report import batch_sweep

    cfg = {"vmsst": {"elbo_weight": 0.1, "elbo_weight_pretrained": 0.025, "vmsst_contrastive_weight": {"default": 5e-4},
                     "anneal_steps": 10}, "tables": {"table6_languages": ["qaa"], "batch_factors": [0.5, 2]},
           "encoders": {"s": {}}, "training": {"global_batch_size": 64}}
    assert variants.resolve("vmsst_b0.5", cfg, "s", 2)[1] == {"global_batch_size": 32}
    assert variants.resolve("contrastive_b2", cfg, "s", 2)[:2][1] == {"global_batch_size": 128}
    with pytest.raises(ValueError, match="not a whole number"):
        variants.resolve("vmsst_b0.3", cfg, "s", 2)  # 19.2 pairs
    assert batch_sweep(cfg) == [(0.5, 2048), (1, 4096), (2, 8192)]
    assert batch_sweep({"tables": {"batch_factors": [4, 2]}}) == [(1, 2048), (2, 4096), (4, 8192)]


def test_per_language_encoders_under_bf16_autocast():
    """VMSST-full (one language encoder per language) as the mini scale trains it: bf16 autocast."""
    cfg = {"vmsst": {"elbo_weight": 0.1, "elbo_weight_pretrained": 0.025, "vmsst_contrastive_weight": {"default": 5e-4},
                     "anneal_steps": 10}, "tables": {"table6_languages": ["qaa"]},
           "encoders": {"s": {}}, "training": {"global_batch_size": 4}}
    settings, _, languages = variants.resolve("vmsst_full", cfg, "s", 2)
    m = VMSST(backbone(layers=2), settings, num_languages=3, max_length=16, decoder_heads=2, decoder_ffn=16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = m(**batch())
    out["loss"].backward()
    assert torch.isfinite(out["loss"]) and all(torch.isfinite(p.grad).all() for p in m.parameters()
                                               if p.grad is not None)


def test_collator_targets_and_dropout():
    from common.models.tokenizer import train_wordpiece

    tok = train_wordpiece(["ku ma so", "the man sees", "a dog"] * 3, 60, tempfile.mkdtemp(), min_frequency=1)
    b = VMSSTCollator(tok, 16)([("ku ma", "the man", 1, 0), ("so", "a dog sees", 2, 0)], torch.Generator())
    assert torch.equal(b["i_targets"], b["i_ids"][:, 1:]) and b["i_lang"].tolist() == [1, 2]  # [CLS] dropped
    assert b["j_targets"][0, int(b["j_target_mask"][0].sum()) - 1] == tok.sep_token_id  # the end token is predicted
    enc = backbone()
    set_dropout(enc, 0.1)
    assert all(mod.p == 0.1 for mod in enc.modules() if isinstance(mod, torch.nn.Dropout))


# --------------------------------------------------------------------------- the pretrained (mT5) setting
def tiny_t5(vocab: int = V):
    """A tiny T5 built locally (no download) standing in for mT5-large."""
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(0)
    return T5ForConditionalGeneration(T5Config(
        vocab_size=vocab, d_model=D, d_kv=4, d_ff=16, num_layers=2, num_decoder_layers=2, num_heads=2,
        dropout_rate=0.0, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1, tie_word_embeddings=False))


def t5_model(full, objective="vmsst", **kw):
    from transformers import T5EncoderModel

    enc = T5EncoderModel(full.config)
    enc.load_state_dict(full.state_dict(), strict=False)
    kw = {"decoder_layers": 2, **kw}
    return VMSST(enc, Settings(objective=objective, anneal_steps=10, **kw), num_languages=3,
                 max_length=16, decoder_heads=2, decoder_ffn=16, pretrained_decoder=(full.get_decoder(), full.lm_head))


def test_no_dropout_reaches_t5s_attention_weights():
    """mT5 ships dropout_rate 0.1, and T5 attention keeps it as a float read at build time; the paper trains VMSST
    without dropout, so set_dropout(0) must reach the attention weights too: two training-mode passes then agree."""
    from transformers import T5Config, T5EncoderModel

    from papers.vmsst.train import set_dropout

    torch.manual_seed(0)
    enc = T5EncoderModel(T5Config(vocab_size=V, d_model=D, d_kv=4, d_ff=16, num_layers=2, num_heads=2,
                                  dropout_rate=0.1)).train()
    set_dropout(enc, 0.0)
    attention = [m for m in enc.modules() if type(m).__name__ == "T5Attention"]
    assert attention and all(m.dropout == 0.0 for m in attention)
    ids = torch.randint(2, V, (3, 7))
    assert torch.equal(enc(input_ids=ids).last_hidden_state, enc(input_ids=ids).last_hidden_state)
    set_dropout(enc, 0.2)
    assert all(m.dropout == 0.2 for m in attention) and enc.config.dropout_rate == 0.2


def test_no_dropout_reaches_the_latent_sublayers_of_a_pretrained_decoder():
    """T5ForConditionalGeneration gives its decoder stack a deep copy of its config, and the latent sublayers that
    replace cross-attention are built from that copy: set_dropout(0) on a checkpoint that ships 0.1 (as mT5 does)
    must leave no dropout anywhere in the VMSST model built from it (the paper trains VMSST without dropout)."""
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(0)
    full = T5ForConditionalGeneration(T5Config(
        vocab_size=V, d_model=D, d_kv=4, d_ff=16, num_layers=2, num_decoder_layers=2, num_heads=2, dropout_rate=0.1,
        decoder_start_token_id=0, pad_token_id=0, eos_token_id=1, tie_word_embeddings=False))
    assert full.get_decoder().config is not full.config  # the copy that hid the rate before
    set_dropout(full, 0.0)
    assert full.get_decoder().config.dropout_rate == 0.0
    m = t5_model(full)
    rates = [mod.p for mod in m.modules() if isinstance(mod, torch.nn.Dropout)]
    rates += [mod.dropout for mod in m.modules() if isinstance(getattr(mod, "dropout", None), float)]
    assert rates and not any(rates)
    sublayers = [b.layer[1] for b in m.decoders[0].stack.block]
    assert all(s.dropout.p == 0.0 for s in sublayers)


def test_t5_decoder_keeps_pretrained_weights_and_replaces_cross_attention():
    full = tiny_t5()
    m = t5_model(full).eval()
    dec = m.decoders[0]
    for k, block in enumerate(dec.stack.block):
        ref = full.get_decoder().block[k]
        assert torch.equal(block.layer[0].SelfAttention.q.weight, ref.layer[0].SelfAttention.q.weight)
        assert torch.equal(block.layer[2].DenseReluDense.wi.weight, ref.layer[2].DenseReluDense.wi.weight)
        assert not hasattr(block.layer[1], "EncDecAttention")  # the latent input in its place
    assert torch.equal(dec.out.weight[:, :D], full.lm_head.weight) and not dec.out.weight[:, D:].any()
    assert dec.embeddings is m.semantic.backbone.get_input_embeddings()  # one table for encoders and decoder
    assert torch.equal(dec.start.weight[1], m.semantic.backbone.get_input_embeddings().weight[0])
    # Table 4's shallower decoders keep the first blocks
    assert len(t5_model(tiny_t5(), decoder_layers=1).decoders[0].stack.block) == 1


def test_t5_objective_against_a_naive_computation_and_isolation():
    m = t5_model(tiny_t5()).eval()
    b = batch()
    out = m(**b)
    with torch.no_grad():
        mu_i, mu_j = m.embed(b["i_ids"], b["i_mask"]), m.embed(b["j_ids"], b["j_mask"])
        zeros = torch.zeros_like(mu_i)
        want = naive_nll(m, b["i_targets"], b["i_target_mask"], b["i_lang"], mu_j, zeros) \
            + naive_nll(m, b["j_targets"], b["j_target_mask"], b["j_lang"], mu_i, zeros)
        assert float(out["loss_translation"].detach()) == pytest.approx(float(want.mean()), rel=1e-4)
        # the decoder reads the source only through z
        n1 = m.decode_nll(b["i_targets"], b["i_target_mask"], b["i_lang"], mu_j, zeros)
        n2 = m.decode_nll(b["i_targets"], b["i_target_mask"], b["i_lang"], mu_j + 0.5, zeros)
        assert torch.equal(n1, m.decode_nll(b["i_targets"], b["i_target_mask"], b["i_lang"], mu_j, zeros))
        assert not torch.allclose(n1, n2)
    out["loss"].backward()
    assert all(torch.isfinite(p.grad).all() for p in m.parameters() if p.grad is not None)


def test_pretrained_t5_run_trains_saves_and_embeds(tmp_path):
    """The recipe's pretrained path from a local T5 folder: encoder stack loaded as the semantic encoder, the
    decoder from the checkpoint, the saved semantic encoder + mean projection loaded back by the embedder."""
    from common.models.embedder import load_embedder
    from common.models.tokenizer import train_wordpiece
    from common.training.cli import RunArguments
    from papers.vmsst.train import VMSSTRecipe

    sentences = ["ku ma so", "the man sees", "a dog runs", "ma ku", "so the dog"] * 4
    tok = train_wordpiece(sentences, 60, tmp_path / "t5", min_frequency=1)
    full = tiny_t5(len(tok))
    full.save_pretrained(tmp_path / "t5")
    (tmp_path / "deu-en.tsv").write_text("ku ma so\tthe man sees\nma ku\ta dog runs\n")
    cfg = {"encoders": {"pt": {"pretrained": str(tmp_path / "t5")}}, "training": {"max_length": 16},
           "eval": {"max_length": 16},
           "vmsst": {"elbo_weight": 0.1, "elbo_weight_pretrained": 0.025, "vmsst_contrastive_weight": {"default": 1e-3},
                     "anneal_steps": 10, "dropout": {}}}
    run = RunArguments(scale="smoke", method="vmsst", init="pt", seed=1, corpus="-", tokenizer=str(tmp_path / "t5"),
                       output_dir=str(tmp_path / "run"))
    manifest = {"train": {"deu": str(tmp_path / "deu-en.tsv")}}
    examples = VMSSTRecipe().examples(cfg, run, manifest)
    built = VMSSTRecipe().build(cfg, run, manifest, examples)
    assert built.method["settings"]["elbo_weight"] == 0.025  # lambda, the decoder pretrained too (section 6.4)
    assert built.method["settings"]["decoder_layers"] == 2  # the checkpoint's depth
    batch_ = built.collate(examples, torch.Generator())
    built.model(**batch_)["loss"].backward()
    built.save(built.model, tmp_path / "model")
    emb = load_embedder(tmp_path / "model").encode(["ku ma so"], "deu")
    ids = tok(["ku ma so"], return_tensors="pt")
    with torch.no_grad():
        want = built.model.eval().embed(ids["input_ids"], ids["attention_mask"])
    assert torch.allclose(emb, want, atol=1e-5)


@pytest.mark.parametrize("mode", ["full", "selective"])
def test_gradient_checkpointing_gives_the_same_gradients(mode):
    """The Limitations section's memory switch: recomputing activations changes no gradient."""
    grads = []
    for ckpt in (False, True):
        m = model()
        if ckpt:
            enable_activation_checkpointing(m, mode)  # the trainer's gradient_checkpointing switch
            assert m.decoders[0].checkpointing and m.semantic.backbone.is_activation_checkpointing
        torch.manual_seed(2)
        m(**batch())["loss"].backward()
        grads.append(torch.cat([p.grad.flatten() for p in m.parameters() if p.grad is not None]))
    assert torch.allclose(grads[0], grads[1], atol=1e-6)


def test_table6_runs_number_only_their_languages(tmp_path):
    """Table 6's runs (``languages`` given) give ids to their own languages only, so the unshared model builds an
    encoder and a decoder per language it trains on, not per language of the corpus."""
    from papers.vmsst.train import language_ids, load_examples

    manifest = {"train": {}}
    for lang in ("deu", "fra", "spa"):
        (tmp_path / f"{lang}.tsv").write_text(f"{lang} one\tone\n")
        manifest["train"][lang] = str(tmp_path / f"{lang}.tsv")
    assert language_ids(manifest) == {"en": 0, "deu": 1, "fra": 2, "spa": 3}
    assert language_ids(manifest, ["spa"]) == {"en": 0, "spa": 1}
    assert list(load_examples(manifest, ["spa"])) == [("spa one", "one", 1, 0)]
    assert load_examples(manifest)[2] == ("spa one", "one", 3, 0)


@pytest.mark.parametrize("objective", ["vmsst", "bitranslation", "contrastive", "vmsst_contrastive"])
def test_micro_batches_are_the_whole_batch_for_the_objectives_declared_decomposable(objective, monkeypatch):
    """The trainer accumulates micro-batches (``micro_batch_per_gpu``) only for a model that declares its loss a mean
    of per-pair terms: for VMSST and BiTranslation two halves of a batch (even sizes: the semantic input alternates
    by position) give the whole batch's gradient; the in-batch contrastive objectives do not, and say so."""
    monkeypatch.setattr(torch, "randn_like", torch.zeros_like)  # z = the mean: the same sample in both layouts
    b = batch()

    def grad(parts):
        m = model(objective)
        for part in parts:
            (m(**{k: v[part] for k, v in b.items()})["loss"] / len(parts)).backward()
        return torch.cat([p.grad.flatten() for p in m.parameters() if p.grad is not None])

    whole, halves = grad([slice(0, 4)]), grad([slice(0, 2), slice(2, 4)])
    assert model(objective).batch_decomposable == (objective in ("vmsst", "bitranslation"))
    assert torch.allclose(whole, halves, atol=1e-6) == model(objective).batch_decomposable
    cfg = {"vmsst": {"elbo_weight": 0.1, "elbo_weight_pretrained": 0.025, "vmsst_contrastive_weight": {"default": 5e-4},
                     "anneal_steps": 10, "micro_batch_per_gpu": 16}, "tables": {"table6_languages": ["qaa"]},
           "encoders": {"s": {}}, "training": {"global_batch_size": 64}}
    assert variants.resolve("vmsst_b2", cfg, "s", 2)[1] == {"global_batch_size": 128, "micro_batch_per_gpu": 16}
    assert variants.resolve("contrastive_b2", cfg, "s", 2)[1] == {"global_batch_size": 128}


def test_identity_heads_start_every_mean_at_the_pooled_backbone():
    """head_init "identity": before any update the embedding is the backbone's mean-pooled states, by hand, and so is
    the language encoder's mean; the default head is another map. An unknown initialisation is refused."""
    b = batch()
    ids, mask = b["i_ids"], b["i_mask"]
    m = model(head_init="identity")
    h = m.semantic.backbone(input_ids=ids, attention_mask=mask).last_hidden_state  # (B, S, D)
    pooled = (h * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)  # (B, D)
    torch.testing.assert_close(m.embed(ids, mask), pooled)
    lang = m.language_encoders[0]
    torch.testing.assert_close(lang.mean.weight, torch.eye(D))
    assert not torch.allclose(model().embed(ids, mask), pooled)
    with pytest.raises(ValueError, match="head_init must be one of"):
        model(head_init="zeros")


def test_resolve_takes_lambda_by_the_decoders_start_and_the_configs_decoder_depth():
    """Section 6.4: 0.025 where the decoder starts pretrained (mT5), 0.1 where it starts from scratch, as from an
    encoder-only checkpoint; vmsst.decoder_layers sets the depth (default the encoder's), head_init passes through."""
    cfg = {"vmsst": {"elbo_weight": 0.1, "elbo_weight_pretrained": 0.025, "vmsst_contrastive_weight": {"default": 5e-4},
                     "anneal_steps": 10}, "encoders": {"minilm": {"pretrained": "package:x"}}}
    scratch, _, _ = variants.resolve("vmsst", cfg, "minilm", 6)
    assert (scratch.elbo_weight, scratch.decoder_layers, scratch.head_init) == (0.1, 6, "default")
    assert variants.resolve("vmsst", cfg, "minilm", 6, decoder_pretrained=True)[0].elbo_weight == 0.025
    cfg["vmsst"].update(decoder_layers=1, head_init="identity")
    one, _, _ = variants.resolve("vmsst", cfg, "minilm", 6)
    assert (one.decoder_layers, one.head_init) == (1, "identity")
    assert variants.resolve("vmsst_dec-half", cfg, "minilm", 6)[0].decoder_layers == 3  # the ablation still wins


def test_an_encoder_only_checkpoint_takes_the_scratch_lambda_and_step0_saves_the_pooled_backbone(tmp_path):
    """From an encoder-only checkpoint (MiniLM's case) the decoder starts from scratch: lambda 0.1 (section 6.4), the
    config's 1-layer decoder; with identity heads the step-0 folder embeds as the checkpoint's mean-pooled states."""
    from common.models.embedder import load_embedder
    from common.models.tokenizer import train_wordpiece
    from common.training.cli import RunArguments
    from papers.vmsst.train import VMSSTRecipe

    sentences = ["ku ma so", "the man sees", "a dog runs", "ma ku", "so the dog"] * 4
    tok = train_wordpiece(sentences, 60, tmp_path / "bert", min_frequency=1)
    torch.manual_seed(0)
    bert = BertModel(BertConfig(vocab_size=len(tok), hidden_size=D, num_hidden_layers=2, num_attention_heads=2,
                                intermediate_size=16, max_position_embeddings=32), add_pooling_layer=False)
    bert.save_pretrained(tmp_path / "bert")
    (tmp_path / "deu-en.tsv").write_text("ku ma so\tthe man sees\nma ku\ta dog runs\n")
    cfg = {"encoders": {"pt": {"pretrained": str(tmp_path / "bert")}}, "training": {"max_length": 16},
           "eval": {"max_length": 16},
           "vmsst": {"elbo_weight": 0.1, "elbo_weight_pretrained": 0.025, "vmsst_contrastive_weight": {"default": 1e-3},
                     "anneal_steps": 10, "dropout": {}, "decoder_layers": 1, "head_init": "identity"}}
    run = RunArguments(scale="smoke", method="init", init="pt", seed=1, corpus="-", tokenizer=str(tmp_path / "bert"),
                       output_dir=str(tmp_path / "run"))
    manifest = {"train": {"deu": str(tmp_path / "deu-en.tsv")}}
    built = VMSSTRecipe().build(cfg, run, manifest, VMSSTRecipe().examples(cfg, run, manifest))
    settings = built.method["settings"]
    assert (settings["elbo_weight"], settings["decoder_layers"], settings["head_init"]) == (0.1, 1, "identity")
    assert built.training_overrides == {"max_steps": 0}
    built.save(built.model, tmp_path / "model")
    got = load_embedder(tmp_path / "model").encode(["ku ma so", "a dog"], "deu")
    ids = tok(["ku ma so", "a dog"], return_tensors="pt", padding=True)
    with torch.no_grad():
        h = BertModel.from_pretrained(tmp_path / "bert").eval()(**ids).last_hidden_state  # (B, S, D)
    m = ids["attention_mask"][..., None].float()
    torch.testing.assert_close(got, (h * m).sum(1) / m.sum(1), atol=1e-5, rtol=1e-5)

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
    head = RTLHead(m, num_layers=2, mask_token_id=tok.mask_token_id)
    enc_layers = m.base_model.encoder.layer
    for copied, original in zip(head.layers, enc_layers[-2:]):
        for p1, p2 in zip(copied.parameters(), original.parameters()):
            assert torch.equal(p1, p2) and p1.data_ptr() != p2.data_ptr()  # same values, own parameters
    # of the word embeddings only the [MASK] row is copied (the only one the head reads)
    word = m.base_model.embeddings.word_embeddings.weight
    assert torch.equal(head.mask_embedding, word[tok.mask_token_id][None]) and head.embeddings.word_embeddings is None
    assert head.mask_embedding.ndim == 2  # a matrix, weight-decayed as the table's row was (trainer's groups)
    assert sum(p.numel() for p in head.embeddings.parameters()) == sum(
        p.numel() for n, p in m.base_model.embeddings.named_parameters() if not n.startswith("word_embeddings"))
    with pytest.raises(ValueError, match="1..4"):
        RTLHead(m, num_layers=5, mask_token_id=tok.mask_token_id)


def test_collator_rtl_targets(tok):
    col = DAPCollator(tok, 16, ["tr", "rtl"], rho=1.0, direction="xx2en")
    b = col(PAIRS, torch.Generator().manual_seed(0))
    trg = b["trg_input_ids"][:, 1:]  # CLS dropped
    real = b["trg_attention_mask"][:, 1:].bool() & ~torch.isin(trg, torch.tensor(tok.all_special_ids))
    assert torch.equal(b["rtl_labels"] == -100, ~real)  # rho = 1: every English word piece is reconstructed
    assert torch.equal(b["rtl_labels"][real], trg[real])
    assert torch.equal(b["rtl_attention_mask"].bool(), real) and not b["rtl_keep"].any()  # a [MASK] slot each
    half = DAPCollator(tok, 16, ["tr", "rtl"], rho=0.3, direction="both")(PAIRS, torch.Generator().manual_seed(0))
    assert half["rtl_from_en"].tolist() == [0, 0, 1, 1]
    assert ((half["rtl_labels"] != -100).sum(1) >= 1).all()  # at least one target per sentence
    kept = (half["rtl_labels"] == -100) & half["rtl_attention_mask"].bool()
    assert torch.equal(half["rtl_keep"], kept) and kept.any()  # unselected real tokens are kept (fed as states)


@pytest.mark.parametrize("name", ["tr", "tr_tlm", "dap", "dap_dir-both", "dap_rho-0.5", "dap_k-1"])
def test_variants_train_one_step(tok, name):
    method = variants.resolve(name, {"rtl_layers": 2, "rho": 1.0, "direction": "xx2en"})
    model = DAPModel(mlm(tok), method["objectives"], temperature=0.05, rtl_layers=method["rtl_layers"],
                     direction=method["direction"], num_languages=3, pooling="cls",
                     mask_token_id=tok.mask_token_id)
    col = DAPCollator(tok, 16, method["objectives"], rho=method["rho"], direction=method["direction"])
    out = model(**col(PAIRS, torch.Generator().manual_seed(0)))
    out["loss"].backward()
    expected = {"tr": {"loss_tr"}, "tr_tlm": {"loss_tr", "loss_tlm"}}.get(name, {"loss_tr", "loss_rtl"})
    assert set(out) - {"loss"} == expected
    assert float(out["loss"]) == pytest.approx(sum(float(out[k]) for k in expected), rel=1e-6)
    grads = [p.grad for p in model.encoder.parameters() if p.grad is not None]
    assert grads and all(torch.isfinite(g).all() for g in grads)


@pytest.mark.parametrize("objectives", [["tr", "rtl"], ["tr", "tlm"]])
def test_tr_term_is_xx_to_english_and_the_weights_scale_their_terms(tok, objectives):
    """Eq. 5 ranks the English sentences for each source sentence (x -> y, not y -> x; one direction is not
    symmetric), and the total is TR + tlm_weight TLM + rtl_weight RTL (weights off 1, so a swap or a dropped weight
    shows)."""
    from tests.common.losses.test_translation_ranking import naive_tr

    torch.manual_seed(0)  # a wide initialisation, so that the sentences' vectors (and the two directions) differ
    wide = build_mlm_model(EncoderSpec(hidden_size=16, num_layers=4, num_heads=2, intermediate_size=32,
                                       initializer_range=0.5), len(tok))
    model = DAPModel(wide, objectives, temperature=0.05, rtl_weight=0.1, tlm_weight=0.3, pooling="cls",
                     mask_token_id=tok.mask_token_id).eval()
    b = DAPCollator(tok, 16, objectives, rho=1.0, direction="xx2en")(PAIRS, torch.Generator().manual_seed(0))
    with torch.no_grad():
        out = model(**b)
        src = model.encoder(b["src_input_ids"], b["src_attention_mask"])[0]  # (B, D)
        trg = model.encoder(b["trg_input_ids"], b["trg_attention_mask"])[0]
    assert float(out["loss_tr"]) == pytest.approx(naive_tr(src, trg, 0.05, 0.0, False), rel=1e-5)
    assert float(out["loss_tr"]) != pytest.approx(naive_tr(trg, src, 0.05, 0.0, False), rel=1e-3)
    other = "loss_rtl" if "rtl" in objectives else "loss_tlm"
    weight = 0.1 if "rtl" in objectives else 0.3
    assert float(out["loss"]) == pytest.approx(float(out["loss_tr"]) + weight * float(out[other]), rel=1e-6)


def test_tlm_loss_against_a_naive_computation(tok):
    """TLM (eq. 2): mean cross-entropy of the MLM head's prediction at every corrupted position of x (+) y, each
    position computed on its own from the full (B, 2S, V) logits."""
    model = DAPModel(mlm(tok), ["tr", "tlm"], temperature=0.05).eval()
    b = DAPCollator(tok, 16, ["tr", "tlm"], tlm_mask_prob=0.3)(PAIRS, torch.Generator().manual_seed(1))
    with torch.no_grad():
        got = float(model(**b)["loss_tlm"])
        h = model.encoder.backbone(input_ids=b["tlm_input_ids"], attention_mask=b["tlm_attention_mask"],
                                   token_type_ids=b["tlm_token_type_ids"]).last_hidden_state
        logits = model.mlm_head(h)  # (B, 2S, V)
    losses = [-float(torch.log_softmax(logits[i, j], -1)[b["tlm_labels"][i, j]])
              for i in range(logits.shape[0]) for j in range(logits.shape[1]) if b["tlm_labels"][i, j] != -100]
    assert len(losses) > 3 and got == pytest.approx(sum(losses) / len(losses), rel=1e-5)


def test_rtl_loss_ignores_cls_state(tok):
    """RTL reads token states without [CLS] (section 3.3.2): changing the CLS state leaves it unchanged."""
    model = DAPModel(mlm(tok), ["tr", "rtl"], temperature=0.05, mask_token_id=tok.mask_token_id).eval()
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
    pts = variants.ablation_variants({"rho": [0.5, 1.0], "rtl_layers": [1, 2]},
                                     {"rtl_layers": 2, "rho": 1.0, "direction": "xx2en"})
    assert pts == {"rho": [(0.5, "dap_rho-0.5"), (1.0, "dap")], "rtl_layers": [(1, "dap_k-1"), (2, "dap")]}


def test_rtl_head_ignores_padded_positions(tok):
    head = RTLHead(mlm(tok), num_layers=2, mask_token_id=tok.mask_token_id).eval()
    g = torch.Generator().manual_seed(0)
    states = torch.randn(2, 5, 16, generator=g)
    src_mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    trg_mask = torch.tensor([[1, 1, 0], [1, 1, 1]])
    pos = torch.arange(1, 4).expand(2, 3)
    with torch.no_grad():
        a = head(states, src_mask, trg_mask, pos)
        states[0, 3:] += 100.0  # padded source positions of sentence 0
        b = head(states, src_mask, trg_mask, pos)
    assert torch.allclose(a[0, :2], b[0, :2], atol=1e-5)  # real target positions of sentence 0 unchanged
    assert torch.allclose(a[1], b[1], atol=1e-6)
    states[0, 0] += 100.0  # the same change at a real source position does matter
    with torch.no_grad():
        c = head(states, src_mask, trg_mask, pos)
    assert (a[0, :2] - c[0, :2]).abs().max() > 1e-3


class Capture:
    """Records what enters the RTL head's first layer (h) and its embedding layer (position ids)."""

    def __init__(self, model):
        self.h = self.positions = None
        model.rtl.layers[0].register_forward_pre_hook(self._layer, with_kwargs=True)
        model.rtl.embeddings.register_forward_pre_hook(self._emb, with_kwargs=True)

    def _layer(self, module, args, kwargs):
        self.h = args[0].detach().clone()

    def _emb(self, module, args, kwargs):
        self.positions = kwargs["position_ids"].clone()


def model_and_batch(tok, rho=1.0, direction="xx2en", num_languages=0, dropout=0.0):
    torch.manual_seed(0)
    m = build_mlm_model(EncoderSpec(hidden_size=16, num_layers=4, num_heads=2, intermediate_size=32, dropout=dropout),
                        len(tok))
    model = DAPModel(m, ["tr", "rtl"], temperature=0.05, rtl_layers=2, direction=direction,
                     num_languages=num_languages, pooling="mean", mask_token_id=tok.mask_token_id).eval()
    b = DAPCollator(tok, 16, ["tr", "rtl"], rho=rho, direction=direction)(PAIRS, torch.Generator().manual_seed(3))
    return model, b


def test_kept_target_positions_receive_the_targets_contextual_states(tok):
    """Section 5.2: with rho < 1 the head sees the *contextual* English states of the unmasked tokens (the
    leakage the paper describes), and [MASK] embeddings at the positions it must reconstruct."""
    model, b = model_and_batch(tok, rho=0.5)
    cap = Capture(model)
    with torch.no_grad():
        model(**b)
        _, trg_h = model.encoder(b["trg_input_ids"], b["trg_attention_mask"])
    sx = b["src_input_ids"].shape[1] - 1
    head_trg = cap.h[:, sx:]  # (B, S-1, D)
    keep = b["rtl_keep"]
    assert keep.any() and (b["rtl_labels"] != -100).any()
    assert torch.allclose(head_trg[keep], trg_h[:, 1:][keep], atol=1e-6)
    masked = b["rtl_labels"] != -100
    mask_emb = model.rtl.mask_inputs(cap.positions)
    assert torch.allclose(head_trg[masked], mask_emb[masked], atol=1e-6)


def test_directions_feed_the_read_side_and_reconstruct_the_other(tok):
    for direction, from_en in (("xx2en", [0, 0, 0, 0]), ("en2xx", [1, 1, 1, 1]), ("both", [0, 0, 1, 1])):
        model, b = model_and_batch(tok, direction=direction, num_languages=3)
        cap = Capture(model)
        with torch.no_grad():
            model(**b)
            _, src_h = model.encoder(b["src_input_ids"], b["src_attention_mask"])
            _, trg_h = model.encoder(b["trg_input_ids"], b["trg_attention_mask"])
        assert b["rtl_from_en"].tolist() == from_en
        sx = src_h.shape[1] - 1
        for i, fe in enumerate(from_en):
            read, rebuilt = (trg_h, b["src_input_ids"]) if fe else (src_h, b["trg_input_ids"])
            real = (b["trg_attention_mask"] if fe else b["src_attention_mask"])[i, 1:].bool()
            # language embeddings start at zero: the head reads exactly the read side's states
            assert torch.allclose(cap.h[i, :sx][real], read[i, 1:][real], atol=1e-6)
            labels = b["rtl_labels"][i]
            assert torch.equal(labels[labels != -100], rebuilt[i, 1:][labels != -100])


def test_rtl_loss_against_a_naive_loop(tok):
    """Eq. 6 computed sentence by sentence on unpadded inputs: source states without [CLS], one [MASK]
    per target word piece at the target's own positions, cross-entropy at every target position."""
    model, b = model_and_batch(tok)
    with torch.no_grad():
        _, src_h = model.encoder(b["src_input_ids"], b["src_attention_mask"])
        _, trg_h = model.encoder(b["trg_input_ids"], b["trg_attention_mask"])
        fast = model._rtl(src_h, b["src_attention_mask"], trg_h, b["trg_attention_mask"],
                          {**b, "src_input_ids": b["src_input_ids"], "trg_input_ids": b["trg_input_ids"]})
        total, count = 0.0, 0
        specials = set(tok.all_special_ids)
        for i in range(len(PAIRS)):
            n_src = int(b["src_attention_mask"][i].sum())
            source = src_h[i, 1:n_src]  # without [CLS], with [SEP]
            trg_ids = b["trg_input_ids"][i, : int(b["trg_attention_mask"][i].sum())].tolist()
            slots = [j for j, t in enumerate(trg_ids) if j > 0 and t not in specials]  # positions in the target
            word = model.encoder.backbone.embeddings.word_embeddings.weight[tok.mask_token_id]  # the copied [MASK]
            pos = model.rtl.embeddings.position_embeddings(torch.tensor(slots))
            types = model.rtl.embeddings.token_type_embeddings(torch.zeros(len(slots), dtype=torch.long))
            masks = model.rtl.embeddings.LayerNorm(word + pos + types)
            h = torch.cat([source, masks])[None]
            for layer in model.rtl.layers:
                h = layer(h, attention_mask=torch.zeros(1, 1, 1, h.shape[1]))
                h = h[0] if isinstance(h, tuple) else h
            logits = model.rtl.lm_head(h[0, len(source):])
            for k, j in enumerate(slots):
                total += float(-torch.log_softmax(logits[k], -1)[trg_ids[j]])
                count += 1
    assert float(fast) == pytest.approx(total / count, rel=1e-5)


def test_tlm_corruption():
    """Eq. 2 / BERT: only non-special real tokens are chosen (15 %); of those 80 % [MASK], 10 % random, 10 % kept;
    labels are the original ids at the chosen positions and -100 elsewhere."""
    sents = [" ".join(f"w{(i * 7 + j) % 40}" for j in range(12)) for i in range(200)]
    t = train_wordpiece(sents * 2, 120, out_dir=__import__("tempfile").mkdtemp(), min_frequency=1)
    col = DAPCollator(t, 16, ["tr", "tlm"], tlm_mask_prob=0.15)
    b = col([(s, s[::-1], 1) for s in sents], torch.Generator().manual_seed(0))
    enc = t(sents, [s[::-1] for s in sents], padding=True, truncation=True, max_length=32, return_tensors="pt",
            return_special_tokens_mask=True)
    orig, maskable = enc["input_ids"], (enc["special_tokens_mask"] == 0) & (enc["attention_mask"] == 1)
    chosen = b["tlm_labels"] != -100
    assert not (chosen & ~maskable).any() and torch.equal(b["tlm_labels"][chosen], orig[chosen])
    assert torch.equal(b["tlm_input_ids"][~chosen], orig[~chosen])
    rate = chosen.sum() / maskable.sum()
    assert 0.13 < rate < 0.17
    to_mask = (b["tlm_input_ids"][chosen] == t.mask_token_id).float().mean()
    kept = (b["tlm_input_ids"][chosen] == orig[chosen]).float().mean()
    assert 0.75 < to_mask < 0.85 and 0.06 < kept < 0.16  # kept: 10 % plus random draws of the same id


def test_rtl_position_ids_follow_xlmr_numbering():
    """XLM-R numbers positions from padding_idx + 1 = 2 (<s>); the first [MASK] slot is the first word piece
    of the target, so it gets position 3, never the padding row 1 (a tiny XLM-R built locally)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import XLMRobertaConfig, XLMRobertaForMaskedLM, XLMRobertaTokenizerFast

    words = "<s> <pad> </s> <unk> <mask> the man sees a dog ku ma so li".split()
    core = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    core.post_processor = processors.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
                                                        special_tokens=[("<s>", 0), ("</s>", 2)])
    xtok = XLMRobertaTokenizerFast(tokenizer_object=core, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                                   pad_token="<pad>", mask_token="<mask>", cls_token="<s>", sep_token="</s>")
    cfg = XLMRobertaConfig(vocab_size=len(words), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                           intermediate_size=32, max_position_embeddings=40, pad_token_id=1, type_vocab_size=1)
    torch.manual_seed(0)
    model = DAPModel(XLMRobertaForMaskedLM(cfg), ["tr", "rtl"], temperature=0.05, rtl_layers=1,
                     mask_token_id=xtok.mask_token_id).eval()
    pairs = [("ku ma so", "the man sees a dog", 1), ("li", "a dog", 1)]
    b = DAPCollator(xtok, 16, ["tr", "rtl"])(pairs, torch.Generator().manual_seed(0))
    cap = Capture(model)
    with torch.no_grad():
        model(**b)
    own = model.encoder.backbone.embeddings.create_position_ids_from_input_ids(b["trg_input_ids"], 1)
    assert torch.equal(cap.positions, own[:, 1:])
    assert cap.positions[0, :5].tolist() == [3, 4, 5, 6, 7] and cap.positions[1, 0] == 3
    assert (cap.positions[1, 3:] == 1).all()  # padding keeps the padding row, as in the encoder


def test_lm_head_on_a_vocabulary_subset(tok):
    """The subset head's logits are the full head's columns, for BERT's head and XLM-R's; it holds V' rows."""
    from transformers import XLMRobertaConfig, XLMRobertaForMaskedLM

    from common.models.encoder import lm_head_on, mlm_head

    h = torch.randn(3, 5, 16, generator=torch.Generator().manual_seed(0))
    ids = torch.tensor([2, 7, 11, 40])
    xlmr = XLMRobertaForMaskedLM(XLMRobertaConfig(vocab_size=60, hidden_size=16, num_hidden_layers=1,
                                                  num_attention_heads=2, intermediate_size=32))
    for model in (mlm(tok), xlmr):
        head = mlm_head(model).eval()
        small = lm_head_on(head, ids).eval()
        with torch.no_grad():
            assert torch.allclose(small(h), head(h)[..., ids], atol=1e-5)
        n_full, n_small = (sum(p.numel() for p in x.parameters()) for x in (head, small))
        assert n_full - n_small == (len(model.get_input_embeddings().weight) - len(ids)) * (16 + 1)


def test_english_vocabulary_loss_against_a_naive_softmax(tok):
    """rtl_vocabulary: english -- eq. 6's cross-entropy with the softmax over the English word pieces only:
    log-softmax of the full head's logits restricted to those columns, at every target position."""
    from papers.dap.train import english_vocabulary

    english = english_vocabulary(tok, [b for _, b, _ in PAIRS], 16)
    assert set(english) >= {i for _, b, _ in PAIRS for i in tok(b)["input_ids"]}
    assert len(english) < len(tok)
    torch.manual_seed(0)
    m = build_mlm_model(EncoderSpec(hidden_size=16, num_layers=4, num_heads=2, intermediate_size=32), len(tok))
    model = DAPModel(m, ["tr", "rtl"], temperature=0.05, rtl_layers=2, pooling="mean",
                     rtl_vocabulary=english, mask_token_id=tok.mask_token_id).eval()
    full_model = DAPModel(m, ["tr", "rtl"], temperature=0.05, rtl_layers=2, pooling="mean",
                          mask_token_id=tok.mask_token_id).eval()
    b = DAPCollator(tok, 16, ["tr", "rtl"])(PAIRS, torch.Generator().manual_seed(3))
    with torch.no_grad():
        _, src_h = model.encoder(b["src_input_ids"], b["src_attention_mask"])
        _, trg_h = model.encoder(b["trg_input_ids"], b["trg_attention_mask"])
        fast = model._rtl(src_h, b["src_attention_mask"], trg_h, b["trg_attention_mask"], dict(b))
        states, mask = src_h[:, 1:], b["src_attention_mask"][:, 1:]
        positions = torch.arange(1, mask.shape[1] + 1).expand_as(mask)
        full = full_model.rtl(states, mask, b["rtl_attention_mask"], positions)  # (B, S-1, V): the whole head
        labels = b["rtl_labels"]
        total, count = 0.0, 0
        for i, j in (labels != -100).nonzero().tolist():
            logp = torch.log_softmax(full[i, j, english], -1)
            total += float(-logp[english.index(int(labels[i, j]))])
            count += 1
    assert float(fast) == pytest.approx(total / count, rel=1e-5)
    with pytest.raises(ValueError, match="direction xx2en"):
        DAPModel(mlm(tok), ["tr", "rtl"], temperature=0.05, direction="both", num_languages=3,
                 rtl_vocabulary=english, mask_token_id=tok.mask_token_id)
    with pytest.raises(ValueError, match="outside the head's vocabulary"):
        model.rtl.targets(torch.tensor([max(set(range(len(tok))) - set(english))]))


def test_recipe_builds_the_english_vocabulary_for_xx2en_runs_only(tok, tmp_path):
    from types import SimpleNamespace

    from common.config import load_paper_config
    from papers.dap.train import DAPRecipe

    tsv = tmp_path / "qaa.tsv"
    tsv.write_text("".join(f"{a}\t{b}\n" for a, b, _ in PAIRS))
    tok.save_pretrained(tmp_path / "tok")
    cfg = load_paper_config("dap", "smoke")
    cfg["dap"]["rtl_vocabulary"] = "english"
    for method, size in (("dap", len({i for _, b, _ in PAIRS for i in tok(b)["input_ids"]})), ("dap_dir-both", None),
                         ("tr", None)):
        run = SimpleNamespace(method=method, tokenizer=str(tmp_path / "tok"), init=next(iter(cfg["encoders"])))
        manifest = {"train": {"qaa": str(tsv)}}
        built = DAPRecipe().build(cfg, run, manifest, DAPRecipe().examples(cfg, run, manifest))
        assert built.method.get("rtl_vocabulary_size") == size
        if size:
            assert len(built.model.rtl.vocabulary) == size


def test_both_directions_average_the_two_halves_against_full_logits(tok):
    """Section 5.1: with direction "both" the RTL loss is the mean of the two directions' mean cross-entropies,
    each half of the batch its own direction; computed position by position from the head's full (B, S-1, V)
    logits (the step weights the rows instead of selecting the halves)."""
    model, _ = model_and_batch(tok, direction="both", num_languages=3)
    pairs = [PAIRS[2], PAIRS[1], PAIRS[0], PAIRS[3]]  # halves of 6 and 4 targets
    b = DAPCollator(tok, 16, ["tr", "rtl"], rho=1.0, direction="both")(pairs, torch.Generator().manual_seed(3))
    with torch.no_grad():
        _, src_h = model.encoder(b["src_input_ids"], b["src_attention_mask"])
        _, trg_h = model.encoder(b["trg_input_ids"], b["trg_attention_mask"])
        fast = model._rtl(src_h, b["src_attention_mask"], trg_h, b["trg_attention_mask"], dict(b))
        fe = b["rtl_from_en"].bool()
        read = torch.where(fe[:, None, None], trg_h, src_h)[:, 1:]
        rebuilt = torch.where(fe[:, None, None], src_h, trg_h)[:, 1:]
        mask = torch.where(fe[:, None], b["trg_attention_mask"], b["src_attention_mask"])[:, 1:]
        target_ids = torch.where(fe[:, None], b["src_input_ids"], b["trg_input_ids"])
        positions = torch.arange(target_ids.shape[1])[None].expand_as(target_ids)[:, 1:]  # BERT numbering
        logits = model.rtl(read, mask, b["rtl_attention_mask"], positions, rebuilt, b["rtl_keep"],
                           b["rtl_src_lang"], b["rtl_trg_lang"])  # (B, S-1, V)
        halves = {0: [], 1: []}
        for i, j in (b["rtl_labels"] != -100).nonzero().tolist():
            halves[int(fe[i])].append(-float(torch.log_softmax(logits[i, j], -1)[b["rtl_labels"][i, j]]))
    assert halves[0] and halves[1] and len(halves[0]) != len(halves[1])  # unequal halves: not one mean over all
    want = (sum(halves[0]) / len(halves[0]) + sum(halves[1]) / len(halves[1])) / 2
    assert float(fast) == pytest.approx(want, rel=1e-5)


def test_the_collator_lists_the_scored_positions_and_refuses_a_target_the_head_cannot_predict(tok):
    b = DAPCollator(tok, 16, ["tr", "tlm", "rtl"], rho=0.6, pad_scored_to=8)(PAIRS, torch.Generator().manual_seed(2))
    for head, width in (("tlm", b["tlm_labels"].shape[1]), ("rtl", b["rtl_labels"].shape[1])):
        labels, positions, targets = b[f"{head}_labels"], b[f"{head}_positions"], b[f"{head}_targets"]
        chosen = (labels != -100).nonzero()  # (M0, 2)
        m0 = len(chosen)
        assert len(positions) % 8 == 0 and m0 <= len(positions) < m0 + 8
        assert positions[:m0].tolist() == (chosen[:, 0] * width + chosen[:, 1]).tolist()
        assert targets[:m0].tolist() == labels[labels != -100].tolist() and (targets[m0:] == -100).all()
    from papers.dap.train import english_vocabulary

    english = english_vocabulary(tok, [e for _, e, _ in PAIRS], 16)
    DAPCollator(tok, 16, ["tr", "rtl"], rtl_vocabulary=english)(PAIRS, torch.Generator().manual_seed(0))
    swapped = [(e, x, lang) for x, e, lang in PAIRS]  # non-English targets
    with pytest.raises(ValueError, match="outside the head's vocabulary"):
        DAPCollator(tok, 16, ["tr", "rtl"], rtl_vocabulary=english)(swapped, torch.Generator().manual_seed(0))

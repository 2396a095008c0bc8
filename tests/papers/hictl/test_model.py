"""HICTL pre-training (section 3.1): the batch layout, the loss terms put together, the running p_avg, and an exact
resume of the window."""
import pytest
import torch
from transformers import BertConfig, BertForMaskedLM

from common.models.tokenizer import train_wordpiece
from papers.hictl.data import MONO, PARALLEL, HICTLCollator
from papers.hictl.model import HICTL


@pytest.fixture(scope="module")
def tok(tmp_path_factory):
    words = "the cat dog sat ran on under mat table red blue le chat chien rouge bleu sur la".split()
    return train_wordpiece([" ".join(words)] * 5, 200, tmp_path_factory.mktemp("tok"), min_frequency=1)


def model(tok, **kw):
    torch.manual_seed(0)
    mlm = BertForMaskedLM(BertConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=32, max_position_embeddings=64, hidden_dropout_prob=0.0,
                                     attention_probs_dropout_prob=0.0))
    return HICTL(mlm, tok.all_special_ids, temperature=0.1, word_negatives=5, window=3, **kw)


EXAMPLES = [("le chat rouge", "the red cat", PARALLEL), ("la table bleu", "the blue table", PARALLEL),
            ("the dog ran under the mat", None, MONO), ("chien", None, MONO)]


def test_collator_layout_masks_and_reordering(tok):
    c = HICTLCollator(tok, 16, mask_bilingual=0.5, mask_monolingual=0.2)
    b = c(EXAMPLES, torch.Generator().manual_seed(0))
    cls, sep = tok.cls_token_id, tok.sep_token_id
    x0 = b["x_ids"][0][b["x_mask"][0].bool()].tolist()
    assert x0 == tok("le chat rouge")["input_ids"]  # [CLS] x [SEP], as the tokenizer lays it out
    pair0 = b["pair_ids"][0][b["pair_mask"][0].bool()].tolist()
    assert pair0 == tok("le chat rouge", "the red cat")["input_ids"]
    types = tok("le chat rouge", "the red cat")["token_type_ids"]
    assert b["pair_types"][0][b["pair_mask"][0].bool()].tolist() == types
    # monolingual: y holds x's tokens in another order, and the LM input is x alone (MLM)
    x2 = b["x_ids"][2][b["x_mask"][2].bool()].tolist()
    y2 = b["y_ids"][2][b["y_mask"][2].bool()].tolist()
    assert y2[0] == cls and y2[-1] == sep and sorted(y2) == sorted(x2) and y2 != x2
    assert int(b["lm_mask"][2].sum()) == len(x2) and int(b["lm_mask"][0].sum()) == len(pair0)
    # labels sit on masked real tokens only, never on specials or padding
    chosen = b["lm_labels"] != -100
    assert chosen.any() and not (chosen & (b["lm_mask"] == 0)).any()
    orig = torch.tensor(tok(["le chat rouge"], ["the red cat"])["input_ids"][0])
    assert (b["lm_labels"][0][chosen[0]] == orig[chosen[0][: len(orig)]]).all()
    assert not torch.isin(b["lm_labels"][chosen], torch.tensor(tok.all_special_ids)).any()
    assert torch.equal(c(EXAMPLES, torch.Generator().manual_seed(0))["lm_ids"], b["lm_ids"])  # seeded


def test_collator_masks_bilingual_and_monolingual_rows_at_their_own_rates(tok):
    """Table 9: 25 % of a translation pair's tokens (TLM), 15 % of a monolingual sentence's (MLM), each chosen token
    [MASK] 80 %, a random token 10 %, itself 10 %. Rates 1 and 0 first (exact), then the default rates over 400 rows
    (a seeded draw; bounds at about four standard deviations)."""
    c = HICTLCollator(tok, 16, mask_bilingual=1.0, mask_monolingual=0.0)
    b = c(EXAMPLES, torch.Generator().manual_seed(0))
    clean = HICTLCollator(tok, 16, mask_bilingual=0.0, mask_monolingual=0.0)(EXAMPLES, torch.Generator().manual_seed(0))
    maskable = b["lm_mask"].bool() & ~torch.isin(clean["lm_ids"], torch.tensor(tok.all_special_ids))
    chosen = b["lm_labels"] != -100
    assert torch.equal(chosen[:2], maskable[:2]) and not chosen[2:].any()  # every pair token; no monolingual one
    assert torch.equal(b["lm_labels"][chosen], clean["lm_ids"][chosen])  # labels are the original tokens

    rows = [EXAMPLES[0]] * 200 + [EXAMPLES[2]] * 200
    c = HICTLCollator(tok, 16)
    b = c(rows, torch.Generator().manual_seed(1))
    clean = HICTLCollator(tok, 16, mask_bilingual=0.0, mask_monolingual=0.0)(rows, torch.Generator().manual_seed(1))
    maskable = b["lm_mask"].bool() & ~torch.isin(clean["lm_ids"], torch.tensor(tok.all_special_ids))
    chosen = b["lm_labels"] != -100
    for part, rate in ((slice(0, 200), 0.25), (slice(200, 400), 0.15)):
        n = int(maskable[part].sum())
        assert abs(int(chosen[part].sum()) / n - rate) < 4 * (rate * (1 - rate) / n) ** 0.5
    n = int(chosen.sum())
    as_mask = int((b["lm_ids"][chosen] == tok.mask_token_id).sum()) / n
    kept = int((b["lm_ids"][chosen] == clean["lm_ids"][chosen]).sum()) / n  # 10 %, plus random draws of itself
    assert abs(as_mask - 0.8) < 4 * (0.16 / n) ** 0.5 and abs(kept - 0.1) < 4 * (0.09 / n) ** 0.5 + 0.01


def test_loss_is_the_sum_of_its_terms_and_variants_drop_them(tok):
    b = HICTLCollator(tok, 16)(EXAMPLES, torch.Generator().manual_seed(1))
    m = model(tok).eval()
    torch.manual_seed(3)
    out = m(**b)
    out = {k: v.detach() for k, v in out.items()}
    assert float(out["loss"]) == pytest.approx(float(out["loss_lm"] + out["loss_sentence"] + out["loss_word"]),
                                               rel=1e-6)
    lm = model(tok, sentence=False, word=False).eval()
    out2 = lm(**b)
    assert set(out2) == {"loss", "loss_lm"} and float(out2["loss_lm"]) == pytest.approx(float(out["loss_lm"]))
    # the sentence term is eq. 4 on r(x) = f(CLS)
    with torch.no_grad():
        rx, ry = m.represent(b["x_ids"], b["x_mask"]), m.represent(b["y_ids"], b["y_mask"])
    assert float(out["loss_sentence"]) == pytest.approx(float(m.sentence_loss(rx, ry)), rel=1e-6)


def test_each_term_against_a_naive_computation(tok):
    """Each term on its own, from the backbone's states by loops: the LM term is the mean cross-entropy over the
    corrupted positions of the LM input; the sentence term reads r(x) = f([CLS] state) (eq. 4); the word term
    (eqs. 7-8) reads the pair input's [CLS] state against the input embedding table, over the pair's bag of word
    pieces, with a fixed negative sample."""
    import math

    import torch.nn.functional as F

    b = HICTLCollator(tok, 16)(EXAMPLES, torch.Generator().manual_seed(1))
    m = model(tok).eval()
    special = set(tok.all_special_ids)
    bags = [sorted({int(t) for t, k in zip(r, mk) if k and int(t) not in special})
            for r, mk in zip(b["pair_ids"], b["pair_mask"])]
    negatives = torch.tensor([[w for w in range(len(tok)) if w not in special and w not in bag][:5] for bag in bags])
    m.word_loss.sample_negatives = lambda sims, excluded: negatives
    with torch.no_grad():
        out = m(**b)
        backbone = m.encoder.backbone
        h = backbone(input_ids=b["lm_ids"], attention_mask=b["lm_mask"], token_type_ids=b["lm_types"]).last_hidden_state
        terms = [F.cross_entropy(m.lm_head(h[i, j][None]), b["lm_labels"][i, j][None]).item()
                 for i in range(h.shape[0]) for j in range(h.shape[1]) if b["lm_labels"][i, j] != -100]
        assert float(out["loss_lm"]) == pytest.approx(sum(terms) / len(terms), rel=1e-5)

        def cls(ids, mask):
            return backbone(input_ids=ids, attention_mask=mask).last_hidden_state[:, 0]

        rx, ry = m.projection(cls(b["x_ids"], b["x_mask"])), m.projection(cls(b["y_ids"], b["y_mask"]))
        assert float(out["loss_sentence"]) == pytest.approx(float(m.sentence_loss(rx, ry)), rel=1e-5)

        query = backbone(input_ids=b["pair_ids"], attention_mask=b["pair_mask"],
                         token_type_ids=b["pair_types"]).last_hidden_state[:, 0]  # (B, D)
        table = backbone.get_input_embeddings().weight  # (V, D)
        sim = lambda i, w: float(F.cosine_similarity(query[i], table[w], dim=0)) / 0.1  # noqa: E731 -- tau 0.1
        per_pair = []
        for i, bag in enumerate(bags):
            neg = sum(math.exp(sim(i, j)) for j in negatives[i].tolist())
            per_pair.append(sum(-math.log(math.exp(sim(i, w)) / (math.exp(sim(i, w)) + neg)) for w in bag) / len(bag))
        assert float(out["loss_word"]) == pytest.approx(sum(per_pair) / len(per_pair), rel=1e-5)


def test_only_a_trained_projection_is_saved_with_the_encoder(tok):
    """f is trained by the sentence-level CTL alone: the init / MLM-TLM-only / w/o-sentence-CTL runs are saved
    without it (before: a random d x d map in front of their cosines)."""
    full = model(tok)
    assert full.saved_projection() is full.projection
    assert model(tok, sentence=False, word=False).saved_projection() is None
    assert model(tok, sentence=False).saved_projection() is None


def test_p_avg_window_follows_training_and_resumes_exactly(tok):
    b = HICTLCollator(tok, 16)(EXAMPLES, torch.Generator().manual_seed(1))
    m = model(tok, hard_negatives=True)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    losses = []
    for _ in range(4):
        torch.manual_seed(5)
        out = m(**b)
        losses.append(float(out["loss_sentence"].detach()))
        out["loss"].backward()
        opt.step()
        opt.zero_grad()
    # the window holds the last 3 batches' exp(-L_S)
    assert float(m.window.mean()) == pytest.approx(sum(torch.exp(-torch.tensor(losses[1:])).tolist()) / 3, rel=1e-6)
    state = {k: v.clone() for k, v in m.state_dict().items()}
    m2 = model(tok, hard_negatives=True)
    m2.load_state_dict(state)
    assert float(m2.window.mean()) == float(m.window.mean())
    m.eval()
    m2.eval()
    torch.manual_seed(6)  # the word-level negatives are drawn from torch's generator
    first = float(m(**b)["loss"].detach())
    torch.manual_seed(6)
    assert first == pytest.approx(float(m2(**b)["loss"].detach()), rel=1e-6)


def test_the_collator_lists_the_masked_positions_and_checks_the_negatives(tok):
    """The LM head's rows are the masked positions (flat into the LM input, padded to the multiple with -100); the
    word-level CTL's check that every pair leaves m words outside its bag runs here, on the CPU."""
    b = HICTLCollator(tok, 16, pad_scored_to=4)(EXAMPLES, torch.Generator().manual_seed(1))
    chosen = (b["lm_labels"] != -100).nonzero()
    m0, width = len(chosen), b["lm_labels"].shape[1]
    assert len(b["lm_positions"]) % 4 == 0 and m0 <= len(b["lm_positions"]) < m0 + 4
    assert b["lm_positions"][:m0].tolist() == (chosen[:, 0] * width + chosen[:, 1]).tolist()
    assert (b["lm_targets"][m0:] == -100).all()
    room = len(tok) - len(set(tok.all_special_ids)) - 6  # the largest bag: "le chat rouge" + "the red cat"
    HICTLCollator(tok, 16, word_negatives=room)(EXAMPLES[:1], torch.Generator().manual_seed(1))
    with pytest.raises(ValueError, match="words outside a bag of words"):
        HICTLCollator(tok, 16, word_negatives=room + 1)(EXAMPLES[:1], torch.Generator().manual_seed(1))

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
    assert m.window.mean() == pytest.approx(sum(torch.exp(-torch.tensor(losses[1:])).tolist()) / 3, rel=1e-6)
    state = {k: v.clone() for k, v in m.state_dict().items()}
    m2 = model(tok, hard_negatives=True)
    m2.load_state_dict(state)
    assert m2.window.mean() == m.window.mean()
    m.eval()
    m2.eval()
    torch.manual_seed(6)  # the word-level negatives are drawn from torch's generator
    first = float(m(**b)["loss"].detach())
    torch.manual_seed(6)
    assert first == pytest.approx(float(m2(**b)["loss"].detach()), rel=1e-6)

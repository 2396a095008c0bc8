"""HICTL's word-level contrastive loss (eqs. 7-8) against a naive computation with a fixed negative sample."""
import math

import pytest
import torch

from common.losses.word_ctl import WordCTLLoss, bag_of_words, bag_positions, check_negatives

SPECIAL = torch.tensor([0, 1, 2])  # [PAD], [CLS], [SEP]


def test_bag_of_words_unique_pieces_without_specials():
    ids = torch.tensor([[1, 5, 7, 5, 2, 9, 2, 0], [1, 4, 2, 4, 2, 0, 0, 0]])
    mask = (ids != 0).long()
    bag = bag_of_words(ids, mask, 12, SPECIAL)
    assert bag[0].nonzero().flatten().tolist() == [5, 7, 9] and bag[1].nonzero().flatten().tolist() == [4]
    # the bag as positions of the row: each word piece at its first occurrence
    first = bag_positions(ids, mask, SPECIAL)
    assert first[0].nonzero().flatten().tolist() == [1, 2, 5] and first[1].nonzero().flatten().tolist() == [1]
    padded = torch.tensor([[1, 5, 2, 0, 0]])  # a padding id equal to a word piece would not count
    assert bag_positions(padded, torch.tensor([[1, 1, 1, 0, 0]]), SPECIAL).tolist() == [[False, True, False,
                                                                                          False, False]]


def as_positions(bag: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """A (B, V) bag as (B, L) word ids and which of them count (each word once)."""
    width = int(bag.sum(1).max())
    ids = torch.zeros(bag.shape[0], width, dtype=torch.long)
    keep = torch.zeros(bag.shape[0], width, dtype=torch.bool)
    for i, row in enumerate(bag):
        words = row.nonzero().flatten()
        ids[i, :len(words)], keep[i, :len(words)] = words, True
    return ids, keep


def test_loss_against_a_naive_computation_with_fixed_negatives():
    g = torch.Generator().manual_seed(0)
    q, emb = torch.randn(2, 3, generator=g), torch.randn(10, 3, generator=g)
    bag = torch.zeros(2, 10, dtype=torch.bool)
    bag[0, [3, 4]] = True
    bag[1, [5]] = True
    fixed = torch.tensor([[6, 7, 8], [3, 9, 4]])
    loss = WordCTLLoss(num_negatives=3, temperature=0.5)
    loss.sample_negatives = lambda sims, excluded: fixed

    def s(a, b):
        return float(a @ b) / float(a.norm() * b.norm()) / 0.5

    per_pair = []
    for i, words in enumerate(([3, 4], [5])):
        terms = []
        for w in words:
            pos = math.exp(s(q[i], emb[w]))
            terms.append(-math.log(pos / (pos + sum(math.exp(s(q[i], emb[j])) for j in fixed[i].tolist()))))
        per_pair.append(sum(terms) / len(terms))  # eq. 7: the mean over the bag
    special = torch.zeros(10, dtype=torch.bool)
    assert float(loss(q, emb, *as_positions(bag), special)) == pytest.approx(sum(per_pair) / 2, rel=1e-5)  # eq. 8


def test_loss_and_gradient_equal_the_dense_computation():
    """The bag scored by gathering its words' similarities equals the (B, V) computation of every word's term masked
    by the bag (the formula written over the whole vocabulary), in value and in gradient."""
    g = torch.Generator().manual_seed(1)
    q, emb = torch.randn(3, 6, generator=g, requires_grad=True), torch.randn(30, 6, generator=g, requires_grad=True)
    bag = torch.zeros(3, 30, dtype=torch.bool)
    bag[0, [3, 4, 9]] = bag[1, [5]] = True  # row 2: an empty bag, no term
    fixed = torch.tensor([[6, 7, 8, 20], [3, 9, 4, 21], [1, 2, 3, 4]])
    loss = WordCTLLoss(num_negatives=4, temperature=0.5)
    loss.sample_negatives = lambda sims, excluded: fixed
    got = loss(q, emb, *as_positions(bag), torch.zeros(30, dtype=torch.bool))
    sims = torch.nn.functional.normalize(q, dim=-1) @ torch.nn.functional.normalize(emb, dim=-1).T / 0.5  # (B, V)
    per_word = torch.nn.functional.softplus(torch.logsumexp(sims.gather(1, fixed), 1, keepdim=True) - sims)
    per_pair = (per_word * bag).sum(1) / bag.sum(1).clamp_min(1)
    want = per_pair[:2].mean()
    assert float(got.detach()) == pytest.approx(float(want.detach()), rel=1e-6)
    for a, b in zip(torch.autograd.grad(got, [q, emb]), torch.autograd.grad(want, [q, emb])):
        assert torch.allclose(a, b, atol=1e-6)


def test_sampler_never_draws_a_word_of_the_bag_or_a_special_token():
    torch.manual_seed(0)
    V = 40
    q, emb = torch.randn(4, 8), torch.randn(V, 8)
    emb[5] = q[0] * 10  # the most similar word of query 0 is in its bag: it must never be drawn
    bag = torch.zeros(4, V, dtype=torch.bool)
    bag[0, [5, 6, 7]] = True
    bag[1, 10:20] = True
    special = torch.zeros(V, dtype=torch.bool)
    special[:3] = True
    loss = WordCTLLoss(num_negatives=20)
    sims = torch.nn.functional.normalize(q, dim=-1) @ torch.nn.functional.normalize(emb, dim=-1).T
    for _ in range(50):
        drawn = loss.sample_negatives(sims, bag | special[None])
        assert drawn.shape == (4, 20)
        for i in range(4):
            assert not (bag[i, drawn[i]] | special[drawn[i]]).any() and len(set(drawn[i].tolist())) == 20
    # the check is the collator's, on the CPU: 40 - 3 specials - a bag of 10 leaves 27 words
    check_negatives(V, 3, [3, 10], 27)
    with pytest.raises(ValueError, match="only 27 words outside a bag"):
        check_negatives(V, 3, [3, 10], 30)


def test_sampler_draws_in_proportion_to_exp_similarity(monkeypatch):
    """Hard negatives (section 3.1): word w outside the bag is drawn with probability exp(s_w) / sum over the
    allowed words u of exp(s_u), s = cosine / tau, so the most similar words come first; excluded words get 0.
    The distribution handed to ``torch.multinomial`` is checked against that loop, word by word."""
    seen = {}

    def capture(probs, n, replacement):
        seen["probs"], seen["n"], seen["replacement"] = probs, n, replacement
        return torch.zeros(probs.shape[0], n, dtype=torch.long)

    monkeypatch.setattr(torch, "multinomial", capture)
    sims = torch.tensor([[2.0, -1.0, 0.5, 3.0, 0.0], [1.0, 1.0, -2.0, 0.0, 4.0]])
    excluded = torch.tensor([[False, True, False, True, False], [True, False, False, False, False]])
    WordCTLLoss(num_negatives=2).sample_negatives(sims, excluded)
    for i in range(2):
        allowed = [w for w in range(5) if not excluded[i, w]]
        z = sum(math.exp(float(sims[i, u])) for u in allowed)
        want = [math.exp(float(sims[i, w])) / z if w in allowed else 0.0 for w in range(5)]
        assert seen["probs"][i].tolist() == pytest.approx(want, rel=1e-6)
    assert seen["n"] == 2 and seen["replacement"] is False  # m distinct words

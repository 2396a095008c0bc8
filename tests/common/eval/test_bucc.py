import pytest
import torch
import torch.nn.functional as F

from common.data.loaders import BuccSplit
from common.eval import bucc


def naive_margin(x, y, i, j, k, kind):
    """Eq. 8 of DAP appendix B, written out with loops."""
    x, y = F.normalize(x, dim=-1), F.normalize(y, dim=-1)
    cos = lambda a, b: float(a @ b)
    nx = sorted((cos(x[i], y[z]) for z in range(len(y))), reverse=True)[:k]
    ny = sorted((cos(x[z], y[j]) for z in range(len(x))), reverse=True)[:k]
    a, b = cos(x[i], y[j]), sum(nx) / (2 * k) + sum(ny) / (2 * k)
    return a / b if kind == "ratio" else a - b


@pytest.mark.parametrize("kind", ["ratio", "distance"])
def test_margin_scores_match_naive(kind):
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(7, 5, generator=g), torch.randn(6, 5, generator=g)
    for s, t, score in bucc.mine(x, y, k=3, scoring=kind):
        assert score == pytest.approx(naive_margin(x, y, s, t, 3, kind), abs=1e-5)


def test_mine_is_one_to_one_and_best_first():
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(20, 8, generator=g), torch.randn(15, 8, generator=g)
    out = bucc.mine(x, y, k=4)
    srcs, trgs, scores = zip(*out)
    assert len(set(srcs)) == len(srcs) and len(set(trgs)) == len(trgs)
    assert list(scores) == sorted(scores, reverse=True)


def test_mine_recovers_planted_pairs():
    g = torch.Generator().manual_seed(2)
    base = torch.randn(10, 64, generator=g)  # 64 dims: random pairs have small cosines
    x = torch.cat([base, torch.randn(30, 64, generator=g)])
    y = torch.cat([torch.randn(25, 64, generator=g), base + 0.01 * torch.randn(10, 64, generator=g)])
    top = bucc.mine(x, y, k=4)[:10]
    assert {(s, t) for s, t, _ in top} == {(i, 25 + i) for i in range(10)}


def test_threshold_is_midpoint_of_best_prefix():
    gold = {("s1", "t1"), ("s2", "t2"), ("s3", "t3")}
    cands = [bucc.Candidate("s1", "t1", 0.9), bucc.Candidate("s2", "t2", 0.8),
             bucc.Candidate("s4", "t4", 0.7), bucc.Candidate("s3", "t3", 0.6), bucc.Candidate("s5", "t5", 0.5)]
    best = bucc.optimize_threshold(cands, gold)
    # prefixes: F1 = 2/4=0.5, 0.8, 0.667, 0.857 (3 correct of 4, recall 1), 0.75 -> best is 4th, midpoint 0.55
    assert best["threshold"] == pytest.approx(0.55)
    assert best["precision"] == pytest.approx(75.0) and best["recall"] == pytest.approx(100.0)
    assert best["f1"] == pytest.approx(100 * 6 / 7)
    applied = bucc.apply_threshold(cands, gold, 0.75)
    assert applied["n_predicted"] == 2 and applied["precision"] == 100.0
    assert applied["recall"] == pytest.approx(200 / 3)


def test_dedup_drops_texts_repeated_in_a_language():
    split = BuccSplit(src={"a1": "same", "a2": "same", "a3": "other"}, trg={"b1": "same", "b2": "other"},
                      gold={("a1", "b1"), ("a3", "b2")})
    vec = {"same": [1.0, 0.0], "other": [0.0, 1.0]}
    embed = lambda texts: torch.tensor([vec[t] for t in texts])
    cands = bucc.candidates_for_split(split, embed, k=1, scoring="cosine")
    assert [(c.src, c.trg) for c in cands] == [("a3", "b2")]


def test_prf():
    assert bucc.prf(2, 4, 8) == (50.0, 25.0, pytest.approx(100 / 3))
    assert bucc.prf(0, 0, 5) == (0.0, 0.0, 0.0)


def test_one_pass_knn_equals_two_passes():
    from common.eval.similarity import knn, knn_both

    g = torch.Generator().manual_seed(3)
    x, y = F.normalize(torch.randn(50, 8, generator=g), dim=-1), F.normalize(torch.randn(37, 8, generator=g), dim=-1)
    fs, fi, bs, bi = knn_both(x, y, k=4, block=7)  # blocks smaller than k and uneven
    rs, ri = knn(x, y, 4)
    qs, qi = knn(y, x, 4)
    assert torch.allclose(fs, rs) and torch.equal(fi, ri)
    assert torch.allclose(bs, qs) and torch.equal(bi, qi)


def test_each_side_embedded_by_its_own_encoder():
    """MoCo-BERT has one encoder per language: ``embed_trg`` embeds the target side."""
    src = {f"zh-{i}": f"z{i}" for i in range(4)}
    trg = {f"en-{i}": f"e{i}" for i in range(4)}
    split = BuccSplit(src, trg, {("zh-0", "en-0"), ("zh-1", "en-1")})
    basis = torch.eye(4)
    embed_zh = lambda texts: basis[[int(t[1:]) for t in texts]]
    embed_en = lambda texts: basis[[int(t[1:]) for t in texts]]
    scrambled = lambda texts: basis[[(int(t[1:]) + 1) % 4 for t in texts]]  # the wrong encoder for English
    good = {(c.src, c.trg)
            for c in bucc.candidates_for_split(split, embed_zh, k=2, scoring="distance", embed_trg=embed_en)}
    bad = {(c.src, c.trg)
           for c in bucc.candidates_for_split(split, embed_zh, k=2, scoring="distance", embed_trg=scrambled)}
    assert ("zh-0", "en-0") in good and ("zh-0", "en-0") not in bad


def test_max_retrieval_takes_the_backward_candidates_too():
    """LASER's "max": t1's best source is s1 (0.6), a pair no source's forward search proposes (both sources' best
    target is t0); after the one-to-one filter it is the second pair."""
    src = torch.tensor([[1.0, 0.0], [0.8, 0.6]])
    trg = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    got = bucc.mine(src, trg, k=1, scoring="cosine", retrieval="max")
    assert [(s, t) for s, t, _ in got] == [(0, 0), (1, 1)]
    assert [sc for _, _, sc in got] == pytest.approx([1.0, 0.6])


def _naive_max_ratio(x: torch.Tensor, y: torch.Tensor, k: int) -> list[tuple[int, int, float]]:
    """LASER's margin mining by loops: ratio margin over each side's k nearest neighbours, each sentence's best
    candidate in both directions, then one-to-one in order of score."""
    cos = [[float(F.cosine_similarity(a, b, dim=0)) for b in y] for a in x]
    knn_x = [sorted(range(len(y)), key=lambda j: -cos[i][j])[:k] for i in range(len(x))]
    knn_y = [sorted(range(len(x)), key=lambda i: -cos[i][j])[:k] for j in range(len(y))]
    mx = [sum(cos[i][j] for j in knn_x[i]) / k for i in range(len(x))]
    my = [sum(cos[i][j] for i in knn_y[j]) / k for j in range(len(y))]
    margin = lambda i, j: cos[i][j] / ((mx[i] + my[j]) / 2)  # noqa: E731
    cands = [max(((i, j, margin(i, j)) for j in knn_x[i]), key=lambda c: c[2]) for i in range(len(x))]
    cands += [max(((i, j, margin(i, j)) for i in knn_y[j]), key=lambda c: c[2]) for j in range(len(y))]
    out, seen_x, seen_y = [], set(), set()
    for i, j, sc in sorted(cands, key=lambda c: -c[2]):
        if i not in seen_x and j not in seen_y:
            out.append((i, j, sc))
            seen_x.add(i)
            seen_y.add(j)
    return out


def test_max_ratio_mining_equals_a_naive_loop():
    g = torch.Generator().manual_seed(3)
    x, y = torch.randn(7, 5, generator=g), torch.randn(6, 5, generator=g)
    got, want = bucc.mine(x, y, k=3, scoring="ratio", retrieval="max"), _naive_max_ratio(x, y, 3)
    assert [(s, t) for s, t, _ in got] == [(s, t) for s, t, _ in want]
    assert [sc for _, _, sc in got] == pytest.approx([sc for _, _, sc in want], rel=1e-5)


def test_forward_cosine_keeps_every_sources_best_target():
    """VMSST's BUCC (cosine): each source's highest-cosine target, with no backward candidates and no one-to-one
    filtering -- two sources may pick the same target (worked by hand: s0 -> t0 (1.0), s1 -> t0 (0.8), s2 -> t1)."""
    src = torch.tensor([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]])
    trg = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    fwd = bucc.mine(src, trg, scoring="cosine", retrieval="forward")
    assert [(s, t) for s, t, _ in fwd] == [(0, 0), (2, 1), (1, 0)]
    assert [round(sc, 6) for _, _, sc in fwd] == [1.0, 1.0, 0.8]
    both = bucc.mine(src, trg, k=1, scoring="cosine", retrieval="max")
    assert len({t for _, t, _ in both}) == len(both)  # LASER's one-to-one filtering: each target once

"""The faiss backends of bitext mining: faiss flat gives the exact search's candidates; the approximate
indexes find planted translations."""
import pytest
import torch
import torch.nn.functional as F

from common.eval.bucc import mine
from common.eval.knn_index import KNN_BACKENDS, knn_backend
from common.eval.similarity import knn_both


def _pairs(n_src=300, n_trg=400, dim=48, seed=0):
    """Sources whose first 200 rows have a noisy translation among the targets (rows 100..299)."""
    g = torch.Generator().manual_seed(seed)
    x = F.normalize(torch.randn(n_src, dim, generator=g), dim=-1)
    y = F.normalize(torch.randn(n_trg, dim, generator=g), dim=-1)
    y[100:300] = F.normalize(x[:200] + 0.3 * torch.randn(200, dim, generator=g) / dim**0.5, dim=-1)
    return x, y


def test_faiss_flat_returns_the_exact_neighbours():
    x, y = _pairs()
    exact = knn_both(x, y, 4)
    flat = knn_backend("faiss-flat")(x, y, 4)
    for e, f in zip(exact, flat):
        assert e.shape == f.shape
    for scores in (0, 2):
        assert torch.allclose(exact[scores], flat[scores], atol=1e-5)
    for idx in (1, 3):
        assert torch.equal(exact[idx], flat[idx])


@pytest.mark.parametrize("scoring,retrieval", [("ratio", "max"), ("distance", "max"), ("cosine", "forward")])
def test_faiss_flat_mines_the_same_candidates(scoring, retrieval):
    x, y = _pairs(seed=1)
    exact = mine(x, y, k=4, scoring=scoring, retrieval=retrieval)
    flat = mine(x, y, k=4, scoring=scoring, retrieval=retrieval, knn_search="faiss-flat")
    assert [(s, t) for s, t, _ in exact] == [(s, t) for s, t, _ in flat]
    assert [sc for *_, sc in exact] == pytest.approx([sc for *_, sc in flat], abs=1e-5)


@pytest.mark.parametrize("backend", ["faiss-hnsw", "faiss-ivf"])
def test_approximate_indexes_find_planted_translations(backend):
    x, y = _pairs(n_src=2000, n_trg=2000, dim=32, seed=2)
    cands = mine(x, y, k=4, scoring="ratio", knn_search=backend)
    found = {(s, t) for s, t, _ in cands}
    planted = {(i, 100 + i) for i in range(200)}
    assert len(planted & found) >= 190  # the planted pairs are each other's clear nearest neighbours


def test_unknown_backend_is_an_error():
    with pytest.raises(ValueError, match="unknown k-NN backend 'annoy'"):
        mine(*_pairs(), knn_search="annoy")
    assert set(KNN_BACKENDS) == {"exact", "faiss-flat", "faiss-hnsw", "faiss-ivf"}

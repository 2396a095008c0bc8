import numpy as np
import pytest
import torch
from scipy.stats import rankdata

from common.data.loaders import StsPairs
from common.eval import sts


def test_aggregations_hand_computed():
    # subset a: perfect rank order (spearman 1); subset b: reversed (spearman -1), twice as large.
    preds = {"a": np.array([0.1, 0.2, 0.3]), "b": np.array([0.6, 0.5, 0.4, 0.3, 0.2, 0.1])}
    golds = {"a": np.array([1.0, 2.0, 3.0]), "b": np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])}
    out = sts.aggregate(preds, golds)
    assert out["subsets"]["a"]["spearman"] == pytest.approx(100.0)
    assert out["subsets"]["b"]["spearman"] == pytest.approx(-100.0)
    assert out["mean"]["spearman"] == pytest.approx(0.0)
    assert out["wmean"]["spearman"] == pytest.approx((100 * 3 - 100 * 6) / 9)
    # "all": pooled 9 predictions vs golds -> computed independently with ranks
    p = np.concatenate([preds["a"], preds["b"]])
    g = np.concatenate([golds["a"], golds["b"]])
    rp, rg = rankdata(p), rankdata(g)  # tied predictions get average ranks, as Spearman's rho does
    expected = 100 * np.corrcoef(rp, rg)[0, 1]
    assert out["all"]["spearman"] == pytest.approx(expected)


def test_pairs_are_scored_by_cosine_and_pearson_by_hand():
    """Cosines 1, 0.8, 0 against gold 3, 2, 1: Spearman 100, Pearson 100 / sqrt(1.12) (deviations 0.4, 0.2, -0.6
    against 1, 0, -1: covariance 1, norms sqrt(0.56) and sqrt(2)). Dot products (1, 20, 0) would give Spearman 50."""
    vec = {"a": [1.0, 0.0], "b": [1.0, 0.0], "c": [5.0, 0.0], "d": [4.0, 3.0], "e": [1.0, 0.0], "f": [0.0, 1.0]}
    embed = lambda s: torch.tensor([vec[x] for x in s])  # noqa: E731
    out = sts.evaluate([StsPairs("s", ["a", "c", "e"], ["b", "d", "f"], [3.0, 2.0, 1.0])], embed)
    assert out["items"]["s"]["pred"] == pytest.approx([1.0, 0.8, 0.0], abs=1e-7)
    assert out["subsets"]["s"]["spearman"] == pytest.approx(100.0)
    assert out["subsets"]["s"]["pearson"] == pytest.approx(100 / np.sqrt(1.12))
    assert out["main_score"] == pytest.approx(100.0)


def test_stored_scores_of_a_collapsed_model_keep_the_evaluators_spearman():
    from common.report.claims import item_metric

    g = torch.Generator().manual_seed(0)
    base = torch.randn(1, 16, generator=g)
    embed = lambda s: base + 1e-3 * torch.randn(len(s), 16, generator=g)  # noqa: E731 -- cosines within 1e-6 of 1
    subset = StsPairs("a", [f"p{i}" for i in range(60)], [f"q{i}" for i in range(60)], [i % 6 for i in range(60)])
    out = sts.evaluate([subset], embed)
    m = item_metric("sts-en", {"datasets": {"STS": out}})
    assert m.value() == pytest.approx(out["wmean"]["spearman"], abs=1e-9)


def test_stored_scores_round_trip_float32():
    p = (1 - np.float32(6e-8) * np.arange(50, dtype=np.float32)).astype(np.float32)  # 50 distinct float32 near 1
    assert np.array_equal(np.asarray(sts.stored(p), dtype=np.float32), p) and len(set(sts.stored(p))) == 50

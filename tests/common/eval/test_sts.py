import numpy as np
import pytest
from scipy.stats import rankdata

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

import math

import pytest
import torch
import torch.nn.functional as F

from common.losses import TranslationRankingLoss


def naive_tr(x, y, tau, margin, bidirectional):
    x, y = F.normalize(x, dim=-1), F.normalize(y, dim=-1)
    n = len(x)

    def one(a, b):
        total = 0.0
        for i in range(n):
            pos = math.exp((float(a[i] @ b[i]) - margin) / tau)
            neg = sum(math.exp(float(a[i] @ b[j]) / tau) for j in range(n) if j != i)
            total += -math.log(pos / (pos + neg))
        return total / n

    return (one(x, y) + one(y, x)) / 2 if bidirectional else one(x, y)


@pytest.mark.parametrize("margin,bidirectional", [(0.0, False), (0.3, False), (0.1, True)])
def test_matches_naive_reference(margin, bidirectional):
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(6, 4, generator=g), torch.randn(6, 4, generator=g)
    loss = TranslationRankingLoss(temperature=0.1, margin=margin, bidirectional=bidirectional)(x, y)
    assert float(loss) == pytest.approx(naive_tr(x, y, 0.1, margin, bidirectional), rel=1e-5)


def test_validation():
    with pytest.raises(ValueError):
        TranslationRankingLoss(temperature=0)

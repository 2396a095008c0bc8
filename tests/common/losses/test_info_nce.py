"""Queue InfoNCE against a naive per-query loop (eq. 2 of MoCo-BERT)."""
import math

import pytest
import torch
import torch.nn.functional as F

from common.losses import QueueInfoNCELoss


def naive(q, k, queue, tau):
    total = 0.0
    for i in range(q.shape[0]):
        pos = math.exp(float(q[i] @ k[i]) / tau)
        neg = sum(math.exp(float(q[i] @ queue[j]) / tau) for j in range(queue.shape[0]))
        total += -math.log(pos / (pos + neg))
    return total / q.shape[0]


def test_matches_naive_loop():
    g = torch.Generator().manual_seed(0)
    q, k, queue = (F.normalize(torch.randn(n, 5, generator=g), dim=1) for n in (4, 4, 7))
    assert float(QueueInfoNCELoss(0.07)(q, k, queue)) == pytest.approx(naive(q, k, queue, 0.07), rel=1e-5)


def test_hand_computed_value():
    # q = k = e1, queue = {e2}: cosines 1 and 0 -> loss = log(1 + e^{-1/tau}); tau = 1 -> log(1 + 1/e)
    q = torch.tensor([[1.0, 0.0]])
    assert float(QueueInfoNCELoss(1.0)(q, q, torch.tensor([[0.0, 1.0]]))) == pytest.approx(math.log(1 + math.exp(-1)))

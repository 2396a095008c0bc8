"""Momentum copy: frozen, equal at start, updated by theta_k = m theta_k + (1 - m) theta_q."""
import pytest
import torch
from torch import nn

from common.models.momentum import momentum_copy, momentum_update


def test_update_matches_the_formula():
    torch.manual_seed(0)
    base = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    twin = momentum_copy(base)
    assert all(not p.requires_grad for p in twin.parameters())
    assert all(torch.equal(a, b) for a, b in zip(base.parameters(), twin.parameters()))
    with torch.no_grad():
        for p in base.parameters():
            p.add_(1.0)
    before = [p.clone() for p in twin.parameters()]
    momentum_update(base, twin, 0.9)
    for b, t0, t1 in zip(base.parameters(), before, twin.parameters()):
        assert torch.allclose(t1, 0.9 * t0 + 0.1 * b)
    momentum_update(base, twin, 0.0)  # m = 0 copies the base
    assert all(torch.equal(a, b) for a, b in zip(base.parameters(), twin.parameters()))


def test_rejects_momentum_outside_unit_interval():
    m = nn.Linear(2, 2)
    with pytest.raises(ValueError):
        momentum_update(m, momentum_copy(m), 1.5)

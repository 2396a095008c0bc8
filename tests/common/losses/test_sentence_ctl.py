"""HICTL's sentence-level contrastive loss (eqs. 2-4) and hard negatives (eqs. 5-6) against naive computations."""
import math
import os

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from common.distributed.env import free_port
from common.losses.sentence_ctl import LossWindow, SentenceCTLLoss, interpolated_cosine


def cos(a, b):
    return float(a @ b) / (float(a.norm()) * float(b.norm()))


def naive(x, y, tau, zeta=0.9, p_avg=0.0, hard=False):
    """Eqs. 2-6 query by query: 2n - 2 negatives (both sides but the pair), interpolated when farther than k+."""
    n, total = len(x), 0.0
    for side, other in ((x, y), (y, x)):
        for i in range(n):
            q, kp = side[i], other[i]
            negs = [side[j] for j in range(n) if j != i] + [other[j] for j in range(n) if j != i]
            assert len(negs) == 2 * n - 2
            if hard:
                d_pos = float((kp - q).norm())
                negs = [q + (d_pos / float((k - q).norm())) ** (zeta * p_avg) * (k - q)
                        if float((k - q).norm()) > d_pos else k for k in negs]
            pos = math.exp(cos(q, kp) / tau)
            total += -math.log(pos / (pos + sum(math.exp(cos(q, k) / tau) for k in negs)))
    return total / (2 * n)


def data(n=5, d=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, d, generator=g), torch.randn(n, d, generator=g)


def test_loss_against_a_naive_loop_both_directions():
    x, y = data()
    assert float(SentenceCTLLoss(temperature=0.5)(x, y)) == pytest.approx(naive(x, y, 0.5), rel=1e-5)
    assert float(SentenceCTLLoss(temperature=1.0)(x, y)) == pytest.approx(naive(x, y, 1.0), rel=1e-5)


def test_hard_negatives_against_a_naive_loop():
    x, y = data(seed=3)
    loss = SentenceCTLLoss(temperature=0.2, zeta=0.9, hard_negatives=True)
    assert float(loss(x, y, p_avg=0.6)) == pytest.approx(naive(x, y, 0.2, 0.9, 0.6, hard=True), rel=1e-5)
    assert float(loss(x, y, p_avg=0.0)) == pytest.approx(naive(x, y, 0.2), rel=1e-6)  # p_avg 0: lambda = 1
    assert float(loss(x, y, p_avg=0.6)) > float(loss(x, y, p_avg=0.0))  # harder negatives, higher loss


def test_interpolation_by_hand():
    """q = (1, 0), k+ = (1, 1): d+ = 1. k- = (3, 0): d- = 2 > d+, lambda = (1/2)^(0.9 * 0.5) = 0.7320, so
    k_hat = q + 0.7320 * (2, 0) = (2.464, 0) and cos(q, k_hat) = 1. k- = (1, -0.5): d- = 0.5 <= d+, unchanged,
    cos = 1 / sqrt(1.25) = 0.8944."""
    lam = 0.5 ** 0.45
    assert lam == pytest.approx(0.7320, abs=1e-4)
    q, c = torch.tensor([[1.0, 0.0]]), torch.tensor([[3.0, 0.0], [0.0, 2.0]])
    got = interpolated_cosine(q, c, torch.tensor([[lam, 0.5]]))
    # (0, 2) with lambda 0.5: k_hat = (0.5, 1), cos = 0.5 / sqrt(1.25)
    assert got.tolist()[0] == pytest.approx([1.0, 0.5 / math.sqrt(1.25)], abs=1e-6)
    x = torch.tensor([[1.0, 0.0], [0.0, 5.0]])
    y = torch.tensor([[1.0, 1.0], [1.0, -0.5]])
    loss = SentenceCTLLoss(temperature=1.0, zeta=0.9, hard_negatives=True)
    # query x_1 = q: its negatives are x_2 = (0, 5) (d- = sqrt(26) > d+ = 1: interpolated with lambda =
    # (1 / sqrt(26))^0.45) and y_2 = (1, -0.5) (d- = 0.5: kept); the naive loop materialises k_hat
    assert float(loss(x, y, p_avg=0.5)) == pytest.approx(naive(x, y, 1.0, 0.9, 0.5, hard=True), rel=1e-6)


def test_loss_window_mean_wraps_and_survives_a_state_dict():
    w = LossWindow(size=3)
    assert float(w.mean()) == 0.0
    w.update(torch.tensor(math.log(2)))
    assert float(w.mean()) == pytest.approx(1 / 2)  # one batch: its own value, not a mean with the empty slots
    for loss in (0.0, math.log(4), math.log(8)):  # exp(-L): 1, 1/4, 1/8
        w.update(torch.tensor(loss))
    assert float(w.mean()) == pytest.approx((1 + 1 / 4 + 1 / 8) / 3)  # the last 3 batches
    w2 = LossWindow(size=3)
    w2.load_state_dict(w.state_dict())
    assert float(w2.mean()) == float(w.mean()) and int(w2.count) == 4


def _worker(rank, world, port, out_dir):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    x, y = data(n=6, seed=1)
    per = len(x) // world
    xl = x[rank * per:(rank + 1) * per].clone().requires_grad_()
    yl = y[rank * per:(rank + 1) * per].clone().requires_grad_()
    loss = SentenceCTLLoss(temperature=0.3, hard_negatives=True)(xl, yl, p_avg=0.5)
    loss.backward()
    window = LossWindow(4)
    window.update(loss)  # every rank stores the mean of the ranks' losses
    torch.save({"loss": loss.detach(), "gx": xl.grad / world, "gy": yl.grad / world, "p": float(window.mean())},
               f"{out_dir}/rank{rank}.pt")
    dist.barrier()
    dist.destroy_process_group()


@pytest.mark.distributed
def test_two_processes_equal_one(tmp_path):
    x, y = data(n=6, seed=1)
    x1, y1 = x.clone().requires_grad_(), y.clone().requires_grad_()
    ref = SentenceCTLLoss(temperature=0.3, hard_negatives=True)(x1, y1, p_avg=0.5)
    ref.backward()
    mp.spawn(_worker, args=(2, free_port(), str(tmp_path)), nprocs=2, join=True)
    r = [torch.load(tmp_path / f"rank{i}.pt", weights_only=True) for i in range(2)]
    assert float(sum(p["loss"] for p in r) / 2) == pytest.approx(float(ref.detach()), rel=1e-6)
    assert torch.allclose(torch.cat([p["gx"] for p in r]), x1.grad, atol=1e-6)
    assert torch.allclose(torch.cat([p["gy"] for p in r]), y1.grad, atol=1e-6)
    mean_loss = float(sum(p["loss"] for p in r) / 2)
    assert r[0]["p"] == r[1]["p"] == pytest.approx(math.exp(-mean_loss), rel=1e-6)

"""Sentence-level contrastive loss of HICTL (Wei et al. 2021, section 3.1, eqs. 2-4) with the hard negatives of
eqs. 5-6 (smoothed linear interpolation).

For the global batch of pairs (x_i, y_i), i = 1..N (rows gathered from every rank, with gradient), the query
q = r(x_i) scores its positive k+ = r(y_i) against the 2N - 2 negatives x\\i and y\\i (every other sentence of
*both* sides), and symmetrically the query r(y_i) against r(x_i)::

    l(q) = -log exp(s(q, k+) / tau) / (exp(s(q, k+) / tau) + sum_j exp(s(q, k_j-) / tau))
    L_S  = 1 / (2N) sum_i [l(x_i) + l(y_i)]

with s the cosine similarity (eq. 1). Each rank averages its own 2B queries; the data-parallel mean over ranks is
the global L_S.

Hard negatives (eqs. 5-6): a negative k- farther from q than the positive (d- = ||k- - q|| > d+ = ||k+ - q||) is
replaced by q + lambda (k- - q) with lambda = (d+ / d-) ** (zeta * p_avg), p_avg the mean of exp(-L_S) over the
last batches (:class:`LossWindow`); a negative with d- <= d+ is kept. The cosine with the interpolated negative is
computed in closed form from the Gram matrix (no (2B, 2N, D) tensor). lambda is a coefficient, not a gradient path
(detached; the paper is silent); gradients reach q and k- through the interpolated vector.

No host-device sync: p_avg stays a tensor on the model's device (the window's buffers), the "p_avg > 0" test is a
select between the two cosines (before the first batch lambda = 1 and the plain cosine is used), and the window is
written at a tensor index.

Temperature (the paper is silent): eq. 1 writes exp(cos). With 2N - 1 = 2047 candidates (batch 1024) the
positive's probability could then never exceed e^2 / 2046 (0.4 %), so p_avg would stay near 0 and lambda near 1:
eq. 6 would be a no-op. We divide by a temperature tau (config ``temperature``) and say so in every table.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from common.distributed.collectives import gather_with_grad, mean_over_ranks, rank


def interpolated_cosine(q: torch.Tensor, c: torch.Tensor, lam: torch.Tensor) -> torch.Tensor:
    """cos(q_a, q_a + lam_ab (c_b - q_a)) for every query a and candidate b, from q (A, D), c (C, D), lam (A, C)."""
    g = q @ c.T  # (A, C)
    qq = (q * q).sum(-1, keepdim=True)  # (A, 1)
    cc = (c * c).sum(-1)[None, :]  # (1, C)
    dot = (1 - lam) * qq + lam * g  # q . k_hat
    kk = (1 - lam) ** 2 * qq + 2 * lam * (1 - lam) * g + lam ** 2 * cc  # |k_hat|^2
    return dot / (qq.sqrt() * kk.clamp_min(1e-12).sqrt()).clamp_min(1e-12)


class LossWindow(nn.Module):
    """p_avg of eq. 6: the mean of exp(-L_S) over the last ``size`` training batches (buffers, so a checkpoint
    carries them and a resumed run continues exactly). With several ranks, each stored value is the mean of the
    ranks' L_S, so every rank sees the same p_avg."""

    def __init__(self, size: int = 100):
        super().__init__()
        self.register_buffer("values", torch.zeros(size, dtype=torch.float64))
        self.register_buffer("count", torch.zeros((), dtype=torch.long))

    def mean(self) -> torch.Tensor:
        """p_avg, a 0-dim float64 tensor on the buffers' device; before any batch 0 (lambda = 1, the negatives
        unchanged)."""
        filled = torch.arange(self.values.numel(), device=self.values.device) < self.count  # (size,)
        return (self.values * filled).sum() / filled.sum().clamp_min(1)

    @torch.no_grad()
    def update(self, loss: torch.Tensor) -> None:
        value = mean_over_ranks(loss.detach().double().reshape(1))  # (1,)
        slot = (self.count % self.values.numel()).reshape(1)  # (1,) the oldest entry once the window is full
        self.values.index_copy_(0, slot, torch.exp(-value))
        self.count += 1


class SentenceCTLLoss(nn.Module):
    """HICTL's sentence-level CTL (Wei et al. 2021, eqs. 2-4): each of the 2N sentences against its translation,
    with the 2N - 2 other sentences of both sides as negatives; optionally eqs. 5-6's interpolated hard negatives."""

    def __init__(self, temperature: float = 1.0, zeta: float = 0.9, hard_negatives: bool = False):
        super().__init__()
        if temperature <= 0 or not 0 < zeta < 1:
            raise ValueError(f"need temperature > 0 and 0 < zeta < 1, got {temperature}, {zeta}")
        self.temperature, self.zeta, self.hard_negatives = temperature, zeta, hard_negatives

    def forward(self, x: torch.Tensor, y: torch.Tensor, p_avg: float | torch.Tensor = 0.0) -> torch.Tensor:
        """x, y: (B, D) this rank's representations r(x_i), r(y_i); p_avg: eq. 6's (a float or 0-dim tensor) -> L_S
        over this rank's 2B queries."""
        B = x.shape[0]
        X, Y = gather_with_grad(x), gather_with_grad(y)  # (N, D)
        N = X.shape[0]
        g = rank() * B + torch.arange(B, device=x.device)  # global indices of this rank's pairs
        q = torch.cat([x, y])  # (2B, D): queries x_i then y_i
        cand = torch.cat([X, Y])  # (2N, D): candidates x_1..x_N, y_1..y_N
        pos = torch.cat([g + N, g])  # (2B,) k+ of x_i is y_i, of y_i is x_i
        own = torch.cat([g, g + N])  # (2B,) the query itself is not a candidate
        sims = F.normalize(q, dim=-1) @ F.normalize(cand, dim=-1).T  # (2B, 2N) cosine
        if self.hard_negatives:
            p = torch.as_tensor(p_avg, device=x.device)
            with torch.no_grad():
                d_pos = (cand[pos] - q).norm(dim=-1, keepdim=True)  # (2B, 1)
                d_neg = torch.cdist(q, cand)  # (2B, 2N)
                far = d_neg > d_pos
                lam = torch.where(far, (d_pos / d_neg.clamp_min(1e-12)) ** (self.zeta * p).to(d_pos.dtype),
                                  torch.ones_like(d_neg))
            hard = interpolated_cosine(q, cand, lam)
            negative = F.one_hot(pos, 2 * N) == 0  # (2B, 2N): every candidate but the positive
            sims = torch.where(negative & far & (p > 0), hard, sims)  # before any batch (p_avg 0): the plain cosine
        self_mask = F.one_hot(own, 2 * N).bool()  # (2B, 2N)
        logits = (sims / self.temperature).float().masked_fill(self_mask, float("-inf"))
        return F.cross_entropy(logits, pos)

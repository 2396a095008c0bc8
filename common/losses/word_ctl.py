"""Word-level contrastive loss of HICTL (Wei et al. 2021, section 3.1, eqs. 7-8).

For a pair (x_i, y_i) encoded as ``[CLS] x_i [SEP] y_i [SEP]``, the query q is the first token's final state; every
unique word piece w_t of the pair (its bag of words B, special tokens excluded) is a positive, scored against a set
S of m negatives drawn from the vocabulary without B::

    l(x_i, y_i) = -1/|B| sum_{w_t in B} log exp(s(q, e(w_t)) / tau) / (exp(s(q, e(w_t)) / tau)
                                                                        + sum_{w_j in S} exp(s(q, e(w_j)) / tau))
    L_W = 1/n sum_i l(x_i, y_i)

with s the cosine similarity and e the (input) word embedding table. S is sampled "according to the normalized
similarities between q and the embeddings of the words": m draws without replacement from softmax(s(q, e(w)) / tau)
over V \\ B (special tokens excluded too), so S holds the hard negatives. The draw uses torch's generator of the
query's device (restored on resume by the trainer on CPU). Per positive the term is
softplus(logsumexp_S - s_t), the same value as the fraction above. The temperature: see
:mod:`common.losses.sentence_ctl` (the paper writes exp(cos)).

How it is computed (the same values as the formula, for memory and a step without host syncs):

* the bag is given as the pair's token ids with a mask of the positions that count (:func:`bag_positions`: real,
  not special, the first occurrence of each id), so the positives' similarities are a gather of B x S values;
* the (B, V) similarities are needed in full only to draw S: they stay in the compute dtype, and the fp32 softmax
  of the draw runs without gradient (nothing of size B x V is kept in fp32 for the backward pass; the per-word terms
  are formed for the bag's words and S only);
* the draw stays in the step (it reads the model's own query, so a collator cannot make it), as one
  ``torch.multinomial`` on a static shape: no graph break;
* the check that every pair leaves at least m words outside its bag is the collator's, on the CPU
  (:func:`check_negatives`).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def bag_positions(ids: torch.Tensor, mask: torch.Tensor, special_ids: torch.Tensor) -> torch.Tensor:
    """(B, S) token ids -> (B, S) bool: the positions that make each row's bag of words (real, non-special, the
    first occurrence of their id in the row). Static shapes: a (B, S, S) comparison of the row with itself."""
    real = mask.bool() & ~torch.isin(ids, special_ids.to(ids.device))  # (B, S)
    same = ids[:, :, None] == ids[:, None, :]  # (B, S, S): position j holds the id of position k
    earlier = torch.ones(ids.shape[1], ids.shape[1], dtype=torch.bool, device=ids.device).tril(-1)  # k < j
    repeated = (same & earlier & real[:, None, :]).any(-1)  # (B, S): the id occurred at a counted earlier position
    return real & ~repeated


def bag_of_words(ids: torch.Tensor, mask: torch.Tensor, vocab_size: int, special_ids: torch.Tensor) -> torch.Tensor:
    """(B, S) token ids -> (B, V) bool: the unique non-special word pieces of each row (its bag of words). Written
    into V + 1 columns, the last taking the positions outside the bag, then dropped (no data-dependent indexing)."""
    keep = bag_positions(ids, mask, special_ids)  # (B, S)
    columns = torch.where(keep, ids, torch.full_like(ids, vocab_size))  # (B, S)
    bag = torch.zeros(ids.shape[0], vocab_size + 1, dtype=torch.bool, device=ids.device)
    return bag.scatter_(1, columns, True)[:, :vocab_size]


def check_negatives(vocab_size: int, special: int, bag_sizes: list[int], num_negatives: int) -> None:
    """One clear error when a pair leaves fewer than ``num_negatives`` words outside its bag and the ``special``
    tokens (the collator's check, on the CPU)."""
    allowed = vocab_size - special - max(bag_sizes, default=0)
    if allowed < num_negatives:
        raise ValueError(f"only {allowed} words outside a bag of words for {num_negatives} negatives: lower "
                         "word_negatives or use a larger vocabulary")


class WordCTLLoss(nn.Module):
    """HICTL's word-level CTL (Wei et al. 2021, eqs. 7-8): the pair's first-token state against each word piece of
    its bag of words, with m similarity-sampled words outside the bag as negatives; mean over the bag, then pairs."""

    def __init__(self, num_negatives: int = 512, temperature: float = 1.0):
        super().__init__()
        if num_negatives < 1 or temperature <= 0:
            raise ValueError(f"need num_negatives >= 1 and temperature > 0, got {num_negatives}, {temperature}")
        self.num_negatives, self.temperature = num_negatives, temperature

    def sample_negatives(self, sims: torch.Tensor, excluded: torch.Tensor) -> torch.Tensor:
        """(B, V) similarities / tau and (B, V) bool exclusions (B plus special tokens) -> (B, m) word ids. Every
        row must leave m words allowed (:func:`check_negatives`)."""
        probs = torch.softmax(sims.detach().float().masked_fill(excluded, float("-inf")), dim=-1)
        return torch.multinomial(probs, self.num_negatives, replacement=False)

    def forward(self, query: torch.Tensor, embeddings: torch.Tensor, bag_ids: torch.Tensor, in_bag: torch.Tensor,
                special: torch.Tensor) -> torch.Tensor:
        """query: (B, D) first-token states; embeddings: (V, D) the word embedding table; bag_ids: (B, L) word ids
        and in_bag: (B, L) bool, which of them make the bag (each word once: :func:`bag_positions`); special: (V,)
        bool, word ids never used as negatives. Returns L_W."""
        V = embeddings.shape[0]
        sims = F.normalize(query, dim=-1) @ F.normalize(embeddings, dim=-1).T / self.temperature  # (B, V)
        columns = torch.where(in_bag, bag_ids, torch.full_like(bag_ids, V))  # (B, L): V = outside the bag
        bag = torch.zeros(bag_ids.shape[0], V + 1, dtype=torch.bool, device=sims.device).scatter_(1, columns, True)
        negatives = self.sample_negatives(sims, bag[:, :V] | special[None, :])  # (B, m)
        neg = sims.gather(1, negatives).float()  # (B, m)
        pos = sims.gather(1, bag_ids.clamp(0, V - 1)).float()  # (B, L): s(q, e(w_t)) of each bag word
        per_word = F.softplus(torch.logsumexp(neg, dim=1, keepdim=True) - pos) * in_bag  # (B, L): eq. 7's terms
        size = in_bag.sum(1)  # (B,) |B|
        per_pair = per_word.sum(1) / size.clamp_min(1)  # (B,) the mean over the bag
        has = size > 0  # a pair without a word piece has no term
        return (per_pair * has).sum() / has.sum().clamp_min(1)

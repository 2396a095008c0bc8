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
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def bag_of_words(ids: torch.Tensor, mask: torch.Tensor, vocab_size: int, special_ids: torch.Tensor) -> torch.Tensor:
    """(B, S) token ids -> (B, V) bool: the unique non-special word pieces of each row (its bag of words)."""
    bag = torch.zeros(ids.shape[0], vocab_size, dtype=torch.bool, device=ids.device)
    real = mask.bool() & ~torch.isin(ids, special_ids.to(ids.device))
    rows = torch.arange(ids.shape[0], device=ids.device)[:, None].expand_as(ids)
    bag[rows[real], ids[real]] = True
    return bag


class WordCTLLoss(nn.Module):
    """HICTL's word-level CTL (Wei et al. 2021, eqs. 7-8): the pair's first-token state against each word piece of
    its bag of words, with m similarity-sampled words outside the bag as negatives; mean over the bag, then pairs."""

    def __init__(self, num_negatives: int = 512, temperature: float = 1.0):
        super().__init__()
        if num_negatives < 1 or temperature <= 0:
            raise ValueError(f"need num_negatives >= 1 and temperature > 0, got {num_negatives}, {temperature}")
        self.num_negatives, self.temperature = num_negatives, temperature

    def sample_negatives(self, sims: torch.Tensor, excluded: torch.Tensor) -> torch.Tensor:
        """(B, V) similarities / tau and (B, V) bool exclusions (B plus special tokens) -> (B, m) word ids."""
        allowed = (~excluded).sum(1)
        if int(allowed.min()) < self.num_negatives:
            raise ValueError(f"only {int(allowed.min())} words outside a bag of words for {self.num_negatives} "
                             "negatives: lower word_negatives or use a larger vocabulary")
        probs = torch.softmax(sims.detach().float().masked_fill(excluded, float("-inf")), dim=-1)
        return torch.multinomial(probs, self.num_negatives, replacement=False)

    def forward(self, query: torch.Tensor, embeddings: torch.Tensor, bag: torch.Tensor,
                special: torch.Tensor) -> torch.Tensor:
        """query: (B, D) first-token states; embeddings: (V, D) the word embedding table; bag: (B, V) bool;
        special: (V,) bool, word ids never used as negatives. Returns L_W."""
        sims = F.normalize(query, dim=-1) @ F.normalize(embeddings, dim=-1).T / self.temperature  # (B, V)
        negatives = self.sample_negatives(sims, bag | special[None, :])  # (B, m)
        neg = sims.gather(1, negatives).float()  # (B, m)
        per_word = F.softplus(torch.logsumexp(neg, dim=1, keepdim=True) - sims.float())  # (B, V): term of each word
        per_pair = (per_word * bag).sum(1) / bag.sum(1).clamp_min(1)  # (B,) mean over the bag
        return per_pair[bag.any(1)].mean()

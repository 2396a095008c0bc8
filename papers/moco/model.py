"""Dual momentum contrast (MoCo-BERT, Wang et al. 2021, section 2, Figure 1, eqs. 1-3).

Two language-specific encoders f_x (non-English, e.g. Chinese) and f_y (English) give
mean-pooled, L2-normalised sentence vectors h_x, h_y. Each has a momentum copy updated by
eq. 1 *before* keys are computed, and each language has a queue of K keys from its
momentum encoder (``common.models.queue.KeyQueue``). The loss is eq. 3::

    L = L(x, y) + L(y, x),   L(x, y) = InfoNCE(q = h_x, k+ = k_y, negatives = queue_y)   (eq. 2)

No gradient flows into momentum encoders or queues. After the loss, the keys of the whole
global batch (gathered from every rank) are enqueued.

Variants used by the paper's analysis (section 3.4):

* ``momentum="shared"`` (Table 5, "w/o momentum"): keys come from the base encoders
  themselves, under stop-gradient; no momentum copies exist.
* ``negatives="in_batch"``: the in-batch-negatives baseline the paper argues against
  (section 1): eq. 3 with the other translations of the global batch as negatives and no
  queue or momentum encoder, i.e. the bidirectional translation ranking loss, summed.
* ``nli_head``: appendix B, eq. 5, L + alpha * L_nli on English premise/hypothesis pairs.

The two sides are not encoded in one call (as DAP's, HICTL's and VMSST's are, common/models/joint.py): x and y go
through two different encoders, f_x and f_y, with weights of their own (and their keys through two momentum
encoders), so there is no shared call to join. The step has no host-device sync (the queue's pointer stays on the
device) and compiles to one graph.

Choices where the paper is silent: momentum encoders run without dropout (eval mode), so a
key is a deterministic function of the sentence -- the paper motivates momentum by
"a more consistent matching target" (section 3.4); m is applied once per optimizer step
(gradient accumulation 1 in every config).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from common.distributed.collectives import gather_no_grad
from common.losses import QueueInfoNCELoss, TranslationRankingLoss
from common.models.encoder import SentenceEncoder
from common.models.momentum import momentum_copy, momentum_update
from common.models.queue import KeyQueue
from papers.moco.nli import NLIHead

NEGATIVES = ("queue", "in_batch")
MOMENTUM_MODES = ("ema", "shared")


class DualMomentumContrast(nn.Module):
    def __init__(self, encoder_x: SentenceEncoder, encoder_y: SentenceEncoder, *, queue_size: int, temperature: float,
                 momentum: float, negatives: str = "queue", momentum_mode: str = "ema", nli_head: NLIHead | None = None,
                 nli_weight: float = 0.1, seed: int = 1):
        super().__init__()
        if negatives not in NEGATIVES or momentum_mode not in MOMENTUM_MODES:
            raise ValueError(f"negatives must be one of {NEGATIVES} and momentum_mode one of {MOMENTUM_MODES}")
        dim_x, dim_y = encoder_x.backbone.config.hidden_size, encoder_y.backbone.config.hidden_size
        if dim_x != dim_y:
            raise ValueError(f"the two encoders must share the embedding size (dot products), got {dim_x} and {dim_y}")
        self.encoder_x, self.encoder_y = encoder_x, encoder_y
        self.negatives, self.momentum_mode, self.m = negatives, momentum_mode, momentum
        self.nli_head, self.nli_weight = nli_head, nli_weight
        if negatives == "queue":
            if momentum_mode == "ema":
                self.key_encoder_x, self.key_encoder_y = momentum_copy(encoder_x), momentum_copy(encoder_y)
            g = torch.Generator().manual_seed(seed)
            self.queue_x, self.queue_y = KeyQueue(queue_size, dim_x, g), KeyQueue(queue_size, dim_y, g)
            self.info_nce = QueueInfoNCELoss(temperature)
        else:
            self.ranking = TranslationRankingLoss(temperature=temperature, bidirectional=True)

    def _key_encoders(self) -> tuple[SentenceEncoder, SentenceEncoder]:
        if self.momentum_mode == "shared":
            return self.encoder_x, self.encoder_y
        return self.key_encoder_x, self.key_encoder_y

    @torch.no_grad()
    def _keys(self, encoder: SentenceEncoder, input_ids, attention_mask) -> torch.Tensor:
        was_training = encoder.training
        encoder.eval()
        k, _ = encoder(input_ids, attention_mask)
        encoder.train(was_training)
        return F.normalize(k, dim=-1)  # (B, D)

    def forward(self, x_input_ids, x_attention_mask, y_input_ids, y_attention_mask, **nli) -> dict:
        q_x = F.normalize(self.encoder_x(x_input_ids, x_attention_mask)[0], dim=-1)  # (B, D)
        q_y = F.normalize(self.encoder_y(y_input_ids, y_attention_mask)[0], dim=-1)  # (B, D)
        out: dict[str, torch.Tensor] = {}
        if self.negatives == "in_batch":
            # TranslationRankingLoss(bidirectional) averages the two directions; eq. 3 sums them.
            loss = 2 * self.ranking(q_x, q_y)
        else:
            if self.momentum_mode == "ema" and self.training:
                momentum_update(self.encoder_x, self.key_encoder_x, self.m)  # eq. 1, before the keys
                momentum_update(self.encoder_y, self.key_encoder_y, self.m)
            key_x, key_y = self._key_encoders()
            k_x = self._keys(key_x, x_input_ids, x_attention_mask)  # (B, D)
            k_y = self._keys(key_y, y_input_ids, y_attention_mask)  # (B, D)
            out["loss_xy"] = self.info_nce(q_x, k_y, self.queue_y.negatives())  # eq. 2, L(x, y)
            out["loss_yx"] = self.info_nce(q_y, k_x, self.queue_x.negatives())  # L(y, x)
            loss = out["loss_xy"] + out["loss_yx"]  # eq. 3
            if self.training:
                self.queue_x._dequeue_and_enqueue(gather_no_grad(k_x))  # (W*B, D)
                self.queue_y._dequeue_and_enqueue(gather_no_grad(k_y))
        out["loss_contrast"] = loss
        if self.nli_head is not None:
            u = F.normalize(self.encoder_y(nli["nli_premise_input_ids"], nli["nli_premise_attention_mask"])[0], dim=-1)
            v = F.normalize(self.encoder_y(nli["nli_hypothesis_input_ids"], nli["nli_hypothesis_attention_mask"])[0],
                            dim=-1)
            out["loss_nli"] = self.nli_head(u, v, nli["nli_labels"])
            loss = loss + self.nli_weight * out["loss_nli"]  # eq. 5
        out["loss"] = loss
        return out

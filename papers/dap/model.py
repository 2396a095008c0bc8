"""DAP pre-training model (Li et al. 2023, section 3, Figure 2) and its TR / TR+TLM baselines.

One shared encoder f embeds each side of a bitext pair separately (dual encoder, CLS
pooling, section 3.2). Objectives:

* TR, eq. 5: :class:`common.losses.TranslationRankingLoss` over the global batch.
* TLM, eq. 2 (baseline "TR+TLM"): an extra forward pass of f over x (+) y with 15 %
  of the tokens corrupted (80 % [MASK], 10 % random, 10 % kept), MLM loss on them.
* RTL, eq. 6: :class:`papers.dap.rtl.RTLHead` reconstructs the English sentence from the
  non-English token states (CLS excluded).

The total loss is L_TR + w_TLM L_TLM + w_RTL L_RTL. Eq. 7 states L_DAP = L_TR + L_RTL,
so ``rtl_weight`` is 1.0 in every config; the authors' code defaults to 0.1 (see
../shared/papers/README.md), a setting one line of config away for anyone comparing.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from transformers import PreTrainedModel

from common.losses import TranslationRankingLoss
from common.models.encoder import SentenceEncoder, mlm_head, position_ids_like
from papers.dap.rtl import RTLHead, rtl_loss


class DAPModel(nn.Module):
    def __init__(self, mlm: PreTrainedModel, objectives: list[str], *, temperature: float, margin: float = 0.0,
                 rtl_layers: int = 2, direction: str = "xx2en", rtl_weight: float = 1.0, tlm_weight: float = 1.0,
                 num_languages: int = 0, pooling: str = "cls", rtl_vocabulary: list[int] | None = None,
                 mask_token_id: int | None = None):
        super().__init__()
        unknown = set(objectives) - {"tr", "tlm", "rtl"}
        if unknown or "tr" not in objectives:
            raise ValueError(f"objectives must include 'tr' and only tr/tlm/rtl, got {objectives}")
        self.objectives = list(objectives)
        self.encoder = SentenceEncoder(mlm.base_model, pooling)
        self.tr = TranslationRankingLoss(temperature=temperature, margin=margin)
        self.mlm_head = mlm_head(mlm) if "tlm" in objectives else None
        if rtl_vocabulary is not None and direction != "xx2en":
            raise ValueError("an English-only RTL vocabulary needs direction xx2en (other directions have "
                             "non-English targets)")
        self.rtl: RTLHead | None = None
        if "rtl" in objectives:
            if mask_token_id is None:
                raise ValueError("RTL needs the tokenizer's [MASK] id (mask_token_id): every target slot is a [MASK]")
            self.rtl = RTLHead(mlm, rtl_layers, mask_token_id, num_languages if direction != "xx2en" else 0,
                               rtl_vocabulary)
        self.direction, self.rtl_weight, self.tlm_weight = direction, rtl_weight, tlm_weight

    def forward(self, src_input_ids, src_attention_mask, trg_input_ids, trg_attention_mask, **extra) -> dict:
        extra = {**extra, "src_input_ids": src_input_ids, "trg_input_ids": trg_input_ids}
        src_vec, src_h = self.encoder(src_input_ids, src_attention_mask)  # (B, D), (B, S, D)
        trg_vec, trg_h = self.encoder(trg_input_ids, trg_attention_mask)
        loss_tr = self.tr(src_vec, trg_vec)
        out = {"loss_tr": loss_tr}
        loss = loss_tr
        if self.mlm_head is not None:
            h = self.encoder.backbone(input_ids=extra["tlm_input_ids"], attention_mask=extra["tlm_attention_mask"],
                                      token_type_ids=extra["tlm_token_type_ids"]).last_hidden_state
            chosen = extra["tlm_labels"] != -100  # (B, 2S): the corrupted positions, the only ones with a loss
            logits = self.mlm_head(h[chosen])  # (M, V): no vocabulary softmax at the other ~85 % of positions
            out["loss_tlm"] = F.cross_entropy(logits, extra["tlm_labels"][chosen])
            loss = loss + self.tlm_weight * out["loss_tlm"]
        if self.rtl is not None:
            out["loss_rtl"] = self._rtl(src_h, src_attention_mask, trg_h, trg_attention_mask, extra)
            loss = loss + self.rtl_weight * out["loss_rtl"]
        out["loss"] = loss
        return out

    def _rtl(self, src_h, src_mask, trg_h, trg_mask, extra) -> torch.Tensor:
        # rtl_from_en: (B,) 1 where the head reconstructs the non-English side from the English one.
        assert self.rtl is not None  # called for the RTL objective only
        from_en = extra["rtl_from_en"].bool()
        fe = from_en[:, None, None]
        states = torch.where(fe, trg_h, src_h)[:, 1:]  # (B, S-1, D): the side read, CLS dropped
        mask = torch.where(from_en[:, None], trg_mask, src_mask)[:, 1:]  # (B, S-1)
        target_states = torch.where(fe, src_h, trg_h)[:, 1:]  # (B, S-1, D): the side reconstructed
        target_ids = torch.where(from_en[:, None], extra["src_input_ids"], extra["trg_input_ids"])  # (B, S)
        positions = position_ids_like(self.rtl.embeddings, target_ids)[:, 1:]  # the encoder's own numbering
        labels = extra["rtl_labels"]  # (B, S-1), -100 where nothing is reconstructed
        scored = labels != -100
        logits = self.rtl(states, mask, extra["rtl_attention_mask"], positions,
                          target_states, extra.get("rtl_keep"), extra.get("rtl_src_lang"), extra.get("rtl_trg_lang"),
                          scored=scored)  # (M, V): the scored positions only
        targets = self.rtl.targets(labels[scored])  # (M,)
        if self.direction != "both":
            return rtl_loss(logits, targets)
        # Section 5.1: each direction on half of the batch, the two losses averaged.
        row_from_en = from_en[:, None].expand_as(labels)[scored]  # (M,)
        halves = [rtl_loss(logits[sel], targets[sel]) for sel in (~row_from_en, row_from_en) if sel.any()]
        return sum(halves) / len(halves)

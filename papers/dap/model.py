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

How the step is computed (the same losses; for speed, tested against the plain computation):

* ``joint_sides``: source and target go through f in one call of 2B rows (the collator pads both sides to one
  length; :mod:`common.models.joint`), not two calls of B; ``False`` keeps the two calls (the benchmark's rung).
* ``vocab_loss``: the TLM and RTL vocabulary heads are scored by the fused linear + cross-entropy
  (:mod:`common.losses.linear_cross_entropy`: no (M, V) logits), at the labelled positions only, which the
  collator lists (``tlm_positions``, ``rtl_positions``); "plain" materialises the logits (the reference).
* No host-device sync: no boolean indexing or ``.any()`` in the step (static shapes given the batch's), so a
  compiled step is one graph and can be captured in a CUDA graph.
"""
from __future__ import annotations

import torch
from torch import nn
from transformers import PreTrainedModel

from common.losses import TranslationRankingLoss
from common.losses.linear_cross_entropy import IMPLEMENTATIONS
from common.models.encoder import SentenceEncoder, mlm_head, position_ids_like
from common.models.joint import encode_sides
from common.models.vocab_head import head_loss
from papers.dap.rtl import RTLHead


class DAPModel(nn.Module):
    def __init__(self, mlm: PreTrainedModel, objectives: list[str], *, temperature: float, margin: float = 0.0,
                 rtl_layers: int = 2, direction: str = "xx2en", rtl_weight: float = 1.0, tlm_weight: float = 1.0,
                 num_languages: int = 0, pooling: str = "cls", rtl_vocabulary: list[int] | None = None,
                 mask_token_id: int | None = None, vocab_loss: str = "fused", joint_sides: bool = True):
        super().__init__()
        if vocab_loss not in IMPLEMENTATIONS:
            raise ValueError(f"vocab_loss must be one of {IMPLEMENTATIONS}, got {vocab_loss!r}")
        self.vocab_loss, self.joint_sides = vocab_loss, joint_sides
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
        if self.joint_sides:  # one call of 2B rows
            (src_vec, src_h), (trg_vec, trg_h) = encode_sides(
                self.encoder, [(src_input_ids, src_attention_mask), (trg_input_ids, trg_attention_mask)],
                self.encoder.backbone.config.pad_token_id or 0)  # (B, D), (B, S, D) each
        else:
            src_vec, src_h = self.encoder(src_input_ids, src_attention_mask)  # (B, D), (B, S, D)
            trg_vec, trg_h = self.encoder(trg_input_ids, trg_attention_mask)
        loss_tr = self.tr(src_vec, trg_vec)
        out = {"loss_tr": loss_tr}
        loss = loss_tr
        if self.mlm_head is not None:
            h = self.encoder.backbone(input_ids=extra["tlm_input_ids"], attention_mask=extra["tlm_attention_mask"],
                                      token_type_ids=extra["tlm_token_type_ids"]).last_hidden_state  # (B, 2S, D)
            # the corrupted positions only (the collator's list): no vocabulary softmax at the other ~85 %
            chosen = h.flatten(0, 1).index_select(0, extra["tlm_positions"])  # (M, D)
            out["loss_tlm"] = head_loss(self.mlm_head, chosen, extra["tlm_targets"], impl=self.vocab_loss)
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
        out = self.rtl.states(states, mask, extra["rtl_attention_mask"], positions, target_states,
                              extra.get("rtl_keep"), extra.get("rtl_src_lang"), extra.get("rtl_trg_lang"))
        # out: (B, S-1, D)
        scored = extra["rtl_positions"]  # (M,) flat positions into (B, S-1), from the collator
        chosen = out.flatten(0, 1).index_select(0, scored)  # (M, D)
        targets = self.rtl.columns(extra["rtl_targets"])  # (M,) the head's columns, -100 at padding rows
        if self.direction != "both":
            return head_loss(self.rtl.lm_head, chosen, targets, impl=self.vocab_loss)  # eq. 6: the mean
        # Section 5.1: each direction on half of the batch, the two losses averaged: a weight per row, 1 / (the
        # count of its direction's rows x the number of directions present), so no half is selected by a sync.
        row_from_en = from_en[scored // out.shape[1]]  # (M,)
        valid = targets != -100
        n_from, n_to = (valid & row_from_en).sum(), (valid & ~row_from_en).sum()
        halves = (n_from > 0).float() + (n_to > 0).float()
        per_row = torch.where(row_from_en, 1.0 / n_from.clamp_min(1), 1.0 / n_to.clamp_min(1))
        return head_loss(self.rtl.lm_head, chosen, targets, impl=self.vocab_loss, reduction="sum",
                         weights=per_row / halves.clamp_min(1))

"""Representation translation learning (RTL) head, DAP section 3.2 (eq. 4) and 3.3.2 (eq. 6).

The head g is a stack of K transformer layers with a vocabulary prediction head. Its
input is the source sentence's last-layer token states without [CLS],
h^L_1 .. h^L_Sx, followed by one [MASK] embedding per target token, and it is trained
with cross-entropy to predict the target tokens at the [MASK] positions (eq. 6).

Initialisation (section 4.2): the K layers are copies of the encoder's last K layers;
the head owns copies of the encoder's embedding layer (for the [MASK] inputs and their
positions) and of its MLM output head (the authors' code does the same). Of the copied word
embeddings only the [MASK] row is ever read (every target slot is a [MASK]; padding slots are masked
out), so the head keeps that row alone: the same outputs without a second vocabulary-sized table
(mBERT: 92M parameters with their gradients and AdamW state).

Choices where the paper is silent, written down:
* Targets are the target's word pieces without [CLS] and [SEP] (eq. 4 has S_y slots for
  y = y_1 .. y_Sy); the source keeps its [SEP] state, which is a token state of f(x).
* [MASK] inputs get the position ids the encoder's own embedding layer gives the target's
  tokens (BERT: 1 .. Sy; XLM-R: from padding_idx + 2, since it numbers <s> padding_idx + 1).
* Reconstruction ratio rho (section 5.2, Figure 3): each target token is reconstructed with
  probability rho (at least one per sentence); the others are fed as the encoder's last-layer
  contextual states of those target tokens -- "the unmasked target token representations" whose
  leakage the paper discusses, as in the authors' code -- and not scored. rho = 1 is the method.
* Directions other than xx->en (section 5.1) add a learned language embedding to every
  input position of the head (source positions: source language, target positions: the
  language to reconstruct), "like TLM". It starts at zero, so it is inert for xx->en.

An option beyond the paper (config ``dap.rtl_vocabulary: english``): eq. 6's softmax over the English
part of the vocabulary only, as the DAP authors' code predicts, the word pieces of the training
corpus's English side (every English target is one of them). The logits are computed for those
columns only (the head's output projection keeps those rows, :func:`common.models.encoder.lm_head_on`):
with mBERT's 119,547-token vocabulary that projection, its gradient and optimizer state are most of
DAP's cost over TR. It only applies to xx->en, whose targets are English.
"""
from __future__ import annotations

import copy

import torch
from torch import nn
from transformers import PreTrainedModel

from common.models.encoder import lm_head_on, mlm_head


class RTLHead(nn.Module):
    def __init__(self, mlm: PreTrainedModel, num_layers: int, mask_token_id: int, num_languages: int = 0,
                 vocabulary: list[int] | None = None):
        super().__init__()
        base = mlm.base_model
        layers = base.encoder.layer
        if not 1 <= num_layers <= len(layers):
            raise ValueError(f"RTL head depth K={num_layers} must be in 1..{len(layers)} (encoder layers)")
        self.embeddings = copy.deepcopy(base.embeddings)
        # only the [MASK] row is read: kept as a (1, D) matrix, so that weight decay treats it as before (the
        # trainer exempts 1-D parameters, biases and norms, from decay)
        word = self.embeddings.word_embeddings.weight
        self.mask_embedding = nn.Parameter(word[mask_token_id:mask_token_id + 1].detach().clone())  # (1, D)
        self.embeddings.word_embeddings = None
        self.layers = nn.ModuleList(copy.deepcopy(layers[-num_layers:]))
        self.language_embeddings = nn.Embedding(num_languages, base.config.hidden_size) if num_languages else None
        if self.language_embeddings is not None:
            nn.init.zeros_(self.language_embeddings.weight)
        ids = index = None  # the token ids predicted, (V',), and token id -> column (-1: absent); None: all
        if vocabulary is not None:
            ids = torch.tensor(sorted(set(vocabulary)), dtype=torch.long)
            index = vocabulary_index(vocabulary, base.config.vocab_size)
        self.register_buffer("vocabulary", ids)
        self.register_buffer("vocabulary_index", index)
        self.lm_head = copy.deepcopy(mlm_head(mlm)) if ids is None else lm_head_on(mlm_head(mlm), ids)

    def mask_inputs(self, position_ids: torch.Tensor) -> torch.Tensor:
        """(B, Sy) position ids -> (B, Sy, D): the embedding layer's output for a [MASK] at each position."""
        words = self.mask_embedding.expand(*position_ids.shape, -1)  # (1, D) -> (B, Sy, D)
        return self.embeddings(inputs_embeds=words, position_ids=position_ids,
                               token_type_ids=torch.zeros_like(position_ids))

    def states(self, src_states: torch.Tensor, src_mask: torch.Tensor, trg_mask: torch.Tensor,
               trg_position_ids: torch.Tensor, trg_states: torch.Tensor | None = None,
               trg_keep: torch.Tensor | None = None, src_lang: torch.Tensor | None = None,
               trg_lang: torch.Tensor | None = None) -> torch.Tensor:
        """src_states: (B, Sx, D) token states without [CLS]; src_mask: (B, Sx);
        trg_mask: (B, Sy) the target's real positions, each fed a [MASK]; trg_position_ids: (B, Sy);
        trg_states: (B, Sy, D) the target's own contextual states, fed where trg_keep (B, Sy) is True
        (rho < 1). Returns the K layers' output at the target positions, (B, Sy, D): what the vocabulary head
        (``lm_head``) reads."""
        trg = self.mask_inputs(trg_position_ids)  # (B, Sy, D)
        if trg_keep is not None:  # (no test of trg_keep.any(): a select with nothing kept leaves trg unchanged)
            assert trg_states is not None, "trg_keep needs trg_states"
            trg = torch.where(trg_keep[..., None], trg_states.to(trg.dtype), trg)
        if self.language_embeddings is not None and src_lang is not None:
            src_states = src_states + self.language_embeddings(src_lang)[:, None, :]
            trg = trg + self.language_embeddings(trg_lang)[:, None, :]
        h = torch.cat([src_states, trg], dim=1)  # (B, Sx+Sy, D)
        mask = torch.cat([src_mask, trg_mask], dim=1)  # (B, Sx+Sy)
        ext = (1.0 - mask[:, None, None, :].to(h.dtype)) * torch.finfo(h.dtype).min  # (B, 1, 1, S)
        for layer in self.layers:
            h = layer(h, attention_mask=ext)
            h = h[0] if isinstance(h, tuple) else h
        return h[:, src_states.shape[1]:]  # (B, Sy, D)

    def forward(self, src_states: torch.Tensor, src_mask: torch.Tensor, trg_mask: torch.Tensor,
                trg_position_ids: torch.Tensor, trg_states: torch.Tensor | None = None,
                trg_keep: torch.Tensor | None = None, src_lang: torch.Tensor | None = None,
                trg_lang: torch.Tensor | None = None) -> torch.Tensor:
        """:meth:`states` through the vocabulary head: logits at every target position, (B, Sy, V), V the head's
        vocabulary (all, or ``vocabulary``). Training scores the labelled positions only, without these logits
        (:meth:`papers.dap.model.DAPModel._rtl`)."""
        return self.lm_head(self.states(src_states, src_mask, trg_mask, trg_position_ids, trg_states, trg_keep,
                                        src_lang, trg_lang))

    def columns(self, labels: torch.Tensor) -> torch.Tensor:
        """Token ids -> the head's logit columns, ``-100`` kept (the ids themselves when it predicts the whole
        vocabulary). No check (a host sync): the collator refuses a target outside the vocabulary
        (:meth:`targets`)."""
        if self.vocabulary_index is None:
            return labels
        columns = self.vocabulary_index[labels.clamp_min(0)]
        return torch.where(labels < 0, labels, columns)

    def targets(self, labels: torch.Tensor) -> torch.Tensor:
        """Token ids -> the head's logit columns (the ids themselves when it predicts the whole vocabulary), with
        the check that every id is in the vocabulary (the collator's, on the CPU: :func:`vocabulary_columns`)."""
        if self.vocabulary is None:
            return labels
        return vocabulary_columns(self.vocabulary_index, labels)


def vocabulary_index(vocabulary: list[int], vocab_size: int) -> torch.Tensor:
    """Token id -> the column of the head's logits that predicts it, -1 where the head has none: (vocab_size,)."""
    ids = torch.tensor(sorted(set(vocabulary)), dtype=torch.long)
    index = torch.full((vocab_size,), -1, dtype=torch.long)
    index[ids] = torch.arange(len(ids))
    return index


def vocabulary_columns(index: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Token ids (-100 kept) -> the columns of ``index`` (:func:`vocabulary_index`); one clear error for an id the
    head cannot predict."""
    columns = torch.where(labels < 0, labels, index[labels.clamp_min(0)])
    if ((columns < 0) & (labels >= 0)).any():
        raise ValueError("an RTL target token is outside the head's vocabulary (rtl_vocabulary: english needs "
                         "English targets, direction xx2en, and the vocabulary of the training corpus)")
    return columns


"""HICTL pre-training (Wei et al., ICLR 2021, section 3.1): hierarchical contrastive learning on top of a masked
language model.

For a batch of pairs (x_i, y_i) -- y_i the translation of x_i (parallel data) or x_i with its tokens reordered
(monolingual data) -- the loss is eq. 9::

    L = L_LM + L_S + L_W

* L_S, sentence-level CTL (eqs. 2-4; :class:`common.losses.sentence_ctl.SentenceCTLLoss`): r(x) = f(g(M(x))),
  g = the first token's final state (``pooling`` "cls"; the smoke scale's from-scratch encoder pools by mean, see
  its config), f = a linear projection; each side of each pair against 2n - 2 negatives,
  gathered across ranks; with ``hard_negatives`` the interpolated negatives of eqs. 5-6, whose p_avg is the mean
  of exp(-L_S) over the last ``window`` batches (:class:`~common.losses.sentence_ctl.LossWindow`, saved with the
  model so a resumed run continues exactly).
* L_W, word-level CTL (eqs. 7-8; :class:`common.losses.word_ctl.WordCTLLoss`): the first token's final state of
  ``[CLS] x_i [SEP] y_i [SEP]`` against the word embeddings of the pair's bag of words, m sampled negatives.
* L_LM: TLM on ``[CLS] x [SEP] y [SEP]`` for parallel pairs and MLM on ``[CLS] x [SEP]`` for monolingual ones
  (the masks are drawn by :class:`papers.hictl.data.HICTLCollator`), one cross-entropy over every masked token
  of the batch.

The variants switch terms off (Table 3's "w/o Sentence-CTL", "w/o Word-CTL"; the MLM/TLM-only baseline keeps
L_LM alone). The evaluated sentence representation is r(x) (the saved encoder with CLS pooling and f).

How the step is computed (the same losses; for speed, tested against the plain computation): r(x) and r(y) come
from one encoder call of 2B rows (``joint_sides``; :mod:`common.models.joint`); L_LM is the fused linear +
cross-entropy over the vocabulary at the masked positions the collator lists (``lm_positions``; ``vocab_loss``
"plain" materialises the logits); p_avg stays on the device, and the word CTL's bag comes from the pair's ids
(:func:`common.losses.word_ctl.bag_positions`): the step has no host-device sync.
"""
from __future__ import annotations

import torch
from torch import nn
from transformers import PreTrainedModel

from common.losses.linear_cross_entropy import IMPLEMENTATIONS
from common.losses.sentence_ctl import LossWindow, SentenceCTLLoss
from common.losses.word_ctl import WordCTLLoss, bag_positions
from common.models.encoder import SentenceEncoder, mlm_head
from common.models.joint import encode_sides
from common.models.vocab_head import head_loss


class HICTL(nn.Module):
    def __init__(self, mlm: PreTrainedModel, special_ids: list[int], *, sentence: bool = True, word: bool = True,
                 hard_negatives: bool = False, temperature: float = 1.0, zeta: float = 0.9, window: int = 100,
                 word_negatives: int = 512, pooling: str = "cls", vocab_loss: str = "fused",
                 joint_sides: bool = True):
        super().__init__()
        if vocab_loss not in IMPLEMENTATIONS:
            raise ValueError(f"vocab_loss must be one of {IMPLEMENTATIONS}, got {vocab_loss!r}")
        self.vocab_loss, self.joint_sides = vocab_loss, joint_sides
        self.encoder = SentenceEncoder(mlm.base_model, pooling)  # g: the first token's final state (section 3.1)
        d = mlm.config.hidden_size
        self.projection = nn.Linear(d, d, bias=False)  # f: "a linear projection"
        self.lm_head = mlm_head(mlm)
        self.sentence_loss = SentenceCTLLoss(temperature, zeta, hard_negatives) if sentence else None
        self.word_loss = WordCTLLoss(word_negatives, temperature) if word else None
        self.window = LossWindow(window)
        vocab = mlm.get_input_embeddings().num_embeddings
        special = torch.zeros(vocab, dtype=torch.bool)
        special[torch.tensor(sorted(special_ids))] = True
        self.register_buffer("special", special, persistent=False)
        self.register_buffer("special_ids", torch.tensor(sorted(set(special_ids))), persistent=False)

    def represent(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """r(x) = f(g(M(x))): (B, D)."""
        return self.projection(self.encoder(ids, mask)[0])

    def saved_projection(self) -> nn.Linear | None:
        """The f that the saved sentence representation applies: only where the sentence-level CTL trained it. A run
        without that term (the initial encoder, MLM/TLM only, Table 3's w/o sentence CTL) is scored on g(M(x))
        itself -- as the paper's XLM-R rows are -- not through a randomly initialised map that bends its cosines."""
        return self.projection if self.sentence_loss is not None else None

    def forward(self, x_ids, x_mask, y_ids, y_mask, pair_ids, pair_mask, pair_types, lm_ids, lm_mask, lm_types,
                lm_labels, lm_positions, lm_targets) -> dict:
        out: dict[str, torch.Tensor] = {}
        backbone = self.encoder.backbone
        h = backbone(input_ids=lm_ids, attention_mask=lm_mask, token_type_ids=lm_types).last_hidden_state
        # the vocabulary head at the masked positions only (the collator's list, M rows); 0 when there are none
        chosen = h.flatten(0, 1).index_select(0, lm_positions)  # (M, D)
        out["loss_lm"] = head_loss(self.lm_head, chosen, lm_targets, impl=self.vocab_loss)
        loss = out["loss_lm"]
        if self.sentence_loss is not None:
            p_avg = self.window.mean()  # 0-dim tensor
            if self.joint_sides:  # r(x) and r(y) in one call of 2B rows
                rx, ry = encode_sides(self.represent, [(x_ids, x_mask), (y_ids, y_mask)],
                                      backbone.config.pad_token_id or 0)
            else:
                rx, ry = self.represent(x_ids, x_mask), self.represent(y_ids, y_mask)
            out["loss_sentence"] = self.sentence_loss(rx, ry, p_avg)
            if self.training:
                self.window.update(out["loss_sentence"])
            out["p_avg"] = p_avg.to(loss.dtype)  # on the loss's device, as every logged scalar
            loss = loss + out["loss_sentence"]
        if self.word_loss is not None:
            query = backbone(input_ids=pair_ids, attention_mask=pair_mask,
                             token_type_ids=pair_types).last_hidden_state[:, 0]  # (B, D)
            table = backbone.get_input_embeddings().weight  # (V, D)
            in_bag = bag_positions(pair_ids, pair_mask, self.special_ids)  # (B, S): each word piece once
            out["loss_word"] = self.word_loss(query, table, pair_ids, in_bag, self.special)
            loss = loss + out["loss_word"]
        out["loss"] = loss
        return out

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
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from transformers import PreTrainedModel

from common.losses.sentence_ctl import LossWindow, SentenceCTLLoss
from common.losses.word_ctl import WordCTLLoss, bag_of_words
from common.models.encoder import SentenceEncoder, mlm_head


class HICTL(nn.Module):
    def __init__(self, mlm: PreTrainedModel, special_ids: list[int], *, sentence: bool = True, word: bool = True,
                 hard_negatives: bool = False, temperature: float = 1.0, zeta: float = 0.9, window: int = 100,
                 word_negatives: int = 512, pooling: str = "cls"):
        super().__init__()
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

    def represent(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """r(x) = f(g(M(x))): (B, D)."""
        return self.projection(self.encoder(ids, mask)[0])

    def saved_projection(self) -> nn.Linear | None:
        """The f that the saved sentence representation applies: only where the sentence-level CTL trained it. A run
        without that term (the initial encoder, MLM/TLM only, Table 3's w/o sentence CTL) is scored on g(M(x))
        itself -- as the paper's XLM-R rows are -- not through a randomly initialised map that bends its cosines."""
        return self.projection if self.sentence_loss is not None else None

    def forward(self, x_ids, x_mask, y_ids, y_mask, pair_ids, pair_mask, pair_types, lm_ids, lm_mask, lm_types,
                lm_labels) -> dict:
        out: dict[str, torch.Tensor] = {}
        backbone = self.encoder.backbone
        h = backbone(input_ids=lm_ids, attention_mask=lm_mask, token_type_ids=lm_types).last_hidden_state
        chosen = lm_labels != -100  # the vocabulary head runs on the masked positions only
        out["loss_lm"] = (F.cross_entropy(self.lm_head(h[chosen]).float(), lm_labels[chosen]) if chosen.any()
                          else h.sum() * 0.0)
        loss = out["loss_lm"]
        if self.sentence_loss is not None:
            p_avg = self.window.mean()
            out["loss_sentence"] = self.sentence_loss(self.represent(x_ids, x_mask), self.represent(y_ids, y_mask),
                                                      p_avg)
            if self.training:
                self.window.update(out["loss_sentence"])
            out["p_avg"] = loss.new_tensor(p_avg)  # on the loss's device, as every logged scalar
            loss = loss + out["loss_sentence"]
        if self.word_loss is not None:
            query = backbone(input_ids=pair_ids, attention_mask=pair_mask,
                             token_type_ids=pair_types).last_hidden_state[:, 0]  # (B, D)
            table = backbone.get_input_embeddings().weight  # (V, D)
            bag = bag_of_words(pair_ids, pair_mask, table.shape[0], self.special.nonzero().flatten())
            out["loss_word"] = self.word_loss(query, table, bag, self.special)
            loss = loss + out["loss_word"]
        out["loss"] = loss
        return out

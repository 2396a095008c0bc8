"""Batches for DAP pre-training: tokenized pairs plus TLM and RTL inputs and targets.

An example is ``(non_english, english, language_id)``. Source and target are padded to
one common length so that the RTL direction can be chosen per example. All randomness
(TLM corruption, which target tokens RTL reconstructs when rho < 1) comes from the
generator the trainer passes in, seeded by (seed, step, rank).

TLM (eq. 2, Conneau & Lample 2019): ``[CLS] x [SEP] y [SEP]``; each non-special token is
chosen with probability ``tlm_mask_prob`` and then replaced by [MASK] (80 %), a random token
(10 %) or kept (10 %), BERT's recipe; the loss is on the chosen tokens only.

The positions each vocabulary head scores (TLM's corrupted tokens, RTL's reconstructed ones) are listed here, on the
CPU, as flat indices with their targets (``tlm_positions`` / ``tlm_targets``, ``rtl_positions`` / ``rtl_targets``;
:func:`common.models.vocab_head.scored_positions`), padded to a multiple of ``pad_scored_to`` with -100: the model
gathers those rows with no data-dependent indexing, so its step has no host sync. Under ``rtl_vocabulary`` (the
English-only head) an RTL target outside that vocabulary is refused here, before the step.
"""
from __future__ import annotations

import torch

from common.models.vocab_head import scored_positions
from papers.dap.rtl import vocabulary_columns, vocabulary_index
from papers.dap.variants import DIRECTIONS

ENGLISH_ID = 0


class DAPCollator:
    def __init__(self, tokenizer, max_length: int, objectives: list[str], rho: float = 1.0,
                 direction: str = "xx2en", tlm_mask_prob: float = 0.15, pad_scored_to: int = 1,
                 rtl_vocabulary: list[int] | None = None):
        if direction not in DIRECTIONS:
            raise ValueError(f"unknown RTL direction {direction!r}; expected one of {DIRECTIONS}")
        self.tok, self.max_length, self.objectives = tokenizer, max_length, objectives
        self.rho, self.direction, self.tlm_mask_prob = rho, direction, tlm_mask_prob
        self.pad_scored_to = pad_scored_to
        self.special_ids = torch.tensor(sorted(set(tokenizer.all_special_ids)))
        self.vocabulary_index = vocabulary_index(rtl_vocabulary, len(tokenizer)) if rtl_vocabulary else None

    def __call__(self, examples: list[tuple[str, str, int]], gen: torch.Generator) -> dict:
        B = len(examples)
        src = [e[0] for e in examples]
        trg = [e[1] for e in examples]
        enc = self.tok(src + trg, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
        ids, att = enc["input_ids"], enc["attention_mask"]  # (2B, S)
        batch = {"src_input_ids": ids[:B], "src_attention_mask": att[:B],
                 "trg_input_ids": ids[B:], "trg_attention_mask": att[B:]}
        if "tlm" in self.objectives:
            batch.update(self._tlm(src, trg, gen))
        if "rtl" in self.objectives:
            batch.update(self._rtl(ids[:B], ids[B:], att[:B], att[B:], [e[2] for e in examples], gen))
        return batch

    def _tlm(self, src: list[str], trg: list[str], gen: torch.Generator) -> dict:
        enc = self.tok(src, trg, padding=True, truncation=True, max_length=2 * self.max_length,
                       return_tensors="pt", return_special_tokens_mask=True)
        ids = enc["input_ids"].clone()  # (B, S')
        maskable = (enc["special_tokens_mask"] == 0) & (enc["attention_mask"] == 1)
        chosen = (torch.rand(ids.shape, generator=gen) < self.tlm_mask_prob) & maskable
        labels = torch.where(chosen, ids, torch.full_like(ids, -100))
        r = torch.rand(ids.shape, generator=gen)
        random_ids = torch.randint(len(self.tok), ids.shape, generator=gen)
        ids = torch.where(chosen & (r < 0.8), torch.full_like(ids, self.tok.mask_token_id), ids)
        ids = torch.where(chosen & (r >= 0.8) & (r < 0.9), random_ids, ids)
        types = enc.get("token_type_ids", torch.zeros_like(ids))
        positions, targets = scored_positions(labels, self.pad_scored_to)  # (M,), (M,)
        return {"tlm_input_ids": ids, "tlm_attention_mask": enc["attention_mask"],
                "tlm_token_type_ids": types, "tlm_labels": labels, "tlm_positions": positions, "tlm_targets": targets}

    def _rtl(self, src_ids, trg_ids, src_att, trg_att, langs: list[int], gen: torch.Generator) -> dict:
        """The RTL head's targets. ``rtl_labels`` hold the reconstructed side's word pieces (CLS dropped,
        specials and padding -100) at the positions chosen with probability rho (at least one per
        sentence); ``rtl_keep`` marks the other real positions, whose contextual states the model feeds
        to the head unmasked (section 5.2's leakage); ``rtl_attention_mask`` marks the real positions, each a
        [MASK] slot for the head; ``rtl_positions`` / ``rtl_targets`` list the labelled ones (the module docstring)."""
        B, S = src_ids.shape
        if self.direction == "xx2en":
            from_en = torch.zeros(B, dtype=torch.long)
        elif self.direction == "en2xx":
            from_en = torch.ones(B, dtype=torch.long)
        else:  # both: first half xx->en, second half en->xx
            from_en = (torch.arange(B) >= B // 2).long()
        fe = from_en.bool()[:, None]
        target = torch.where(fe, src_ids, trg_ids)[:, 1:]  # (B, S-1): reconstructed side, CLS dropped
        real = torch.where(fe, src_att, trg_att)[:, 1:].bool() & ~torch.isin(target, self.special_ids)
        chosen = (torch.rand(target.shape, generator=gen) < self.rho) & real
        # at least one reconstructed token per sentence
        none = real.any(1) & ~chosen.any(1)
        if none.any():
            noise = torch.rand(target.shape, generator=gen).masked_fill(~real, -1.0)
            chosen[none, noise[none].argmax(1)] = True
        labels = torch.where(chosen, target, torch.full_like(target, -100))
        positions, targets = scored_positions(labels, self.pad_scored_to)  # (M,), (M,): flat into (B, S-1)
        if self.vocabulary_index is not None:
            vocabulary_columns(self.vocabulary_index, targets)  # refuses a target the English head cannot predict
        lang = torch.tensor(langs, dtype=torch.long)
        english = torch.full_like(lang, ENGLISH_ID)
        return {
            "rtl_from_en": from_en, "rtl_attention_mask": real.long(),
            "rtl_keep": real & ~chosen, "rtl_labels": labels, "rtl_positions": positions, "rtl_targets": targets,
            "rtl_src_lang": torch.where(fe[:, 0], english, lang), "rtl_trg_lang": torch.where(fe[:, 0], lang, english),
        }

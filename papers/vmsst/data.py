"""Batches for VMSST: both sentences of a pair tokenized with the shared tokenizer, their language ids, and the
decoder targets (the sentence's word pieces and its end token, [CLS] dropped for BERT-style tokenizers), and the
decoder's scored tokens listed on the CPU (``<side>_target_positions`` / ``<side>_target_labels``: the real target
tokens as flat positions into (B, T) and their ids, padded to a multiple of ``pad_scored_to`` with -100;
:func:`common.models.vocab_head.scored_positions`), so the step projects real tokens only without a host sync."""
from __future__ import annotations

import torch

from common.models.vocab_head import scored_positions


class VMSSTCollator:
    def __init__(self, tokenizer, max_length: int, pad_scored_to: int = 1):
        self.tok, self.max_length, self.pad_scored_to = tokenizer, max_length, pad_scored_to

    def _side(self, sentences: list[str], langs: list[int], prefix: str) -> dict[str, torch.Tensor]:
        b = self.tok(sentences, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
        ids, mask = b["input_ids"], b["attention_mask"]  # (B, S)
        drop = 1 if self.tok.cls_token_id is not None and bool((ids[:, 0] == self.tok.cls_token_id).all()) else 0
        targets, target_mask = ids[:, drop:], mask[:, drop:]
        positions, labels = scored_positions(targets.masked_fill(target_mask == 0, -100), self.pad_scored_to)
        return {f"{prefix}_ids": ids, f"{prefix}_mask": mask, f"{prefix}_targets": targets,
                f"{prefix}_target_mask": target_mask, f"{prefix}_lang": torch.tensor(langs, dtype=torch.long),
                f"{prefix}_target_positions": positions, f"{prefix}_target_labels": labels}

    def __call__(self, examples: list[tuple[str, str, int, int]], generator: torch.Generator) -> dict:
        """examples: (x_i, x_j, language id of x_i, language id of x_j)."""
        return {**self._side([e[0] for e in examples], [e[2] for e in examples], "i"),
                **self._side([e[1] for e in examples], [e[3] for e in examples], "j")}

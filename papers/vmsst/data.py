"""Batches for VMSST: both sentences of a pair tokenized with the shared tokenizer, their language ids, and the
decoder targets (the sentence's word pieces and its end token, [CLS] dropped for BERT-style tokenizers)."""
from __future__ import annotations

import torch


class VMSSTCollator:
    def __init__(self, tokenizer, max_length: int):
        self.tok, self.max_length = tokenizer, max_length

    def _side(self, sentences: list[str], langs: list[int], prefix: str) -> dict[str, torch.Tensor]:
        b = self.tok(sentences, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
        ids, mask = b["input_ids"], b["attention_mask"]  # (B, S)
        drop = 1 if self.tok.cls_token_id is not None and bool((ids[:, 0] == self.tok.cls_token_id).all()) else 0
        return {f"{prefix}_ids": ids, f"{prefix}_mask": mask, f"{prefix}_targets": ids[:, drop:],
                f"{prefix}_target_mask": mask[:, drop:], f"{prefix}_lang": torch.tensor(langs, dtype=torch.long)}

    def __call__(self, examples: list[tuple[str, str, int, int]], generator: torch.Generator) -> dict:
        """examples: (x_i, x_j, language id of x_i, language id of x_j)."""
        return {**self._side([e[0] for e in examples], [e[2] for e in examples], "i"),
                **self._side([e[1] for e in examples], [e[3] for e in examples], "j")}

"""Batches for MoCo-BERT: each side tokenized by its own language's tokenizer, plus (for the
NLI multi-task variant, appendix B) a batch of English premise/hypothesis pairs.

The NLI batch has its own size (128 in the paper). Its examples are drawn with
replacement by the step's generator (seeded by seed, step and rank), so a resumed run
draws exactly the same ones; each rank draws ``nli_batch_size / world_size``.
"""
from __future__ import annotations

import torch

from common.data.loaders import NliExamples
from common.distributed.collectives import world_size


class MocoCollator:
    def __init__(self, tokenizer_x, tokenizer_y, max_length: int, nli: NliExamples | None = None,
                 nli_batch_size: int = 0):
        self.tok_x, self.tok_y, self.max_length = tokenizer_x, tokenizer_y, max_length
        self.nli, self.nli_batch_size = nli, nli_batch_size

    def _tok(self, tok, sentences: list[str], prefix: str) -> dict[str, torch.Tensor]:
        b = tok(sentences, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
        return {f"{prefix}input_ids": b["input_ids"], f"{prefix}attention_mask": b["attention_mask"]}

    def __call__(self, examples: list[tuple[str, str]], generator: torch.Generator) -> dict[str, torch.Tensor]:
        """examples: (non-English, English) pairs."""
        batch = {**self._tok(self.tok_x, [x for x, _ in examples], "x_"),
                 **self._tok(self.tok_y, [y for _, y in examples], "y_")}
        if self.nli is not None:
            w = world_size()
            if self.nli_batch_size % w:
                raise ValueError(f"NLI batch {self.nli_batch_size} is not divisible by world size {w}")
            idx = torch.randint(len(self.nli), (self.nli_batch_size // w,), generator=generator).tolist()
            batch.update(self._tok(self.tok_y, [self.nli.premise[i] for i in idx], "nli_premise_"))
            batch.update(self._tok(self.tok_y, [self.nli.hypothesis[i] for i in idx], "nli_hypothesis_"))
            batch["nli_labels"] = torch.tensor([self.nli.label[i] for i in idx], dtype=torch.long)
        return batch

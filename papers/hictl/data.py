"""Batches for HICTL pre-training (section 3.1, appendix B).

An example is ``(x, y, kind)``: a parallel pair (``kind`` "parallel": y is x's translation) or a monolingual
sentence (``kind`` "mono", y = None: y becomes x with its tokens reordered, "the perturbation through reordering
tokens in x_i", drawn afresh each time from the collate generator). Every example gives

* ``x`` and ``y`` alone (sentence-level CTL),
* ``[CLS] x [SEP] y [SEP]`` unmasked (word-level CTL: its first token is the query, its word pieces the bag),
* the language-model input: TLM on ``[CLS] x [SEP] y [SEP]`` for a parallel pair, MLM on ``[CLS] x [SEP]`` for a
  monolingual sentence, with Table 9's mask rates (``mask_bilingual`` 25 %, ``mask_monolingual`` 15 %) and BERT's
  80 / 10 / 10 replacement (XLM's recipe, Conneau & Lample 2019); labels -100 off the chosen positions.

The masked positions are also listed here, on the CPU (``lm_positions`` / ``lm_targets``: flat indices into the LM
input and their labels, padded to a multiple of ``pad_scored_to`` with -100;
:func:`common.models.vocab_head.scored_positions`), so the model runs the vocabulary head on them without a host
sync; with ``word_negatives`` the batch is refused here when a pair leaves fewer words outside its bag than the
word-level CTL draws (:func:`common.losses.word_ctl.check_negatives`).

The special-token layout is the tokenizer's own (:mod:`common.models.special_tokens`), so the same code serves
BERT-style and XLM-R tokenizers. All randomness comes from the generator the trainer passes (seeded by the run's
seed, the step and the rank), so a resumed run draws the same batches.
"""
from __future__ import annotations

import torch

from common.losses.word_ctl import check_negatives
from common.models.special_tokens import template
from common.models.vocab_head import scored_positions

PARALLEL, MONO = "parallel", "mono"


def _pad(rows: list[list[int]], value: int) -> torch.Tensor:
    width = max(len(r) for r in rows)
    return torch.tensor([r + [value] * (width - len(r)) for r in rows], dtype=torch.long)


class HICTLCollator:
    def __init__(self, tokenizer, max_length: int, mask_bilingual: float = 0.25, mask_monolingual: float = 0.15,
                 pad_scored_to: int = 1, word_negatives: int | None = None):
        self.tok, self.max_length = tokenizer, max_length
        self.pad_scored_to, self.word_negatives = pad_scored_to, word_negatives
        self.mask_bilingual, self.mask_monolingual = mask_bilingual, mask_monolingual
        self.single, self.pair = template(tokenizer, pair=False), template(tokenizer, pair=True)
        self.special = set(tokenizer.all_special_ids)

    def _tensors(self, prefix: str, rows: list[tuple[list[int], list[int]]]) -> dict[str, torch.Tensor]:
        ids = _pad([r[0] for r in rows], self.tok.pad_token_id)
        types = _pad([r[1] for r in rows], 0)
        mask = _pad([[1] * len(r[0]) for r in rows], 0)
        return {f"{prefix}_ids": ids, f"{prefix}_mask": mask, f"{prefix}_types": types}

    def _mask(self, ids: torch.Tensor, real: torch.Tensor, rates: torch.Tensor, gen: torch.Generator):
        """BERT-style corruption of ``ids`` (B, S): each real non-special token chosen with its row's rate."""
        maskable = real.bool() & ~torch.isin(ids, torch.tensor(sorted(self.special)))
        chosen = (torch.rand(ids.shape, generator=gen) < rates[:, None]) & maskable
        labels = torch.where(chosen, ids, torch.full_like(ids, -100))
        r = torch.rand(ids.shape, generator=gen)
        random_ids = torch.randint(len(self.tok), ids.shape, generator=gen)
        ids = torch.where(chosen & (r < 0.8), torch.full_like(ids, self.tok.mask_token_id), ids)
        ids = torch.where(chosen & (r >= 0.8) & (r < 0.9), random_ids, ids)
        return ids, labels

    def __call__(self, examples: list[tuple[str, str | None, str]], gen: torch.Generator) -> dict:
        body = self.max_length - len(self.single.before) - len(self.single.after)
        xs = self.tok([e[0] for e in examples], add_special_tokens=False)["input_ids"]
        ys = self.tok([e[1] or "" for e in examples], add_special_tokens=False)["input_ids"]
        x_rows, y_rows, pair_rows, lm_rows, rates = [], [], [], [], []
        for (_, _, kind), x, y in zip(examples, xs, ys):
            x = x[:body]
            if kind == MONO:  # reorder x's tokens (a one-token sentence stays as it is)
                perm = torch.randperm(len(x), generator=gen).tolist()
                y = [x[i] for i in perm]
            y = y[:body]
            x_rows.append(self.single.join(x))
            y_rows.append(self.single.join(y))
            # Table 9's "max sequence length (monolingual/bilingual)" read as a limit per sentence: the pair input
            # keeps both sentences whole (up to 2 x max_length), so TLM and word-CTL see all of each translation
            pair_rows.append(self.pair.join(x, y, self.max_length * 2))
            lm_rows.append(pair_rows[-1] if kind == PARALLEL else x_rows[-1])
            rates.append(self.mask_bilingual if kind == PARALLEL else self.mask_monolingual)
        batch = {**self._tensors("x", x_rows), **self._tensors("y", y_rows), **self._tensors("pair", pair_rows),
                 **self._tensors("lm", lm_rows)}
        del batch["x_types"], batch["y_types"]  # single sentences: all type 0
        batch["lm_ids"], batch["lm_labels"] = self._mask(batch["lm_ids"], batch["lm_mask"],
                                                         torch.tensor(rates), gen)
        batch["lm_positions"], batch["lm_targets"] = scored_positions(batch["lm_labels"], self.pad_scored_to)
        if self.word_negatives is not None:
            check_negatives(len(self.tok), len(self.special), [len(set(r[0]) - self.special) for r in pair_rows],
                            self.word_negatives)
        return batch

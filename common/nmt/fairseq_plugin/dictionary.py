"""A fairseq :class:`~fairseq.data.Dictionary` whose ids are a Hugging Face tokenizer's ids, so that an encoder
trained with that tokenizer reads fairseq batches unchanged; target-language tags (``<2de>``, ...) are appended
after the tokenizer's vocabulary (ids len(tokenizer), ...), used on the target side only."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from fairseq.data import Dictionary

from common.nmt.target_vocab import special_ids

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase


class HFDictionary(Dictionary):
    def __init__(self, tokenizer: PreTrainedTokenizerBase, tags: Sequence[str] = ()) -> None:
        super().__init__()
        self.tokenizer = tokenizer
        vocab = tokenizer.get_vocab()
        by_id: list[str | None] = [None] * len(vocab)
        for piece, i in vocab.items():
            by_id[i] = piece
        pieces = [s for s in by_id if s is not None]
        if len(pieces) != len(by_id):
            raise ValueError("the tokenizer's ids are not contiguous; it cannot serve as a fairseq dictionary")
        self.symbols = pieces + [f"<2{t}>" for t in tags]
        self.count = [1] * len(self.symbols)
        self.indices = {s: i for i, s in enumerate(self.symbols)}
        ids = special_ids(tokenizer)  # one reading of the roles, shared with a target dictionary's renumbering
        self.pad_index, self.unk_index, self.eos_index = ids["<pad>"], ids["<unk>"], ids["</s>"]
        self.bos_index = ids.get("<s>", self.pad_index)  # T5-style tokenizers have no start token
        self.bos_word, self.pad_word, self.eos_word, self.unk_word = (
            self.symbols[self.bos_index], self.symbols[self.pad_index], self.symbols[self.eos_index],
            self.symbols[self.unk_index])
        self.nspecial = 0
        self.tokenizer_size = len(vocab)
        self.tags = {t: len(vocab) + k for k, t in enumerate(tags)}

"""A fairseq :class:`~fairseq.data.Dictionary` whose ids are a Hugging Face tokenizer's ids, so that an encoder
trained with that tokenizer reads fairseq batches unchanged; target-language tags (``<2de>``, ...) are appended
after the tokenizer's vocabulary (ids len(tokenizer), ...), used on the target side only."""
from __future__ import annotations

from fairseq.data import Dictionary


class HFDictionary(Dictionary):
    def __init__(self, tokenizer, tags: list[str] = ()):
        super().__init__()
        vocab = tokenizer.get_vocab()
        self.symbols = [None] * len(vocab)
        for piece, i in vocab.items():
            self.symbols[i] = piece
        if any(s is None for s in self.symbols):
            raise ValueError("the tokenizer's ids are not contiguous; it cannot serve as a fairseq dictionary")
        self.symbols += [f"<2{t}>" for t in tags]
        self.count = [1] * len(self.symbols)
        self.indices = {s: i for i, s in enumerate(self.symbols)}
        self.pad_index, self.unk_index = tokenizer.pad_token_id, tokenizer.unk_token_id
        self.eos_index = tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id
        bos = tokenizer.cls_token_id if tokenizer.cls_token_id is not None else tokenizer.bos_token_id
        self.bos_index = bos if bos is not None else self.pad_index  # T5-style tokenizers have no start token
        self.bos_word, self.pad_word, self.eos_word, self.unk_word = (
            self.symbols[self.bos_index], self.symbols[self.pad_index], self.symbols[self.eos_index],
            self.symbols[self.unk_index])
        self.nspecial = 0
        self.tokenizer_size = len(vocab)
        self.tags = {t: len(vocab) + k for k, t in enumerate(tags)}

"""Lexical overlap as an STS scorer: the token-cosine baseline of the SemEval STS tasks (Agirre et al., 2012, the
task's baseline: sentences split at white space, each a binary vector over the tokens it contains, two sentences
scored by the cosine of their vectors).

For token sets A and B the cosine of the binary vectors is |A ∩ B| / sqrt(|A| |B|), 0 when either set is empty.
The tokens are the white-space tokens of that baseline (:func:`whitespace_tokens`) or any tokenizer's pieces
(:func:`piece_tokens`), which is what an untrained encoder that mean-pools its piece embeddings can see of a pair.
It trains nothing and embeds nothing: a reference for what word overlap alone scores on a task
(``scripts/lexical_sts.py`` sets it beside saved models on English STS).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Sequence

import numpy as np
from numpy.typing import NDArray
from transformers import PreTrainedTokenizerBase

Tokens = Callable[[str], Iterable[Hashable]]  # a sentence -> its tokens (repeats count once)


def whitespace_tokens(sentence: str) -> set[str]:
    """The SemEval baseline's tokens: the sentence split at white space, as written (case and punctuation kept)."""
    return set(sentence.split())


def piece_tokens(tokenizer: PreTrainedTokenizerBase, max_length: int) -> Tokens:
    """A tokenizer's piece ids of a sentence as an encoder cut at ``max_length`` reads them
    (:func:`common.models.encoder.encode_sentences`: the length counts the special tokens), the special tokens
    left out."""
    content = max_length - tokenizer.num_special_tokens_to_add(pair=False)

    def tokens(sentence: str) -> set[int]:
        ids: list[int] = tokenizer(sentence, add_special_tokens=False, truncation=True,
                                   max_length=content)["input_ids"]
        return set(ids)
    return tokens


def token_cosine(sent1: Sequence[str], sent2: Sequence[str], tokens: Tokens = whitespace_tokens) -> NDArray[np.float64]:
    """(N,) cosine of the binary token vectors of each pair ``(sent1[i], sent2[i])``."""
    if len(sent1) != len(sent2):
        raise ValueError(f"token_cosine: {len(sent1)} first sentences against {len(sent2)} second ones")
    out = np.zeros(len(sent1))
    for i, (x, y) in enumerate(zip(sent1, sent2)):
        a, b = set(tokens(x)), set(tokens(y))
        if a and b:
            out[i] = len(a & b) / math.sqrt(len(a) * len(b))
    return out

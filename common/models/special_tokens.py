"""Build model inputs from token ids the way a tokenizer would from text (``[CLS] a [SEP] b [SEP]`` for BERT,
``<s> a </s></s> b </s>`` for XLM-R, ``a </s> b </s>`` for T5).

transformers 5 tokenizers no longer build inputs from ids (``build_inputs_with_special_tokens`` is gone), yet a
collator sometimes holds ids, not text: HICTL's monolingual "translation" is the sentence with its tokens
reordered. :func:`template` reads the special-token layout off the tokenizer's own encoding of a two-word pair
once; :meth:`Template.join` then lays out any ids the same way.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase


@dataclass(frozen=True)
class Template:
    """Special ids before a, between a and b, after b (pair), or before and after a (single), with the token
    type of every slot."""

    before: tuple[int, ...]
    between: tuple[int, ...]
    after: tuple[int, ...]
    type_a: int
    type_b: int
    type_between: int
    type_after: int
    pair: bool

    def join(self, a: list[int], b: list[int] | None = None,
             max_length: int | None = None) -> tuple[list[int], list[int]]:
        """(input ids, token type ids); a and b are truncated longest-first to fit ``max_length``."""
        if (b is not None) != self.pair:
            raise ValueError("a pair template needs b, a single-sentence template must not get one")
        a, b = list(a), list(b or [])
        if max_length is not None:
            room = max_length - len(self.before) - len(self.between) - len(self.after)
            if room < (2 if self.pair else 1):
                raise ValueError(f"max_length {max_length} leaves no room for tokens")
            while len(a) + len(b) > room:
                if len(a) >= len(b):
                    a.pop()
                else:
                    b.pop()
        ids = [*self.before, *a, *self.between, *b, *self.after]
        types = ([self.type_a] * (len(self.before) + len(a)) + [self.type_between] * len(self.between)
                 + [self.type_b] * len(b) + [self.type_after] * len(self.after))
        return ids, types


def template(tokenizer: PreTrainedTokenizerBase, pair: bool) -> Template:
    """The tokenizer's layout, read from its encoding of "a" (and "b")."""
    a = tokenizer("a", add_special_tokens=False)["input_ids"]
    b = tokenizer("b", add_special_tokens=False)["input_ids"]
    enc = tokenizer("a", "b", return_token_type_ids=True) if pair else tokenizer("a", return_token_type_ids=True)
    ids = enc["input_ids"]
    types = enc.get("token_type_ids") or [0] * len(ids)
    i = _find(ids, a, 0)
    j = _find(ids, b, i + len(a)) if pair else i + len(a)
    end = j + len(b) if pair else j
    type_between = types[i + len(a)] if pair and j > i + len(a) else types[i]
    return Template(tuple(ids[:i]), tuple(ids[i + len(a):j]) if pair else (), tuple(ids[end:]), types[i],
                    types[j] if pair else types[i], type_between, types[end] if end < len(ids) else types[i], pair)


def _find(ids: list[int], part: list[int], start: int) -> int:
    for k in range(start, len(ids) - len(part) + 1):
        if ids[k:k + len(part)] == part:
            return k
    raise ValueError(f"cannot read the special-token layout: {part} not in {ids}")

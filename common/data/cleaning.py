"""What a prep rule drops from a downloaded training corpus, and why, counted.

Crawled bitext (OPUS's CCMatrix, WikiMatrix, OpenSubtitles, ...) has blank lines, lines of whole documents and bytes
that are not UTF-8. A pair is dropped, and counted under the first reason that applies, when

* ``bad_bytes``: a side held bytes that are not UTF-8 (the readers decode with ``surrogateescape``, so such bytes
  arrive as lone surrogates instead of stopping the stream);
* ``blank``: a side is empty or white space only;
* ``overlong``: a side is longer than ``max_chars`` characters (default 1000: every paper truncates its inputs to
  at most 256 tokens, and longer lines in these corpora are concatenated documents or misaligned blocks).

The counts go to the corpus manifest (``cleaning``: per source, ``kept`` and each reason) and to the rule's log.
Misaligned files are not a drop reason: they stop the rule with an error naming the file and line (the readers).
Evaluation sets are never cleaned: they are read whole.
"""
from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

log = logging.getLogger(__name__)
REASONS = ("bad_bytes", "blank", "overlong")
_SURROGATE = re.compile("[\udc80-\udcff]")
_Pair = TypeVar("_Pair", bound=tuple[Any, ...])


class PairCleaner:
    def __init__(self, max_chars: int = 1000):
        self.max_chars = max_chars
        self.counts: dict[str, Counter[str]] = {}

    def reason(self, a: str, b: str) -> str | None:
        if _SURROGATE.search(a) or _SURROGATE.search(b):
            return "bad_bytes"
        if not a.strip() or not b.strip():
            return "blank"
        if len(a) > self.max_chars or len(b) > self.max_chars:
            return "overlong"
        return None

    def clean(self, pairs: Iterable[_Pair], source: str) -> Iterator[_Pair]:
        """The pairs of ``source`` worth training on, streamed (extra fields after the two sides pass through)."""
        counts = self.counts.setdefault(source, Counter())
        for pair in pairs:
            why = self.reason(pair[0], pair[1])
            counts[why or "kept"] += 1
            if why is None:
                yield pair
        dropped = {r: counts[r] for r in REASONS if counts[r]}
        if dropped:
            log.info("%s: %d pairs kept, dropped %s", source, counts["kept"], dropped)

    def report(self) -> dict[str, dict[str, int]]:
        """Per source: ``kept`` and the count of each reason (zeros included)."""
        return {src: {"kept": c["kept"], **{r: c[r] for r in REASONS}} for src, c in sorted(self.counts.items())}

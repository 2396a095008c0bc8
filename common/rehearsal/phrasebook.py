"""Deterministic text for the rehearsal mirror in any language code: parallel sentences rendered from the
synthetic generator's meaning space (:mod:`common.data.synthetic`). English is the generator's English-like
pivot; every other code (``de``, ``deu``, ``zh_cn`` ...) gets a synthetic language of its own, seeded by the code,
so the same code always reads the same and two codes differ. The rehearsal checks code paths, not language."""
from __future__ import annotations

import random
import zlib
from functools import cache

from common.data.synthetic import TYPOLOGIES, Language, MeaningPool, PivotEnglish, SyntheticLanguage
from common.languages import ENGLISH


@cache
def language(code: str) -> Language:
    if code in ENGLISH:
        return PivotEnglish()
    seed = zlib.crc32(code.encode())
    return SyntheticLanguage(code, TYPOLOGIES[seed % len(TYPOLOGIES)], seed)


def _rng(*key: object) -> random.Random:
    return random.Random(zlib.crc32("|".join(map(str, key)).encode()))


def pairs(xx: str, key: str, n: int, yy: str = "en") -> list[tuple[str, str]]:
    """``n`` translation pairs (``xx`` sentence, ``yy`` sentence) for a purpose ``key`` (a file, a split)."""
    rng = _rng(xx, yy, key)
    meanings = MeaningPool(rng).draw_many(n)
    a, b = language(xx), language(yy)
    return [(a.render(m, rng), b.render(m, rng)) for m in meanings]


def sentences(lang: str, key: str, n: int) -> list[str]:
    rng = _rng(lang, key)
    return [language(lang).render(m, rng) for m in MeaningPool(rng).draw_many(n)]

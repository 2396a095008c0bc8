"""VMSST's "Score" (section 6.2, "Overall Score"): the mean of six values -- English STS, cross-lingual STS (XL),
Tatoeba, BUCC (the mean of its cosine and margin scores), NQ and MKQA. This reproduces every Score of Table 1 to
0.05 (tested on the paper's rows)."""
from __future__ import annotations

from statistics import fmean


def score(eng_sts: float, xl: float, tatoeba: float, bucc_cosine: float, bucc_margin: float, nq: float,
          mkqa: float) -> float:
    return fmean([eng_sts, xl, tatoeba, (bucc_cosine + bucc_margin) / 2, nq, mkqa])


def score_of_row(row: list[float]) -> float:
    """A row in Table 1's column order [Eng., XL, XL (s.), XL (d.), Tatoeba, BUCC (c.), BUCC (m.), NQ, MKQA, ...]."""
    eng, xl, _, _, tat, bc, bm, nq, mkqa = row[:9]
    return score(eng, xl, tat, bc, bm, nq, mkqa)

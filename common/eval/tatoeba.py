"""Tatoeba bitext retrieval (Artetxe & Schwenk 2019b, LASER; XTREME's 36 languages).

Protocol (as DAP, Li et al. 2023, section 4.4 and Tables 1, 7, 8, and LASER): embed both
sides, for every sentence retrieve its cosine nearest neighbour on the other side, and
report accuracy (%) = share of sentences whose neighbour is their own translation, in
both directions: ``xx->en`` (queries in xx, search over English) and ``en->xx``.
Ties go to the lowest index (``argmax`` returns the first maximum). Averages are taken over the language groups
the DAP paper uses: 14 (LASER / InfoXLM's XNLI languages), 36 (XTREME) and 28 (the 36
with 1000 test pairs), and over every language present.
"""
from __future__ import annotations

from typing import Any

import torch

from common.eval.similarity import normalize
from common.languages import DAP_28, LASER_14, XTREME_36

GROUPS = {"14": LASER_14, "28": DAP_28, "36": XTREME_36}


def nearest(queries: torch.Tensor, keys: torch.Tensor, block: int = 1024) -> torch.Tensor:
    """Index of each query's cosine-nearest key; among tied keys the lowest index wins (``argmax``
    returns the first maximum, which ``topk`` does not promise)."""
    q, k = normalize(queries), normalize(keys)
    return torch.cat([(q[s:s + block] @ k.T).argmax(1) for s in range(0, q.shape[0], block)])


def correct(queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """(N,) bool: query i's nearest key is key i."""
    if queries.shape[0] != keys.shape[0]:
        raise ValueError(f"{queries.shape[0]} queries but {keys.shape[0]} keys; Tatoeba needs aligned pairs")
    return nearest(queries, keys) == torch.arange(queries.shape[0])


def retrieval_accuracy(queries: torch.Tensor, keys: torch.Tensor) -> float:
    """% of rows i whose nearest key (cosine) is key i."""
    return 100.0 * float(correct(queries, keys).float().mean().item())


def bits(flags: torch.Tensor) -> str:
    """A bool vector as a compact '0101' string (per-item outcomes in results JSON)."""
    return "".join("1" if f else "0" for f in flags.tolist())


def evaluate_language(xx_emb: torch.Tensor, en_emb: torch.Tensor,
                      items: dict[str, str] | None = None) -> dict[str, float]:
    """Accuracy (%) both ways; ``items``, when given, receives each direction's per-sentence outcomes."""
    out = {}
    for d, q, k in (("xx2en", xx_emb, en_emb), ("en2xx", en_emb, xx_emb)):
        ok = correct(q, k)
        out[d] = 100.0 * ok.float().mean().item()
        if items is not None:
            items[d] = bits(ok)
    return out


def group_averages(per_language: dict[str, dict[str, float]],
                   groups: dict[str, list[str]] | None = None) -> dict[str, dict[str, Any]]:
    """Average accuracy per group and direction; a group with a missing language reports
    ``None`` with the languages it lacks (no average over a partial group is passed off
    as the paper's)."""
    groups = dict(GROUPS if groups is None else groups)
    groups["all"] = sorted(per_language)
    out = {}
    for name, langs in groups.items():
        missing = [l for l in langs if l not in per_language]
        entry: dict[str, Any] = {"n_languages": len(langs), "missing": missing}
        for d in ("xx2en", "en2xx"):
            entry[d] = None if missing or not langs else sum(per_language[l][d] for l in langs) / len(langs)
        entry["both"] = None if entry["xx2en"] is None else (entry["xx2en"] + entry["en2xx"]) / 2
        out[name] = entry
    return out

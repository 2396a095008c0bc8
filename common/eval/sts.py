"""Semantic textual similarity: correlation of cosine similarity with gold scores.

Aggregations over the subsets of one STS year (named after the toolkits that use them):

* ``all`` — SimCSE / SBERT: pool the pairs of every subset, one correlation;
* ``mean`` — SentEval: unweighted mean of the per-subset correlations;
* ``wmean`` — SentEval: mean weighted by subset size (MoCo-BERT Table 3).

Correlations are reported x100 (Spearman and Pearson); ``main_score`` is Spearman.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.stats import pearsonr, spearmanr

from common.data.loaders import StsPairs
from common.eval.similarity import Embed, normalize

AGGREGATIONS = ("all", "mean", "wmean")


def correlations(pred: np.ndarray, gold: np.ndarray) -> dict[str, float]:
    return {"spearman": 100 * float(spearmanr(pred, gold).statistic),
            "pearson": 100 * float(pearsonr(pred, gold).statistic)}


def stored(pred: np.ndarray) -> list[float]:
    """Per-pair scores as a results JSON keeps them: 9 significant digits round-trip float32 exactly, so the
    stored scores have the evaluator's own order and ties (a collapsed model's cosines differ in the 7th digit)."""
    return [float(f"{x:.9g}") for x in np.asarray(pred).tolist()]


def cosine_scores(subset: StsPairs, embed: Embed) -> NDArray[np.float32]:
    a, b = normalize(embed(subset.sent1)), normalize(embed(subset.sent2))
    scores: NDArray[np.float32] = (a * b).sum(-1).numpy()
    return scores


def aggregate(preds: Mapping[str, NDArray[Any]], golds: Mapping[str, NDArray[Any]]) -> dict[str, Any]:
    """Per-subset correlations and the three aggregations over them."""
    per = {name: correlations(preds[name], golds[name]) for name in preds}
    sizes = {name: len(golds[name]) for name in preds}
    total = sum(sizes.values())
    out: dict[str, Any] = {"subsets": {n: {**c, "n": sizes[n]} for n, c in per.items()}}
    out["all"] = correlations(np.concatenate(list(preds.values())), np.concatenate([golds[n] for n in preds]))
    out["mean"] = {m: float(np.mean([per[n][m] for n in per])) for m in ("spearman", "pearson")}
    out["wmean"] = {m: sum(per[n][m] * sizes[n] for n in per) / total for m in ("spearman", "pearson")}
    return out


def evaluate(subsets: list[StsPairs], embed: Embed, main: str = "wmean") -> dict[str, Any]:
    preds = {s.name: cosine_scores(s, embed) for s in subsets}
    golds = {s.name: np.asarray(s.scores, dtype=float) for s in subsets}
    out = aggregate(preds, golds)
    out["main_score"] = out[main]["spearman"]
    # per-pair cosines and gold scores, for the claims' item bootstrap (common.report.claims)
    out["items"] = {n: {"pred": stored(preds[n]), "gold": golds[n].tolist()} for n in preds}
    return out

"""Claims with statistical power: a metric difference between two systems, its mean over seeds and a 95 %
paired bootstrap interval that resamples the test items jointly with the seeds.

A system is a list of per-seed :class:`ItemMetric` objects (one results JSON each, built by
:func:`item_metric` from the per-item outcomes the evaluators store). Systems A and B are paired by seed
(seed s of both saw the same data order) and by item (the same test items). One bootstrap replicate
draws S seeds with replacement and, within every stratum (a Tatoeba language and direction, a BUCC
language pair, an STS subset, the XNLI items), as many items as it has with replacement; its value is
the mean over the drawn seeds of metric_B - metric_A on the drawn items. The interval is the
percentile interval of the replicates (Efron & Tibshirani 1993, ch. 13; Koehn 2004 for paired
resampling of test items); the point estimate is the mean over seeds of the difference on all items.
:func:`bootstrap` resamples one system's metric the same way (the interval of a leaderboard cell).

Verdicts (:func:`verdict`): "holds" when the interval lies on the paper's side of zero, "reversed" when
it lies on the other side, "inconclusive" otherwise.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata


class ItemMetric:
    """A metric recomputable on any resample of its test items; ``strata`` are the item counts."""

    strata: list[int]

    def value(self, idx: Sequence[np.ndarray] | None = None) -> float:  # pragma: no cover - interface
        raise NotImplementedError


def _bits(s: str) -> np.ndarray:
    return np.frombuffer(s.encode(), dtype=np.uint8) == ord("1")


class MeanOfAccuracies(ItemMetric):
    """Mean over strata of the % of correct items (Tatoeba: a stratum per language and direction)."""

    def __init__(self, outcomes: Sequence[str]):
        self.ok = [_bits(o) for o in outcomes]
        self.strata = [len(o) for o in self.ok]

    def value(self, idx=None) -> float:
        return 100.0 * float(np.mean([(ok if idx is None else ok[i]).mean() for ok, i in
                                      zip(self.ok, idx or [None] * len(self.ok))]))


class AlignedAccuracies(MeanOfAccuracies):
    """Mean accuracy over languages whose items are the same items (XNLI): one stratum, one draw for all."""

    def __init__(self, outcomes: Sequence[str]):
        super().__init__(outcomes)
        if len(set(self.strata)) != 1:
            raise ValueError("aligned items need the same number of items in every language")
        self.strata = self.strata[:1]

    def value(self, idx=None) -> float:
        return super().value(None if idx is None else [idx[0]] * len(self.ok))


class AlignedMeans(ItemMetric):
    """Mean over languages of the mean per-item score x 100 (QA: each question's F1 in [0, 1]) when every
    language holds the same items (XQuAD): one stratum, one draw for all; else a stratum per language."""

    def __init__(self, values: Sequence[Sequence[float]]):
        self.v = [np.asarray(x, dtype=float) for x in values]
        self.aligned = len({len(x) for x in self.v}) == 1
        self.strata = [len(self.v[0])] if self.aligned else [len(x) for x in self.v]

    def value(self, idx=None) -> float:
        if idx is not None and self.aligned:
            idx = [idx[0]] * len(self.v)
        return 100.0 * float(np.mean([(x if idx is None else x[i]).mean() for x, i in
                                      zip(self.v, idx or [None] * len(self.v))]))


class MeanF1(ItemMetric):
    """Mean over language pairs of BUCC F1 from per-source-sentence outcomes (gold, true / false positive)."""

    def __init__(self, pairs: Sequence[dict]):
        self.pairs = [(_bits(p["gold"]), _bits(p["tp"]), _bits(p["fp"])) for p in pairs]
        self.strata = [len(g) for g, _, _ in self.pairs]

    @staticmethod
    def f1(gold: np.ndarray, tp: np.ndarray, fp: np.ndarray) -> float:
        t, f, g = tp.sum(), fp.sum(), gold.sum()
        return 100.0 * 2 * t / (t + f + g) if t + f + g else 0.0  # = 2PR / (P + R)

    def value(self, idx=None) -> float:
        idx = idx or [slice(None)] * len(self.pairs)
        return float(np.mean([self.f1(g[i], t[i], f[i]) for (g, t, f), i in zip(self.pairs, idx)]))


class MeanOfRatios(ItemMetric):
    """Mean over languages of a ratio of sums over sentences x 100, from each sentence's (numerator, denominator):
    POS word accuracy (correct words, words) and NER entity F1 (2 x true positives, gold + predicted entities), the
    corpus-level metrics of :mod:`common.eval.token_classification` recomputed on a resample of sentences; a stratum
    per language (the test sets differ)."""

    def __init__(self, counts: Sequence[Sequence[Sequence[int]]]):
        self.c = [np.asarray(x, dtype=float).reshape(-1, 2) for x in counts]
        self.strata = [len(x) for x in self.c]

    @staticmethod
    def ratio(c: np.ndarray) -> float:
        den = c[:, 1].sum()
        return 100.0 * c[:, 0].sum() / den if den else 0.0

    def value(self, idx=None) -> float:
        idx = idx or [slice(None)] * len(self.c)
        return float(np.mean([self.ratio(c[i]) for c, i in zip(self.c, idx)]))


class StsWeightedSpearman(ItemMetric):
    """SentEval "wmean" per dataset (subset-size-weighted Spearman x100), averaged over datasets; a stratum per
    subset. ``datasets``: name -> subset -> {"pred": [...], "gold": [...]}."""

    def __init__(self, datasets: dict[str, dict[str, dict]]):
        self.groups = [[(np.asarray(s["pred"]), np.asarray(s["gold"])) for s in subsets.values()]
                       for subsets in datasets.values()]
        self.strata = [len(p) for subsets in self.groups for p, _ in subsets]

    @staticmethod
    def spearman(pred: np.ndarray, gold: np.ndarray) -> float:
        a, b = rankdata(pred), rankdata(gold)
        a, b = a - a.mean(), b - b.mean()
        den = np.sqrt((a * a).sum() * (b * b).sum())
        return 100.0 * float((a * b).sum() / den) if den else 0.0

    def value(self, idx=None) -> float:
        it = iter(idx) if idx is not None else None
        means = []
        for subsets in self.groups:
            vals, sizes = [], []
            for pred, gold in subsets:
                i = next(it) if it is not None else slice(None)
                vals.append(self.spearman(pred[i], gold[i]))
                sizes.append(len(pred))
            means.append(float(np.average(vals, weights=sizes)))
        return float(np.mean(means))


class MeanPearson(ItemMetric):
    """Mean over groups of the mean Pearson r x 100 of each group's sets (VMSST's English STS: a group per year;
    cross-lingual STS: one group); a stratum per set."""

    def __init__(self, groups: Sequence[Sequence[dict]]):
        self.groups = [[(np.asarray(s["pred"]), np.asarray(s["gold"])) for s in sets] for sets in groups]
        self.strata = [len(p) for sets in self.groups for p, _ in sets]

    @staticmethod
    def pearson(pred: np.ndarray, gold: np.ndarray) -> float:
        a, b = pred - pred.mean(), gold - gold.mean()
        den = np.sqrt((a * a).sum() * (b * b).sum())
        return 100.0 * float((a * b).sum() / den) if den else 0.0

    def value(self, idx=None) -> float:
        it = iter(idx) if idx is not None else None
        means = []
        for sets in self.groups:
            vals = []
            for pred, gold in sets:
                i = next(it) if it is not None else slice(None)
                vals.append(self.pearson(pred[i], gold[i]))
            means.append(float(np.mean(vals)))
        return float(np.mean(means))


class Combined(ItemMetric):
    """A weighted mean of several item metrics (VMSST's Score); their strata side by side."""

    def __init__(self, metrics: Sequence[ItemMetric], weights: Sequence[float]):
        self.metrics, self.weights = list(metrics), list(weights)
        self.strata = [n for m in self.metrics for n in m.strata]

    def value(self, idx=None) -> float:
        total, start = 0.0, 0
        for m, w in zip(self.metrics, self.weights):
            part = None if idx is None else idx[start:start + len(m.strata)]
            total += w * m.value(part)
            start += len(m.strata)
        return total


class Gap(ItemMetric):
    """metric_b - metric_a on the same items (for "the advantage grows" claims: a difference of differences)."""

    def __init__(self, a: ItemMetric, b: ItemMetric):
        if a.strata != b.strata:
            raise ValueError("a difference needs both metrics on the same items")
        self.a, self.b, self.strata = a, b, a.strata

    def value(self, idx=None) -> float:
        return self.b.value(idx) - self.a.value(idx)


class CorpusBleu(ItemMetric):
    """Corpus BLEU recomputed on a resample of the test sentences, from the per-sentence statistics of the result's
    main score (sacreBLEU's with exponential smoothing, or multi-bleu's without)."""

    def __init__(self, result: dict):
        self.stats = np.asarray(result["items"])
        self.smoothing = result.get("items_smoothing", "exp")
        self.strata = [len(self.stats)]

    def value(self, idx=None) -> float:
        from common.nmt.bleu import bleu_from_statistics  # sacreBLEU: only where BLEU is scored

        return bleu_from_statistics(self.stats if idx is None else self.stats[idx[0]], self.smoothing)


def item_metric(task_type: str, scores: dict, languages: Sequence[str] | None = None) -> ItemMetric:
    """The main metric of one results JSON, recomputable on resampled items (optionally over a subset of
    its languages / language pairs)."""
    if task_type == "sts-en":
        return StsWeightedSpearman({name: d["items"] for name, d in scores["datasets"].items()})
    if task_type == "sts-en-years":
        return MeanPearson([list(sets.values()) for sets in scores["items"].values()])
    if task_type == "sts17":
        return MeanPearson([[d["items"] for name, d in scores["datasets"].items()
                             if languages is None or name in languages]])
    if task_type == "translation":  # one test set: a common.nmt.recipe.translate result
        return CorpusBleu(scores)
    if task_type == "bucc":
        items = {p: v["test_items"] for p, v in scores["per_pair"].items()}
    elif task_type == "token-classification":
        items = scores["items"]
    elif task_type == "qa":
        items = {lang: v["items_f1"] for lang, v in scores["per_language"].items()}
    else:
        items = scores["items"]
    keys = [k for k in items if languages is None or k in languages]
    if not keys:
        raise ValueError(f"no items for languages {languages}")
    if task_type == "tatoeba":
        return MeanOfAccuracies([items[k][d] for k in keys for d in ("xx2en", "en2xx")])
    if task_type == "bucc":
        return MeanF1([items[k] for k in keys])
    if task_type in ("xnli", "pawsx"):  # PAWS-X's test sets translate the same pairs, as XNLI's do
        return AlignedAccuracies([items[k] for k in keys])
    if task_type == "token-classification":
        return MeanOfRatios([items[k] for k in keys])
    if task_type == "question-retrieval":
        return MeanOfAccuracies([items[k] for k in keys])
    if task_type == "qa":
        return AlignedMeans([items[k] for k in keys])
    raise KeyError(f"no item-level metric for task type {task_type!r}")


@dataclass(frozen=True)
class Difference:
    mean: float  # mean over seeds of B - A on all items (of B alone: :func:`bootstrap`)
    lo: float
    hi: float
    seeds: int
    replicates: int


def _bootstrap(b: Sequence[ItemMetric], a: Sequence[ItemMetric] | None, replicates: int, seed: int,
               level: float) -> Difference:
    """Mean over seeds of B - A (B alone when ``a`` is None) and its percentile interval: each replicate draws the
    seeds, then every stratum's items, with replacement (the draw order is the module docstring's)."""
    strata = b[0].strata
    if any(m.strata != strata for m in (*b, *(a or ()))):
        raise ValueError("every seed of both systems must be scored on the same test items")

    def value(s: int, idx: list[np.ndarray] | None) -> float:
        return b[s].value(idx) - (a[s].value(idx) if a is not None else 0.0)

    rng = np.random.default_rng(seed)
    point = np.array([value(s, None) for s in range(len(b))])
    out = np.empty(replicates)
    for r in range(replicates):
        seeds = rng.integers(0, len(b), len(b))
        idx = [rng.integers(0, n, n) for n in strata]
        per_seed = {s: value(s, idx) for s in set(seeds.tolist())}
        out[r] = np.mean([per_seed[s] for s in seeds.tolist()])
    tail = 100 * (1 - level) / 2
    lo, hi = np.percentile(out, [tail, 100 - tail])
    return Difference(float(point.mean()), float(lo), float(hi), len(b), replicates)


def paired_bootstrap(a: Sequence[ItemMetric], b: Sequence[ItemMetric], replicates: int = 1000, seed: int = 0,
                     level: float = 0.95) -> Difference:
    """Mean of B - A over paired seeds and its percentile interval, resampling seeds and items jointly."""
    if len(a) != len(b) or not a:
        raise ValueError(f"paired seeds needed: {len(a)} against {len(b)}")
    return _bootstrap(b, a, replicates, seed, level)


def bootstrap(b: Sequence[ItemMetric], replicates: int = 1000, seed: int = 0, level: float = 0.95) -> Difference:
    """One system's metric: its mean over seeds and the percentile interval of the same resampling of seeds and
    items (the interval of a leaderboard cell)."""
    if not b:
        raise ValueError("no seeds to bootstrap")
    return _bootstrap(b, None, replicates, seed, level)


def verdict(d: Difference, expected_sign: int = 1) -> str:
    """'holds' when the interval lies on the paper's side of zero, 'reversed' on the other, else 'inconclusive'."""
    lo, hi = (d.lo, d.hi) if expected_sign > 0 else (-d.hi, -d.lo)
    return "holds" if lo > 0 else "reversed" if hi < 0 else "inconclusive"

"""Claims with statistical power: a metric difference between two systems, its mean over seeds and a 95 % interval
meant to keep its promise with a handful of seeds (simulated for accuracy-type metrics: below).

A system is a list of per-seed :class:`ItemMetric` objects (one results JSON each, built by :func:`item_metric` from
the per-item outcomes the evaluators store). Systems A and B are paired by seed id (seed s of both saw the same data
order and, where the design allows, the same initialisation) and by item (the same test items). The point estimate
is the mean over seeds of d_s = metric_B,s - metric_A,s on all items. Its variance has two parts:

* **seeds**: var(d_s) / S over the S paired differences (seed ids matched: each system's metrics come keyed by
  seed from :meth:`common.report.results.ResultStore.item_metrics`). It holds the seed-to-seed variation of
  training and the item-by-seed noise (each seed scores every item anew); with few seeds its uncertainty is
  large, so the interval takes Student's t quantile (S - 1 degrees of freedom for this part), not the normal one.
* **items**: how much the seed-averaged difference moves when the test set is redrawn -- a cluster bootstrap
  (``replicates`` draws of the clusters of every stratum with replacement, the same draw for every seed; Davison
  & Hinkley 1997, section 3.8, resampling clusters). Its raw variance also holds the item-by-seed noise that the
  seed part counts already: that share, (v_each - v_mean) / (S - 1) with v_each the mean over seeds of each seed's
  bootstrap variance and v_mean the variance of the seed mean, is removed (the two-way random-effects decomposition
  d_si = mu + a_s + b_i + e_si: the seed part estimates (sigma_a^2 + sigma_e^2 / I) / S, the corrected item part
  sigma_b^2 / I; exact for metrics that are means over items, an approximation for F1, Spearman or corpus BLEU),
  and a negative remainder counts as 0.

The interval is mean +- sqrt(t^2 v_seeds + z^2 v_items), t the Student quantile on S - 1 degrees of freedom and z
the normal one: each part's half-width, added in quadrature (with equal parts that is a quantile between z and t).
:mod:`common.report.calibration` simulates it beside the rules it was chosen over, on the same pairs of systems
(``figures/bench/claims_calibration.md``: 2000 pairs per row, 120 binary items, equal means with per-seed offsets and
item-by-seed noise, optionally fixed item differences of mean zero). Null pairs called findings, ours: 5.4 %, 4.9 %
and 4.2 % at 3, 4 and 5 seeds (the claims tables' counts), 3.4 %, 3.7 % and 3.6 % with fixed item differences,
3.4 %, 4.6 % and 4.9 % with clustered items (120 clusters of 3 sharing fixed differences) drawn whole, against 12.8 %,
17.1 % and 20.3 % when the same items are drawn one by one. Welch-Satterthwaite degrees of freedom for the
whole variance (the item part taken as known): 7.1 % at 3 seeds (the corrected item part is itself a noisy estimate
near zero, and it bought the whole interval nearly normal quantiles). t(S - 1) on the whole variance: 4.2 % and
1.5 %, over-wide where the items' part is large, with less power. A t-test on the seeds' differences alone: 6.1 % at
3 seeds and 6.2 % at 5 with fixed item differences (it cannot see the test set's sampling).
``tests/common/report/test_claims.py`` holds ours within 5 % plus three Monte Carlo standard errors over 1000 pairs at
3, 4 and 5 seeds (the percentile bootstrap this module used before resampled the seeds as if they were many: about 10 %
of null pairs called findings in a simulation like this one).
With one seed only the item part is left: such a row says nothing about another seed.

Clusters (what a bootstrap draw takes together): a Tatoeba sentence pair in both directions (one draw per language
for xx->en and en->xx); an XNLI premise with its hypotheses (the result's ``clusters``); a BUCC source sentence (a
gold pair with its candidates); STS pairs, PAWS-X pairs, POS / NER sentences, QA questions and BLEU test sentences
as they are. :func:`interval` gives one system's metric the same treatment (a leaderboard cell).

Verdicts (:func:`verdict`): "holds" when the interval lies on the paper's side of zero, "reversed" when it lies on
the other side, "inconclusive" otherwise.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import rankdata
from scipy.stats import t as student_t


class ItemMetric:
    """A metric recomputable on any resample of its test items; ``strata`` are the item counts."""

    strata: list[int]

    def value(self, idx: Sequence[np.ndarray] | None = None) -> float:  # pragma: no cover - interface
        raise NotImplementedError

    def values(self, draws: Sequence[np.ndarray]) -> np.ndarray:
        """The metric on many resamples at once: ``draws[k]`` is (R, n_k), R draws of stratum k; gives (R,)."""
        return np.array([self.value([d[r] for d in draws]) for r in range(len(draws[0]))])


class Clusters:
    """Items grouped into clusters that a bootstrap draw takes whole (XNLI: a premise's hypotheses); ``ids`` gives
    each item's cluster. ``items(draw)`` maps drawn cluster numbers to the item indices they hold."""

    def __init__(self, ids: Sequence[int]):
        _, first, inverse = np.unique(np.asarray(ids), return_index=True, return_inverse=True)
        order = np.argsort(first)  # clusters numbered in order of first appearance
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        number = rank[inverse]  # (N,): each item's cluster number
        self.flat = np.argsort(number, kind="stable")  # items cluster by cluster
        self.sizes = np.bincount(number, minlength=len(order))
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)[:-1]])

    def __len__(self) -> int:
        return len(self.sizes)

    def items(self, draw: np.ndarray) -> np.ndarray:
        sizes = self.sizes[draw]
        ends = np.cumsum(sizes)
        offsets = np.arange(ends[-1] if len(ends) else 0) - np.repeat(ends - sizes, sizes)
        items: np.ndarray = self.flat[np.repeat(self.starts[draw], sizes) + offsets]
        return items


def _bits(s: str) -> np.ndarray:
    bits: np.ndarray = np.frombuffer(s.encode(), dtype=np.uint8) == ord("1")
    return bits


class MeanOfAccuracies(ItemMetric):
    """Mean over outcome strings of the % of correct items. ``tied`` consecutive strings hold the same items and take
    one draw (Tatoeba: a language's xx->en and en->xx are the same sentence pairs, ``tied=2``)."""

    def __init__(self, outcomes: Sequence[str], tied: int = 1):
        self.ok, self.tied = [_bits(o) for o in outcomes], tied
        if len(self.ok) % tied or any(len(self.ok[k]) != len(self.ok[k + j]) for k in range(0, len(self.ok), tied)
                                      for j in range(tied)):
            raise ValueError(f"outcomes tied in groups of {tied} need the same items in each group")
        self.strata = [len(o) for o in self.ok[::tied]]

    def value(self, idx: Sequence[np.ndarray] | None = None) -> float:
        per: list[np.ndarray | None] = ([None] * len(self.ok) if idx is None
                                        else [i for i in idx for _ in range(self.tied)])
        return 100.0 * float(np.mean([(ok if i is None else ok[i]).mean() for ok, i in zip(self.ok, per)]))

    def values(self, draws: Sequence[np.ndarray]) -> np.ndarray:
        if type(self) is not MeanOfAccuracies:  # a subclass maps its draws to items: the general path
            return super().values(draws)
        draws = [d for d in draws for _ in range(self.tied)]
        out: np.ndarray = 100.0 * np.mean([ok[d].mean(1) for ok, d in zip(self.ok, draws)], axis=0)  # (R,)
        return out


class AlignedAccuracies(MeanOfAccuracies):
    """Mean accuracy over languages whose items are the same items (XNLI, PAWS-X): one draw for all, of
    ``clusters`` (an XNLI premise's hypotheses; None: each item alone)."""

    def __init__(self, outcomes: Sequence[str], clusters: Sequence[int] | None = None):
        super().__init__(outcomes, tied=len(outcomes))
        n = self.strata[0]
        self.clusters = Clusters(clusters if clusters is not None else range(n))
        if len(self.clusters.flat) != n:
            raise ValueError(f"{len(self.clusters.flat)} cluster ids for {n} items")
        self.strata = [len(self.clusters)]
        c = self.clusters  # each language's correct items per cluster, (clusters,):
        self.correct = [np.add.reduceat(ok[c.flat].astype(float), c.starts) if n else np.zeros(0) for ok in self.ok]

    def value(self, idx: Sequence[np.ndarray] | None = None) -> float:
        return super().value(None if idx is None else [self.clusters.items(idx[0])])

    def values(self, draws: Sequence[np.ndarray]) -> np.ndarray:
        """A draw's accuracy is its clusters' correct items over their items: per-cluster counts, no item lists."""
        sizes = self.clusters.sizes[draws[0]].sum(1)  # (R,) items drawn
        correct = [per_cluster[draws[0]].sum(1) for per_cluster in self.correct]  # (R,) per language
        out: np.ndarray = 100.0 * np.mean(correct, axis=0) / sizes
        return out


class AlignedMeans(ItemMetric):
    """Mean over languages of the mean per-item score x 100 (QA: each question's F1 in [0, 1]) when every
    language holds the same items (XQuAD): one stratum, one draw for all; else a stratum per language."""

    def __init__(self, values: Sequence[Sequence[float]]):
        self.v = [np.asarray(x, dtype=float) for x in values]
        self.aligned = len({len(x) for x in self.v}) == 1
        self.strata = [len(self.v[0])] if self.aligned else [len(x) for x in self.v]

    def value(self, idx: Sequence[np.ndarray] | None = None) -> float:
        if idx is not None and self.aligned:
            idx = [idx[0]] * len(self.v)
        parts: Sequence[np.ndarray | None] = idx if idx else [None] * len(self.v)
        return 100.0 * float(np.mean([(x if idx is None else x[i]).mean() for x, i in zip(self.v, parts)]))

    def values(self, draws: Sequence[np.ndarray]) -> np.ndarray:
        per = [draws[0]] * len(self.v) if self.aligned else draws
        out: np.ndarray = 100.0 * np.mean([x[d].mean(1) for x, d in zip(self.v, per)], axis=0)  # (R,)
        return out


class MeanF1(ItemMetric):
    """Mean over language pairs of BUCC F1 from per-source-sentence outcomes (gold, true / false positive)."""

    def __init__(self, pairs: Sequence[Mapping[str, str]]):
        self.pairs = [(_bits(p["gold"]), _bits(p["tp"]), _bits(p["fp"])) for p in pairs]
        self.strata = [len(g) for g, _, _ in self.pairs]

    @staticmethod
    def f1(tp: Any, fp: Any, gold: Any) -> Any:
        """F1 x 100 from counts (numbers, or (R,) arrays of them): 2PR / (P + R) = 2 tp / (tp + fp + gold); 0 when
        all three are 0."""
        den = tp + fp + gold
        return 100.0 * 2 * tp / np.where(den > 0, den, 1)

    def value(self, idx: Sequence[np.ndarray] | None = None) -> float:
        parts: Sequence[np.ndarray | slice] = idx if idx else [slice(None)] * len(self.pairs)
        return float(np.mean([self.f1(t[i].sum(), f[i].sum(), g[i].sum()) for (g, t, f), i in zip(self.pairs, parts)]))

    def values(self, draws: Sequence[np.ndarray]) -> np.ndarray:
        f1s = [self.f1(t[d].sum(1), f[d].sum(1), g[d].sum(1)) for (g, t, f), d in zip(self.pairs, draws)]  # (R,) each
        out: np.ndarray = np.mean(f1s, axis=0)
        return out


class MeanOfRatios(ItemMetric):
    """Mean over languages of a ratio of sums over sentences x 100, from each sentence's (numerator, denominator):
    POS word accuracy (correct words, words) and NER entity F1 (2 x true positives, gold + predicted entities), the
    corpus-level metrics of :mod:`common.eval.token_classification` recomputed on a resample of sentences; a stratum
    per language (the test sets differ)."""

    def __init__(self, counts: Sequence[Sequence[Sequence[int]]]):
        self.c = [np.asarray(x, dtype=float).reshape(-1, 2) for x in counts]
        self.strata = [len(x) for x in self.c]

    @staticmethod
    def ratio(num: Any, den: Any) -> Any:
        """num / den x 100 from summed counts (numbers, or (R,) arrays of them); 0 where den is 0."""
        return np.where(den > 0, 100.0 * num / np.where(den > 0, den, 1), 0.0)

    def value(self, idx: Sequence[np.ndarray] | None = None) -> float:
        parts: Sequence[np.ndarray | slice] = idx if idx else [slice(None)] * len(self.c)
        return float(np.mean([self.ratio(c[i, 0].sum(), c[i, 1].sum()) for c, i in zip(self.c, parts)]))

    def values(self, draws: Sequence[np.ndarray]) -> np.ndarray:
        ratios = [self.ratio(c[d, 0].sum(1), c[d, 1].sum(1)) for c, d in zip(self.c, draws)]  # (R,) each
        out: np.ndarray = np.mean(ratios, axis=0)
        return out


def _dense_codes(x: np.ndarray) -> np.ndarray:
    """Each value's number among the distinct values in ascending order (equal values, equal numbers)."""
    codes: np.ndarray = np.unique(x, return_inverse=True)[1].reshape(-1)
    return codes


def _average_ranks(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """Each row's ranks as ``scipy.stats.rankdata`` gives them (1-based, ties share their mean rank) from dense codes
    (:func:`_dense_codes` of the values, then drawn): the rank of code u is the count of smaller codes in its row plus
    the mean of 1..count(u). A count per row and code (R x n_codes) instead of a sort per row."""
    rows = codes.shape[0]
    flat = (codes + n_codes * np.arange(rows)[:, None]).ravel()
    counts = np.bincount(flat, minlength=rows * n_codes).reshape(rows, n_codes)  # (R, U)
    mean_rank = np.cumsum(counts, 1) - counts + (counts + 1) / 2.0  # (R, U)
    ranks: np.ndarray = np.take_along_axis(mean_rank, codes, 1)  # (R, n)
    return ranks


def _correlations(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson r x 100 of each row of ``a`` with the same row of ``b`` ((R, n) each; gives (R,)), 0 where a row is
    constant (a resample can draw one item n times)."""
    a = a - a.mean(1, keepdims=True)
    b = b - b.mean(1, keepdims=True)
    den = np.sqrt((a * a).sum(1) * (b * b).sum(1))  # (R,)
    r: np.ndarray = 100.0 * (a * b).sum(1) / np.where(den > 0, den, 1.0)
    return r


class StsWeightedSpearman(ItemMetric):
    """SentEval "wmean" per dataset (subset-size-weighted Spearman x100), averaged over datasets; a stratum per
    subset. ``datasets``: name -> subset -> {"pred": [...], "gold": [...]}."""

    def __init__(self, datasets: Mapping[str, Mapping[str, Mapping[str, Sequence[float]]]]):
        self.groups = [[(np.asarray(s["pred"]), np.asarray(s["gold"])) for s in subsets.values()]
                       for subsets in datasets.values()]
        self.strata = [len(p) for subsets in self.groups for p, _ in subsets]
        # each item's value as the number of its distinct value in sorted order (NaN: the per-draw path's NaN)
        self.codes = [[tuple(_dense_codes(x) for x in pair) for pair in subsets] for subsets in self.groups]
        self.finite = all(np.isfinite(x).all() for subsets in self.groups for pair in subsets for x in pair)

    @staticmethod
    def spearman(pred: np.ndarray, gold: np.ndarray) -> float:
        return float(_correlations(rankdata(pred)[None], rankdata(gold)[None])[0])

    def value(self, idx: Sequence[np.ndarray] | None = None) -> float:
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

    def values(self, draws: Sequence[np.ndarray]) -> np.ndarray:
        """All resamples at once, ranked by counting (:func:`_average_ranks`) instead of sorting every draw."""
        if not self.finite:
            return super().values(draws)
        it, means = iter(draws), []
        for subsets, codes in zip(self.groups, self.codes):
            vals = [_correlations(_average_ranks(p[d], len(p)), _average_ranks(g[d], len(g)))
                    for (p, g), d in zip(codes, it)]  # (R,) each
            means.append(np.average(vals, axis=0, weights=[len(pred) for pred, _ in subsets]))
        out: np.ndarray = np.mean(means, axis=0)
        return out


class MeanPearson(ItemMetric):
    """Mean over groups of the mean Pearson r x 100 of each group's sets (VMSST's English STS: a group per year;
    cross-lingual STS: one group); a stratum per set."""

    def __init__(self, groups: Sequence[Sequence[Mapping[str, Sequence[float]]]]):
        self.groups = [[(np.asarray(s["pred"]), np.asarray(s["gold"])) for s in sets] for sets in groups]
        self.strata = [len(p) for sets in self.groups for p, _ in sets]

    @staticmethod
    def pearson(pred: np.ndarray, gold: np.ndarray) -> float:
        return float(_correlations(pred[None], gold[None])[0])

    def value(self, idx: Sequence[np.ndarray] | None = None) -> float:
        it = iter(idx) if idx is not None else None
        means = []
        for sets in self.groups:
            vals = []
            for pred, gold in sets:
                i = next(it) if it is not None else slice(None)
                vals.append(self.pearson(pred[i], gold[i]))
            means.append(float(np.mean(vals)))
        return float(np.mean(means))

    def values(self, draws: Sequence[np.ndarray]) -> np.ndarray:
        it = iter(draws)
        means = [np.mean([_correlations(pred[d], gold[d]) for (pred, gold), d in zip(sets, it)], axis=0)
                 for sets in self.groups]
        out: np.ndarray = np.mean(means, axis=0)
        return out


class Combined(ItemMetric):
    """A weighted mean of several item metrics (VMSST's Score); their strata side by side."""

    def __init__(self, metrics: Sequence[ItemMetric], weights: Sequence[float]):
        self.metrics, self.weights = list(metrics), list(weights)
        self.strata = [n for m in self.metrics for n in m.strata]

    def value(self, idx: Sequence[np.ndarray] | None = None) -> float:
        total, start = 0.0, 0
        for m, w in zip(self.metrics, self.weights):
            part = None if idx is None else idx[start:start + len(m.strata)]
            total += w * m.value(part)
            start += len(m.strata)
        return total

    def values(self, draws: Sequence[np.ndarray]) -> np.ndarray:
        total, start = np.zeros(len(draws[0])), 0
        for m, w in zip(self.metrics, self.weights):
            total += w * m.values(draws[start:start + len(m.strata)])
            start += len(m.strata)
        return total


class Gap(ItemMetric):
    """metric_b - metric_a on the same items (for "the advantage grows" claims: a difference of differences)."""

    def __init__(self, a: ItemMetric, b: ItemMetric):
        if a.strata != b.strata:
            raise ValueError("a difference needs both metrics on the same items")
        self.a, self.b, self.strata = a, b, a.strata

    def value(self, idx: Sequence[np.ndarray] | None = None) -> float:
        return self.b.value(idx) - self.a.value(idx)

    def values(self, draws: Sequence[np.ndarray]) -> np.ndarray:
        out: np.ndarray = self.b.values(draws) - self.a.values(draws)
        return out


class CorpusBleu(ItemMetric):
    """Corpus BLEU recomputed on a resample of the test sentences, from the per-sentence statistics of the result's
    main score (sacreBLEU's with exponential smoothing, or multi-bleu's without)."""

    def __init__(self, result: Mapping[str, Any]):
        self.stats = np.asarray(result["items"])
        self.smoothing = result.get("items_smoothing", "exp")
        self.strata = [len(self.stats)]

    def value(self, idx: Sequence[np.ndarray] | None = None) -> float:
        from common.nmt.bleu import bleu_from_statistics  # sacreBLEU: only where BLEU is scored

        return bleu_from_statistics(self.stats if idx is None else self.stats[idx[0]], self.smoothing)


def item_metric(task_type: str, scores: Mapping[str, Any], languages: Sequence[str] | None = None) -> ItemMetric:
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
        return MeanOfAccuracies([items[k][d] for k in keys for d in ("xx2en", "en2xx")], tied=2)
    if task_type == "bucc":
        return MeanF1([items[k] for k in keys])
    if task_type == "xnli":  # the same items in every language, a premise's hypotheses one cluster
        if "clusters" not in scores:
            raise KeyError("an XNLI result without the premise clusters of its items (evaluated before they were "
                           "stored): evaluate it again")
        return AlignedAccuracies([items[k] for k in keys], scores["clusters"])
    if task_type == "pawsx":  # PAWS-X's test sets translate the same pairs, as XNLI's do
        return AlignedAccuracies([items[k] for k in keys])
    if task_type == "token-classification":
        return MeanOfRatios([items[k] for k in keys])
    if task_type == "question-retrieval":
        return MeanOfAccuracies([items[k] for k in keys])
    if task_type == "qa":
        return AlignedMeans([items[k] for k in keys])
    raise KeyError(f"no item-level metric for task type {task_type!r}")


PerSeed = Mapping[int, ItemMetric] | Sequence[ItemMetric]  # a system's metric per seed (by seed id, or a list)
CHUNK = 100  # bootstrap replicates drawn at a time (bounds the index arrays: Tatoeba's 112 x 1,000 sentences)


@dataclass(frozen=True)
class Difference:
    mean: float  # mean over seeds of B - A on all items (of B alone: :func:`interval`)
    lo: float
    hi: float
    seeds: int
    replicates: int  # of the item bootstrap
    se_seed: float = 0.0  # standard error from the spread of the per-seed values (with their item-by-seed noise)
    se_items: float = 0.0  # standard error from the test items' sampling (item-by-seed noise removed)
    df: float = math.inf  # degrees of freedom of the seed part's t quantile: seeds - 1 (inf with one seed)


def _interval(b: Sequence[ItemMetric], a: Sequence[ItemMetric] | None, replicates: int, seed: int,
              level: float) -> Difference:
    """The module docstring's interval for the mean over seeds of B - A (of B alone when ``a`` is None)."""
    if replicates < 2:
        raise ValueError(f"{replicates} bootstrap replicate(s): the items' part needs at least 2")
    clusters = b[0].strata
    if any(m.strata != clusters for m in (*b, *(a or ()))):
        raise ValueError("every seed of both systems must be scored on the same test items")

    n = len(b)
    point = np.array([b[s].value() - (a[s].value() if a is not None else 0.0) for s in range(n)])  # (S,)
    rng = np.random.default_rng(seed)
    boot = np.empty((replicates, n))  # (R, S): every seed on the same draw of clusters
    for start in range(0, replicates, CHUNK):
        rows = min(CHUNK, replicates - start)
        draws = [rng.integers(0, k, (rows, k)) for k in clusters]  # (rows, k) per stratum
        for s in range(n):
            boot[start:start + rows, s] = b[s].values(draws) - (a[s].values(draws) if a is not None else 0.0)
    v_mean = float(boot.mean(1).var(ddof=1)) if replicates > 1 else 0.0
    if n > 1:
        v_seed = float(point.var(ddof=1)) / n
        v_each = float(boot.var(0, ddof=1).mean()) if replicates > 1 else 0.0
        v_items = max(0.0, v_mean - (v_each - v_mean) / (n - 1))  # item-by-seed noise is in v_seed already
        df: float = n - 1
    else:  # one seed: nothing says how much another seed would move; the items' part only
        v_seed, v_items, df = 0.0, v_mean, math.inf
    t, z = float(student_t.ppf(0.5 + level / 2, df)), float(student_t.ppf(0.5 + level / 2, math.inf))
    half = math.sqrt(t * t * v_seed + z * z * v_items)  # each part's half-width, added in quadrature
    mean = float(point.mean())
    return Difference(mean, mean - half, mean + half, n, replicates, math.sqrt(v_seed), math.sqrt(v_items), df)


def paired_difference(a: PerSeed, b: PerSeed, replicates: int = 1000, seed: int = 0,
                      level: float = 0.95) -> Difference:
    """Mean of B - A over seeds paired by seed id, with the module docstring's calibrated interval.

    ``a`` and ``b`` map seed ids to metrics (:meth:`common.report.results.ResultStore.item_metrics`): the seeds
    both systems have are paired, id with id, and the others left out (a system run on more seeds than its
    baseline); two lists are paired by position (simulations, one-seed rows)."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        shared = sorted(a.keys() & b.keys())
        if not shared:
            raise ValueError(f"no seed in common: A has seeds {sorted(a)}, B {sorted(b)}")
        a, b = [a[k] for k in shared], [b[k] for k in shared]
    elif isinstance(a, Mapping) or isinstance(b, Mapping):
        raise TypeError("pair two seed -> metric mappings, or two lists")
    if len(a) != len(b) or not a:
        raise ValueError(f"paired seeds needed: {len(a)} against {len(b)}")
    return _interval(list(b), list(a), replicates, seed, level)


def interval(b: PerSeed, replicates: int = 1000, seed: int = 0, level: float = 0.95) -> Difference:
    """One system's metric: its mean over seeds and the same interval (a leaderboard cell)."""
    if not b:
        raise ValueError("no seeds to resample")
    return _interval(list(b.values()) if isinstance(b, Mapping) else list(b), None, replicates, seed, level)


INTERVAL_NOTE = ("95% CI: the seeds' part (Student t on seeds - 1 degrees of freedom over the paired differences) "
                 "and the test items' part (a cluster bootstrap, 1000 replicates; a Tatoeba pair in both directions, "
                 "an XNLI premise with its hypotheses, a BUCC source sentence, STS pairs, questions and sentences as "
                 "they are) added in quadrature, common/report/claims.py; one seed: the items' part alone, which says "
                 "nothing of another seed (its verdict reads 'holds on 1 seed'). "
                 "Verdict: 'holds' when the interval lies on the paper's side of zero, 'reversed' on the other, else "
                 "'inconclusive'.")


def verdict(d: Difference, expected_sign: int = 1) -> str:
    """'holds' when the interval lies on the paper's side of zero, 'reversed' on the other, else 'inconclusive'; with
    one seed the interval holds the test items' part only, so a verdict says so ('holds on 1 seed'): it is about
    these trained models, not the methods."""
    lo, hi = (d.lo, d.hi) if expected_sign > 0 else (-d.hi, -d.lo)
    word = "holds" if lo > 0 else "reversed" if hi < 0 else "inconclusive"
    return f"{word} on 1 seed" if d.seeds < 2 and word != "inconclusive" else word

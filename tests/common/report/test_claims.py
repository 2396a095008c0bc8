import numpy as np
import pytest
import torch

from common.data.loaders import BuccSplit, StsPairs
from common.eval import bucc, sts, tatoeba
from common.report.claims import Difference, MeanF1, MeanOfAccuracies, bootstrap, item_metric, paired_bootstrap, verdict


def acc(*outcomes):
    return MeanOfAccuracies(list(outcomes))


def test_known_answers():
    a = [acc("0000", "0011"), acc("0001", "0011")]
    same = paired_bootstrap(a, a, replicates=200)
    assert (same.mean, same.lo, same.hi) == (0.0, 0.0, 0.0)
    d = paired_bootstrap([acc("0000", "0000")] * 2, [acc("1111", "1111")] * 2, replicates=200)
    assert (d.mean, d.lo, d.hi, d.seeds) == (100.0, 100.0, 100.0, 2)  # B right on every item, A on none


def naive(a, b, replicates, seed):
    """The same bootstrap written out: the same random draws, metrics as plain loops over items."""
    rng = np.random.default_rng(seed)
    strata = a[0].strata
    out = []
    for _ in range(replicates):
        seeds = rng.integers(0, len(a), len(a))
        idx = [rng.integers(0, n, n) for n in strata]
        total = 0.0
        for s in seeds:
            vb = sum(sum(ok[i] for i in ix) / len(ix) for ok, ix in zip(b[s].ok, idx)) / len(idx)
            va = sum(sum(ok[i] for i in ix) / len(ix) for ok, ix in zip(a[s].ok, idx)) / len(idx)
            total += 100 * (vb - va)
        out.append(total / len(seeds))
    return np.percentile(out, [2.5, 97.5])


def test_matches_a_naive_reference():
    g = np.random.default_rng(5)
    draw = lambda p: "".join("1" if x else "0" for x in g.random(40) < p)  # noqa: E731
    a = [acc(draw(0.5), draw(0.6)) for _ in range(3)]
    b = [acc(draw(0.6), draw(0.7)) for _ in range(3)]
    d = paired_bootstrap(a, b, replicates=300, seed=3)
    lo, hi = naive(a, b, 300, 3)
    assert (d.lo, d.hi) == pytest.approx((lo, hi), abs=1e-9)
    assert d.mean == pytest.approx(np.mean([bb.value() - aa.value() for aa, bb in zip(a, b)]))


def test_one_system_interval_is_the_paired_one_against_a_system_wrong_everywhere():
    g = np.random.default_rng(7)
    draw = lambda p: "".join("1" if x else "0" for x in g.random(30) < p)  # noqa: E731
    b = [acc(draw(0.4), draw(0.7)) for _ in range(3)]
    zero = [acc("0" * 30, "0" * 30)] * 3
    d = bootstrap(b, replicates=250, seed=2)
    lo, hi = naive(zero, b, 250, 2)  # the same draws, with B - 0 = B
    assert (d.lo, d.hi) == pytest.approx((lo, hi), abs=1e-9)
    assert d.mean == pytest.approx(np.mean([m.value() for m in b])) and d.lo <= d.mean <= d.hi
    assert (bootstrap([acc("11", "11")] * 2, replicates=50).lo, bootstrap([acc("11", "0")], replicates=50).hi) == (
        100.0, 50.0)  # right everywhere: no spread; the second stratum can never score


def test_verdicts():
    assert verdict(Difference(2.0, 0.5, 3.5, 3, 1000)) == "holds"
    assert verdict(Difference(-2.0, -3.5, -0.5, 3, 1000)) == "reversed"
    assert verdict(Difference(0.4, -0.5, 1.5, 3, 1000)) == "inconclusive"
    assert verdict(Difference(-2.0, -3.5, -0.5, 3, 1000), expected_sign=-1) == "holds"


def test_item_metrics_reproduce_the_reported_scores():
    # Tatoeba: the item-level mean equals the language mean of both directions
    g = torch.Generator().manual_seed(0)
    xx, en = torch.randn(30, 8, generator=g), torch.randn(30, 8, generator=g)
    items = {}
    r = tatoeba.evaluate_language(xx + 0.1 * en, en, items)
    m = item_metric("tatoeba", {"items": {"deu": items}})
    assert m.value() == pytest.approx((r["xx2en"] + r["en2xx"]) / 2)
    # BUCC: F1 from per-source outcomes equals the evaluator's test F1
    src = {f"s{i}": f"x{i}" for i in range(12)}
    trg = {f"t{i}": f"y{i}" for i in range(12)}
    gold = {(f"s{i}", f"t{i}") for i in range(5)}
    vec = {**{f"x{i}": torch.eye(12)[i] for i in range(12)},
           **{f"y{i}": torch.eye(12)[i] + 0.3 * torch.eye(12)[(i + 1) % 12] for i in range(12)}}
    embed = lambda texts: torch.stack([vec[t] for t in texts])  # noqa: E731
    split = BuccSplit(src, trg, gold)
    res = bucc.evaluate_pair(split, split, embed, k=2, scoring="ratio")
    assert MeanF1([res["test_items"]]).value() == pytest.approx(res["test"]["f1"])
    # STS: wmean Spearman from the stored items
    subsets = [StsPairs("a", [f"p{i}" for i in range(9)], [f"q{i}" for i in range(9)],
                        [float(i % 5) for i in range(9)]),
               StsPairs("b", [f"r{i}" for i in range(6)], [f"s{i}" for i in range(6)], [float(i) for i in range(6)])]
    gen = torch.Generator().manual_seed(1)
    out = sts.evaluate(subsets, lambda s: torch.randn(len(s), 4, generator=gen))
    m = item_metric("sts-en", {"datasets": {"STS": out}})
    assert m.value() == pytest.approx(out["wmean"]["spearman"])


def test_qa_item_metric_reproduces_the_f1_and_resamples_aligned_items():
    from common.eval.qa import QAExample, score

    ex = [QAExample(str(i), "q", "c", [a], 0) for i, a in enumerate(["paris", "red car", "1889", "blue"])]
    per = {"en": score({"0": "paris", "1": "car", "2": "x", "3": "blue"}, ex),
           "de": score({"0": "x", "1": "red car", "2": "1889", "3": "x"}, ex)}
    m = item_metric("qa", {"per_language": per})
    assert m.value() == pytest.approx((per["en"]["f1"] + per["de"]["f1"]) / 2)
    assert m.strata == [4]  # parallel questions: one draw for every language
    # resampling items 0 and 0 (twice the first question): en 100, de 0
    assert m.value([np.array([0, 0])]) == pytest.approx(50.0)


def test_token_classification_and_pawsx_item_metrics_by_hand():
    """POS / NER (common.eval.token_classification) keep per-sentence (numerator, denominator): a language's metric is
    the ratio of the sums, recomputed on resampled sentences; PAWS-X's languages hold the same items, as XNLI's."""
    scores = {"items": {"de": [[2, 4], [0, 2]], "en": [[3, 3]]}}  # de: 2/6 correct words, en: 3/3
    m = item_metric("token-classification", scores)
    assert m.strata == [2, 1] and m.value() == pytest.approx((100 * 2 / 6 + 100) / 2)
    assert m.value([np.array([0, 0]), np.array([0])]) == pytest.approx((50 + 100) / 2)  # de's first sentence twice
    assert item_metric("token-classification", scores, ["en"]).value() == 100
    paws = item_metric("pawsx", {"items": {"de": "1100", "en": "1110"}})
    assert paws.strata == [4] and paws.value() == pytest.approx((50 + 75) / 2)

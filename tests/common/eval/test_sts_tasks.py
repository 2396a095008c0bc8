"""VMSST's STS protocols (common/eval/sts_tasks.py) on embeddings whose cosines are set by hand: Pearson averaged
within each year, Spearman of each year's concatenation, the mean over the years (VMSST Table 1 "Eng.", Table 9);
STS17's XL, XL (s.) and XL (d.) (Table 1 "XL", Table 10), each sentence embedded as its own language."""
import math

import numpy as np
import pytest
import torch
from scipy.stats import rankdata

from common.data.loaders import StsPairs
from common.eval import sts_tasks
from common.eval.task_types import EvalContext, evaluate
from common.eval.tasks import get_task


def unit(c: float) -> tuple[float, float]:
    """A unit vector whose cosine with (1, 0) is c."""
    return (c, math.sqrt(1 - c * c))


class Lookup:
    """(sentence, language) -> a fixed vector; a sentence looked up in another language than declared fails."""

    def __init__(self, vectors):
        self.vectors = vectors

    def encode(self, sentences, lang):
        return torch.tensor([self.vectors[(s, lang)] for s in sentences], dtype=torch.float32)


def subset(name, cosines, gold):
    """Pairs (q<i>, ref) whose cosine is cosines[i]; the vectors, for the lookup."""
    vecs = {(f"{name}{i}", "en"): unit(c) for i, c in enumerate(cosines)} | {("ref", "en"): (1.0, 0.0)}
    return StsPairs(name, [f"{name}{i}" for i in range(len(cosines))], ["ref"] * len(cosines), gold), vecs


def test_years_average_pearson_within_a_year_and_spearman_of_its_concatenation(monkeypatch, tmp_path):
    a, va = subset("a", [0.1, 0.2, 0.3], [1.0, 2.0, 3.0])  # Pearson 100
    b, vb = subset("b", [0.6, 0.5, 0.4], [1.0, 2.0, 3.0])  # Pearson -100
    c, vc = subset("c", [1.0, 0.8, 0.0], [3.0, 2.0, 1.0])  # Pearson 100 / sqrt(1.12), Spearman 100
    sick, vs = subset("s", [0.9, 0.1], [1.0, 2.0])  # not a year: left out of both protocols
    datasets = {"STS12": [a, b], "STS13": [c], "SICK-R": [sick]}
    monkeypatch.setattr(sts_tasks, "english_sts", lambda manifest: (datasets, []))
    ctx = EvalContext(model_dir=tmp_path, manifest={}, scale="mini", seed=1, _embedder=Lookup(va | vb | vc | vs))
    pearson = evaluate(get_task("sts-en@years-pearson"), ctx).scores
    assert set(pearson["years"]) == {"STS12", "STS13"}
    assert pearson["years"]["STS12"]["mean_pearson"] == pytest.approx(0.0, abs=1e-4)
    assert pearson["years"]["STS13"]["mean_pearson"] == pytest.approx(100 / math.sqrt(1.12), rel=1e-5)
    assert pearson["main_score"] == pytest.approx(100 / math.sqrt(1.12) / 2, rel=1e-5)
    # STS12's concatenation: ranks of (0.1, 0.2, 0.3, 0.6, 0.5, 0.4) against (1, 2, 3, 1, 2, 3)
    expected12 = 100 * np.corrcoef(rankdata([1, 2, 3, 6, 5, 4]), rankdata([1, 2, 3, 1, 2, 3]))[0, 1]
    concat = evaluate(get_task("sts-en@years-concat-spearman"), ctx).scores
    assert concat["years"]["STS12"]["concat_spearman"] == pytest.approx(expected12, rel=1e-5)
    assert concat["main_score"] == pytest.approx((expected12 + 100) / 2, rel=1e-5)


def test_sts17_encodes_each_side_in_its_language_and_splits_same_and_cross_language_sets(tmp_path):
    manifest, vectors = {"sts17": []}, {}
    cases = {"ar-ar": ([0.2, 0.4, 0.9], [1, 2, 3]), "es-en": ([0.9, 0.5, 0.1], [1, 2, 3])}  # Pearson > 0, < 0
    for name, (cosines, gold) in cases.items():
        l1, l2 = name.split("-")
        lines = []
        for i, cos in enumerate(cosines):
            vectors[(f"{name} {i}", l1)] = unit(cos)
            vectors[(f"{name} ref{i}", l2)] = (1.0, 0.0)
            lines.append(f"{name} {i}\t{name} ref{i}\n")
        (tmp_path / f"STS.input.{name}.txt").write_text("".join(lines))
        (tmp_path / f"STS.gs.{name}.txt").write_text("".join(f"{g}\n" for g in gold))
        manifest["sts17"].append({"name": name, "langs": [l1, l2], "input": str(tmp_path / f"STS.input.{name}.txt"),
                                  "gold": str(tmp_path / f"STS.gs.{name}.txt")})
    ctx = EvalContext(model_dir=tmp_path, manifest=manifest, scale="mini", seed=1, _embedder=Lookup(vectors))
    scores = evaluate(get_task("sts17@pearson"), ctx).scores
    same = 100 * np.corrcoef([0.2, 0.4, 0.9], [1, 2, 3])[0, 1]
    cross = 100 * np.corrcoef([0.9, 0.5, 0.1], [1, 2, 3])[0, 1]
    assert scores["datasets"]["ar-ar"]["pearson"] == pytest.approx(same, rel=1e-5)
    assert scores["XL_same"]["pearson"] == pytest.approx(same, rel=1e-5)
    assert scores["XL_different"]["pearson"] == pytest.approx(cross, rel=1e-5) and cross < 0
    assert scores["main_score"] == pytest.approx((same + cross) / 2, rel=1e-5)

"""The evaluation functions of the STS tasks beyond SentEval's aggregation (declared in
:mod:`common.eval.declarations`):

* ``sts-en@years-pearson`` -- Wieting et al. (2016), VMSST Table 1 "Eng." and Table 9 (top): for each STS year
  2012-2016 the mean of the Pearson r x 100 of its datasets, then the mean over the years.
* ``sts-en@years-concat-spearman`` -- Reimers & Gurevych (2019), VMSST Table 9 (bottom): for each year the
  Spearman rho x 100 of the concatenation of its datasets (the 2013 SMT set is not in the SentEval files, so
  it is excluded in both protocols), then the mean over the years.
* ``sts17@pearson`` -- SemEval-2017 Task 1 cross-lingual STS (Cer et al. 2017), VMSST Table 1 "XL" and Table 10:
  Pearson r x 100 of the cosine between the two sentences (each embedded as its own language) per dataset;
  main score = the mean over the datasets (XL); XL (s.) averages the same-language sets (ar-ar, es-es), XL (d.)
  the cross-language ones (ar-en, es-en, tr-en). Spearman is stored beside it. tr-en is scored only if its
  500-line input can be aligned with its 250 gold scores from a documented source; none is known, so the
  corpus manifest leaves it out and the tables say so.

Scores are cosine similarities of the embeddings, as for every STS task here.
"""
from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from common.data import loaders
from common.data.sts_benchmark import english_sts
from common.eval import sts
from common.eval.similarity import normalize
from common.eval.task_types import EvalContext, TaskResult, register_task_type
from common.eval.tasks import Task

YEARS = ("STS12", "STS13", "STS14", "STS15", "STS16")


def years_of(datasets: dict[str, list[loaders.StsPairs]]) -> dict[str, list[loaders.StsPairs]]:
    """The STS12-16 datasets of an English STS benchmark (the smoke scale's single synthetic set stands in)."""
    years = {name: subsets for name, subsets in datasets.items() if name in YEARS}
    return years or datasets


PairScorer = Callable[[loaders.StsPairs], NDArray[Any]]  # a dataset -> one score per sentence pair


def years_scores(datasets: dict[str, list[loaders.StsPairs]], score: PairScorer) -> dict[str, Any]:
    """Both protocols of the module docstring on the STS12-16 years of ``datasets``, each pair scored by ``score``
    (the task's cosine of embeddings; any scorer, e.g. :mod:`common.eval.lexical`'s token cosine): per year its
    datasets' correlations, their mean Pearson and the Spearman of their concatenation; ``average`` over the years;
    ``items`` the per-pair scores and gold scores."""
    per_year: dict[str, dict[str, Any]] = {}
    items: dict[str, dict[str, dict[str, list[float]]]] = {}
    for year, subsets in years_of(datasets).items():
        preds = {s.name: score(s) for s in subsets}
        golds = {s.name: np.asarray(s.scores, dtype=float) for s in subsets}
        per = {n: sts.correlations(preds[n], golds[n]) for n in preds}
        concat = sts.correlations(np.concatenate(list(preds.values())), np.concatenate(list(golds.values())))
        per_year[year] = {"datasets": per, "mean_pearson": statistics.fmean(c["pearson"] for c in per.values()),
                          "concat_spearman": concat["spearman"]}
        items[year] = {n: {"pred": sts.stored(preds[n]), "gold": golds[n].tolist()} for n in preds}
    average = {k: statistics.fmean(y[k] for y in per_year.values()) for k in ("mean_pearson", "concat_spearman")}
    return {"years": per_year, "items": items, "average": average}


@register_task_type("sts-en-years")
def run_sts_years(task: Task, ctx: EvalContext) -> TaskResult:
    datasets, files = english_sts(ctx.manifest)
    scores = years_scores(datasets, lambda s: sts.cosine_scores(s, lambda x: ctx.encode(x, "en")))
    key = {"pearson": "mean_pearson", "concat-spearman": "concat_spearman"}[task.params["protocol"]]
    scores["main_score"] = scores["average"][key]
    return TaskResult(scores, ["en"], files)


@register_task_type("sts17")
def run_sts17(task: Task, ctx: EvalContext) -> TaskResult:
    out, files = {}, []
    if not ctx.manifest.get("sts17"):
        raise ctx.manifest_error("sts17", "missing or empty: no STS 2017 set to score")
    for d in ctx.manifest["sts17"]:
        pairs = loaders.read_sts17(d["input"], d["gold"])
        a = normalize(ctx.encode(pairs.sent1, d["langs"][0]))
        b = normalize(ctx.encode(pairs.sent2, d["langs"][1]))
        pred = (a * b).sum(-1).numpy()
        out[d["name"]] = {**sts.correlations(pred, np.asarray(pairs.scores)), "n": len(pairs), "langs": d["langs"],
                          "items": {"pred": sts.stored(pred), "gold": list(pairs.scores)}}
        files += [d["input"], d["gold"]]
    same = [n for n, v in out.items() if v["langs"][0] == v["langs"][1]]
    diff = [n for n in out if n not in same]

    def avg(names: list[str], metric: str) -> float | None:
        return statistics.fmean(out[n][metric] for n in names) if names else None

    scores = {"datasets": out, "excluded": ctx.manifest.get("sts17_excluded", {}),
              **{f"XL{tag}": {m: avg(names, m) for m in ("pearson", "spearman")}
                 for tag, names in (("", list(out)), ("_same", same), ("_different", diff))}}
    scores["main_score"] = scores["XL"]["pearson"]
    return TaskResult(scores, sorted({lang for v in out.values() for lang in v["langs"]}), files)

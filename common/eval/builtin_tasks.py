"""The evaluation functions of the task types every paper shares (Tatoeba, BUCC, English STS, XNLI, PAWS-X); the
tasks themselves are declared in :mod:`common.eval.declarations`.

Each function reads the evaluation data named by the corpus manifest, embeds it with the
context's embedder and returns the scores with ``main_score`` as the task declares it; the
protocols themselves live in :mod:`common.eval.tatoeba`, :mod:`~common.eval.bucc`,
:mod:`~common.eval.sts` and :mod:`~common.eval.xnli`.
"""
from __future__ import annotations

import statistics
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from common.data import loaders
from common.data.sts_benchmark import english_sts
from common.eval import bucc, sts, tatoeba
from common.eval.task_types import EvalContext, TaskResult, register_task_type
from common.eval.tasks import Task
from common.io import DataFormatError
from common.languages import LATIN_SCRIPT


@register_task_type("tatoeba")
def run_tatoeba(task: Task, ctx: EvalContext) -> TaskResult:
    m = ctx.manifest
    per: dict[str, dict[str, float]] = {}
    items: dict[str, dict[str, str]] = {}
    files: list[Path] = []
    if not m["tatoeba_languages"]:  # an average over no language is no score
        raise ctx.manifest_error("tatoeba_languages", "empty: no language to score Tatoeba on")
    for lang in m["tatoeba_languages"]:
        xx, en = loaders.read_tatoeba(m["tatoeba_dir"], lang)
        items[lang] = {}
        per[lang] = tatoeba.evaluate_language(ctx.encode(xx, lang), ctx.encode(en, "en"), items[lang])
        files += list(loaders.tatoeba_paths(m["tatoeba_dir"], lang))
    trained = sorted(set(m["train_languages"]) & set(per))
    groups = tatoeba.group_averages(per, {**tatoeba.GROUPS, "trained": trained,
                                          "trained_latin": [lang for lang in trained if lang in LATIN_SCRIPT]})
    scores = {"per_language": per, "groups": groups, "trained_languages": trained, "items": items,
              "main_score": groups["all"]["both"]}
    return TaskResult(scores, list(per), files)


def bucc_splits(manifest: Mapping[str, Any]) -> tuple[str, str]:
    """(tuning split, reported split) of the manifest's BUCC data (default: training, test)."""
    s = manifest.get("bucc_splits", {"tune": "training", "test": "test"})
    return s["tune"], s["test"]


def read_bucc_with_gold(root: str | Path, pair: str, split: str) -> loaders.BuccSplit:
    """A BUCC split that has a gold file; a split without one (the official 2018 test split) is an error,
    never an empty gold set that would score F1 = 0."""
    gold = loaders.bucc_paths(root, pair, split)[2]
    if not gold.exists():
        raise DataFormatError(gold, None, f"no gold file for BUCC {pair} split '{split}' (the BUCC 2018 test gold "
                                          "is not public): tune and report on splits that have gold")
    return loaders.read_bucc(root, pair, split)


@register_task_type("bucc")
def run_bucc(task: Task, ctx: EvalContext) -> TaskResult:
    m, p = ctx.manifest, task.params_for(ctx.scale)
    tune_split, test_split = bucc_splits(m)
    if p.get("threshold") == "oracle":  # the threshold that is optimal on the reported split itself
        tune_split = test_split
    per, files = {}, []
    if not m["bucc_pairs"]:
        raise ctx.manifest_error("bucc_pairs", "empty: no language pair to mine")
    for pair in m["bucc_pairs"]:
        xx = pair.split("-")[0]
        test = read_bucc_with_gold(m["bucc_dir"], pair, test_split)
        tune = test if tune_split == test_split else read_bucc_with_gold(m["bucc_dir"], pair, tune_split)
        per[pair] = bucc.evaluate_pair(tune, test, partial(ctx.encode, lang=xx), k=p["k"],
                                       scoring=p["scoring"], embed_trg=lambda s: ctx.encode(s, "en"),
                                       retrieval=p.get("retrieval", "max"), knn_search=p.get("knn_search", "exact"))
        for split in dict.fromkeys((tune_split, test_split)):
            files += list(loaders.bucc_paths(m["bucc_dir"], pair, split))
    avg = {part: {k: statistics.fmean(per[q][part][k] for q in per) for k in ("precision", "recall", "f1")}
           for part in ("tune", "test")}
    scores = {"per_pair": per, **avg, "tune_split": tune_split, "test_split": test_split, "scoring": p["scoring"],
              "k": p["k"], "main_score": avg["test"]["f1"]}
    return TaskResult(scores, sorted(per), files, split=test_split)


@register_task_type("sts-en")
def run_sts_en(task: Task, ctx: EvalContext) -> TaskResult:
    agg = task.params["aggregation"]
    datasets, files = english_sts(ctx.manifest)
    per = {name: sts.evaluate(subsets, lambda s: ctx.encode(s, "en"), main=agg) for name, subsets in datasets.items()}
    avg = {a: statistics.fmean(per[n][a]["spearman"] for n in per) for a in sts.AGGREGATIONS}
    scores = {"datasets": per, "average_spearman": avg, "aggregation": agg, "main_score": avg[agg]}
    return TaskResult(scores, ["en"], files)


@register_task_type("xnli")
def run_xnli(task: Task, ctx: EvalContext) -> TaskResult:
    from common.eval import xnli

    p = task.params_for(ctx.scale)
    scores, langs, files = xnli.run(ctx.embedder.hf_model_dir(), ctx.manifest, p, ctx.seed, ctx.precision)
    return TaskResult(scores, langs, files)


@register_task_type("pawsx")
def run_pawsx(task: Task, ctx: EvalContext) -> TaskResult:
    """PAWS-X (Yang et al. 2019): the XNLI protocol with two labels, English train, every language's test set."""
    from common.eval import finetune, xnli
    from common.models.tokenizer import load_tokenizer

    p = task.params_for(ctx.scale)
    entry = finetune.dataset(ctx.manifest, "pair_classification", "pawsx")
    files = finetune.training_files(entry, p)
    parts = [loaders.read_pawsx_tsv(f) for f in files]
    train = loaders.NliExamples(*(sum((getattr(x, f) for x in parts), []) for f in ("premise", "hypothesis", "label")))
    tests = {lang: loaders.read_pawsx_tsv(path) for lang, path in sorted(entry["test"].items())}
    model_dir = ctx.embedder.hf_model_dir()
    scores = xnli.finetune_and_evaluate(str(model_dir), load_tokenizer(model_dir), train, tests,
                                        finetune.arguments(p, ctx.seed), finetune.device(), ctx.precision,
                                        num_labels=2)
    return TaskResult(scores, sorted(tests), [*map(Path, files), *map(Path, entry["test"].values())])

"""Evaluate one DAP model on one task and write an MTEB-style results JSON.

Tasks and protocols (see each evaluator's docstring):

* ``tatoeba`` — section 4.4, Tables 1, 7, 8: cosine NN accuracy, both directions;
* ``bucc`` — section 4.5, appendix B, Tables 2-3: ratio margin, k=4, best match with
  one-to-one filtering, threshold from the training split applied to the test split;
* ``xnli`` — section 4.6, appendix C, Table 4: English fine-tuning, zero-shot transfer.
"""
from __future__ import annotations

import argparse
import logging
import os
import time
from pathlib import Path

import torch

from common.config import load_paper_config
from common.data import loaders
from common.eval import bucc, tatoeba, xnli
from common.eval.results import write_result
from common.io import read_json
from common.models.encoder import load_embedder
from common.models.tokenizer import load_tokenizer

log = logging.getLogger("papers.dap.evaluate")
TASKS = ("tatoeba", "bucc", "xnli")


def run_tatoeba(model_dir, manifest, cfg) -> tuple[dict, list[str], list[Path]]:
    embed = load_embedder(model_dir, cfg["eval"]["batch_size"], cfg["eval"]["max_length"])
    per, files = {}, []
    for lang in manifest["tatoeba_languages"]:
        xx, en = loaders.read_tatoeba(manifest["tatoeba_dir"], lang)
        per[lang] = tatoeba.evaluate_language(embed(xx), embed(en))
        files += list(loaders.tatoeba_paths(manifest["tatoeba_dir"], lang))
    groups = tatoeba.group_averages(per)
    trained = set(manifest["train_languages"])
    scores = {"per_language": per, "groups": groups, "trained_languages": sorted(trained & set(per)),
              "main_score": groups["all"]["both"]}
    return scores, list(per), files


def run_bucc(model_dir, manifest, cfg) -> tuple[dict, list[str], list[Path]]:
    b = cfg["eval"]["bucc"]
    embed = load_embedder(model_dir, cfg["eval"]["batch_size"], cfg["eval"]["max_length"])
    per, files = {}, []
    for pair in manifest["bucc_pairs"]:
        tune = loaders.read_bucc(manifest["bucc_dir"], pair, b["tune_split"])
        test = loaders.read_bucc(manifest["bucc_dir"], pair, b["test_split"])
        per[pair] = bucc.evaluate_pair(tune, test, embed, k=b["k"], scoring=b["scoring"])
        for split in (b["tune_split"], b["test_split"]):
            files += [p for p in loaders.bucc_paths(manifest["bucc_dir"], pair, split) if p.exists()]
    avg = lambda part: sum(per[p][part]["f1"] for p in per) / len(per)
    scores = {"per_pair": per, "tune_avg_f1": avg("tune"), "test_avg_f1": avg("test"),
              "tune_split": b["tune_split"], "test_split": b["test_split"], "main_score": avg("test")}
    return scores, sorted(per), files


def run_xnli(model_dir, manifest, cfg, seed: int) -> tuple[dict, list[str], list[Path]]:
    x = cfg["eval"]["xnli"]
    root = Path(manifest["nli_dir"])
    langs = manifest["nli_languages"]
    data = {lang: loaders.read_xnli_tsv(root / f"dev-{lang}.tsv") for lang in langs}
    files = [root / f"dev-{lang}.tsv" for lang in langs]
    n = len(data["en"])
    if any(len(d) != n for d in data.values()):
        raise ValueError(f"{root}: XNLI dev files must have the same items in every language")
    if x.get("train_source", "dev_split") == "dev_split":
        train_idx, test_idx = xnli.split_items(n, x["train_fraction"], seed=1)
        train = xnli.subset(data["en"], train_idx)
        tests = {lang: xnli.subset(d, test_idx) for lang, d in data.items()}
        protocol = (f"trained on {len(train_idx)} English dev items, tested on the other {len(test_idx)} items "
                    "of every language (labelled XNLI test data is not available here)")
    else:
        train = loaders.read_xnli_tsv(manifest["xnli_train"])
        tests = {lang: loaders.read_xnli_tsv(root / f"test-{lang}.tsv") for lang in langs}
        files += [Path(manifest["xnli_train"])]
        protocol = "trained on English MultiNLI, tested on XNLI test (Table 9 settings)"
    args = xnli.XnliArguments(batch_size=x["batch_size"], learning_rate=x["learning_rate"], epochs=x["epochs"],
                              max_length=x["max_length"], weight_decay=x.get("weight_decay", 0.0), seed=seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    scores = xnli.finetune_and_evaluate(model_dir, load_tokenizer(model_dir), train, tests, args, device)
    scores["protocol"] = protocol
    return scores, langs, files


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", choices=TASKS, required=True)
    p.add_argument("--scale", required=True)
    p.add_argument("--model-dir", required=True)
    p.add_argument("--corpus", required=True)
    p.add_argument("--variant", required=True)
    p.add_argument("--init", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    cfg = load_paper_config("dap", a.scale)
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", cfg["training"].get("threads", 1))))
    torch.manual_seed(a.seed)
    manifest = read_json(a.corpus)
    t0 = time.time()
    if a.task == "xnli":
        scores, langs, files = run_xnli(a.model_dir, manifest, cfg, a.seed)
    else:
        scores, langs, files = {"tatoeba": run_tatoeba, "bucc": run_bucc}[a.task](a.model_dir, manifest, cfg)
    split = {"tatoeba": "test", "bucc": cfg["eval"]["bucc"]["test_split"], "xnli": "test"}[a.task]
    write_result(a.out, task=a.task, split=split, languages=langs, scores=scores,
                 model={"paper": "dap", "variant": a.variant, "init": a.init, "path": a.model_dir},
                 scale=a.scale, seed=a.seed, config=cfg, data_files=files, evaluation_time=time.time() - t0)
    log.info("%s main_score=%.2f", a.task, scores["main_score"])


if __name__ == "__main__":
    main()

"""Evaluate one MoCo-BERT run on one task and write an MTEB-style results JSON.

Tasks and protocols (section 3, appendix C):

* ``tatoeba`` -- Table 1: cosine nearest neighbour over the 1000 Tatoeba pairs of the
  trained language (cmn-eng at mini/paper scale), both directions;
* ``bucc`` -- Table 2, eq. 4: distance margin (a - b) over k = 3 neighbours, best match
  with one-to-one filtering, threshold searched on the tuning ("validation") split and
  applied to the test split; each language embedded by its own encoder;
* ``sts`` -- Tables 3 and 8: Spearman correlation of the English encoder's cosine with the
  gold scores on the 7 English STS datasets, both SentEval "wmean" (Table 3) and SimCSE
  "all" (Table 8) per dataset, averaged over datasets;
* ``tsne`` -- Figure 3: t-SNE of 15 random Tatoeba parallel pairs (both languages);
* ``neighbors`` -- Table 10: the 3 nearest English training sentences (cosine, exact match
  excluded) of a few queries.
"""
from __future__ import annotations

import argparse
import logging
import os
import random
import time
from pathlib import Path

import numpy as np
import torch

from common.config import load_paper_config
from common.data import loaders
from common.data.leakage import normalize as normalize_text
from common.data.sts_benchmark import english_sts
from common.eval import bucc, sts, tatoeba
from common.eval.results import write_result
from common.eval.similarity import knn, normalize
from common.io import read_json
from common.models.encoder import load_embedder

log = logging.getLogger("papers.moco.evaluate")
TASKS = ("tatoeba", "bucc", "sts", "tsne", "neighbors")


def embedder(model_dir: Path, cfg: dict):
    """``embed(list[str]) -> (N, D)`` with one saved encoder (``model/xx`` or ``model/en``)."""
    return load_embedder(model_dir, cfg["eval"]["batch_size"], cfg["eval"]["max_length"])


def run_tatoeba(model: Path, manifest: dict, cfg: dict) -> tuple[dict, list[str], list[Path]]:
    ex, en = embedder(model / "xx", cfg), embedder(model / "en", cfg)
    per, files = {}, []
    for lang in manifest["train_languages"]:
        xx_s, en_s = loaders.read_tatoeba(manifest["tatoeba_dir"], lang)
        per[lang] = tatoeba.evaluate_language(ex(xx_s), en(en_s))
        files += list(loaders.tatoeba_paths(manifest["tatoeba_dir"], lang))
    first = per[manifest["train_languages"][0]]
    return {"per_language": per, "main_score": first["xx2en"]}, list(per), files


def run_bucc(model: Path, manifest: dict, cfg: dict) -> tuple[dict, list[str], list[Path]]:
    b = cfg["eval"]["bucc"]
    ex, en = embedder(model / "xx", cfg), embedder(model / "en", cfg)
    per, files = {}, []
    for pair in manifest["bucc_pairs"]:
        tune = loaders.read_bucc(manifest["bucc_dir"], pair, b["tune_split"])
        test = loaders.read_bucc(manifest["bucc_dir"], pair, b["test_split"])
        per[pair] = bucc.evaluate_pair(tune, test, ex, k=b["k"], scoring=b["scoring"], embed_trg=en)
        for split in (b["tune_split"], b["test_split"]):
            files += [p for p in loaders.bucc_paths(manifest["bucc_dir"], pair, split) if p.exists()]
    avg = lambda part, m: sum(per[p][part][m] for p in per) / len(per)
    scores = {"per_pair": per, "test": {m: avg("test", m) for m in ("precision", "recall", "f1")},
              "tune_f1": avg("tune", "f1"), "tune_split": b["tune_split"], "test_split": b["test_split"],
              "main_score": avg("test", "f1")}
    return scores, sorted(per), files


def run_sts(model: Path, manifest: dict, cfg: dict) -> tuple[dict, list[str], list[Path]]:
    en = embedder(model / "en", cfg)
    datasets, files = english_sts(manifest)
    per = {name: sts.evaluate(subsets, en) for name, subsets in datasets.items()}
    avg = {agg: float(np.mean([per[n][agg]["spearman"] for n in per])) for agg in ("wmean", "all")}
    return {"datasets": per, "average_spearman": avg, "main_score": avg["wmean"]}, ["en"], files


def tatoeba_sample(manifest: dict, n: int, seed: int) -> tuple[list[str], list[str], list[int]]:
    lang = manifest["train_languages"][0]
    xx, en = loaders.read_tatoeba(manifest["tatoeba_dir"], lang)
    idx = sorted(random.Random(seed).sample(range(len(xx)), n))
    return [xx[i] for i in idx], [en[i] for i in idx], idx


def run_tsne(model: Path, manifest: dict, cfg: dict) -> tuple[dict, list[str], list[Path]]:
    """2-D t-SNE of n pairs; ``main_score`` = % of the 2n points whose nearest map neighbour is
    their own translation (how visibly the pairs are linked)."""
    from sklearn.manifold import TSNE

    t = cfg["eval"]["tsne"]
    xx, en, idx = tatoeba_sample(manifest, t["pairs"], t["seed"])
    emb = torch.cat([normalize(embedder(model / "xx", cfg)(xx)), normalize(embedder(model / "en", cfg)(en))]).numpy()
    xy = TSNE(n_components=2, perplexity=t["perplexity"], init="pca", random_state=t["seed"]).fit_transform(emb)
    n = len(xx)
    d = ((xy[:, None] - xy[None]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    partner = np.r_[np.arange(n, 2 * n), np.arange(n)]
    linked = float((d.argmin(1) == partner).mean() * 100)
    lang = manifest["train_languages"][0]
    return ({"points": [{"lang": lang if i < n else "en", "pair": i % n, "tatoeba_line": idx[i % n] + 1,
                         "text": (xx + en)[i], "x": float(xy[i, 0]), "y": float(xy[i, 1])} for i in range(2 * n)],
             "pairs_nearest_in_map_pct": linked, "main_score": linked},
            [lang, "en"], list(loaders.tatoeba_paths(manifest["tatoeba_dir"], lang)))


def run_neighbors(model: Path, manifest: dict, cfg: dict) -> tuple[dict, list[str], list[Path]]:
    """Table 10: queries against (up to ``corpus_size`` random) English training sentences."""
    nb = cfg["eval"]["neighbors"]
    (path,) = manifest["train"].values()
    corpus = list(dict.fromkeys(en for _, en in loaders.read_tsv_pairs(path)))
    if len(corpus) > nb["corpus_size"]:
        corpus = random.Random(1).sample(corpus, nb["corpus_size"])
    queries = nb.get("queries") or tatoeba_sample(manifest, nb["n_queries"], 1)[1]
    en = embedder(model / "en", cfg)
    c_emb, q_emb = normalize(en(corpus)), normalize(en(queries))
    scores, idx = knn(q_emb, c_emb, k=nb["k"] + 5)
    out = []
    for qi, q in enumerate(queries):
        hits = [(float(s), corpus[j]) for s, j in zip(scores[qi].tolist(), idx[qi].tolist())
                if normalize_text(corpus[j]) != normalize_text(q)][: nb["k"]]
        out.append({"query": q, "neighbors": [{"cosine": s, "sentence": t} for s, t in hits]})
    top1 = float(np.mean([o["neighbors"][0]["cosine"] for o in out]))
    return {"queries": out, "corpus_size": len(corpus), "mean_top1_cosine": top1, "main_score": top1}, ["en"], [Path(path)]


RUNNERS = {"tatoeba": run_tatoeba, "bucc": run_bucc, "sts": run_sts, "tsne": run_tsne, "neighbors": run_neighbors}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", choices=TASKS, required=True)
    p.add_argument("--scale", required=True)
    p.add_argument("--model-dir", required=True, help="a run's model/ folder (holds xx/ and en/)")
    p.add_argument("--corpus", required=True)
    p.add_argument("--run", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    cfg = load_paper_config("moco", a.scale)
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", cfg["training"].get("threads", 1))))
    torch.manual_seed(a.seed)
    manifest = read_json(a.corpus)
    t0 = time.time()
    scores, langs, files = RUNNERS[a.task](Path(a.model_dir), manifest, cfg)
    split = cfg["eval"]["bucc"]["test_split"] if a.task == "bucc" else "test"
    write_result(a.out, task=a.task, split=split, languages=langs, scores=scores,
                 model={"paper": "moco", "run": a.run, "path": a.model_dir}, scale=a.scale, seed=a.seed, config=cfg,
                 data_files=files, evaluation_time=time.time() - t0)
    log.info("%s main_score=%.2f", a.task, scores["main_score"])


if __name__ == "__main__":
    main()

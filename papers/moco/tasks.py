"""MoCo-BERT's own evaluation tasks (registered with :mod:`common.eval.tasks`):

* ``moco-tsne`` -- Figure 3: 2-D t-SNE of ``pairs`` random Tatoeba parallel pairs of the first
  training language (both sides); main score = % of the 2n points whose nearest neighbour in the
  map is their own translation (how visibly the pairs are linked; the paper shows the plot only).
* ``moco-neighbors`` -- Table 10: the ``k`` nearest English training sentences (cosine, exact match
  excluded) of the paper's four queries (at smoke scale, of English Tatoeba sentences, since the
  synthetic English cannot express the paper's queries); main score = mean top-1 cosine.
"""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import torch

from common.data import loaders
from common.data.leakage import normalize as normalize_text
from common.eval.similarity import knn, normalize
from common.eval.tasks import EvalContext, Task, TaskResult, register_task, register_task_type

PAPER_QUERIES = ("I am willing to devote my life to education career.",
                 "The Committee resumed consideration of the item.",
                 "There are a great many books on the bookshelf.",
                 "Everyone has the privilege to be tried by a jury.")


def tatoeba_sample(manifest: dict, n: int, seed: int) -> tuple[str, list[str], list[str], list[int]]:
    lang = manifest["train_languages"][0]
    xx, en = loaders.read_tatoeba(manifest["tatoeba_dir"], lang)
    idx = sorted(random.Random(seed).sample(range(len(xx)), n))
    return lang, [xx[i] for i in idx], [en[i] for i in idx], idx


@register_task_type("moco-tsne")
def run_tsne(task: Task, ctx: EvalContext) -> TaskResult:
    from sklearn.manifold import TSNE

    t = task.params_for(ctx.scale)
    lang, xx, en, idx = tatoeba_sample(ctx.manifest, t["pairs"], t["seed"])
    emb = torch.cat([normalize(ctx.encode(xx, lang)), normalize(ctx.encode(en, "en"))]).numpy()
    xy = TSNE(n_components=2, perplexity=t["perplexity"], init="pca", random_state=t["seed"]).fit_transform(emb)
    n = len(xx)
    d = ((xy[:, None] - xy[None]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    partner = np.r_[np.arange(n, 2 * n), np.arange(n)]
    linked = float((d.argmin(1) == partner).mean() * 100)
    points = [{"lang": lang if i < n else "en", "pair": i % n, "tatoeba_line": idx[i % n] + 1, "text": (xx + en)[i],
               "x": float(xy[i, 0]), "y": float(xy[i, 1])} for i in range(2 * n)]
    return TaskResult({"points": points, "pairs_nearest_in_map_pct": linked, "main_score": linked}, [lang, "en"],
                      list(loaders.tatoeba_paths(ctx.manifest["tatoeba_dir"], lang)))


@register_task_type("moco-neighbors")
def run_neighbors(task: Task, ctx: EvalContext) -> TaskResult:
    nb = task.params_for(ctx.scale)
    paths = [Path(p) for _, p in sorted(ctx.manifest["train"].items())]
    corpus = list(dict.fromkeys(en for path in paths for _, en in loaders.read_tsv_pairs(path)))
    if len(corpus) > nb["corpus_size"]:
        corpus = random.Random(1).sample(corpus, nb["corpus_size"])
    queries = list(nb["queries"]) if nb.get("queries") else tatoeba_sample(ctx.manifest, nb["n_queries"], 1)[2]
    c_emb, q_emb = normalize(ctx.encode(corpus, "en")), normalize(ctx.encode(queries, "en"))
    scores, idx = knn(q_emb, c_emb, k=nb["k"] + 5)
    out: list[dict[str, Any]] = []
    for qi, q in enumerate(queries):
        hits = [(float(s), corpus[j]) for s, j in zip(scores[qi].tolist(), idx[qi].tolist())
                if normalize_text(corpus[j]) != normalize_text(q)][: nb["k"]]
        out.append({"query": q, "neighbors": [{"cosine": s, "sentence": t} for s, t in hits]})
    top1 = float(np.mean([o["neighbors"][0]["cosine"] for o in out]))
    return TaskResult({"queries": out, "corpus_size": len(corpus), "mean_top1_cosine": top1, "main_score": top1},
                      ["en"], paths)


register_task(Task("moco-tsne", "moco-tsne", "t-SNE of random Tatoeba parallel pairs", "MoCo-BERT Figure 3",
                   "% of points whose nearest map neighbour is their translation",
                   params={"pairs": 15, "seed": 1, "perplexity": 5}))
register_task(Task("moco-neighbors", "moco-neighbors", "nearest English training sentences of fixed queries",
                   "MoCo-BERT Table 10", "mean top-1 cosine", split="train",
                   params={"k": 3, "corpus_size": 1_000_000, "queries": PAPER_QUERIES},
                   # the synthetic English cannot express the paper's queries: English Tatoeba sentences stand in
                   scale_params={"smoke": {"queries": (), "n_queries": 4}}))

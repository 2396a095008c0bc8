"""The evaluation functions of MoCo-BERT's own task types (:mod:`common.eval.task_types`; the tasks are declared in
:mod:`papers.moco.tasks`): ``moco-tsne`` (Figure 3) and ``moco-neighbors`` (Table 10)."""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import torch

from common.data import loaders
from common.data.leakage import normalize as normalize_text
from common.eval.similarity import knn, normalize
from common.eval.task_types import EvalContext, TaskResult, register_task_type
from common.eval.tasks import Task


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

"""The evaluation function of HICTL's own task type ``hictl-tsne`` (appendix D, Figure 4; :mod:`common.eval.task_types`;
the task is declared in :mod:`papers.hictl.tasks`, which says what it measures)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from common.data import loaders
from common.eval.similarity import normalize
from common.eval.task_types import EvalContext, TaskResult, register_task_type
from common.eval.tasks import Task


def multi_parallel(manifest: dict, languages: list[str], n: int) -> tuple[list[str], dict[str, list[str]], list]:
    """The first five of ``languages`` the manifest's NLI files have (filled up with its other NLI languages), and
    the first ``n`` distinct hypotheses of the first language with their translations (the same items)."""
    have = manifest["nli_languages"]
    langs = ([x for x in languages if x in have] + [x for x in have if x not in languages])[:5]
    root = Path(manifest["nli_dir"])
    split = "test" if (root / f"test-{langs[0]}.tsv").exists() else "dev"
    files = [root / f"{split}-{x}.tsv" for x in langs]
    data = {x: loaders.read_xnli_tsv(f).hypothesis for x, f in zip(langs, files)}
    for x, f in zip(langs, files):  # row i of every language is the same item
        if len(data[x]) != len(data[langs[0]]):
            raise loaders.DataFormatError(f, None, f"{len(data[x])} rows, {files[0].name} has {len(data[langs[0]])}")
    first: dict[str, int] = {}
    for i, text in enumerate(data[langs[0]]):
        first.setdefault(text, i)
    items = sorted(first.values())[:n]
    if len(items) < n:
        raise ValueError(f"{files[0]}: only {len(items)} distinct sentences for {n}")
    return langs, {x: [data[x][i] for i in items] for x in langs}, files


def nearest_share(emb: np.ndarray, labels: np.ndarray) -> float:
    """% of points whose nearest other point (by the given similarity rows) carries the same label."""
    sims = emb @ emb.T
    np.fill_diagonal(sims, -np.inf)
    return float((labels[sims.argmax(1)] == labels).mean() * 100)


@register_task_type("hictl-tsne")
def run_tsne(task: Task, ctx: EvalContext) -> TaskResult:
    from sklearn.manifold import TSNE

    p = task.params_for(ctx.scale)
    n = p["sets"] * p["per_set"]
    langs, texts, files = multi_parallel(ctx.manifest, list(p["languages"]), n)
    emb = torch.cat([normalize(ctx.encode(texts[x], x)) for x in langs]).numpy()  # (5n, D), language-major
    sentence = np.tile(np.arange(n), len(langs))
    group = sentence // p["per_set"]
    xy = TSNE(n_components=2, perplexity=p["perplexity"], init="pca", random_state=p["seed"]).fit_transform(emb)
    d2 = ((xy[:, None] - xy[None]) ** 2).sum(-1)  # squared distances in the map
    np.fill_diagonal(d2, np.inf)
    map_nn = d2.argmin(1)
    scores = {
        "languages": langs, "sets": p["sets"], "per_set": p["per_set"],
        "nearest_in_own_set_pct": nearest_share(emb, group),
        "nearest_is_translation_pct": nearest_share(emb, sentence),
        "map_nearest_in_own_set_pct": float((group[map_nn] == group).mean() * 100),
        "map_nearest_is_translation_pct": float((sentence[map_nn] == sentence).mean() * 100),
        "points": [{"set": int(group[i]), "sentence": int(sentence[i]), "lang": langs[i // n],
                    "x": float(xy[i, 0]), "y": float(xy[i, 1])} for i in range(len(xy))],
    }
    scores["main_score"] = scores["nearest_in_own_set_pct"]
    return TaskResult(scores, langs, files)

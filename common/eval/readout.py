"""The readout check: what a sentence encoder's modules after pooling (a linear head such as VMSST's mean projection,
a Dense module) do to the vectors the evaluations score.

A fresh or badly trained head can let one shared direction dominate every vector: cosine retrieval then fails
although the pooled states still hold the information. The check tells that apart from lost information. For each
Tatoeba language of a corpus manifest (one evaluation set), both sides are read out three ways:

* ``saved``: the folder's modules, the vectors every evaluation scores (its head applied to the ``pooled`` vectors,
  so that one encoder pass gives both);
* ``pooled``: the pooled backbone without the modules after pooling (no head);
* ``centred``: the saved vectors minus their mean over the set (both sides together), which removes a shared
  direction and nothing else a retrieval needs.

Each readout gets Tatoeba's accuracy (both directions, mean over the languages, as ``tatoeba@cosine`` scores it) and
the mean cosine of random non-parallel pairs (an xx sentence and an English sentence that does not translate it;
near 1 when a shared direction dominates). The head gets the ratio of its top to its median singular value (large:
a few directions carry the output). Run it on a model at step 0 and after training::

    python -m common.eval.readout results/mini/leaderboard/models/minilm/vmsst/seed1/model \\
        --corpus results/mini/leaderboard/corpus/manifest.json --out readout.json
"""
from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.nn.functional import normalize

from common.data import loaders
from common.data.manifest import load_manifest
from common.eval import tatoeba
from common.io import write_json
from common.models.embedder import Embedder, SentenceEncoderEmbedder, load_embedder
from common.models.st_encoder import ModuleEncoder

log = logging.getLogger(__name__)

READOUTS = ("saved", "pooled", "centred")


def mean_cosine_non_parallel(x: torch.Tensor, y: torch.Tensor, pairs: int, seed: int = 0) -> float:
    """Mean cosine of ``pairs`` random pairs (x_i, y_j), i != j, of two aligned sets (row i of ``y`` translates row
    i of ``x``): each i uniform, j uniform among the others. Every such pair, once each, where there are no more
    than ``pairs`` of them."""
    n = x.shape[0]
    if n < 2 or y.shape[0] != n:
        raise ValueError(f"aligned sets of at least 2 rows needed, got {x.shape[0]} and {y.shape[0]}")
    if n * (n - 1) <= pairs:
        i, j = (idx.flatten() for idx in torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij"))
        keep = i != j
        i, j = i[keep], j[keep]
    else:
        g = torch.Generator().manual_seed(seed)
        i = torch.randint(0, n, (pairs,), generator=g)
        j = (i + torch.randint(1, n, (pairs,), generator=g)) % n  # an offset of 1..n-1: never i itself
    return float((normalize(x[i].double(), dim=-1) * normalize(y[j].double(), dim=-1)).sum(-1).mean())


def centred(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Both sides of one evaluation set minus the mean of all their vectors."""
    mean = torch.cat([x, y]).mean(0, keepdim=True)  # (1, D)
    return x - mean, y - mean


def singular_ratio(weight: torch.Tensor) -> float:
    """The top singular value of a (out, in) weight over its median (the middle two's mean for an even count)."""
    s = torch.linalg.svdvals(weight.double())  # descending
    n = s.numel()
    median = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
    return float(s[0] / median)


def module_encoder(embedder: Embedder) -> ModuleEncoder:
    """The encoder of a sentence-encoder folder: pooling, then the modules after it (``post``, empty where none)."""
    if not isinstance(embedder, SentenceEncoderEmbedder):
        raise ValueError(f"{embedder.path}: the readout check reads a sentence-encoder folder, not a "
                         f"'{embedder.kind}' one")
    encoder: ModuleEncoder = embedder.encoder
    return encoder


def head_weights(post: nn.Sequential) -> list[torch.Tensor]:
    """The weights of the linear maps among the modules after pooling (a Dense module is (Linear, activation))."""
    return [m.weight.detach() for m in post.modules() if isinstance(m, nn.Linear)]


def encode_both(embedder: Embedder, xx: list[str], en: list[str], lang: str) -> tuple[torch.Tensor, torch.Tensor]:
    return embedder.encode(xx, lang).float(), embedder.encode(en, "en").float()


def readout_check(embedder: Embedder, manifest: dict[str, Any], pairs: int = 1000, seed: int = 0) -> dict[str, Any]:
    """The check on every Tatoeba language of ``manifest``: per readout and language, accuracy both ways and the
    mean cosine of non-parallel pairs; their means over the languages; the head's singular value ratio."""
    encoder = module_encoder(embedder)
    post = encoder.post
    weights = head_weights(post)
    per: dict[str, dict[str, dict[str, float]]] = {r: {} for r in READOUTS}
    for lang in manifest["tatoeba_languages"]:
        xx, en = loaders.read_tatoeba(manifest["tatoeba_dir"], lang)
        encoder.post = nn.Sequential()  # the pooled vectors, no head
        try:
            pooled = encode_both(embedder, xx, en, lang)
        finally:
            encoder.post = post
        with torch.no_grad():  # the head on the pooled vectors: what the folder computes, one encoder pass for both
            device = next(post.parameters(), torch.empty(0)).device
            saved = post(pooled[0].to(device)).cpu(), post(pooled[1].to(device)).cpu()
        vectors = {"saved": saved, "pooled": pooled, "centred": centred(*saved)}
        for name, (x, y) in vectors.items():
            acc = tatoeba.evaluate_language(x, y)
            per[name][lang] = {"both": (acc["xx2en"] + acc["en2xx"]) / 2,
                               "mean_cosine": mean_cosine_non_parallel(x, y, pairs, seed)}
    summary = {name: {key: sum(v[key] for v in langs.values()) / len(langs) for key in ("both", "mean_cosine")}
               for name, langs in per.items()}
    return {"model": str(embedder.path), "languages": list(manifest["tatoeba_languages"]), "pairs": pairs,
            "seed": seed, "head": [f"{w.shape[1]}->{w.shape[0]}" for w in weights],
            "head_singular_ratio": [singular_ratio(w) for w in weights], "summary": summary, "per_language": per}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m common.eval.readout", description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="+", type=Path, help="sentence-encoder folders (e.g. a run at step 0 and trained)")
    p.add_argument("--corpus", required=True, type=Path, help="a corpus manifest.json (its Tatoeba languages)")
    p.add_argument("--pairs", type=int, default=1000, help="random non-parallel pairs per evaluation set")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    p.add_argument("--out", type=Path, help="the results as JSON (one entry per model)")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    manifest = load_manifest(a.corpus)
    results = []
    for model in a.models:
        result = readout_check(load_embedder(model, a.batch_size, precision=a.precision), manifest, a.pairs, a.seed)
        results.append(result)
        log.info("%s: head %s, singular ratio %s; %s", model, result["head"], result["head_singular_ratio"],
                 json.dumps(result["summary"]))
    if a.out:
        write_json(a.out, results)


if __name__ == "__main__":
    main()

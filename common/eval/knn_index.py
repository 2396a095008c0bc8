"""k-nearest-neighbour backends for bitext mining: both directions of an inner-product top-k search.

Every backend returns what :func:`common.eval.similarity.knn_both` returns -- (forward scores (Nx, k),
forward indices, backward scores (Ny, k), backward indices) for L2-normalised rows -- so
:func:`common.eval.bucc.mine` runs unchanged on top of any of them:

* ``exact`` (the default, and what every evaluation uses): our blocked torch search, one pass over
  ``x @ y.T`` for both directions;
* ``faiss-flat``: faiss ``IndexFlatIP``, one index per side (exact too; the same candidates up to ties);
* ``faiss-hnsw``: faiss ``IndexHNSWFlat`` (Malkov & Yashunin 2018), approximate, for corpora too large
  for exact search (LASER mines billions of sentences with faiss; Artetxe & Schwenk 2019a). Build cost
  grows as N log N instead of the exact search's N^2;
* ``faiss-ivf``: faiss ``IndexIVFFlat``, approximate: ``nlist`` k-means cells (default 4 sqrt(N)),
  ``nprobe`` of them searched.

faiss is imported only by the faiss backends and uses torch's thread count.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import torch

from common.eval.similarity import knn_both

KnnBoth = Callable[..., tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]]


def _faiss() -> ModuleType:
    import faiss

    faiss.omp_set_num_threads(torch.get_num_threads())
    return faiss


def _search(index: Any, queries: np.ndarray, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    scores, idx = index.search(queries, k)  # (Q, k) float32, (Q, k) int64
    return torch.from_numpy(scores), torch.from_numpy(idx)


def _both(build: Callable[[np.ndarray], Any], x: torch.Tensor, y: torch.Tensor,
          k: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    xs = np.ascontiguousarray(x.float().numpy())
    ys = np.ascontiguousarray(y.float().numpy())
    fwd_s, fwd_i = _search(build(ys), xs, min(k, len(ys)))
    bwd_s, bwd_i = _search(build(xs), ys, min(k, len(xs)))
    return fwd_s, fwd_i, bwd_s, bwd_i


def faiss_flat(x: torch.Tensor, y: torch.Tensor, k: int) -> tuple[torch.Tensor, ...]:
    faiss = _faiss()

    def build(base: np.ndarray) -> Any:
        index = faiss.IndexFlatIP(base.shape[1])
        index.add(base)
        return index

    return _both(build, x, y, k)


def faiss_hnsw(x: torch.Tensor, y: torch.Tensor, k: int, m: int = 32, ef_construction: int = 40,
               ef_search: int = 128) -> tuple[torch.Tensor, ...]:
    """HNSW graph with ``m`` links per node; ``ef_search`` candidates kept per query (recall vs time)."""
    faiss = _faiss()

    def build(base: np.ndarray) -> Any:
        index = faiss.IndexHNSWFlat(base.shape[1], m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = ef_construction
        index.add(base)
        index.hnsw.efSearch = max(ef_search, k)
        return index

    return _both(build, x, y, k)


def faiss_ivf(x: torch.Tensor, y: torch.Tensor, k: int, nlist: int | None = None,
              nprobe: int = 16) -> tuple[torch.Tensor, ...]:
    """Inverted file over ``nlist`` k-means cells (trained on the indexed side), ``nprobe`` searched."""
    faiss = _faiss()

    def build(base: np.ndarray) -> Any:
        cells = nlist or max(1, min(len(base) // 39, int(4 * math.sqrt(len(base)))))  # faiss wants >= 39 per cell
        quantizer = faiss.IndexFlatIP(base.shape[1])
        index = faiss.IndexIVFFlat(quantizer, base.shape[1], cells, faiss.METRIC_INNER_PRODUCT)
        index.train(base)
        index.add(base)
        index.nprobe = min(nprobe, cells)
        return index

    return _both(build, x, y, k)


KNN_BACKENDS: dict[str, KnnBoth] = {"exact": knn_both, "faiss-flat": faiss_flat, "faiss-hnsw": faiss_hnsw,
                                    "faiss-ivf": faiss_ivf}
APPROXIMATE = ("faiss-hnsw", "faiss-ivf")


def knn_backend(name: str) -> KnnBoth:
    if name not in KNN_BACKENDS:
        raise ValueError(f"unknown k-NN backend {name!r}; expected one of {sorted(KNN_BACKENDS)}")
    return KNN_BACKENDS[name]

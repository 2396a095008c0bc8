"""BUCC 2017/2018 bitext mining (Zweigenbaum et al. 2017; Artetxe & Schwenk 2019a).

Protocol, as LASER's ``mine.py``/``bucc.py`` and DAP (Li et al. 2023, section 4.5,
appendix B, Tables 2-3) do it:

1. *De-duplication.* Sentence texts are de-duplicated per language before mining;
   a text that occurs under several IDs in one language is mined once and, since it
   cannot be mapped back to a single ID, produces no predicted pair (LASER/XTREME).
2. *Scoring.* Cosine, or a margin over the k nearest neighbours in both directions
   (appendix B, eq. 8): with a = cos(x, y) and
   b = sum_{z in N_k(x)} cos(x, z) / 2k + sum_{z in N_k(y)} cos(z, y) / 2k,
   ``ratio`` = a / b and ``distance`` = a - b. DAP uses ratio with k = 4; MoCo-BERT
   distance with k = 3.
3. *Best-match retrieval with one-to-one filtering* (LASER ``--retrieval max``): each
   source keeps its best-scoring target among its k neighbours and each target its best
   source; all these candidates are sorted by score and accepted greedily unless their
   source or target was already used.
4. *Threshold.* On the split used for tuning, candidates are sorted by score and the F1
   against gold is computed for every prefix; the threshold is the midpoint between the
   score of the best-F1 candidate and the next one. It is then applied unchanged to the
   other split (DAP: picked on training, reported on test; XTREME: picked on sample).

Exact blocked k-NN search (``common.eval.similarity.knn_both``: both directions from one
pass over the score matrix) keeps 200k x 200k mining within memory on a CPU. ``knn_search=`` picks
another backend of :mod:`common.eval.knn_index` (faiss flat, or an approximate faiss index for
corpora too large for exact search); every evaluation uses the exact default.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import torch

from common.data.loaders import BuccSplit
from common.eval.knn_index import knn_backend
from common.eval.similarity import Embed, knn, normalize

SCORINGS = ("cosine", "ratio", "distance")
RETRIEVALS = ("max", "forward")


@dataclass(frozen=True)
class Candidate:
    src: str
    trg: str
    score: float


def mine(src_emb: torch.Tensor, trg_emb: torch.Tensor, k: int = 4, scoring: str = "ratio",
         retrieval: str = "max", knn_search: str = "exact") -> list[tuple[int, int, float]]:
    """Candidates as (src row, trg row, score), best first. ``retrieval="max"`` (LASER): best match in both
    directions with one-to-one filtering; ``"forward"`` (VMSST's BUCC (cosine)): each source sentence's
    best-scoring target, nothing else. ``knn_search``: a backend of :mod:`common.eval.knn_index`."""
    if scoring not in SCORINGS:
        raise ValueError(f"unknown scoring {scoring!r}; expected one of {SCORINGS}")
    if retrieval not in RETRIEVALS:
        raise ValueError(f"unknown retrieval {retrieval!r}; expected one of {RETRIEVALS}")
    x, y = normalize(src_emb), normalize(trg_emb)
    both = knn_backend(knn_search)
    if retrieval == "forward" and scoring == "cosine":
        cos, idx = knn(x, y, 1) if knn_search == "exact" else both(x, y, 1)[:2]  # (Nx, 1) each
        order = torch.argsort(cos[:, 0], descending=True, stable=True)
        return [(int(i), int(idx[i, 0]), float(cos[i, 0])) for i in order.tolist()]
    fwd_cos, fwd_idx, bwd_cos, bwd_idx = both(x, y, k)  # (Nx, k) x2, (Ny, k) x2
    x_mean, y_mean = fwd_cos.mean(1), bwd_cos.mean(1)  # (Nx,), (Ny,)

    def score(cos: torch.Tensor, xm: torch.Tensor, ym: torch.Tensor) -> torch.Tensor:
        if scoring == "cosine":
            return cos
        b = (xm + ym) / 2
        return cos / b if scoring == "ratio" else cos - b

    fwd = score(fwd_cos, x_mean[:, None], y_mean[fwd_idx])  # (Nx, k)
    bwd = score(bwd_cos, x_mean[bwd_idx], y_mean[:, None])  # (Ny, k)
    fwd_best = fwd.argmax(1)
    bwd_best = bwd.argmax(1)
    rows = torch.arange(x.shape[0])
    cols = torch.arange(y.shape[0])
    src = torch.cat([rows, bwd_idx[cols, bwd_best]])
    trg = torch.cat([fwd_idx[rows, fwd_best], cols])
    scores = torch.cat([fwd[rows, fwd_best], bwd[cols, bwd_best]])
    order = torch.argsort(scores, descending=True, stable=True)
    seen_src, seen_trg, out = set(), set(), []
    for i in order.tolist():
        s, t = int(src[i]), int(trg[i])
        if s in seen_src or t in seen_trg:
            continue
        seen_src.add(s)
        seen_trg.add(t)
        out.append((s, t, float(scores[i])))
    return out


def dedup(sentences: dict[str, str]) -> tuple[list[str], dict[str, list[str]]]:
    """Unique texts (first-seen order) and, per text, the IDs it occurs under."""
    ids: dict[str, list[str]] = defaultdict(list)
    for sid, text in sentences.items():
        ids[text].append(sid)
    return list(ids), ids


def candidates_for_split(split: BuccSplit, embed: Embed, k: int = 4, scoring: str = "ratio",
                         embed_trg: Embed | None = None, retrieval: str = "max",
                         knn_search: str = "exact") -> list[Candidate]:
    """Mine ``split`` with ``embed(list[str]) -> (N, D)`` (``embed_trg`` for the target side when
    the languages have separate encoders, as in MoCo-BERT); returns ID-level candidates, best first."""
    src_texts, src_ids = dedup(split.src)
    trg_texts, trg_ids = dedup(split.trg)
    mined = mine(embed(src_texts), (embed_trg or embed)(trg_texts), k=k, scoring=scoring, retrieval=retrieval,
                 knn_search=knn_search)
    out = []
    for s, t, sc in mined:
        si, ti = src_ids[src_texts[s]], trg_ids[trg_texts[t]]
        if len(si) == 1 and len(ti) == 1:
            out.append(Candidate(si[0], ti[0], sc))
    return out


def prf(n_correct: int, n_predicted: int, n_gold: int) -> tuple[float, float, float]:
    p = n_correct / n_predicted if n_predicted else 0.0
    r = n_correct / n_gold if n_gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return 100 * p, 100 * r, 100 * f


def optimize_threshold(cands: list[Candidate], gold: set[tuple[str, str]]) -> dict[str, float]:
    """Threshold maximising F1 on ``gold``: midpoint between the best prefix's last score and the next."""
    cands = sorted(cands, key=lambda c: -c.score)
    best = {"f1": 0.0, "precision": 0.0, "recall": 0.0,
            "threshold": cands[0].score + 1.0 if cands else 0.0}
    correct = 0
    for i, c in enumerate(cands):
        correct += (c.src, c.trg) in gold
        p, r, f = prf(correct, i + 1, len(gold))
        if f > best["f1"]:
            nxt = cands[i + 1].score if i + 1 < len(cands) else c.score - 1.0
            best = {"f1": f, "precision": p, "recall": r, "threshold": (c.score + nxt) / 2}
    return best


def apply_threshold(cands: list[Candidate], gold: set[tuple[str, str]], threshold: float) -> dict[str, float]:
    predicted = [(c.src, c.trg) for c in cands if c.score >= threshold]
    correct = sum(p in gold for p in predicted)
    p, r, f = prf(correct, len(predicted), len(gold))
    return {"precision": p, "recall": r, "f1": f, "threshold": threshold, "n_predicted": len(predicted)}


def source_outcomes(src_ids: list[str], cands: list[Candidate], gold: set[tuple[str, str]],
                    threshold: float) -> dict[str, str]:
    """Per source sentence (in ``src_ids`` order): '1' where it has a gold pair, where its accepted candidate is
    right (true positive) and where it is wrong (false positive). Precision, recall and F1 follow from the
    sums over any resample of the sentences (the item bootstrap of :mod:`common.report.claims`)."""
    predicted = {c.src: c.trg for c in cands if c.score >= threshold}  # one-to-one: one candidate per source
    gold_src = {s for s, _ in gold}
    return {"gold": "".join("1" if s in gold_src else "0" for s in src_ids),
            "tp": "".join("1" if (s, predicted.get(s)) in gold else "0" for s in src_ids),
            "fp": "".join("1" if s in predicted and (s, predicted[s]) not in gold else "0" for s in src_ids)}


def evaluate_pair(tune: BuccSplit, test: BuccSplit, embed: Embed, k: int = 4, scoring: str = "ratio",
                  embed_trg: Embed | None = None, retrieval: str = "max", knn_search: str = "exact") -> dict[str, Any]:
    """Pick the threshold on ``tune`` (its optimal F1 is reported too), apply it to ``test``. ``tune`` may be
    ``test`` itself (the optimal-threshold protocol of VMSST section 6.2): its candidates are mined once."""
    tune_c = candidates_for_split(tune, embed, k, scoring, embed_trg, retrieval, knn_search)
    best = optimize_threshold(tune_c, tune.gold)
    test_c = tune_c if test is tune else candidates_for_split(test, embed, k, scoring, embed_trg, retrieval, knn_search)
    return {
        "tune": {**best, "n_gold": len(tune.gold), "n_candidates": len(tune_c)},
        "test": {**apply_threshold(test_c, test.gold, best["threshold"]), "n_gold": len(test.gold)},
        "test_items": source_outcomes(sorted(test.src), test_c, test.gold, best["threshold"]),
        "scoring": scoring, "k": k, "retrieval": retrieval,
    }

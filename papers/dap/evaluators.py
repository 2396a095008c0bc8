"""The evaluation function of DAP's own task type ``dap-tokens`` (Figure 1; :mod:`common.eval.task_types`; the task
is declared in :mod:`papers.dap.tasks`, which says what it measures)."""
from __future__ import annotations

import numpy as np
import torch

from common.data import loaders
from common.eval.task_types import EvalContext, TaskResult, register_task_type
from common.eval.tasks import Task
from common.finite import NonFiniteError


def pca_2d(points: np.ndarray) -> np.ndarray:
    """(N, D) -> (N, 2): the points centred and projected on their first two principal axes (SVD), each axis's sign
    fixed so that its largest-magnitude coordinate is positive (the plot does not flip between runs)."""
    centred = points - points.mean(0, keepdims=True)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    xy = centred @ vt[:2].T  # (N, 2)
    flip = np.sign(xy[np.abs(xy).argmax(0), [0, 1]])
    return xy * np.where(flip == 0, 1.0, flip)


def other_language_nearest_pct(states: np.ndarray, is_english: np.ndarray) -> float:
    """% of tokens whose nearest other token by cosine (full dimension) is of the other language."""
    unit = states / np.linalg.norm(states, axis=1, keepdims=True).clip(min=1e-12)
    sims = unit @ unit.T  # (N, N)
    np.fill_diagonal(sims, -np.inf)
    return float((is_english[sims.argmax(1)] != is_english).mean() * 100)


def centroid_gap(xy: np.ndarray, is_english: np.ndarray) -> float:
    """The distance between the two languages' centroids in the plane over the mean distance of a token to its own
    language's centroid (0: the clouds share a centre; large: two separate clouds)."""
    centres = {e: xy[is_english == e].mean(0) for e in (False, True)}
    spread = np.mean([np.linalg.norm(p - centres[bool(e)]) for p, e in zip(xy, is_english)])
    return float(np.linalg.norm(centres[True] - centres[False]) / max(spread, 1e-12))


def token_states(ctx: EvalContext, sentences: list[str]) -> list[np.ndarray]:
    """Each sentence's last-layer token states without special tokens: one (T_i, D) array per sentence."""
    emb = ctx.embedder
    encoder, tokenizer = getattr(emb, "encoder", None), getattr(emb, "tokenizer", None)
    if encoder is None or tokenizer is None:
        raise ValueError(f"{ctx.model_dir}: dap-tokens needs a single encoder with its tokenizer (a sentence-encoder "
                         "folder), not a dual encoder")
    if getattr(getattr(emb, "loaded", None), "do_lower_case", False):
        sentences = [s.lower() for s in sentences]
    out = []
    with torch.no_grad():
        for start in range(0, len(sentences), ctx.batch_size):
            batch = tokenizer(sentences[start:start + ctx.batch_size], padding=True, truncation=True,
                              max_length=emb.max_length, return_tensors="pt", return_special_tokens_mask=True)
            special = batch.pop("special_tokens_mask").bool()  # (B, S)
            ids, mask = batch["input_ids"].to(emb.device), batch["attention_mask"].to(emb.device)
            _, hidden = encoder(ids, mask)  # (B, S, D)
            keep = mask.bool().cpu() & ~special
            hidden = hidden.float().cpu()
            out += [hidden[i][keep[i]].numpy() for i in range(hidden.shape[0])]
    return out


@register_task_type("dap-tokens")
def run_tokens(task: Task, ctx: EvalContext) -> TaskResult:
    p = task.params_for(ctx.scale)
    have = ctx.manifest["tatoeba_languages"]
    lang = p["language"] if p["language"] in have else have[0]
    files = list(loaders.tatoeba_paths(ctx.manifest["tatoeba_dir"], lang))
    xx, en = loaders.read_tatoeba(ctx.manifest["tatoeba_dir"], lang)
    if len(xx) < p["pairs"]:
        raise ValueError(f"{files[0]}: {len(xx)} pairs, dap-tokens needs {p['pairs']}")
    xx, en = xx[:p["pairs"]], en[:p["pairs"]]
    per = token_states(ctx, xx) + token_states(ctx, en)
    states = np.concatenate(per)  # (N, D): the language's tokens, then English's
    bad = [i for i, x in enumerate(per) if not np.isfinite(x).all()]
    if bad:
        side, i = ("eng", bad[0] - len(xx)) if bad[0] >= len(xx) else (lang, bad[0])
        raise NonFiniteError(f"{ctx.model_dir}: token states of {len(bad)} of {len(per)} sentences are not finite, "
                             f"the first: {side} sentence {i + 1} of the Tatoeba pairs")
    n_xx = sum(len(s) for s in per[:len(xx)])
    is_english = np.arange(len(states)) >= n_xx
    xy = pca_2d(states)
    scores = {
        "language": lang, "asked_language": p["language"], "pairs": p["pairs"], "tokens": int(len(states)),
        "other_language_nearest_pct": other_language_nearest_pct(states, is_english),
        "centroid_gap": centroid_gap(xy, is_english),
        "points": [{"english": bool(e), "x": round(float(x), 5), "y": round(float(y), 5)}
                   for (x, y), e in zip(xy, is_english)],
    }
    scores["main_score"] = scores["other_language_nearest_pct"]
    return TaskResult(scores, [lang, "eng"], files)

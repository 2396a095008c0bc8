"""Question retrieval (VMSST section 6.2, appendix A.2, Tables 1, 11-12): each test question retrieves its
cosine-nearest question from an English question bank; R@1 = % of queries whose retrieved question has an
answer matching one of the query's answers (SQuAD answer normalisation: lower case, no punctuation, no
articles, single spaces).

Paper scale: NQ (English) and MKQA (26 languages) test questions against PAQ's 65M generated questions
(download rules in :mod:`common.data.download`). Mini scale: a stand-in built from XQuAD-R (1190 questions
parallel in 11 languages): the bank holds the English questions; a query never sees its own English
counterpart in the bank (PAQ does not contain the test questions), so a hit is an *other* question with the
same answer -- the ``nq`` queries are the English questions, the ``mkqa`` queries those of the other
languages. Smoke scale: the synthetic generator's questions (answers: the meaning's patient).

Files (JSON lines): ``bank.jsonl`` and each query file hold ``{"id", "question", "answers": [...]}``; a query's
optional ``"exclude"`` names the bank id it must not retrieve.
"""
from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import torch

from common.data.questions import iter_questions, read_questions, shards
from common.eval.answers import normalize_answer
from common.eval.similarity import normalize
from common.eval.task_types import EvalContext, TaskResult, register_task_type
from common.eval.tasks import Task
from common.io import DataFormatError

BANK_SHARD = 500_000  # bank questions encoded and searched at a time: 2 GB of fp32 embeddings at width 1024


def sharded_recall_at_1(queries: dict[str, tuple[torch.Tensor, list[dict[str, Any]]]],
                        bank_shards: Iterable[tuple[torch.Tensor, list[dict[str, Any]]]],
                        block: int = 1024, bank_file: str | Path = "the bank") -> dict[str, list[bool]]:
    """Per language and query: does its nearest bank question (its excluded one masked out) share an answer with it?

    ``queries``: language -> (embeddings (Q, D), records); ``bank_shards``: the bank in order, as (embeddings
    (S, D), records) per shard. An exact search: each shard's best match of every query is kept when it scores
    higher than the best so far (ties: the earlier bank question, as one argmax over the whole bank), so memory is
    one shard's embeddings and scores, whatever the bank's size (PAQ: 65M questions)."""
    normed = {lang: normalize(emb) for lang, (emb, _) in queries.items()}
    best = {lang: torch.full((len(recs),), float("-inf")) for lang, (_, recs) in queries.items()}
    answers: dict[str, list[set[str] | None]] = {lang: [None] * len(recs) for lang, (_, recs) in queries.items()}
    unmasked = {rec["exclude"] for _, recs in queries.values() for rec in recs if "exclude" in rec}
    for bank_emb, bank in bank_shards:
        b = normalize(bank_emb)  # (S, D)
        index = {r["id"]: i for i, r in enumerate(bank)}
        if len(index) < len(bank):  # checked within a shard: a 65M-question bank's ids are not held whole
            twice = [i for i, n in Counter(r["id"] for r in bank).items() if n > 1]
            raise DataFormatError(bank_file, None, f"question ids given twice: {twice[:5]}")
        unmasked -= index.keys()
        for lang, (_, recs) in queries.items():
            q = normed[lang]
            for start in range(0, len(recs), block):
                scores = q[start:start + block] @ b.T  # (block, S)
                for row, rec in enumerate(recs[start:start + block]):
                    if rec.get("exclude") in index:
                        scores[row, index[rec["exclude"]]] = float("-inf")
                top, at = scores.max(1)  # (block,): the first maximum of each row
                for row in torch.nonzero(top > best[lang][start:start + block]).flatten().tolist():
                    best[lang][start + row] = top[row]
                    answers[lang][start + row] = {normalize_answer(a) for a in bank[int(at[row])]["answers"]}
    if unmasked:  # their queries could retrieve their own English counterpart
        raise DataFormatError(bank_file, None, f"{len(unmasked)} ids that queries exclude are not in the bank: "
                              f"{sorted(map(str, unmasked))[:5]}")
    return {lang: [bool(found and {normalize_answer(a) for a in rec["answers"]} & found)
                   for rec, found in zip(recs, answers[lang])] for lang, (_, recs) in queries.items()}


def recall_at_1(query_emb: torch.Tensor, bank_emb: torch.Tensor, queries: list[dict[str, Any]],
                bank: list[dict[str, Any]], block: int = 1024) -> list[bool]:
    """:func:`sharded_recall_at_1` of one language against a bank held whole (one shard)."""
    return sharded_recall_at_1({"q": (query_emb, queries)}, [(bank_emb, bank)], block)["q"]


@register_task_type("question-retrieval")
def run_question_retrieval(task: Task, ctx: EvalContext) -> TaskResult:
    """Every query language's questions are encoded first; the bank is then read, encoded and searched in shards of
    ``BANK_SHARD`` questions (``task.params["shard_size"]`` overrides), so its size bounds no memory."""
    qr = ctx.manifest["question_retrieval"]
    size = int(task.params.get("shard_size", BANK_SHARD))
    queries, files = {}, [Path(qr["bank"])]
    for lang, path in sorted(qr[task.params["queries"]].items()):
        recs = read_questions(path)
        queries[lang] = (ctx.encode([r["question"] for r in recs], lang), recs)
        files.append(Path(path))
    if not queries:
        raise ctx.manifest_error(f"question_retrieval/{task.params['queries']}", "empty: no query language")
    bank_size = 0

    def bank_shards() -> Iterator[tuple[torch.Tensor, list[dict[str, Any]]]]:
        nonlocal bank_size
        for shard in shards(iter_questions(qr["bank"]), size):
            bank_size += len(shard)
            yield ctx.encode([r["question"] for r in shard], "en"), shard

    hits = sharded_recall_at_1(queries, bank_shards(), bank_file=qr["bank"])
    per = {lang: 100.0 * sum(h) / len(h) for lang, h in hits.items()}
    items = {lang: "".join("1" if x else "0" for x in h) for lang, h in hits.items()}
    scores = {"per_language": per, "items": items, "bank_size": bank_size, "data": qr.get("description", ""),
              "main_score": statistics.fmean(per.values())}
    return TaskResult(scores, sorted(per), files)

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

import json
import statistics
from pathlib import Path

import torch

from common.eval.answers import normalize_answer
from common.eval.similarity import normalize
from common.eval.tasks import EvalContext, Task, TaskResult, register_task, register_task_type
from common.io import DataFormatError, read_lines


def read_questions(path: str | Path) -> list[dict]:
    out = []
    for lineno, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataFormatError(path, lineno, f"invalid JSON ({exc.msg})") from None
        if not isinstance(rec, dict) or not {"id", "question", "answers"} <= rec.keys() or not rec["answers"]:
            raise DataFormatError(path, lineno, "expected {'id', 'question', 'answers': [...]} with an answer")
        out.append(rec)
    return out


def recall_at_1(query_emb: torch.Tensor, bank_emb: torch.Tensor, queries: list[dict], bank: list[dict],
                block: int = 1024) -> list[bool]:
    """Per query: does its nearest bank question (its excluded one masked out) share an answer with it?"""
    q, b = normalize(query_emb), normalize(bank_emb)
    index = {r["id"]: i for i, r in enumerate(bank)}
    bank_answers = [{normalize_answer(a) for a in r["answers"]} for r in bank]
    hits = []
    for start in range(0, len(queries), block):
        scores = q[start:start + block] @ b.T  # (block, N)
        for row, rec in enumerate(queries[start:start + block]):
            if rec.get("exclude") in index:
                scores[row, index[rec["exclude"]]] = float("-inf")
        for rec, j in zip(queries[start:start + block], scores.argmax(1).tolist()):
            hits.append(bool({normalize_answer(a) for a in rec["answers"]} & bank_answers[j]))
    return hits


@register_task_type("question-retrieval")
def run_question_retrieval(task: Task, ctx: EvalContext) -> TaskResult:
    qr = ctx.manifest["question_retrieval"]
    bank = read_questions(qr["bank"])
    bank_emb = ctx.encode([r["question"] for r in bank], "en")
    per, items, files = {}, {}, [Path(qr["bank"])]
    for lang, path in sorted(qr[task.params["queries"]].items()):
        queries = read_questions(path)
        hits = recall_at_1(ctx.encode([r["question"] for r in queries], lang), bank_emb, queries, bank)
        per[lang] = 100.0 * sum(hits) / len(hits)
        items[lang] = "".join("1" if h else "0" for h in hits)
        files.append(Path(path))
    scores = {"per_language": per, "items": items, "bank_size": len(bank), "data": qr.get("description", ""),
              "main_score": statistics.fmean(per.values())}
    return TaskResult(scores, sorted(per), files)


register_task(Task(
    "question-retrieval@nq", "question-retrieval",
    "English questions retrieve an English question with the same answer",
    "VMSST section 6.2 and Table 11 (NQ over PAQ)", "R@1 (%) of the English queries", params={"queries": "nq"}))
register_task(Task(
    "question-retrieval@mkqa", "question-retrieval", "non-English questions retrieve an English question with the "
    "same answer", "VMSST section 6.2 and Table 12 (MKQA over PAQ)", "mean R@1 (%) over the query languages",
    params={"queries": "mkqa"}))

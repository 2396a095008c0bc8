"""SQuAD v1.1-format files (SQuAD, XQuAD, MLQA, TyDiQA-GoldP and their translations): read with every answer
checked against its offset; the evaluation protocol is :mod:`common.eval.qa`."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.io import DataFormatError, read_json


@dataclass
class QAExample:
    id: str
    question: str
    context: str
    answers: list[str]
    answer_start: int  # the first answer's character offset (training)


def read_squad_json(path: str | Path, unique_ids: bool = True) -> list[dict[str, Any]]:
    """The ``data`` of a SQuAD v1.1-format file, its layout checked: ``{"data": [{"paragraphs": [{"context": str,
    "qas": [{"id", "question": str, ...}]}]}]}``, each question id once where ``unique_ids`` (a test set: its
    predictions are keyed by id). A malformed file is an error naming the file and where in it (article,
    paragraph, question)."""
    try:
        data = read_json(path)["data"]  # invalid JSON: an error naming the file and the line
    except (KeyError, TypeError) as exc:
        raise DataFormatError(path, None, f"not a SQuAD-format JSON file (no 'data': {exc})") from None
    seen: set[str] = set()
    if not isinstance(data, list):
        raise DataFormatError(path, None, "'data' is not a list of articles")
    for i, article in enumerate(data):
        paragraphs = article.get("paragraphs") if isinstance(article, dict) else None
        if not isinstance(paragraphs, list):
            raise DataFormatError(path, None, f"article {i}: no list of 'paragraphs'")
        for j, para in enumerate(paragraphs):
            if not isinstance(para, dict) or not isinstance(para.get("context"), str) or not isinstance(
                    para.get("qas"), list):
                raise DataFormatError(path, None, f"article {i}, paragraph {j}: expected a 'context' string and a "
                                                  "'qas' list")
            for qa in para["qas"]:
                if not isinstance(qa, dict) or "id" not in qa or not isinstance(qa.get("question"), str):
                    raise DataFormatError(path, None, f"article {i}, paragraph {j}: a question without 'id' or "
                                                      "'question'")
                if unique_ids and str(qa["id"]) in seen:  # two questions would share one prediction
                    raise DataFormatError(path, None, f"question id {qa['id']!r} given twice")
                seen.add(str(qa["id"]))
    return data


def has_text_answers(qa: dict[str, Any]) -> bool:
    """Whether a question has a non-empty list of answers, each ``{"text": str, ...}``."""
    answers = qa.get("answers")
    return isinstance(answers, list) and bool(answers) and all(
        isinstance(a, dict) and isinstance(a.get("text"), str) for a in answers)


def read_squad(path: str | Path, unique_ids: bool = True) -> list[QAExample]:
    """A SQuAD v1.1-format file (:func:`read_squad_json`) whose questions all have answers ``[{"text",
    "answer_start"}]``; every answer must be found at its offset. Training files pass ``unique_ids=False``: their
    ids key nothing (machine-translated sets are not checked for repeats)."""
    out = []
    for article in read_squad_json(path, unique_ids):
        for para in article["paragraphs"]:
            ctx = para["context"]
            for qa in para["qas"]:
                if not has_text_answers(qa):
                    raise DataFormatError(path, None, f"question {qa['id']!r}: expected answers [{{'text', "
                                                      "'answer_start'}, ...]")
                answers = qa["answers"]
                start = answers[0].get("answer_start")
                if not isinstance(start, int) or ctx[start:start + len(answers[0]["text"])] != answers[0]["text"]:
                    raise DataFormatError(path, None, f"question {qa['id']!r}: answer {answers[0]['text']!r} is not "
                                                      f"at offset {start!r} of its context")
                out.append(QAExample(qa["id"], qa["question"], ctx, [a["text"] for a in answers], start))
    return out

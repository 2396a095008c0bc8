"""SQuAD v1.1-format files (SQuAD, XQuAD, MLQA, TyDiQA-GoldP and their translations): read with every answer
checked against its offset; the evaluation protocol is :mod:`common.eval.qa`."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from common.io import DataFormatError


@dataclass
class QAExample:
    id: str
    question: str
    context: str
    answers: list[str]
    answer_start: int  # the first answer's character offset (training)


def read_squad(path: str | Path) -> list[QAExample]:
    """A SQuAD v1.1-format file: ``{"data": [{"paragraphs": [{"context", "qas": [{"id", "question",
    "answers": [{"text", "answer_start"}]}]}]}]}``; every answer must be found at its offset."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))["data"]
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise DataFormatError(path, None, f"not a SQuAD-format JSON file ({exc})") from None
    out = []
    for article in data:
        for para in article["paragraphs"]:
            ctx = para["context"]
            for qa in para["qas"]:
                answers = qa.get("answers") or []
                if not answers:
                    raise DataFormatError(path, None, f"question {qa.get('id')!r} has no answer")
                start = answers[0]["answer_start"]
                if ctx[start:start + len(answers[0]["text"])] != answers[0]["text"]:
                    raise DataFormatError(path, None, f"question {qa['id']!r}: answer {answers[0]['text']!r} is not "
                                                      f"at offset {start} of its context")
                out.append(QAExample(qa["id"], qa["question"], ctx, [a["text"] for a in answers], start))
    return out

"""The mini scale's question-retrieval stand-in (VMSST's NQ / MKQA over PAQ are not available offline), built
from XQuAD-R (Roy et al. 2020; 1190 SQuAD questions translated into 10 languages, parallel by id).

``bank.jsonl`` holds the English questions with their English answers; ``nq.jsonl`` asks every English question
again and ``mkqa.{lang}.jsonl`` every translation, each excluding its own English counterpart from the bank (PAQ
does not contain the test questions), so a hit is another question with the same answer (191 of the 1190
English questions share an answer with another). Answers are compared in English for every language.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from common.data import xquad_r
from common.io import iter_json_lines, write_lines

LANGUAGES = ("ar", "de", "el", "es", "hi", "ru", "th", "tr", "vi", "zh")


def _questions(root: Path, lang: str, english_ids: set[str] | None = None) -> dict[str, str]:
    return {i: " ".join(q.split()) for i, q in xquad_r.questions(root, lang, english_ids).items()}


def build(out: Path, data_root: Path) -> dict[str, Any]:
    """Write the question files under ``out``; return the manifest entry ``question_retrieval``."""
    answers = {str(q["id"]): sorted({a["text"] for a in q["answers"]}) for a in xquad_r.articles(data_root, "en")
               for p in a["paragraphs"] for q in p["qas"]}
    english = _questions(Path(data_root), "en")

    def records(questions: dict[str, str], exclude: bool) -> list[str]:
        return [json.dumps({"id": i, "question": q, "answers": answers[i], **({"exclude": i} if exclude else {})},
                           ensure_ascii=False) for i, q in sorted(questions.items())]

    write_lines(out / "bank.jsonl", records(english, False))
    write_lines(out / "nq.jsonl", records(english, True))
    mkqa = {}
    for lang in LANGUAGES:
        write_lines(out / f"mkqa.{lang}.jsonl", records(_questions(Path(data_root), lang, set(english)), True))
        mkqa[lang] = str(out / f"mkqa.{lang}.jsonl")
    return {"bank": str(out / "bank.jsonl"), "nq": {"en": str(out / "nq.jsonl")}, "mkqa": mkqa,
            "description": "XQuAD-R stand-in: 1190 SQuAD questions, bank = the English ones, a query never retrieves "
                           "its own English counterpart; answers compared in English"}


def sentences(manifest_entry: dict[str, Any]) -> list[str]:
    """Every question of the stand-in (for the leakage rule)."""
    paths = [manifest_entry["bank"], *manifest_entry["nq"].values(), *manifest_entry["mkqa"].values()]
    return [record["question"] for p in paths for _, record in iter_json_lines(p)]

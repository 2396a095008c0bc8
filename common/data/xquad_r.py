"""XQuAD-R (Roy et al. 2020) in ``data_root/xquad_r/{lang}.json``: XQuAD's 48 SQuAD articles in 11 languages,
parallel by article and by question id, each paragraph with its ``sentences``. One reader, checked, for every mini
stand-in built from it (QA, question retrieval, the BUCC-style pool and the leakage rule)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from common.data.squad import has_text_answers, read_squad_json
from common.io import DataFormatError


def path(root: Path, lang: str) -> Path:
    return Path(root) / "xquad_r" / f"{lang}.json"


def articles(root: Path, lang: str) -> list[dict[str, Any]]:
    """The articles of one language: SQuAD layout with each question id once (:func:`read_squad_json`), every
    paragraph with a list of ``sentences`` and every question with at least one answer ``{"text", ...}``."""
    p = path(root, lang)
    data = read_squad_json(p)
    for i, article in enumerate(data):
        for j, para in enumerate(article["paragraphs"]):
            if not isinstance(para.get("sentences"), list):
                raise DataFormatError(p, None, f"article {i}, paragraph {j}: no list of 'sentences'")
            for qa in para["qas"]:
                if not has_text_answers(qa):
                    raise DataFormatError(p, None, f"question {qa['id']!r}: expected answers [{{'text', ...}}]")
    return data


def questions(root: Path, lang: str, english_ids: set[str] | None = None) -> dict[str, str]:
    """Question id -> question text of one language; with ``english_ids``, the ids must be exactly those (XQuAD-R
    is parallel by id: a missing or extra id would silently drop or mispair questions)."""
    out = {str(q["id"]): q["question"] for a in articles(root, lang) for p in a["paragraphs"] for q in p["qas"]}
    if english_ids is not None and out.keys() != english_ids:
        missing, extra = sorted(english_ids - out.keys()), sorted(out.keys() - english_ids)
        raise DataFormatError(path(root, lang), None, f"question ids differ from en.json: {len(missing)} missing "
                              f"{missing[:3]}, {len(extra)} extra {extra[:3]}")
    return out

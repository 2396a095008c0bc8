"""The mini scale's extractive-QA stand-in (XTREME's XQuAD / MLQA / TyDiQA-GoldP are not in ``data_root``),
built from XQuAD-R (Roy et al. 2020): XQuAD's 48 SQuAD articles (240 paragraphs, 1190 questions) with contexts,
questions and answer offsets in 11 languages, parallel by article.

The English items of the first ``train_articles`` articles train the QA head; every language is tested on the
other articles (no paragraph on both sides). Files are SQuAD v1.1 JSON (:func:`common.data.squad.read_squad`); a
question whose answer is not found at its stated offset is dropped and counted.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from common.data import xquad_r
from common.data.xquad_questions import LANGUAGES
from common.io import atomic_write


def _articles(root: Path, lang: str) -> list[dict[str, Any]]:
    return xquad_r.articles(root, lang)


def _squad(articles: list[dict[str, Any]]) -> tuple[dict[str, Any], int, int]:
    """SQuAD-format data of ``articles`` keeping the questions whose first answer sits at its offset."""
    kept = dropped = 0
    out = []
    for a in articles:
        paras = []
        for p in a["paragraphs"]:
            qas = []
            for q in p["qas"]:
                ans = q["answers"][0]
                if p["context"][ans["answer_start"]:ans["answer_start"] + len(ans["text"])] == ans["text"]:
                    qas.append({"id": q["id"], "question": q["question"], "answers": q["answers"][:1]})
                    kept += 1
                else:
                    dropped += 1
            if qas:
                paras.append({"context": p["context"], "qas": qas})
        out.append({"title": a.get("title", ""), "paragraphs": paras})
    return {"version": "xquad-r split", "data": out}, kept, dropped


def build(out: Path, data_root: Path, train_articles: int) -> dict[str, Any]:
    """Write ``train.en.json`` and ``test.{lang}.json`` under ``out``; return the manifest entry ``qa.xquad``."""
    root = Path(data_root)
    stats = {}
    english = _articles(root, "en")
    if not 0 < train_articles < len(english):
        raise ValueError(f"train_articles must be in 1..{len(english) - 1}, got {train_articles}")
    data, kept, dropped = _squad(english[:train_articles])
    with atomic_write(out / "train.en.json") as fh:
        fh.write(json.dumps(data, ensure_ascii=False))
    stats["train"] = {"questions": kept, "dropped": dropped}
    test = {}
    for lang in ("en", *LANGUAGES):
        data, kept, dropped = _squad(_articles(root, lang)[train_articles:])
        test[lang] = str(out / f"test.{lang}.json")
        with atomic_write(test[lang]) as fh:
            fh.write(json.dumps(data, ensure_ascii=False))
        stats[lang] = {"questions": kept, "dropped": dropped}
    return {"train": str(out / "train.en.json"), "test": test, "counts": stats,
            "description": f"XQuAD-R stand-in: English items of articles 1-{train_articles} train, the other "
                           f"{len(english) - train_articles} articles test every language"}


def context_sentences(data_root: Path) -> list[str]:
    """Every context sentence of XQuAD-R in every language (for the leakage rule)."""
    return [s for lang in ("en", *LANGUAGES) for a in _articles(Path(data_root), lang) for p in a["paragraphs"]
            for s in p["sentences"]]

"""XQuAD-R's reader (common/data/xquad_r.py): the layout checked, and the languages parallel by question id."""
import json

import pytest

from common.data import xquad_r
from common.io import DataFormatError


def write(root, lang, qas, sentences=True):
    para = {"context": "Paris is big.", "qas": qas, **({"sentences": ["Paris is big."]} if sentences else {})}
    (root / "xquad_r").mkdir(exist_ok=True)
    (root / "xquad_r" / f"{lang}.json").write_text(json.dumps({"data": [{"title": "t", "paragraphs": [para]}]}))


def qa(i, q):
    return {"id": i, "question": q, "answers": [{"text": "Paris", "answer_start": 0}]}


def test_translations_must_have_exactly_the_english_ids(tmp_path):
    write(tmp_path, "en", [qa("a", "What?"), qa("b", "Which?")])
    write(tmp_path, "de", [qa("a", "Was?"), qa("b", "Welche?")])
    en = xquad_r.questions(tmp_path, "en")
    assert xquad_r.questions(tmp_path, "de", set(en)) == {"a": "Was?", "b": "Welche?"}
    write(tmp_path, "de", [qa("a", "Was?"), qa("c", "Wer?")])
    with pytest.raises(DataFormatError, match=r"de\.json: question ids differ from en\.json: 1 missing \['b'\], "
                                              r"1 extra \['c'\]"):
        xquad_r.questions(tmp_path, "de", set(en))


def test_a_paragraph_needs_its_sentences_and_a_question_an_answer(tmp_path):
    write(tmp_path, "en", [qa("a", "What?")], sentences=False)
    with pytest.raises(DataFormatError, match=r"en\.json: article 0, paragraph 0: no list of 'sentences'"):
        xquad_r.articles(tmp_path, "en")
    write(tmp_path, "en", [{**qa("a", "What?"), "answers": []}])
    with pytest.raises(DataFormatError, match=r"question 'a': expected answers"):
        xquad_r.articles(tmp_path, "en")

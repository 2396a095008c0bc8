"""Extractive QA (XTREME protocol): SQuAD F1 / EM on hand-computed answers, the window / span bookkeeping, and a
tiny end-to-end fine-tuning run."""
import json

import pytest
import torch

from common.data.squad import read_squad
from common.eval import qa
from common.io import DataFormatError


def test_f1_and_exact_match_by_hand():
    # normalisation: lower case, punctuation and articles removed -> "eiffel tower" vs "eiffel tower in paris"
    assert qa.exact_match("The Eiffel Tower!", "eiffel tower") == 1.0
    assert qa.f1_score("the Eiffel Tower", "Eiffel Tower in Paris") == pytest.approx(2 * 1.0 * 0.5 / 1.5)
    assert qa.f1_score("Paris", "London") == 0.0
    ex = [qa.QAExample("1", "q", "c", ["Paris", "the city of Paris"], 0),
          qa.QAExample("2", "q", "c", ["1889"], 0)]
    s = qa.score({"1": "city of Paris", "2": "in 1889"}, ex)
    # question 1: max(F1("city of paris", "paris") = 0.5, F1(.., "city of paris") = 1) = 1, EM 1;
    # question 2: F1 = 2 * (1/2 * 1) / 1.5 = 2/3, EM 0
    assert s["f1"] == pytest.approx(100 * (1 + 2 / 3) / 2) and s["exact_match"] == pytest.approx(50.0)


def squad(path, items):
    data = {"data": [{"title": "t", "paragraphs": [{"context": c, "qas": [
        {"id": i, "question": q, "answers": [{"text": a, "answer_start": c.index(a)}]}]} for i, c, q, a in items]}]}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_read_squad_checks_offsets(tmp_path):
    ok = squad(tmp_path / "ok.json", [("a", "The cat sat on the mat.", "Where?", "on the mat")])
    (ex,) = read_squad(ok)
    assert ex.context[ex.answer_start:ex.answer_start + len(ex.answers[0])] == "on the mat"
    bad = json.loads(ok.read_text())
    bad["data"][0]["paragraphs"][0]["qas"][0]["answers"][0]["answer_start"] = 2
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(DataFormatError, match="bad.json.*not at offset 2"):
        read_squad(tmp_path / "bad.json")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from transformers import BertConfig, BertModel

    from common.models.tokenizer import train_wordpiece

    d = tmp_path_factory.mktemp("qa_model")
    words = "the cat dog sat ran on under mat table red blue where did what colour was is".split()
    tok = train_wordpiece([" ".join(words)] * 5, 200, d, min_frequency=1)
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=64)).save_pretrained(d)
    return d, tok


def test_windows_map_answers_to_tokens(tiny):
    _, tok = tiny
    ctx = "the red cat sat on the mat the blue dog ran under the table"
    ex = [qa.QAExample("1", "where did the dog run", ctx, ["under the table"], ctx.index("under the table"))]
    f = qa.features(tok, ex, max_length=16, doc_stride=4, training=True)
    assert len(f["owner"]) > 1  # the context is split into overlapping windows
    found = 0
    for w in range(len(f["owner"])):
        st, en = int(f["start"][w]), int(f["end"][w])
        if st == 0:
            continue  # this window does not hold the whole answer
        found += 1
        offs = f["offsets"][w]
        assert ctx[offs[st][0]:offs[en][1]] == "under the table"
    assert found >= 1


def test_finetune_learns_a_trivial_span_task(tiny):
    """Answer = the word after 'the' that names a colour: a model fine-tuned for a few epochs gets most of it."""
    path, tok = tiny
    colours, things = ["red", "blue"], ["cat", "dog", "mat", "table"]
    train = []
    for k in range(48):
        c, t, t2 = colours[k % 2], things[k % 4], things[(k + 1) % 4]
        ctx = f"the {t2} sat on the {t} the {t} is {c}"
        train.append(qa.QAExample(str(k), f"what colour is the {t}", ctx, [c], ctx.rindex(c)))
    args = qa.FinetuneArguments(batch_size=8, learning_rate=3e-3, epochs=12, max_length=32, seed=1)
    out = qa.finetune_and_evaluate(str(path), tok, train, {"xx": train[:16]}, args, doc_stride=8,
                                   max_answer_length=3)
    assert out["per_language"]["xx"]["exact_match"] >= 75.0 and out["main_score"] == out["f1"]


def test_read_squad_checks_the_layout_and_repeated_ids(tmp_path):
    ok = squad(tmp_path / "ok.json", [("a", "The cat sat on the mat.", "Where?", "on the mat"),
                                      ("a", "The dog ran.", "Who?", "The dog")])
    with pytest.raises(DataFormatError, match=r"ok\.json: question id 'a' given twice"):
        read_squad(ok)  # a test set: its predictions are keyed by id
    assert len(read_squad(ok, unique_ids=False)) == 2  # a training file
    bad = json.loads(ok.read_text())
    del bad["data"][0]["paragraphs"][1]["context"]
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(DataFormatError, match=r"bad\.json: article 0, paragraph 1: expected a 'context' string"):
        read_squad(tmp_path / "bad.json", unique_ids=False)

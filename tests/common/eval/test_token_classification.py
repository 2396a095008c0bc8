"""Structured prediction (XTREME protocol): CoNLL reading, entity F1 and word accuracy by hand, and fine-tuning on a
tiny hand-made CoNLL file."""
import pytest
import torch

from common.eval import token_classification as tc
from common.io import DataFormatError

CONLL = "the\tO\nred\tB-ORG\ncat\tI-ORG\nsat\tO\n\nParis\tB-LOC\nis\tO\nbig\tO\n"


def test_read_conll_and_bad_lines(tmp_path):
    (tmp_path / "a.conll").write_text(CONLL)
    assert tc.read_conll(tmp_path / "a.conll") == [(["the", "red", "cat", "sat"], ["O", "B-ORG", "I-ORG", "O"]),
                                                   (["Paris", "is", "big"], ["B-LOC", "O", "O"])]
    (tmp_path / "b.conll").write_text("the\tO\nred B-ORG\n")
    with pytest.raises(DataFormatError, match=r"b\.conll:2: expected"):
        tc.read_conll(tmp_path / "b.conll")


def test_entity_f1_and_accuracy_by_hand():
    assert tc.entities(["B-PER", "I-PER", "O", "I-LOC", "B-LOC", "I-ORG"]) == {
        ("PER", 0, 1), ("LOC", 3, 3), ("LOC", 4, 4), ("ORG", 5, 5)}  # a stray I- starts an entity
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O"]]
    pred = [["B-PER", "O", "O", "B-LOC"], ["B-ORG", "O"]]
    # gold entities: PER(0-1), LOC(3), ORG; predicted: PER(0-0) wrong span, LOC, ORG -> tp 2, F1 = 2*2/(3+3)
    assert tc.entity_f1(gold, pred) == pytest.approx(100 * 4 / 6)
    assert tc.word_accuracy(gold, pred) == pytest.approx(100 * 5 / 6)


def test_finetune_on_a_tiny_conll_file(tmp_path):
    from transformers import BertConfig, BertModel

    from common.models.tokenizer import train_wordpiece

    words = "paris london berlin anna tom lives works in with and the city".split()
    tok = train_wordpiece([" ".join(words)] * 5, 200, tmp_path, min_frequency=1)
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=64)).save_pretrained(tmp_path)
    names, cities = ["anna", "tom"], ["paris", "london", "berlin"]
    train = []
    for k in range(36):
        n, c = names[k % 2], cities[k % 3]
        train.append(([n, "lives", "in", c], ["B-PER", "O", "O", "B-LOC"]))
        train.append((["the", "city", c, "and", n], ["O", "O", "B-LOC", "O", "B-PER"]))
    args = tc.FinetuneArguments(batch_size=8, learning_rate=5e-3, epochs=6, max_length=16, seed=1)
    unseen = (["tom", "works", "in", "berlin"], ["B-PER", "O", "O", "B-ORG"])  # B-ORG never trained: scored wrong
    out = tc.finetune_and_evaluate(str(tmp_path), tok, train, {"xx": train[:12], "yy": [unseen]}, args, "entity_f1")
    assert out["per_language"]["xx"] >= 90.0 and out["tagset"] == ["B-LOC", "B-PER", "O"]
    assert out["unseen_test_tags"] == {"yy": {"B-ORG": 1}}

"""Question retrieval (VMSST section 6.2): R@1 by hand, and the sharded search equal to one search over the whole
bank, whatever the shard size (PAQ's 65M questions are searched in shards)."""
import json

import torch

from common.data.questions import iter_questions, shards
from common.eval.question_retrieval import recall_at_1, sharded_recall_at_1


def test_recall_at_1_by_hand():
    bank = [{"id": "b0", "question": "", "answers": ["Paris"]}, {"id": "b1", "question": "", "answers": ["the Rhine"]}]
    queries = [{"id": "q0", "question": "", "answers": ["paris"]},  # nearest b0: same answer after normalisation
               {"id": "q1", "question": "", "answers": ["Rhine"], "exclude": "b1"},  # b1 masked: b0, no match
               {"id": "q2", "question": "", "answers": ["Rhine!"]}]  # nearest b1: "rhine" both ways
    bank_emb = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    q = torch.tensor([[0.9, 0.1], [0.1, 0.9], [0.2, 0.8]])
    assert recall_at_1(q, bank_emb, queries, bank) == [True, False, True]


def test_sharded_search_equals_the_whole_bank():
    g = torch.Generator().manual_seed(0)
    bank = [{"id": f"b{i}", "question": "", "answers": [f"a{i % 7}"]} for i in range(50)]
    bank_emb = torch.randn(50, 8, generator=g)
    bank_emb[31] = bank_emb[3]  # a tie across shards: the earlier question wins, as in one argmax
    bank[31]["answers"] = ["other"]
    queries = {lang: (torch.randn(20, 8, generator=g),
                      [{"id": f"{lang}{i}", "question": "", "answers": [f"a{i % 7}"], "exclude": f"b{i}"}
                       for i in range(20)]) for lang in ("en", "de")}
    queries["en"][0][5] = bank_emb[3] * 2  # query 5 of en hits the tied pair: b3 (answer a3) before b31
    queries["en"][1][5]["answers"] = ["a3"]
    whole = {lang: recall_at_1(emb, bank_emb, recs, bank, block=7) for lang, (emb, recs) in queries.items()}
    assert whole["en"][5] and any(whole["de"]) and not all(whole["de"])
    for size in (1, 4, 50):
        parts = [(bank_emb[i:i + size], bank[i:i + size]) for i in range(0, 50, size)]
        assert sharded_recall_at_1(queries, parts, block=3) == whole


def test_the_bank_streams_in_shards(tmp_path):
    path = tmp_path / "bank.jsonl"
    path.write_text("\n".join(json.dumps({"id": f"b{i}", "question": f"q{i}", "answers": ["x"]}) for i in range(5))
                    + "\n\n")
    assert [[r["id"] for r in s] for s in shards(iter_questions(path), 2)] == [["b0", "b1"], ["b2", "b3"], ["b4"]]


def test_malformed_question_files_are_refused(tmp_path):
    """Answers as a string would count any one-letter overlap as a hit; an id given twice or an excluded id missing
    from the bank would leave a query's own counterpart unmasked."""
    import pytest

    from common.data.questions import read_questions
    from common.io import DataFormatError

    path = tmp_path / "q.jsonl"
    path.write_text('{"id": 1, "question": "a?", "answers": ["x"]}\n{"id": 2, "question": "b?", "answers": "Paris"}\n')
    with pytest.raises(DataFormatError, match=r"q\.jsonl:2: expected .*'answers': \[str, \.\.\.\]"):
        read_questions(path)
    path.write_text('{"id": 1, "question": "a?", "answers": ["x"]}\n{"id": 1, "question": "b?", "answers": ["y"]}\n')
    with pytest.raises(DataFormatError, match=r"q\.jsonl:2: question id 1 given twice"):
        read_questions(path)
    path.write_text("\n")
    with pytest.raises(DataFormatError, match=r"q\.jsonl: no questions"):
        read_questions(path)
    bank = [{"id": "b0", "question": "", "answers": ["x"]}, {"id": "b0", "question": "", "answers": ["y"]}]
    queries = {"de": (torch.ones(1, 2), [{"id": "q", "question": "", "answers": ["x"], "exclude": "b9"}])}
    with pytest.raises(DataFormatError, match=r"bank\.jsonl: question ids given twice: \['b0'\]"):
        sharded_recall_at_1(queries, [(torch.eye(2), bank)], bank_file=tmp_path / "bank.jsonl")
    bank[1]["id"] = "b1"
    with pytest.raises(DataFormatError, match=r"bank\.jsonl: 1 ids that queries exclude are not in the bank: "
                                              r"\['b9'\]"):
        sharded_recall_at_1(queries, [(torch.eye(2), bank)], bank_file=tmp_path / "bank.jsonl")

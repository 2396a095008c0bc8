"""The mini BUCC-style benchmark: enough gold, BUCC's gold share on the English side, and no paraphrase
partners or hidden translations among its sentences."""
import pytest

from common.data import bucc_mini, loaders
from common.data.leakage import normalize

SPEC = {"pairs": ["ru"], "sources": ["stsb", "xnli", "xquad"], "english_extra": ["iwslt", "wmt_de", "xquad_contexts"],
        "gold_per_split": {"sample": 50, "training": 150, "test": 150}, "english_per_split": 5000, "seed": 1}


def test_one_sentence_per_sts_pair_never_keeps_two_partners():
    s = lambda a, b: loaders.StsPairs("x", a, b, [0.0] * len(a))  # noqa: E731
    # rows (A, B), (A, C), (D, E), (E, F), worked by hand: row 0 takes A (B excluded); row 1 holds the chosen A,
    # so it is skipped (C excluded); row 2 takes D (E excluded); row 3 prefers sentence 2 (odd row): F.
    en = s(["A", "A", "D", "E"], ["B", "C", "E", "F"])
    xx = s(["a", "a", "d", "e"], ["b", "c", "e", "f"])
    out = bucc_mini.one_sentence_per_sts_pair(xx, en)
    chosen = {e for _, e in out}
    rows = set(zip(en.sent1, en.sent2))
    assert not any((a, b) in rows or (b, a) in rows for a in chosen for b in chosen)
    assert [x for x, _ in out] == [e.lower() for _, e in out]  # translations stay aligned
    assert [e for _, e in out] == ["A", "D", "F"]


@pytest.fixture(scope="module")
def bench(data_root, tmp_path_factory):
    out = tmp_path_factory.mktemp("bucc")
    pairs, stats = bucc_mini.build(out, data_root, SPEC)
    return out, pairs, stats


def test_gold_counts_and_shares(bench):
    out, pairs, stats = bench
    assert pairs == ["ru-en"]
    for split, n in SPEC["gold_per_split"].items():
        b = loaders.read_bucc(out, "ru-en", split)
        assert len(b.gold) == n == stats["ru-en"][split]["gold"]
        assert len(b.trg) == stats["ru-en"][split]["english_sentences"]
    assert stats["ru-en"]["test"]["english_sentences"] == 5000  # 3 % gold on the English side, as in BUCC


def test_no_hidden_translation_and_no_xnli_hypothesis(bench, data_root):
    out, _, _ = bench
    # every (ru, en) translation pair of the pools: a pair with both sides in a split must be gold
    pool = bucc_mini.unique_pairs(bucc_mini._stsb(data_root, "ru") + bucc_mini._xnli(data_root, "ru")
                                  + bucc_mini._xquad_questions(data_root, "ru"))
    translation = {normalize(a): normalize(b) for a, b in pool}
    hyp = {normalize(h) for h in loaders.read_xnli_tsv(data_root / "xnli_dev" / "dev-en.tsv").hypothesis}
    prem = {normalize(p) for p in loaders.read_xnli_tsv(data_root / "xnli_dev" / "dev-en.tsv").premise}
    for split in ("sample", "training", "test"):
        b = loaders.read_bucc(out, "ru-en", split)
        en_ids = {normalize(t): i for i, t in b.trg.items()}
        for sid, text in b.src.items():
            partner = en_ids.get(translation.get(normalize(text)))
            if partner is not None:
                assert (sid, partner) in b.gold
        assert not {normalize(t) for t in b.trg.values()} & (hyp - prem)


def test_xnli_files_of_unequal_length_are_refused(tmp_path):
    """Row i of dev-xx.tsv is the translation of row i of dev-en.tsv: a missing row would shift every later pair."""
    (tmp_path / "xnli_dev").mkdir()
    (tmp_path / "xnli_dev" / "dev-en.tsv").write_text("p1\th1\tentailment\np2\th2\tneutral\n")
    (tmp_path / "xnli_dev" / "dev-ru.tsv").write_text("q1\tg1\tentailment\n")
    with pytest.raises(loaders.DataFormatError, match=r"dev-ru\.tsv: 1 rows, English has 2"):
        bucc_mini._xnli(tmp_path, "ru")

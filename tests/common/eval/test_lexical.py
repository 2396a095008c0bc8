"""The token-cosine baseline (common/eval/lexical.py) by hand: binary vectors (a repeated token counts once), the
cosine |A ∩ B| / sqrt(|A| |B|), white-space tokens as written, a tokenizer's pieces without special tokens; and the
English STS years protocol run on it (common.eval.sts_tasks.years_scores takes any pair scorer)."""
import math

import numpy as np
import pytest
from scipy.stats import rankdata

from common.data.loaders import StsPairs
from common.eval.lexical import piece_tokens, token_cosine, whitespace_tokens
from common.eval.sts_tasks import years_scores
from common.models.tokenizer import SPECIAL_TOKENS, save_wordpiece


def test_the_cosine_of_binary_token_vectors_by_hand():
    # {a, b, c} and {a, b, d, e}: 2 shared / sqrt(3 x 4); a repeated token counts once: {a, b} and {a, b} -> 1
    got = token_cosine(["a b c", "a a b", "b a", "x", "", "a", "A b."], ["a b d e", "b a", "a b b a", "y", "a", "",
                                                                         "a b"])
    assert got == pytest.approx([2 / math.sqrt(12), 1.0, 1.0, 0.0, 0.0, 0.0, 0.0])  # "A" != "a", "b." != "b"


def test_misaligned_pairs_are_refused():
    with pytest.raises(ValueError, match="2 first sentences against 1"):
        token_cosine(["a", "b"], ["a"])


def test_whitespace_tokens_are_the_split_sentence():
    assert whitespace_tokens(" the  cat\tsat ") == {"the", "cat", "sat"}


def test_piece_tokens_leave_out_special_tokens_and_stop_at_the_length(tmp_path):
    vocab = SPECIAL_TOKENS + ["the", "cat", "ca", "##t", "sat"]
    tok = save_wordpiece(vocab, tmp_path / "tok")
    ids = {t: i for i, t in enumerate(vocab)}
    assert piece_tokens(tok, 32)("the cat sat") == {ids["the"], ids["cat"], ids["sat"]}
    # an encoder cut at 4 reads [CLS] the cat [SEP]: the length counts the special tokens
    assert piece_tokens(tok, 4)("the cat sat") == {ids["the"], ids["cat"]}
    assert tok("the cat sat", truncation=True, max_length=4)["input_ids"][1:-1] == [ids["the"], ids["cat"]]
    # "the cat" and "the cat sat" over pieces: 2 / sqrt(2 x 3)
    assert token_cosine(["the cat"], ["the cat sat"], piece_tokens(tok, 32))[0] == pytest.approx(2 / math.sqrt(6))


def test_the_years_protocol_on_token_cosines():
    # STS12 holds two datasets: "a", cosines (1, 1/sqrt(2), 0) against gold (3, 2, 1), and "b", cosines (0, 1)
    # against gold (4, 5): r = 100; the year is the mean of their Pearsons, not the Pearson of the pooled pairs.
    # STS13: cosines (0, 1) against gold (2, 1): r = -100, its dataset named as one of STS12's
    s12a = StsPairs("a", ["x y", "x y", "x"], ["x y", "x", "z"], [3.0, 2.0, 1.0])
    s12b = StsPairs("b", ["p", "p"], ["q", "p"], [4.0, 5.0])
    s13 = StsPairs("a", ["p", "p"], ["q", "p"], [2.0, 1.0])
    out = years_scores({"STS12": [s12a, s12b], "STS13": [s13]}, lambda s: token_cosine(s.sent1, s.sent2))
    r12a = 100 * np.corrcoef([1, 1 / math.sqrt(2), 0], [3, 2, 1])[0, 1]
    assert out["years"]["STS12"]["mean_pearson"] == pytest.approx((r12a + 100) / 2)
    assert out["years"]["STS13"]["mean_pearson"] == pytest.approx(-100)
    assert out["average"]["mean_pearson"] == pytest.approx(((r12a + 100) / 2 - 100) / 2)
    # the Spearman of STS12's concatenation: ranks of (1, 0.707, 0, 0, 1) against (3, 2, 1, 4, 5)
    concat = 100 * np.corrcoef(rankdata([1, 1 / math.sqrt(2), 0, 0, 1]), rankdata([3, 2, 1, 4, 5]))[0, 1]
    assert out["years"]["STS12"]["concat_spearman"] == pytest.approx(concat)
    assert out["items"]["STS12"]["b"] == {"pred": [0.0, 1.0], "gold": [4.0, 5.0]}

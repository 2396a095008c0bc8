import pytest
import torch

from common import languages
from common.eval import tatoeba


def test_retrieval_accuracy_hand_computed():
    # queries 0,1,2; keys: key0 nearest to q0, q1's nearest is key2 (wrong), q2's nearest is key2.
    q = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]])
    k = torch.tensor([[1.0, 0.1], [-1.0, 0.2], [0.6, 0.8]])
    # cos(q1, key1) = 0.2/1.02 = 0.196; cos(q1, key2) = 0.8 -> wrong; q2 -> key2 (0.99) right.
    assert tatoeba.retrieval_accuracy(q, k) == pytest.approx(200 / 3)


def test_keys_are_compared_by_cosine_not_dot_product():
    """Key 1 is long: by dot product it would win q0 (3 > 1) and the accuracy would read 50."""
    q = torch.tensor([[1.0, 0.0], [0.6, 0.8]])
    k = torch.tensor([[1.0, 0.0], [3.0, 3.0]])  # cos(q0, k1) = 0.71 < 1; cos(q1, k1) = 0.99 > cos(q1, k0) = 0.6
    assert tatoeba.retrieval_accuracy(q, k) == 100.0
    assert tatoeba.retrieval_accuracy(3 * q, k) == 100.0  # the queries' length does not count either


def test_both_directions_differ():
    xx = torch.tensor([[1.0, 0.0], [0.9, 0.1]])
    en = torch.tensor([[1.0, 0.05], [0.0, 1.0]])
    r = tatoeba.evaluate_language(xx, en)
    # xx->en: both xx rows are nearest to en0 -> 1/2 correct; en->xx: en0 -> xx0 (right), en1 -> xx1 (right)
    assert r == {"xx2en": 50.0, "en2xx": 100.0}


def test_misaligned_raises():
    with pytest.raises(ValueError, match="aligned"):
        tatoeba.retrieval_accuracy(torch.ones(2, 3), torch.ones(3, 3))


def test_groups():
    assert len(languages.XTREME_36) == 36 and len(languages.LASER_14) == 14 and len(languages.DAP_28) == 28
    assert set(languages.LASER_14) <= set(languages.XTREME_36)
    per = {"aaa": {"xx2en": 50.0, "en2xx": 100.0}, "bbb": {"xx2en": 70.0, "en2xx": 80.0}}
    g = tatoeba.group_averages(per, {"ab": ["aaa", "bbb"], "ac": ["aaa", "ccc"]})
    assert g["ab"]["xx2en"] == 60.0 and g["ab"]["en2xx"] == 90.0 and g["ab"]["both"] == 75.0
    assert g["ac"]["xx2en"] is None and g["ac"]["missing"] == ["ccc"]
    assert g["all"]["n_languages"] == 2


def test_ties_go_to_the_lowest_index():
    """Keys 0-9 are one vector (tied cosines); keys 10, 11 differ. Every tied query retrieves key 0, so only
    query 0 of the tied group is right (torch.topk returns key 8 for such ties: not what LASER's argmax does)."""
    a, b, c = [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]
    keys = torch.tensor([a] * 10 + [b, c])
    queries = torch.tensor([a] * 10 + [b, c])
    assert tatoeba.nearest(queries, keys).tolist() == [0] * 10 + [10, 11]
    assert tatoeba.nearest(queries, keys, block=3).tolist() == [0] * 10 + [10, 11]  # blocks change nothing
    assert tatoeba.retrieval_accuracy(queries, keys) == pytest.approx(300 / 12)


def test_latin_script_group_holds_no_han_kana_or_hangul_language():
    assert not languages.LATIN_SCRIPT & {"cmn", "wuu", "yue", "jpn", "kor"}  # wuu (Wu Chinese) was listed once
    assert {"deu", "fra", "ces", "pol", "vie", "tur"} <= languages.LATIN_SCRIPT

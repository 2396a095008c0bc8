"""Vocabulary extension: WordPiece's split by hand, a new row the mean of its old pieces' rows (a two-piece example
by hand), old ids unchanged, and the saved folder loading with AutoModel and SentenceTransformer."""
import json

import pytest
import torch
from transformers import AutoModel, AutoTokenizer, BertConfig, BertModel

from common.models.tokenizer import SPECIAL_TOKENS, save_wordpiece
from common.models.vocabulary import (
    extend_pretrained,
    extend_tokenizer,
    grow_embeddings,
    learn_pieces,
    pieces_per_word,
    unknown_share,
    wordpiece_split,
)

VOCAB = SPECIAL_TOKENS + ["ab", "a", "b", "c", "d", "##cd", "##c", "##d", "##b", "the", "cat"]


def test_wordpiece_split_is_greedy_longest_match():
    vocab = {t: i for i, t in enumerate(VOCAB)}
    assert wordpiece_split("abcd", vocab, "[UNK]") == ["ab", "##cd"]
    assert wordpiece_split("##bcd", vocab, "[UNK]") == ["##b", "##cd"]  # a continuation piece stays one
    assert wordpiece_split("abx", vocab, "[UNK]") == ["[UNK]"]


@pytest.fixture()
def pretrained(tmp_path):
    tok = save_wordpiece(VOCAB, tmp_path / "old")
    torch.manual_seed(0)
    model = BertModel(BertConfig(vocab_size=len(VOCAB), hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                                 intermediate_size=16), add_pooling_layer=False)
    model.save_pretrained(tmp_path / "old")
    return tmp_path / "old", tok, model


def test_a_new_row_is_the_mean_of_its_old_pieces_rows(pretrained):
    _, tok, model = pretrained
    old = model.get_input_embeddings().weight.detach().clone()
    grow_embeddings(model, tok.get_vocab(), ["abcd", "##cdcd"], "[UNK]")
    new = model.get_input_embeddings().weight.detach()
    ab, cd = VOCAB.index("ab"), VOCAB.index("##cd")
    assert new.shape == (len(VOCAB) + 2, 8)
    assert torch.equal(new[: len(VOCAB)], old)  # the old rows untouched
    assert torch.allclose(new[len(VOCAB)], (old[ab] + old[cd]) / 2)  # "abcd" = ab + ##cd
    assert torch.allclose(new[len(VOCAB) + 1], old[cd])  # "##cdcd" = ##cd + ##cd


def test_extended_tokenizer_keeps_old_ids_and_uses_the_new_pieces(pretrained):
    _, tok, _ = pretrained
    ext = extend_tokenizer(tok, ["abcd"])
    assert ext.get_vocab() == {**tok.get_vocab(), "abcd": len(VOCAB)}
    assert tok.tokenize("abcd cat") == ["ab", "##cd", "cat"] and ext.tokenize("abcd cat") == ["abcd", "cat"]
    assert ext("abcd")["input_ids"] == [VOCAB.index("[CLS]"), len(VOCAB), VOCAB.index("[SEP]")]
    assert pieces_per_word(tok, ["abcd cat"]) == 1.5 and pieces_per_word(ext, ["abcd cat"]) == 1.0
    # "xyz" has no piece in either vocabulary: one [UNK] of the three pieces ab ##cd [UNK], of the two abcd [UNK]
    assert unknown_share(tok, ["abcd xyz"]) == pytest.approx(100 / 3) and unknown_share(ext, ["abcd xyz"]) == 50.0
    with pytest.raises(ValueError, match="already in the vocabulary"):
        extend_tokenizer(tok, ["cat"])


def test_pieces_learned_by_use_and_the_saved_folder_loads(pretrained, tmp_path):
    from sentence_transformers import SentenceTransformer, models

    src, tok, _ = pretrained
    st = SentenceTransformer(modules=[models.Transformer(str(src)), models.Pooling(8, pooling_mode="mean")])
    st.save(str(tmp_path / "st"))
    corpus = ["abcd abcd abcd cat", "abcd the cat", "dcba the"] * 20
    # the most used pieces the old vocabulary lacks ("abcd": 80 uses, "dcba": 20)
    assert learn_pieces(tok, corpus, 1, vocab_size=60) == ["abcd"]
    assert learn_pieces(tok, corpus, 2, vocab_size=60) == ["abcd", "dcba"]
    report = extend_pretrained(tmp_path / "st", corpus, tmp_path / "ext", max_new=1, languages={"xx": corpus},
                               vocab_size=60)
    assert report["pieces"] == ["abcd"] and report["pieces_per_word"]["xx"]["after"] < report["pieces_per_word"][
        "xx"]["before"]
    assert json.loads((tmp_path / "ext" / "vocabulary.json").read_text())["added"] == 1
    assert AutoModel.from_pretrained(tmp_path / "ext").get_input_embeddings().weight.shape[0] == len(VOCAB) + 1
    assert AutoTokenizer.from_pretrained(tmp_path / "ext").tokenize("abcd") == ["abcd"]
    loaded = SentenceTransformer(str(tmp_path / "ext"), device="cpu")
    assert loaded.encode(["abcd cat"]).shape == (1, 8)


def test_the_tokenizer_rule_extends_and_the_recipes_load_the_grown_model(pretrained, tmp_path):
    """A config encoder with ``vocabulary``: the tokenizer rule's arguments extend it, the CLI saves the grown model
    beside the tokenizer, and :func:`common.models.encoder.encoder_spec` points the recipes at it."""
    from common.models import tokenizer as cli
    from common.models.encoder import encoder_spec
    from common.models.tokenizer_sides import arguments

    src, tok, _ = pretrained
    entry = {"pretrained": str(src), "vocabulary": {"max_new": 3}, "dropout": 0.1}
    args = arguments({"encoders": {"x": entry}}, "x", "shared")
    assert args == f"--pretrained {src} --extend-vocabulary 3 --side both"
    with pytest.raises(FileNotFoundError, match="extended vocabulary"):
        encoder_spec(entry, src)
    train = tmp_path / "train.tsv"
    train.write_text("abcd cat\tthe cat\n" * 30)
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"kind": "synthetic", "train": {"xx": str(train)}, "train_languages": ["xx"],
                                    "leakage": {}, "tatoeba_dir": "", "tatoeba_languages": [], "bucc_dir": "",
                                    "bucc_pairs": []}))  # a corpus manifest (common/data/manifest.py)
    cli.main(["--corpus", str(manifest), *args.split(), "--out", str(tmp_path / "tok")])
    spec = encoder_spec(entry, tmp_path / "tok")
    assert spec.pretrained == str(tmp_path / "tok") and spec.dropout == 0.1
    grown = AutoModel.from_pretrained(spec.pretrained).get_input_embeddings().weight.shape[0]
    assert len(AutoTokenizer.from_pretrained(tmp_path / "tok")) == grown > len(VOCAB)
    assert encoder_spec({"pretrained": "p"}, None).pretrained == "p"  # no vocabulary: the entry as it is

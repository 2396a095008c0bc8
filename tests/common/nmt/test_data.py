"""One NMT setting's binarized data (common/nmt/data.py): stage 1 concatenates the fine-tuning pairs, every pair
gets its test subsets and raw references, and the leakage rule drops fine-tuning pairs that share a side with any
test set (counted in leakage.json)."""
import json

import pytest

from common.models.tokenizer import train_wordpiece

pytest.importorskip("fairseq")
from common.nmt.data import build  # noqa: E402


def _write(path, lines):
    path.write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")
    return str(path)


def test_setting_data_and_leakage(tmp_path):
    de = ["der hund", "die katze", "ein haus", "das auto", "ein baum"]
    en = ["the dog", "the cat", "a house", "the car", "a tree"]
    tok_dir = tmp_path / "tok"
    train_wordpiece(de + en, vocab_size=80, out_dir=tok_dir, min_frequency=1)
    d = tmp_path / "raw"
    d.mkdir()
    manifest = {"translation": {
        "de-en": {"train": [_write(d / "train.de", de[:4]), _write(d / "train.en", en[:4])],
                  "valid": [_write(d / "valid.de", de[:2]), _write(d / "valid.en", en[:2])],
                  # "The cat." leaks on the English side only (normalized: case and punctuation ignored)
                  "tests": {"t": [_write(d / "test.de", [de[4], "eine maus"]),
                                  _write(d / "test.en", [en[4], "The cat."])]},
                  "tokenized_bleu": []}}}
    build(manifest, tok_dir, ["de-en"], {"de-en": ["t"]}, tmp_path / "out")
    out = tmp_path / "out"
    leak = json.loads((out / "leakage.json").read_text())
    assert leak["dropped"] == {"de-en.train": 1, "de-en.valid": 1} and leak["dropped_total"] == 2
    assert json.loads((out / "stage1" / "counts.json").read_text()) == {"train": 3, "valid": 1}
    assert json.loads((out / "de-en" / "counts.json").read_text()) == {"train": 3, "valid": 1, "test_t": 2}
    assert (out / "de-en" / "references" / "test_t.txt").read_text().splitlines() == [en[4], "The cat."]
    with pytest.raises(KeyError, match="no test set 'u'"):
        build(manifest, tok_dir, ["de-en"], {"de-en": ["u"]}, tmp_path / "out2")
    # a named alternative training set (HICTL's Table 4 trains on WMT'14 where Table 5 trains on IWSLT)
    manifest["translation"]["de-en"]["train_sets"] = {
        "wmt14": {"train": [_write(d / "wmt.de", de[2:4]), _write(d / "wmt.en", en[2:4])],
                  "valid": [_write(d / "wmt_valid.de", de[3:4]), _write(d / "wmt_valid.en", en[3:4])]}}
    build(manifest, tok_dir, ["de-en"], {"de-en": ["t"]}, tmp_path / "out3", train_set="wmt14")
    assert json.loads((tmp_path / "out3" / "de-en" / "counts.json").read_text()) == {"train": 2, "valid": 1,
                                                                                      "test_t": 2}
    assert (tmp_path / "out3" / "filtered" / "de-en" / "train.de").read_text().splitlines() == de[2:4]
    with pytest.raises(KeyError, match="no training set 'wmt19'"):
        build(manifest, tok_dir, ["de-en"], {"de-en": ["t"]}, tmp_path / "out4", train_set="wmt19")


def test_long_training_pairs_are_dropped_and_test_sentences_kept_whole(tmp_path):
    from common.nmt.binarize import binarize

    tok_dir = tmp_path / "tok"
    words = ["der", "hund", "the", "dog", "sehr", "very"]
    train_wordpiece([" ".join(words)] * 3, vocab_size=60, out_dir=tok_dir, min_frequency=1)
    src = _write(tmp_path / "s.de", ["der hund", "der hund " + "sehr " * 20])
    tgt = _write(tmp_path / "t.en", ["the dog", "the dog"])
    counts = binarize(tok_dir, tmp_path / "bin", ["en"], {"train": [("de", "en", src, tgt)],
                                                          "test_x": [("de", "en", src, tgt)]}, max_length=8)
    assert counts == {"train": 1, "train_too_long": 1, "test_x": 2}  # [CLS] der hund sehr x 20 [SEP]: 24 > 8
    from fairseq.data import indexed_dataset

    ds = indexed_dataset.make_dataset(str(tmp_path / "bin" / "test_x.src-tgt.src"), impl="mmap")
    assert ds.sizes.tolist() == [4, 24]  # not truncated to max_length (ds keeps the memory map open)


def test_binarized_in_chunks_as_in_one_piece(tmp_path, monkeypatch):
    """A split streams through the tokenizer CHUNK pairs at a time; the datasets equal those of one piece."""
    from fairseq.data import indexed_dataset

    from common.nmt import binarize as b

    tok_dir = tmp_path / "tok"
    train_wordpiece(["der hund the dog sehr very"] * 3, vocab_size=60, out_dir=tok_dir, min_frequency=1)
    src = _write(tmp_path / "s.de", [f"der {'sehr ' * (i % 9)}hund" for i in range(23)])
    tgt = _write(tmp_path / "t.en", [f"the {'very ' * (i % 5)}dog" for i in range(23)])
    got = {}
    for chunk in (4, 1000):
        monkeypatch.setattr(b, "CHUNK", chunk)
        counts = b.binarize(tok_dir, tmp_path / f"bin{chunk}", ["en"], {"train": [("de", "en", src, tgt)] * 2},
                            max_length=10)
        ds = indexed_dataset.make_dataset(str(tmp_path / f"bin{chunk}" / "train.src-tgt.src"), impl="mmap")
        got[chunk] = (counts, [ds[i].tolist() for i in range(len(ds))])
    assert got[4] == got[1000] and got[4][0]["train"] + got[4][0]["train_too_long"] == 46

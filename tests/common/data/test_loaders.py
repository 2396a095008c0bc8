import gzip

import pytest

from common.data import loaders
from common.io import DataFormatError


def write(p, text: str | bytes):
    p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return p


def test_parallel_misaligned_names_files(tmp_path):
    a, b = write(tmp_path / "a.de", "x\ny\nz\n"), write(tmp_path / "a.en", "x\ny\n")
    with pytest.raises(DataFormatError,
                       match=r"a\.en:3: misaligned parallel files: .*a\.de has 3 lines, .*a\.en has 2"):
        loaders.read_parallel(a, b)


@pytest.mark.parametrize("short", ["src", "trg"])
def test_streamed_parallel_stops_where_one_file_ends(tmp_path, short):
    """iter_parallel yields the aligned pairs, then names the longer file and its first line without a partner."""
    long_side = write(tmp_path / "long.txt", "x\ny\nz\n")
    short_side = write(tmp_path / "short.txt", "a\nb\n")
    paths = (short_side, long_side) if short == "src" else (long_side, short_side)
    pairs = loaders.iter_parallel(*paths)
    assert [next(pairs), next(pairs)] == ([("a", "x"), ("b", "y")] if short == "src" else [("x", "a"), ("y", "b")])
    with pytest.raises(DataFormatError, match=r"long\.txt:3: misaligned parallel files: .*short\.txt ends after 2"):
        next(pairs)


def test_bad_utf8_names_file_and_line(tmp_path):
    a = write(tmp_path / "bad.txt", b"ok\nstill ok\nbroken \xff here\n")
    with pytest.raises(DataFormatError, match=r"bad\.txt:3: invalid UTF-8"):
        loaders.read_lines(a)


def test_gzip_and_crlf(tmp_path):
    p = tmp_path / "x.en.gz"
    with gzip.open(p, "wb") as fh:
        fh.write(b"a\r\nb\r\n")
    assert loaders.read_lines(p) == ["a", "b"]


def test_tsv_wrong_columns(tmp_path):
    p = write(tmp_path / "pairs.tsv", "a\tb\nc\td\te\n")
    with pytest.raises(DataFormatError, match=r"pairs\.tsv:2: expected 2 tab-separated columns, found 3"):
        loaders.read_tsv_pairs(p)


def test_bucc_unknown_gold_id_and_duplicates(tmp_path):
    write(tmp_path / "de-en.training.de", "de-1\tHallo\nde-2\tWelt\n")
    write(tmp_path / "de-en.training.en", "en-1\tHello\nen-2\tWorld\n")
    write(tmp_path / "de-en.training.gold", "de-1\ten-1\nde-9\ten-2\n")
    with pytest.raises(DataFormatError, match=r"de-en\.training\.gold:2: unknown source id 'de-9'"):
        loaders.read_bucc(tmp_path, "de-en", "training")
    write(tmp_path / "de-en.training.gold", "de-1\ten-1\n")
    split = loaders.read_bucc(tmp_path, "de-en", "training")
    assert split.gold == {("de-1", "en-1")} and split.src["de-2"] == "Welt"
    write(tmp_path / "de-en.training.de", "de-1\tHallo\nde-1\tWelt\n")
    with pytest.raises(DataFormatError, match=r"\.de:2: duplicate sentence id 'de-1'"):
        loaders.read_bucc(tmp_path, "de-en", "training")


def test_sts_malformed_and_out_of_range_scores(tmp_path):
    inp = write(tmp_path / "STS.input.x.txt", "a\tb\nc\td\ne\tf\n")
    write(tmp_path / "STS.gs.x.txt", "1.0\n\nabc\n")
    with pytest.raises(DataFormatError, match=r"STS\.gs\.x\.txt:3: malformed score 'abc'"):
        loaders.read_sts_senteval(inp, tmp_path / "STS.gs.x.txt")
    write(tmp_path / "STS.gs.x.txt", "1.0\n\n7\n")
    with pytest.raises(DataFormatError, match=r":3: score 7.0 outside \[0.0, 5.0\]"):
        loaders.read_sts_senteval(inp, tmp_path / "STS.gs.x.txt")
    write(tmp_path / "STS.gs.x.txt", "1.0\n\n4.5\n")
    s = loaders.read_sts_senteval(inp, tmp_path / "STS.gs.x.txt")
    assert s.scores == [1.0, 4.5] and s.sent1 == ["a", "e"]  # empty gold line = unscored pair
    write(tmp_path / "STS.gs.x.txt", "2.0\n\n2.0\n")  # a correlation with equal scores is undefined (NaN)
    with pytest.raises(DataFormatError, match=r"STS\.gs\.x\.txt: 2 scored pairs, 1 distinct score"):
        loaders.read_sts_senteval(inp, tmp_path / "STS.gs.x.txt")
    write(inp, "a\tb\nc\td\tstray\ne\tf\n")  # a tab inside a sentence would cut the second sentence
    write(tmp_path / "STS.gs.x.txt", "1.0\n2.0\n4.5\n")
    with pytest.raises(DataFormatError, match=r"STS\.input\.x\.txt:2: expected 'sentence1<TAB>sentence2', found 3"):
        loaders.read_sts_senteval(inp, tmp_path / "STS.gs.x.txt")


def test_an_empty_tatoeba_language_is_refused(tmp_path):
    write(tmp_path / "tatoeba.xyz-eng.xyz", "")
    write(tmp_path / "tatoeba.xyz-eng.eng", "")
    with pytest.raises(DataFormatError, match=r"tatoeba\.xyz-eng\.xyz: no Tatoeba pairs for xyz"):
        loaders.read_tatoeba(tmp_path, "xyz")


def test_sts17_count_mismatch_is_refused(tmp_path):
    inp = write(tmp_path / "STS.input.track6.tr-en.txt", "a\tb\nc\td\ne\tf\ng\th\n")
    gold = write(tmp_path / "STS.gs.track6.tr-en.txt", "1\n2\n")
    with pytest.raises(DataFormatError, match="2 scores for 4 lines"):
        loaders.read_sts17(inp, gold)
    assert len(loaders.read_sts17(inp, gold, allow_gold_prefix=True)) == 2


def test_xnli_unknown_label(tmp_path):
    p = write(tmp_path / "dev-xx.tsv", "p\th\tentailment\np\th\tmaybe\n")
    with pytest.raises(DataFormatError, match=r"dev-xx\.tsv:2: unknown label 'maybe'"):
        loaders.read_xnli_tsv(p)


def test_real_files_load(data_root):
    xx, en = loaders.read_tatoeba(data_root / "tatoeba_v1", "cmn")
    assert len(xx) == len(en) == 1000
    assert len(loaders.tatoeba_languages(data_root / "tatoeba_v1")) == 112
    assert len(loaders.read_stsb(data_root / "sts" / "stsbenchmark" / "sts-test.csv")) == 1379
    assert len(loaders.read_sick(data_root / "sts" / "sick" / "SICK_test_annotated.txt")) == 4927
    assert len(loaders.read_xnli_tsv(data_root / "xnli_dev" / "dev-de.tsv")) == 2490
    assert len(loaders.read_multi30k(data_root / "multi30k" / "raw", "val", "en", "de")) == 1014
    s12 = data_root / "sts" / "sts12-16" / "STS12-en-test"
    assert len(loaders.read_sts_senteval(s12 / "STS.input.MSRpar.txt", s12 / "STS.gs.MSRpar.txt")) == 750
    sts17 = data_root / "sts" / "sts17"
    with pytest.raises(DataFormatError, match="250 scores for 500 lines"):
        loaders.read_sts17(sts17 / "STS2017.eval.v1.1" / "STS.input.track6.tr-en.txt",
                           sts17 / "STS2017.gs" / "STS.gs.track6.tr-en.txt")
    assert len(loaders.read_sts17(sts17 / "STS2017.eval.v1.1" / "STS.input.track5.en-en.txt",
                                  sts17 / "STS2017.gs" / "STS.gs.track5.en-en.txt")) == 250

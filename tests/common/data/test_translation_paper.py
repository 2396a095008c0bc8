"""HICTL's paper-scale translation data (common/data/translation_paper.py) from a local mirror serving files in the
real formats: IWSLT ``train.tags`` and XML, WMT SGML in the archives and member paths of sacreBLEU's registry,
tab-separated Europarl v9, FLoRes v1 text files."""
import gzip
import hashlib
from types import SimpleNamespace

import pytest

from common.data import download as dl
from common.data import translation_paper as tp
from common.data.loaders import DataFormatError
from common.io import read_lines

from .mirror import _tar_bz2, serve


def _segs(lines: list[str], pad: str = "") -> str:
    body = "".join(f'<seg id="{i}">{pad}{s}{pad}</seg>\n' for i, s in enumerate(lines, start=1))
    return f'<srcset setid="x" srclang="any">\n<doc docid="d1" genre="news">\n{body}</doc>\n</srcset>\n'


def _iwslt_xml(lines: list[str]) -> str:  # IWSLT: talk metadata lines, then segments with spaces inside the tags
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<mteval>\n<refset setid="iwslt" srclang="any" trglang="en">\n'
            '<doc docid="535" genre="lectures">\n<url>http://www.ted.com/talks/x.html</url>\n<talkid>535</talkid>\n'
            + "".join(f'<seg id="{i}"> {s} </seg>\n' for i, s in enumerate(lines, start=1)) + "</doc>\n</refset>\n")


def _tags(lines: list[str], lang: str) -> tuple[str, list[str]]:
    """IWSLT train.tags: talk metadata lines among the sentences; and the sentences a reader should return
    (fairseq's prepare-iwslt14.sh keeps the titles and descriptions, drops the other tag lines)."""
    def meta(talk: int) -> str:
        return (f"<url>http://www.ted.com/talks/{talk}.html</url>\n<keywords>talks, x</keywords>\n"
                f"<speaker>A B</speaker>\n<talkid>{talk}</talkid>\n<title>Title {lang} {talk}</title>\n"
                f"<description>TED talk {lang} {talk}</description>\n")
    text = meta(1) + "\n".join(lines[:5]) + "\n" + meta(2) + "\n".join(lines[5:]) + "\n"
    return text, [f"Title {lang} 1", f"TED talk {lang} 1", *lines[:5], f"Title {lang} 2", f"TED talk {lang} 2",
                  *lines[5:]]


def _text(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


class _Registry(dict):
    """sacreBLEU's registry with the md5 sums of the files this mirror serves (the archives and member paths are
    the real registry's)."""

    def serve(self, root, name: str, members: dict[str, str], index: int = 0) -> None:
        ds = self.setdefault(name, SimpleNamespace(data=list(tp.DATASETS[name].data),
                                                   md5=list(tp.DATASETS[name].md5),
                                                   langpairs=tp.DATASETS[name].langpairs))
        body = _tar_bz2(members, "w:gz")
        serve(root, ds.data[index], body)
        ds.md5[index] = hashlib.md5(body).hexdigest()


def test_paper_translation_from_local_mirror(server, tmp_path, monkeypatch):
    root, base = server
    reg = _Registry()
    # IWSLT'14 De-En (fairseq's copy): 47 training lines, one with an empty side; every 23rd pair validates
    de = [f"Satz {i}." for i in range(47)]
    en = [f"Sentence {i}." for i in range(47)]
    en[10] = ""  # (line 14 of the reader's output, after a title and a description)
    sets = ["TED.dev2010", "TEDX.dev2012", "TED.tst2010", "TED.tst2011", "TED.tst2012"]
    (tags_de, de), (tags_en, en) = _tags(de, "de"), _tags(en, "en")  # de, en: what the reader returns
    members = {"de-en/train.tags.de-en.de": tags_de, "de-en/train.tags.de-en.en": tags_en}
    for k, s in enumerate(sets):
        members[f"de-en/IWSLT14.{s}.de-en.de.xml"] = _iwslt_xml([f"Test {k}."])
        members[f"de-en/IWSLT14.{s}.de-en.en.xml"] = _iwslt_xml([f"Test en {k}."])
    serve(root, "http://dl.fbaipublicfiles.com/fairseq/data/iwslt14/de-en.tgz", _tar_bz2(members, "w:gz"))
    # WMT'14 En-De training data (fairseq's recipe) and validation / test SGML
    serve(root, f"{tp.STATMT}/wmt13/training-parallel-europarl-v7.tgz", _tar_bz2({
        "training/europarl-v7.de-en.de": _text(["EP de."]), "training/europarl-v7.de-en.en": _text(["EP en."])},
        "w:gz"))
    serve(root, f"{tp.STATMT}/wmt13/training-parallel-commoncrawl.tgz", _tar_bz2({
        "commoncrawl.de-en.de": _text(["CC de."]), "commoncrawl.de-en.en": _text(["CC en."]),
        "commoncrawl.cs-en.cs": _text(["CC cs."]), "commoncrawl.cs-en.en": _text(["CC en (cs)."])}, "w:gz"))
    serve(root, f"{tp.STATMT}/wmt14/training-parallel-nc-v9.tgz", _tar_bz2({
        "training/news-commentary-v9.de-en.de": _text(["NC de."]),
        "training/news-commentary-v9.de-en.en": _text(["NC en."])}, "w:gz"))
    for name, year in (("wmt12", 2012), ("wmt13", 2013)):
        reg.serve(root, name, {f"test/newstest{year}-src.en.sgm": _segs([f"nt{year} en."]),
                               f"test/newstest{year}-src.de.sgm": _segs([f"nt{year} de."])})
    reg.serve(root, "wmt14/full", {
        "test-full/newstest2014-deen-src.de.sgm": _segs(["Quelle de."]),
        "test-full/newstest2014-deen-ref.en.sgm": _segs(["Reference en."]),
        "test-full/newstest2014-deen-src.en.sgm": _segs(["Source en."]),
        "test-full/newstest2014-deen-ref.de.sgm": _segs(["Referenz de."])})
    # WMT'19 Cs-En: tab-separated Europarl v9 / News Commentary v14 (one line with an empty Czech side)
    serve(root, f"{tp.STATMT}/europarl/v9/training/europarl-v9.cs-en.tsv.gz", gzip.compress(b"EP cs.\tEP en (cs).\n"))
    # a row without its tab (skipped on both sides), a form feed and a line separator inside sentences (not line
    # breaks: the files split at \n only), Windows line ends
    serve(root, "https://data.statmt.org/news-commentary/v14/training/news-commentary-v14.cs-en.tsv.gz",
          gzip.compress("\tNo Czech.\r\nno tab here\r\nNC\x0ccs.\tNC\u2028en (cs).\r\n".encode()))
    serve(root, "https://data.statmt.org/wikititles/v1/wikititles-v1.cs-en.tsv.gz", gzip.compress(b"Praha\tPrague\n"))
    reg.serve(root, "wmt17", {"test/newstest2017-csen-src.cs.sgm": _segs(["nt17 cs."]),
                              "test/newstest2017-csen-ref.en.sgm": _segs(["nt17 en."])})
    reg.serve(root, "wmt18", {"test/newstest2018-csen-src.cs.sgm": _segs(["nt18 cs.", "nt18  cs\t2."]),
                              "test/newstest2018-csen-ref.en.sgm": _segs(["nt18 en.", ""])})
    # Table 6's test-only languages: It (IWSLT'17 multilingual), Ne (FLoRes v1)
    # (the IWSLT'17 multilingual archives are placed by hand: wit3.fbk.eu no longer serves them)
    manual = tmp_path / "manual"
    manual.mkdir()
    (manual / "iwslt17-mltlng-it-en.tgz").write_bytes(_tar_bz2({
        "it-en/IWSLT17.TED.tst2017.mltlng.it-en.it.xml": _iwslt_xml(["Ciao."])}, "w:gz"))
    (manual / "iwslt17-mltlng-en-it.tgz").write_bytes(_tar_bz2({
        "en-it/IWSLT17.TED.tst2017.mltlng.en-it.en.xml": _iwslt_xml(["Hello."])}, "w:gz"))
    stem = "wikipedia_en_ne_si_test_sets/wikipedia.devtest.ne-en"
    flores_sha = serve(root, f"https://raw.githubusercontent.com/facebookresearch/flores/{tp.FLORES_COMMIT}/"
                             "previous_releases/floresv1/data/wikipedia_en_ne_si_test_sets.tgz",
                       _tar_bz2({f"{stem}.ne": _text(["नमस्ते ।"]), f"{stem}.en": _text(["Hello ."])}, "w:gz"))
    monkeypatch.setattr(tp, "DATASETS", {**tp.DATASETS, **reg})
    monkeypatch.setattr(tp, "FLORES_V1_SHA256", flores_sha)
    monkeypatch.setattr(tp, "LANGUAGES", tp._languages())  # the declarations, with this mirror's pins

    d = dl.Downloader(tmp_path / "downloads", base_url=base)
    m = tp.paper_translation(d, tmp_path, {"languages": ["de", "cs", "it", "ne"], "alternatives": ["wmt14"]})

    def lines(pair: str, *keys: str) -> list[list[str]]:
        entry = m[pair]
        for k in keys:
            entry = entry[k]
        return [read_lines(f) for f in entry]

    kept = [i for i in range(len(de)) if en[i]]  # the pair with an empty side dropped, then every 23rd held out
    assert len(kept) == 50
    train_i = [i for k, i in enumerate(kept, start=1) if k % 23]
    valid_i = [i for k, i in enumerate(kept, start=1) if not k % 23]
    assert lines("de-en", "train") == [[de[i] for i in train_i], [en[i] for i in train_i]]
    assert lines("de-en", "valid") == [[de[i] for i in valid_i], [en[i] for i in valid_i]]  # footnote 2's split
    assert lines("en-de", "train") == [[en[i] for i in train_i], [de[i] for i in train_i]]
    # footnote 2: dev2010, dev2012, tst2010, tst2011, tst2012 concatenated, in that order; tags and padding gone
    assert lines("de-en", "tests", "iwslt14_test") == [[f"Test {k}." for k in range(5)],
                                                       [f"Test en {k}." for k in range(5)]]
    assert lines("en-de", "tests", "iwslt14_test")[0] == [f"Test en {k}." for k in range(5)]
    # Table 4: WMT'14 training data and newstest2012 + 2013 under train_sets, newstest2014 in each direction's files
    assert lines("de-en", "train_sets", "wmt14", "train") == [["EP de.", "CC de.", "NC de."],
                                                              ["EP en.", "CC en.", "NC en."]]
    assert lines("en-de", "train_sets", "wmt14", "valid") == [["nt2012 en.", "nt2013 en."],
                                                              ["nt2012 de.", "nt2013 de."]]
    assert lines("de-en", "tests", "wmt14_newstest2014") == [["Quelle de."], ["Reference en."]]
    assert lines("en-de", "tests", "wmt14_newstest2014") == [["Source en."], ["Referenz de."]]
    # Cs-En: the empty-sided training pair dropped; a test set is read whole (an empty reference line stays)
    assert lines("cs-en", "train") == [["EP cs.", "NC\x0ccs.", "CC cs.", "Praha"],
                                       ["EP en (cs).", "NC\u2028en (cs).", "CC en (cs).", "Prague"]]
    assert lines("cs-en", "valid") == [["nt17 cs."], ["nt17 en."]]
    # whitespace runs inside a segment become one space, as sacreBLEU reads it
    assert lines("cs-en", "tests", "wmt18_newstest2018") == [["nt18 cs.", "nt18 cs 2."], ["nt18 en.", ""]]
    assert m["en-cs"]["tests"] == {} and m["en-cs"]["train"] == m["cs-en"]["train"][::-1]
    # test-only languages: the xx-en direction alone, no training data
    assert lines("it-en", "tests", "iwslt17_test") == [["Ciao."], ["Hello."]]
    assert m["it-en"]["train"] is None and "en-it" not in m
    assert lines("ne-en", "tests", "flores_devtest") == [["नमस्ते ।"], ["Hello ."]]
    assert all(entry["tokenized_bleu"] == [] for entry in m.values())  # raw references: BLEU tokenizes both
    # every archive fetched and verified once: the md5 pins of sacreBLEU's registry held
    assert not (tmp_path / "downloads" / "translation" / "sacrebleu" / "wmt18" / "test.tgz.part").exists()


def test_md5_pin_mismatch_is_an_error(server, tmp_path):
    root, base = server
    serve(root, "https://example.org/test.tgz", b"not the registry's file")
    res = dl.Resource("x/test.tgz", "https://example.org/test.tgz", md5="0" * 32)
    with pytest.raises(dl.ChecksumError, match="md5"):
        dl.Downloader(tmp_path, base_url=base).fetch(res)
    assert not (tmp_path / "x" / "test.tgz").exists()


def test_misaligned_bitext_names_both_members(server, tmp_path):
    root, base = server
    serve(root, "https://example.org/v1/pair.tgz", _tar_bz2({"a.xx": "one\ntwo\n", "a.en": "one\n"}, "w:gz"))
    res = dl.Resource("pair.tgz", "https://example.org/v1/pair.tgz", revision="v1")
    d = dl.Downloader(tmp_path, base_url=base)
    bitext = tp.Bitext(tp.Side(res, "a.xx"), tp.Side(res, "a.en"))
    with pytest.raises(DataFormatError, match=r"pair.tgz:a.xx has 2 sentences.*pair.tgz:a.en has 1"):
        list(tp.read_bitext(d.fetch, bitext))
    missing = tp.Bitext(tp.Side(res, "a.xx"), tp.Side(res, "b.en"))
    with pytest.raises(DataFormatError, match="no file 'b.en'"):
        list(tp.read_bitext(d.fetch, missing))


def test_declarations_read_sacrebleu_registry():
    """The WMT / IWSLT'17 test sets are the registry's archives, md5 sums and member paths, per direction."""
    t = tp.LANGUAGES["de"].tests["en-de"]["wmt14_newstest2014"]
    assert t.src.resource.url == "https://statmt.org/wmt14/test-full.tgz"
    assert t.src.resource.md5 == tp.DATASETS["wmt14/full"].md5[0]
    assert (t.src.member, t.tgt.member) == ("test-full/newstest2014-deen-src.en.sgm",
                                            "test-full/newstest2014-deen-ref.de.sgm")
    zh = tp.LANGUAGES["zh"].tests["en-zh"]["iwslt17_test"]  # IWSLT'17: one archive per direction
    assert zh.src.resource.url.endswith("/texts/en/zh/en-zh.tgz")
    assert zh.tgt.resource.url.endswith("/texts/zh/en/zh-en.tgz")
    assert zh.src.resource.md5 != zh.tgt.resource.md5
    assert set(tp.LANGUAGES) == {"de", "es", "fr", "zh", "ro", "cs", "hi", "it", "nl", "ne", "si", "gu"}


def test_a_file_to_place_by_hand_says_where(tmp_path):
    d = dl.Downloader(tmp_path / "downloads")
    with pytest.raises(FileNotFoundError, match=r"2017-01-mted-test release.*texts/nl/en/nl-en.tgz.*manual/"
                                                r"iwslt17-mltlng-nl-en.tgz"):
        tp.paper_translation(d, tmp_path, {"languages": ["nl"]})


def test_two_column_file_is_read_once_in_either_orientation(tmp_path, monkeypatch, caplog):
    """Both sides of a TSV bitext come from one pass over the file; malformed rows and empty sides are dropped from
    both; bad UTF-8 names the file and line."""
    path = tmp_path / "ep.cs-en.tsv.gz"
    path.write_bytes(gzip.compress(b"Dobry den.\tGood day.\nno tab here\n\tEmpty Czech.\nDiky\tThanks\n"))
    res = dl.Resource("ep.cs-en.tsv.gz", "https://example.org/ep.cs-en.tsv.gz", revision="v9")
    opened = []
    real_open = tp._open_bytes
    monkeypatch.setattr(tp, "_open_bytes", lambda p, m: opened.append(p) or real_open(p, m))
    bitext = tp.Bitext(tp.Side(res, None, "tsv0"), tp.Side(res, None, "tsv1"))
    with caplog.at_level("WARNING"):
        assert list(tp.read_bitext(lambda r: path, bitext)) == [("Dobry den.", "Good day."), ("Diky", "Thanks")]
    assert len(opened) == 1 and "1 lines without 2 tab-separated columns" in caplog.text
    assert list(tp.read_bitext(lambda r: path, bitext.flipped(), drop_empty=False)) == [
        ("Good day.", "Dobry den."), ("Empty Czech.", ""), ("Thanks", "Diky")]
    path.write_bytes(gzip.compress(b"a\tb\nc\xff\td\n"))
    with pytest.raises(DataFormatError, match=r"ep.cs-en.tsv.gz:2: not UTF-8"):
        list(tp.read_bitext(lambda r: path, bitext))

"""Dirty bitext at real sizes: what a prep rule drops is counted by reason, misaligned files stop with the file and
line, and an OPUS release served over HTTP with every kind of dirt comes out clean with its counts."""
import pytest

from common.data import download as dl
from common.data.cleaning import PairCleaner
from common.io import DataFormatError

from .mirror import _zip, serve


def test_each_pair_is_dropped_for_its_first_reason():
    c = PairCleaner(max_chars=10)
    pairs = [("ok", "fine", 1), ("", "x", 2), ("a\udcff", "", 3), ("   ", "y", 4), ("x" * 11, "y", 5),
             ("short", "also short", 6)]
    assert list(c.clean(pairs, "src")) == [("ok", "fine", 1), ("short", "also short", 6)]
    assert c.report() == {"src": {"kept": 2, "bad_bytes": 1, "blank": 2, "overlong": 1}}


def zipped(members: dict[str, bytes]) -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def test_a_dirty_opus_release_over_http(server, tmp_path):
    root, base = server
    de = b"Hallo Welt\r\n\nkaputt \xff\xfe Bytes\n" + b"lang " * 300 + b"\nEnde\n"
    en = b"Hello world\r\nblank on the other side\nbroken bytes\nlong\nEnd\n"
    serve(root, dl.opus_moses("CCMatrix", "v1", "de", "en").url,
          zipped({"CCMatrix.de-en.de": de, "CCMatrix.de-en.en": en}))
    d = dl.Downloader(tmp_path / "dl", base_url=base)
    cleaner, skipped = PairCleaner(), []
    pairs = list(dl.opus_pairs(d, [["CCMatrix", "v1"], ["WikiMatrix", "v1"]], "de", "en", skipped, cleaner))
    assert pairs == [("Hallo Welt", "Hello world"), ("Ende", "End")]
    assert cleaner.report() == {"CCMatrix/v1 de-en": {"kept": 2, "bad_bytes": 1, "blank": 1, "overlong": 1}}
    assert skipped == ["WikiMatrix/v1 de-en"]  # not served: HTTP 404, listed


def test_misaligned_members_name_the_file_and_line(server, tmp_path):
    root, base = server
    serve(root, dl.opus_moses("Tanzil", "v1", "de", "en").url,
          _zip({"Tanzil.de-en.de": "eins\nzwei\ndrei\n", "Tanzil.de-en.en": "one\ntwo\n"}))
    path = dl.Downloader(tmp_path / "dl", base_url=base).fetch(dl.opus_moses("Tanzil", "v1", "de", "en"))
    with pytest.raises(DataFormatError, match=r"Tanzil\.de-en\.en:3: misaligned members: Tanzil\.de-en\.en ends at "
                                              r"line 2"):
        list(dl.iter_opus_pairs(path, "Tanzil", "de", "en"))

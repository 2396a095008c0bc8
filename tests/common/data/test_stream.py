"""Corpora read by position (common/data/stream.py): the same items as the list readers, errors naming file and
line, an index built once and rebuilt when the file changes; the papers' loaders give the lists they gave."""
import os
import random

import numpy as np
import pytest

from common.data.loaders import read_tsv_pairs
from common.data.stream import Concat, IndexedLines, Mapped, Picked, TsvPairs, tagged
from common.io import DataFormatError, read_lines


def write(path, data: bytes):
    path.write_bytes(data)
    return path


def test_lines_and_pairs_equal_the_list_readers(tmp_path):
    f = write(tmp_path / "a.tsv", "\ufeffhola\thello\r\nadiós\tbye\n\tempty left\nfin\tend".encode())
    assert list(TsvPairs(f)) == read_tsv_pairs(f)
    assert list(IndexedLines(f)) == read_lines(f) and len(IndexedLines(f)) == 4
    g = write(tmp_path / "b.txt", b"one\n\n  \ntwo\n\t\nthree\n")
    assert list(IndexedLines(g, skip_blank=True)) == [s for s in read_lines(g) if s.strip()] == ["one", "two", "three"]
    assert IndexedLines(g, skip_blank=True).line_number(2) == 6  # "three" is line 6 of the file
    assert len(IndexedLines(write(tmp_path / "empty.txt", b""))) == 0


def test_bad_input_names_file_and_line(tmp_path):
    f = write(tmp_path / "bad.tsv", b"a\tb\nc\td\n\xff\xfe\tx\n")
    pairs = TsvPairs(f)
    assert pairs[1] == ("c", "d")
    with pytest.raises(DataFormatError, match=r"bad\.tsv:3: invalid UTF-8"):
        pairs[2]
    g = write(tmp_path / "cols.tsv", b"a\tb\nc\n")
    with pytest.raises(DataFormatError, match=r"cols\.tsv:2: expected 2 tab-separated columns, found 1"):
        TsvPairs(g)[1]
    with pytest.raises(FileNotFoundError, match="missing.tsv"):
        TsvPairs(tmp_path / "missing.tsv")


def test_the_index_is_kept_and_rebuilt_when_the_file_changes(tmp_path):
    f = write(tmp_path / "c.txt", b"x\ny\n")
    assert list(IndexedLines(f)) == ["x", "y"]
    index = tmp_path / "c.txt.lines.v2.i64"
    stat = f.stat()
    # the file's size and time, then (start, end) of each line
    assert np.fromfile(index, dtype=np.int64).tolist() == [4, stat.st_mtime_ns, 0, 1, 2, 3]
    kept = index.stat().st_mtime_ns
    assert list(IndexedLines(f)) == ["x", "y"] and index.stat().st_mtime_ns == kept  # not rebuilt
    write(f, b"longer line\nz\nw\n")
    os.utime(f, ns=(kept + 5_000_000_000,) * 2)
    assert list(IndexedLines(f)) == ["longer line", "z", "w"]
    # replaced by a file of the same size with an older time (cp -p, rsync -a): only the time tells them apart
    write(f, b"longer\nline z\nw\n")
    os.utime(f, ns=(stat.st_mtime_ns - 10_000_000_000,) * 2)
    assert list(IndexedLines(f)) == ["longer", "line z", "w"]


def test_composition_positions_and_slices(tmp_path):
    a = TsvPairs(write(tmp_path / "a.tsv", b"1\ta\n2\tb\n"))
    b = TsvPairs(write(tmp_path / "b.tsv", b"3\tc\n"))
    both = Concat([tagged(a, 7), Concat([]), tagged(b, 8)])
    assert list(both) == [("1", "a", 7), ("2", "b", 7), ("3", "c", 8)]
    assert both[-1] == ("3", "c", 8) and both[1:] == [("2", "b", 7), ("3", "c", 8)]
    with pytest.raises(IndexError):
        both[3]
    picked = Mapped(Picked(both, np.array([2, 0, 2])), lambda e: e[0])
    assert list(picked) == ["3", "1", "3"]


def test_papers_loaders_give_the_lists_they_gave(tmp_path):
    """DAP, VMSST and MoCo-BERT: the pairs in file order with their ids; HICTL: the same monolingual sample as the
    list version (random.sample over positions picks what it picked over the sentences)."""
    from papers.dap.train import load_examples as dap_examples
    from papers.hictl.data import MONO, PARALLEL
    from papers.hictl.train import load_examples as hictl_examples

    spa = write(tmp_path / "spa.tsv", b"uno\tone\ndos\ttwo\n")
    fra = write(tmp_path / "fra.tsv", b"un\tone\n")
    manifest = {"train": {"spa": str(spa), "fra": str(fra)}}
    assert list(dap_examples(manifest)) == [("un", "one", 1), ("uno", "one", 2), ("dos", "two", 2)]
    mono = write(tmp_path / "mono.txt", "\n".join(f"s{i}" if i % 5 else " " for i in range(40)).encode())
    manifest["monolingual"] = {"xx": str(mono)}
    pool = [s for s in read_lines(mono) if s.strip()]
    for parallel, fraction in ((True, 0.5), (False, 0.5), (True, 0.95)):
        pairs = [(a, b, PARALLEL) for p in (fra, spa) for a, b in read_tsv_pairs(p)]
        n_mono = round(len(pairs) * fraction / (1 - fraction))
        want = n_mono if parallel else len(pairs) + n_mono
        rng = random.Random(1)
        sample = rng.sample(pool, want) if want <= len(pool) else [rng.choice(pool) for _ in range(want)]
        expected = (pairs if parallel else []) + [(s, None, MONO) for s in sample]
        assert list(hictl_examples(manifest, fraction, parallel)) == expected


def test_without_sources_leaves_out_the_lines_of_a_source(tmp_path):
    from common.data.stream import without_sources

    pairs = TsvPairs(write(tmp_path / "spa.tsv", b"1\ta\n2\tb\n3\tc\n4\td\n5\te\n"))
    spans = [["multi30k", 2], ["anki_pairs", 2], ["ntrex128", 1]]
    assert list(without_sources(pairs, spans, {"anki_pairs"}, "spa.tsv")) == [("1", "a"), ("2", "b"), ("5", "e")]
    assert list(without_sources(pairs, spans, (), "spa.tsv")) == list(pairs)
    assert len(without_sources(pairs, spans, {"multi30k", "anki_pairs", "ntrex128"}, "spa.tsv")) == 0
    with pytest.raises(DataFormatError, match=r"spa.tsv.*train_sources count 4 pairs, the file has 5"):
        without_sources(pairs, [["anki_pairs", 4]], {"anki_pairs"}, "spa.tsv")


def test_dap_leaves_out_a_source_by_the_manifests_spans(tmp_path):
    from papers.dap.train import load_examples
    from papers.dap.variants import label, resolve

    spa = write(tmp_path / "spa.tsv", b"uno\tone\ndos\ttwo\ntres\tthree\n")
    fra = write(tmp_path / "fra.tsv", b"un\tone\n")
    manifest = {"train": {"spa": str(spa), "fra": str(fra)},
                "train_sources": {"spa": [["stsb_multi_mt", 1], ["anki_pairs", 2]], "fra": [["anki_pairs", 1]]}}
    method = resolve("tr_no-anki_pairs", {"rtl_layers": 2, "rho": 1.0, "direction": "xx2en"})
    assert method["objectives"] == ["tr"] and method["exclude_sources"] == ["anki_pairs"]
    assert resolve("dap_no-anki_pairs", {"rtl_layers": 2, "rho": 1.0, "direction": "xx2en"})["objectives"] == \
        ["tr", "rtl"]
    assert label("dap_no-anki_pairs") == "DAP without anki_pairs"
    assert list(load_examples(manifest, method["exclude_sources"])) == [("uno", "one", 2)]
    assert len(load_examples(manifest)) == 4
    with pytest.raises(ValueError, match=r"\['anki'\] to leave out are not in the corpus"):
        load_examples(manifest, ["anki"])

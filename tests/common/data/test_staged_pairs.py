"""The staged parallel sources (anki_pairs, ntrex128, bible_corpus): checksums from each folder's MANIFEST.md, the
layouts, bad rows named by file and line, the share / cap / length-ratio selection, and the leakage rule on the
Tatoeba-derived Anki pairs (normalised match: more than the exact overlap its manifest counts)."""
import gzip

import pytest

from common.data import loaders, staged_pairs
from common.data.leakage import LeakageFilter
from common.io import DataFormatError, sha256_file


def stage(folder, name, rows):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(rows) + "\n")
    (folder / "MANIFEST.md").write_text(f"# x\n\n| file | pairs | sha256 |\n|---|---|---|\n"
                                        f"| {name} | {len(rows)} | {sha256_file(path)} |\n")
    return path


def test_layouts_checksums_and_bad_rows(tmp_path):
    stage(tmp_path / "anki_pairs", "spa-eng.tsv.gz", ["Hi.\tHola.", "Run!\t¡Corre!"])
    assert staged_pairs.read_source(tmp_path / "anki_pairs", "spa") == [("Hola.", "Hi."), ("¡Corre!", "Run!")]
    stage(tmp_path / "bible_corpus", "eus-eng.tsv.gz", ["b.MAT.1.1\tThe book.\tLiburua."])
    assert staged_pairs.read_source(tmp_path / "bible_corpus", "eus") == [("Liburua.", "The book.")]
    path = stage(tmp_path / "ntrex128", "ita-eng.tsv.gz", ["One.\tUno.", "Two.\tDue.\textra"])
    with pytest.raises(DataFormatError, match=r"ita-eng.tsv.gz.*2.*expected 2 tab-separated columns"):
        staged_pairs.read_source(tmp_path / "ntrex128", "ita")
    with gzip.open(path, "wt", encoding="utf-8") as fh:  # the file changed after its manifest was written
        fh.write("One.\tUno.\n")
    with pytest.raises(DataFormatError, match="sha256 differs"):
        staged_pairs.read_source(tmp_path / "ntrex128", "ita")
    manifest = tmp_path / "ntrex128" / "MANIFEST.md"
    manifest.write_text(manifest.read_text() + f"| ita-eng.tsv.gz | 1 | {sha256_file(path)} |\n")
    with pytest.raises(DataFormatError, match=r"MANIFEST\.md:6: ita-eng\.tsv\.gz listed twice"):
        staged_pairs.read_source(tmp_path / "ntrex128", "ita")


def test_selection_filters_then_samples_a_share_at_most_the_cap():
    pairs = [(f"x{i}" * (1 if i % 4 else 5), f"english {i}") for i in range(100)]  # 25 long foreign sides
    kept, short = staged_pairs.select(pairs, staged_pairs.Selection(("spa",), min_length_ratio=0.4), "spa")
    assert short == 75 and kept == [p for i, p in enumerate(pairs) if i % 4 == 0]
    half, _ = staged_pairs.select(pairs, staged_pairs.Selection(("spa",), share=0.5), "spa")
    again, _ = staged_pairs.select(pairs, staged_pairs.Selection(("spa",), share=0.5), "spa")
    assert len(half) == 50 and half == again and half == sorted(half, key=pairs.index)
    capped, _ = staged_pairs.select(pairs, staged_pairs.Selection(("spa",), max_pairs=7), "spa")
    assert len(capped) == 7 and capped == sorted(capped, key=pairs.index) and capped != pairs[:7]  # not the head
    both, _ = staged_pairs.select(pairs, staged_pairs.Selection(("spa",), share=0.5, max_pairs=70), "spa")
    assert len(both) == 50


def test_anki_pairs_lose_their_tatoeba_test_sentences_after_normalisation(data_root):
    """The manifest counts 261 hin pairs with a side exactly equal to a Tatoeba test sentence (stripped); the
    normalised rule catches those and the near-duplicates (case, punctuation, spaces)."""
    pairs = staged_pairs.read_source(data_root / "anki_pairs", "hin")
    assert len(pairs) == 2979
    xx, en = loaders.read_tatoeba(data_root / "tatoeba_v1", "hin")
    exact = {s.strip() for s in xx + en}
    exact_hits = sum(a.strip() in exact or b.strip() in exact for a, b in pairs)
    kept, dropped = LeakageFilter(xx + en).filter_pairs(pairs)
    assert exact_hits == 261 and dropped > exact_hits and len(kept) == 2979 - dropped


def test_the_mini_corpus_takes_staged_sources_and_counts_their_leaks(data_root, tmp_path):
    from common.data.corpus import prepare

    spec = {"multi30k": [], "cmn": False, "stsb_multi_mt": [], "seed": 1, "tatoeba": "trained",
            "parallel": {"anki_pairs": {"languages": ["hin"]}, "ntrex128": {"languages": ["ita"], "max_pairs": 300}},
            "bucc": {"pairs": ["zh"], "sources": ["stsb"], "english_extra": ["iwslt"],
                     "gold_per_split": {"sample": 5, "training": 5, "test": 5}, "english_per_split": 50, "seed": 1}}
    manifest = prepare("mini", tmp_path, data_root, spec)
    by_source = manifest["leakage"]["by_source"]
    ntrex = by_source["ntrex128"]["ita"]  # news: its manifest finds no exact Tatoeba overlap; normalised, against
    assert ntrex["taken"] == 300 and ntrex["leaked"] < 5  # every evaluation set, a few short lines match
    assert by_source["anki_pairs"]["hin"]["taken"] == 2979 and by_source["anki_pairs"]["hin"]["leaked"] > 261
    assert manifest["train_languages"] == ["hin", "ita"]
    train = loaders.read_tsv_pairs(manifest["train"]["hin"])
    xx, en = loaders.read_tatoeba(data_root / "tatoeba_v1", "hin")
    assert train and not LeakageFilter(xx + en).filter_pairs(train)[1]

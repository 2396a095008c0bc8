"""The corpus census: bytes per held pair against CPython's object sizes, the evaluation sentences and a row's
memory worked out by hand."""
from __future__ import annotations

import gzip
import math
import sys

import pytest

from common.census import corpus
from common.census.evaluation import SETS


def test_held_bytes_are_the_objects_the_sampler_keeps(tmp_path):
    """tracemalloc's bytes per pair against sys.getsizeof of a tuple and its two str, plus the list's slot; a
    language in a 2-byte script takes more than an ASCII one and is the one measured."""
    folder = tmp_path / "ntrex128"
    folder.mkdir()
    ascii_rows = [(f"English sentence number {i:05d}.", f"Satz Nummer {i:05d} auf Deutsch.") for i in range(2000)]
    greek_rows = [(f"English sentence number {i:05d}.", f"Πρόταση αριθμός {i:05d} στα ελληνικά.") for i in range(2000)]
    for lang, rows in (("deu", ascii_rows), ("ell", greek_rows)):
        (folder / f"{lang}-eng.tsv.gz").write_bytes(gzip.compress("".join(f"{e}\t{f}\n" for e, f in rows).encode()))
    sizes = corpus.measure.__wrapped__(str(tmp_path))
    e, f = greek_rows[0]
    by_hand = sys.getsizeof((e, f)) + sys.getsizeof(e) + sys.getsizeof(f) + 8  # tuple, two str, the list's pointer
    assert sizes.language == "ell"
    assert by_hand <= sizes.held_pair <= 1.2 * by_hand  # pymalloc's 8-byte rounding, the list's over-allocation
    assert sys.getsizeof(f) + 8 <= sizes.held_line <= 1.2 * (sys.getsizeof(f) + 8)
    assert sizes.disk_pair == len(e.encode()) + len(f.encode()) + 2
    assert sizes.filter_sentence > 0 and sizes.interpreter_mb > 0


def test_a_row_from_the_config_by_hand(monkeypatch):
    """DAP's kind on two languages: one language's sample held at a time, the filter's sentences from the sets'
    public sizes, mem_mb = (sample + filter) x MARGIN + the interpreter."""
    sizes = corpus.Sizes(held_pair=100.0, held_line=60.0, filter_sentence=10.0, disk_pair=50.0, language="x",
                         interpreter_mb=200.0)
    monkeypatch.setattr(corpus, "measure", lambda data_root: sizes)
    spec = {"opus_languages": ["de", "fr"], "max_pairs_per_language": 1000, "bucc_pairs": ["de"],
            "tatoeba_languages": ["deu", "fra"]}
    cfg = {"corpus": {"kind": "paper", "paper": spec}, "resources": {"corpus": {"mem_mb": 32000}}}
    row = corpus.job_row("dap", cfg, "unused")
    sentences = {"tatoeba": 2 * 1000 * 2, "bucc": 2 * 3 * SETS["bucc"].items, "xnli": 2 * SETS["xnli"].items * 15}
    assert row["eval_sentences"] == sentences
    assert row["items"] == {"pair": 2000, "line": 0} and row["largest_sample"]["items"] == 1000
    assert row["mem_mb"] == math.ceil((1000 * 100 + sum(sentences.values()) * 10) * 1.5 / 2**20 + 200)
    assert row["text_disk_gib"] * 2**30 == pytest.approx(2000 * 50)


def test_pooled_and_monolingual_samples():
    """MoCo-BERT pools its corpora (held together); HICTL's CC-100 samples are lines."""
    drawn, pooled = corpus.samples("paper_enzh", {"sample_sizes": {"A": 5, "B": 7}})
    assert drawn == [("A", 5, "pair"), ("B", 7, "pair")] and pooled
    drawn, pooled = corpus.samples("paper_hictl", {"parallel": {"fr": {"pairs": 3}},
                                                   "monolingual": {"languages": ["de"], "sentences_per_language": 9}})
    assert drawn == [("fr", 3, "pair"), ("de (CC-100)", 9, "line")] and not pooled
    with pytest.raises(KeyError, match="mini"):
        corpus.samples("mini", {})


def test_the_interpreter_is_measured_apart_from_the_process_that_asks():
    """A parent holding 512 MiB must not raise the fresh interpreter's peak: Linux starts a forked child's
    ``ru_maxrss`` at its parent's, which once put 14 GB in the VMSST corpus row's interpreter."""
    from common.census.corpus import interpreter_peak_mb

    held = b"x" * (512 << 20)
    assert 1 < interpreter_peak_mb("json") < 256 and len(held) == 512 << 20

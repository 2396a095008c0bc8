"""Your own parallel data (kind ``files``): training pairs from plain files named in the config, evaluated on the mini
scale's real sets of ``data_root``. No code: a config file replaces the experiments' corpus section
(``snakemake papers/dap/all --configfile my_corpus.yaml``, docs/data.md):

.. code-block:: yaml

    corpus:
      kind: files
      files:
        pairs:                                   # language (ISO 639-3, as Tatoeba names it) -> its pairs with English
          deu: my/de-en.tsv.gz                   # TSV: foreign<TAB>english a line (.gz allowed)
          fra: {foreign: my/fr.txt, english: my/en.txt}   # or two line-aligned files (.gz allowed)

Each language's pairs go through what the other kinds apply: a line without exactly two columns, files of
different lengths or bytes that are not UTF-8 stop the job naming the file and line (:mod:`common.data.loaders`);
the length filter drops a pair with a blank side or a side over ``max_chars`` characters, counted per file in the
manifest's ``cleaning`` (:class:`common.data.cleaning.PairCleaner`), and, with ``min_length_ratio``, a pair whose
foreign side is shorter than that fraction of the English one (:mod:`common.data.staged_pairs`); ``max_pairs``
caps a language by a seeded sample. Then the mini corpus is built around them (:func:`common.data.corpus_mini.
prepare_mini` with no other training source): the leakage rule drops every pair with a side in an evaluation set and
counts it per language, Tatoeba, STS, XNLI and the BUCC-style benchmark are read from ``data_root`` as at mini
scale. Relative paths are relative to the directory the workflow runs in.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from common.data import corpora, corpus_mini, loaders, staged_pairs
from common.data.cleaning import PairCleaner

if TYPE_CHECKING:
    from common.data.download import Downloader

SOURCE = "files"  # the source name of the pairs in the manifest (train_sources, leakage by source)
# the BUCC-style benchmark of DAP's mini corpus (common/data/bucc_mini.py), when the config gives none
BUCC = {"pairs": ["de", "fr", "ru", "zh"], "sources": ["stsb", "xnli", "xquad", "wmt", "iwslt", "multi30k"],
        "english_extra": ["iwslt", "wmt_de", "wmt_zh", "xquad_contexts", "multi30k"],
        "gold_per_split": {"sample": 50, "training": 150, "test": 150}, "english_per_split": 5000, "seed": 1}


def files_of(entry: str | dict[str, str]) -> list[Path]:
    """The files one language's entry names: a TSV, or the foreign and the English file."""
    return [Path(entry)] if isinstance(entry, str) else [Path(entry["foreign"]), Path(entry["english"])]


def read_pairs(entry: str | dict[str, str]) -> list[tuple[str, str]]:
    """(foreign, English) pairs of one language's entry, in file order."""
    if isinstance(entry, str):
        return [(xx, en) for xx, en in loaders.read_tsv(entry, 2)]
    return loaders.read_parallel(entry["foreign"], entry["english"])


def own_pairs(spec: dict[str, Any], cleaner: PairCleaner) -> dict[str, list[tuple[str, str]]]:
    """Language -> its pairs after the length filters and the cap (before the leakage rule)."""
    out = {}
    for lang, entry in spec["pairs"].items():
        kept = list(cleaner.clean(read_pairs(entry), f"{SOURCE} {lang}: {', '.join(map(str, files_of(entry)))}"))
        sel = staged_pairs.Selection((lang,), 1.0, spec.get("max_pairs"), float(spec.get("min_length_ratio", 0.0)),
                                     int(spec.get("seed", 1)))
        out[lang], _ = staged_pairs.select(kept, sel, lang)
    return out


def mini_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """The mini corpus's settings around one's own pairs: no other training source, its evaluation sets."""
    return {"multi30k": [], "cmn": False, "stsb_multi_mt": [], "bucc": spec.get("bucc", BUCC),
            "tatoeba": spec.get("tatoeba", "trained"), "seed": int(spec.get("seed", 1))}


@corpora.reads_in_place(SOURCE)
def reads(data_root: Path, spec: dict[str, Any]) -> list[Path]:
    """The config's files and what the mini corpus reads of ``data_root`` around them."""
    own = [p for entry in spec.get("pairs", {}).values() for p in files_of(entry)]
    return own + corpus_mini.reads(data_root, mini_spec(spec))


@corpora.register_corpus(SOURCE)
def prepare_files(out: Path, data_root: Path, spec: dict[str, Any], d: Downloader,
                  cleaner: PairCleaner) -> dict[str, Any]:
    cleaner = PairCleaner(int(spec.get("max_chars", cleaner.max_chars)))
    manifest = corpus_mini.prepare_mini(out, data_root, mini_spec(spec), bool(spec.get(corpora.EVALUATION_ONLY)),
                                        own={SOURCE: own_pairs(spec, cleaner)})
    return {**manifest, "kind": SOURCE, "cleaning": cleaner.report()}


corpora.EVALUATION_ONLY_KINDS.add(SOURCE)  # scoring a model not trained here on the same evaluation data

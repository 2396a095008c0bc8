"""The corpus manifest as a typed record (common/data/manifest.py): the corpus job writes only a manifest that fits
CorpusManifest's schema, with the schema beside it, and every reader checks the file again."""
import json

import pytest

from common.data.corpus import prepare
from common.data.manifest import load_manifest, write_manifest
from common.io import DataFormatError

SPEC = {"synthetic": {"seed": 1, "n_languages": 2, "train_pairs_per_language": 50, "tatoeba_pairs": 10,
                      "bucc_gold_per_split": 5, "bucc_sentences_per_split": 30, "sts_pairs": 10, "nli_items": 12}}


def test_the_synthetic_corpus_writes_a_manifest_its_readers_accept(tmp_path):
    manifest = prepare("synthetic", tmp_path, "", SPEC["synthetic"])
    assert load_manifest(tmp_path / "manifest.json") == manifest
    schema = json.loads((tmp_path / "CorpusManifest.schema.json").read_text())
    assert {"kind", "train", "leakage", "tatoeba_dir"} <= set(schema["required"])


def test_a_manifest_that_does_not_fit_is_an_error_naming_the_file_and_the_field(tmp_path):
    good = {"kind": "synthetic", "train": {"xx": "train/xx-en.tsv"}, "train_languages": ["xx"],
            "leakage": {"dropped_total": 0}, "tatoeba_dir": "t", "tatoeba_languages": ["xx"], "bucc_dir": "b",
            "bucc_pairs": ["xx-en"]}
    write_manifest(tmp_path, good)
    assert load_manifest(tmp_path / "manifest.json") == good
    for bad, field in (({**good, "tatoeba_dri": "t"}, "'tatoeba_dri' was unexpected"),
                       ({k: v for k, v in good.items() if k != "train"}, "'train' is a required property"),
                       ({**good, "train": ["train/xx-en.tsv"]}, "train: .* is not of type 'object'")):
        with pytest.raises(DataFormatError, match=rf"manifest\.json: not a CorpusManifest: .*{field}"):
            write_manifest(tmp_path / "other", bad)
        (tmp_path / "manifest.json").write_text(json.dumps(bad))
        with pytest.raises(DataFormatError, match=rf"{tmp_path}/manifest\.json: not a CorpusManifest: .*{field}"):
            load_manifest(tmp_path / "manifest.json")
    assert not (tmp_path / "other").exists()  # nothing written when the check fails


def test_source_languages_by_hand():
    from common.data.manifest import source_languages

    manifest = {"train_sources": {"spa": [["multi30k", 3], ["anki_pairs", 2]], "tur": [["anki_pairs", 4]],
                                  "kat": [["ntrex128", 5]]}}
    assert source_languages(manifest) == {
        "anki_pairs": ["spa", "tur"], "multi30k": ["spa"], "ntrex128": ["kat"],
        "anki_pairs alone": ["tur"], "multi30k alone": [], "ntrex128 alone": ["kat"]}
    assert source_languages({"train": {}}) == {}

"""Translation data for the NMT stage (HICTL section 4.2): the corpus manifest's ``translation`` entry.

``translation[pair]`` (pair ``"<src>-<tgt>"``, ISO 639-1) = ``{"train": [src, tgt] or None, "valid": [src, tgt] or
None, "tests": {name: [src, tgt]}, "tokenized_bleu": [names]}``: line-aligned text files (``.gz`` allowed), read in
place; ``tokenized_bleu`` names the test sets to score with multi-bleu's convention (already tokenized references,
as IWSLT'14's).

* smoke: the synthetic generator's translation pairs (``xx-en`` and ``en-xx`` for every synthetic language);
* mini (``data_root``): Multi30k task 1 en<->de / fr / cs (train, val, test_2016_flickr, test_2017_flickr,
  test_2017_mscoco, test_2018_flickr, the ones each language has), IWSLT'14 De-En test (tokenized, lower-cased:
  scored with tokenized BLEU) and the WMT news test sets for de<->en (test only).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from common.io import read_lines

MULTI30K_TESTS = ("test_2016_flickr", "test_2017_flickr", "test_2017_mscoco", "test_2018_flickr")


def _both(pairs: dict[str, Any], xx: str, entry: dict[str, Any]) -> None:
    """Register ``entry`` (files as [xx, en]) as xx-en and its mirror as en-xx."""
    def flip(files: list[str] | None) -> list[str] | None:
        return None if files is None else [files[1], files[0]]

    pairs[f"{xx}-en"] = entry
    pairs[f"en-{xx}"] = {"train": flip(entry["train"]), "valid": flip(entry["valid"]),
                         "tests": {k: flip(v) for k, v in entry["tests"].items()},
                         "tokenized_bleu": list(entry.get("tokenized_bleu", []))}


def mini_translation(data_root: Path, spec: dict[str, Any]) -> dict[str, Any]:
    root = Path(data_root)
    m30 = root / "multi30k" / "raw"
    pairs: dict[str, Any] = {}
    for xx in spec.get("multi30k", []):
        tests = {f"multi30k_{t}": [str(m30 / f"{t}.{xx}.gz"), str(m30 / f"{t}.en.gz")] for t in MULTI30K_TESTS
                 if (m30 / f"{t}.{xx}.gz").exists()}
        entry = {"train": [str(m30 / f"train.{xx}.gz"), str(m30 / "train.en.gz")],
                 "valid": [str(m30 / f"val.{xx}.gz"), str(m30 / "val.en.gz")], "tests": tests, "tokenized_bleu": []}
        _both(pairs, xx, entry)
    if spec.get("iwslt14") and "de-en" in pairs:
        iw = root / "iwslt14_deen_test"
        for pair, files in (("de-en", [iw / "test.de", iw / "test.en"]), ("en-de", [iw / "test.en", iw / "test.de"])):
            pairs[pair]["tests"]["iwslt14_test"] = [str(f) for f in files]
            pairs[pair]["tokenized_bleu"].append("iwslt14_test")
    for testset in spec.get("wmt", []):
        for src, tgt in (("de", "en"), ("en", "de")):
            if f"{src}-{tgt}" in pairs:
                base = root / "wmt" / testset / f"{testset}.{src}-{tgt}"
                pairs[f"{src}-{tgt}"]["tests"][f"wmt_{testset}"] = [f"{base}.src.{src}", f"{base}.ref.A.{tgt}"]
    return pairs


def synthetic_translation(root: Path, languages: list[str]) -> dict[str, Any]:
    pairs: dict[str, Any] = {}
    for xx in languages:
        f = {split: [str(root / f"{xx}-en.{split}.{xx}"), str(root / f"{xx}-en.{split}.en")]
             for split in ("train", "valid", "test")}
        if not Path(f["train"][0]).exists():
            return {}
        _both(pairs, xx, {"train": f["train"], "valid": f["valid"], "tests": {"synthetic_test": f["test"]},
                          "tokenized_bleu": []})
    return pairs


def test_sentences(translation: dict[str, Any]) -> list[str]:
    """Both sides of every test set of every pair (the evaluation sentences of the leakage rule)."""
    files = sorted({f for entry in translation.values() for pair in entry["tests"].values() for f in pair})
    return [line for f in files for line in read_lines(f)]

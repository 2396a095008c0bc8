"""Download rules and converters for the XTREME task data (Hu et al. 2020) that HICTL's paper scale evaluates on,
and CC-100 (the CCNet corpus XLM-R and HICTL pre-train on).

Every download is pinned (a commit / release in its URL, a sha256 where one is known) and converted to the layouts
the evaluators read: SQuAD v1.1 JSON (:mod:`common.eval.qa`), ``word<TAB>tag`` CoNLL (:mod:`common.eval.token_
classification`), PAWS-X TSV (:func:`common.data.loaders.read_pawsx_tsv`), XTREME's XNLI TSV. WikiANN (PAN-X) is
not downloadable without a browser (XTREME's instructions: AmazonPhotos); :func:`panx_layout` reads XTREME's
``panx_dataset/<lang>.tar.gz`` files placed by hand and says where when they are missing.
"""
from __future__ import annotations

import json
import lzma
import random
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from common.data.corpus_parts import reservoir_sample
from common.data.download import Resource, extract
from common.data.squad import read_squad_json
from common.io import DataFormatError, atomic_copy, atomic_write, read_lines

XQUAD_COMMIT = "60cac411649156efb6aab9dd4c9cde787a2c0345"  # deepmind/xquad, Romanian added (not used)
XQUAD_SHA256 = {
    "ar": "abdabd7afed5c635d99cca0f3f0d0c9d9ed0bc77451e963c2e4e0638c29e486d",
    "de": "990b5d746746ed65ed4702ea5f35f99ffa4e2f1c390c07d003642acd937916f9",
    "el": "821cf0f88e73fa258fd2f548b19b6ec39f7025059e16f6f9fc8cd797c9c3663e",
    "en": "e4c57d1c9143aaa1c5d265ba5987a65f4e69528d2a98f29d6e75019b10344f29",
    "es": "dcbae93ec3a9f4b9e78fd834a171d6f96c1a875e10e15b7530b7e4ef4971e37e",
    "hi": "df2cce3532b37e9beb8979704b5c9a4bf874358f105395a298b89427b43b9d24",
    "ru": "208d5b1aa154c52b1b5c5eda16281e455e8fd198cdb9af3f469f0d6037d973bf",
    "th": "5cdda11d0e1e075f7872abf4e6ae830388ce7f617964d542308e9ae4257e0f43",
    "tr": "92179a564774b7696100d144c1e10870d0a966b6fccbdd254a65b9d2ab1971cc",
    "vi": "f619a1eb11fb42d3ab0834259e488a65f585447ef6154437bfb7199d85161a04",
    "zh": "691d0b3359bc6b8faa8de931dfdfe21d50a65861ae348e32a0d1a0190b0c8835",
}
MLQA_LANGUAGES = ("en", "ar", "de", "es", "hi", "vi", "zh")
TYDIQA_LANGUAGES = {"arabic": "ar", "bengali": "bn", "english": "en", "finnish": "fi", "indonesian": "id",
                    "korean": "ko", "russian": "ru", "swahili": "sw", "telugu": "te"}
CC100_NAMES = {"zh": "zh-Hans"}  # CC-100 file name of a Table 7 code, where they differ


# --------------------------------------------------------------------------- resources
def cc100(lang: str) -> Resource:
    """CC-100 (Conneau et al. 2020; Wenzek et al. 2020): the CCNet monolingual corpus of XLM-R, one .txt.xz per
    language, documents separated by blank lines."""
    name = CC100_NAMES.get(lang, lang)
    return Resource(f"cc100/{name}.txt.xz", f"https://data.statmt.org/cc-100/{name}.txt.xz", revision="cc-100")


def pawsx() -> Resource:
    return Resource("pawsx/x-final.tar.gz", "https://storage.googleapis.com/paws/pawsx/x-final.tar.gz",
                    revision="pawsx-x-final")


def udpos() -> Resource:
    """Universal Dependencies v2.5 (XTREME's POS data), all treebanks."""
    return Resource("udpos/ud-treebanks-v2.5.tgz", "https://lindat.mff.cuni.cz/repository/xmlui/bitstream/handle/"
                    "11234/1-3105/ud-treebanks-v2.5.tgz", revision="ud-2.5")


def squad_train() -> Resource:
    return Resource("squad/train-v1.1.json", "https://rajpurkar.github.io/SQuAD-explorer/dataset/train-v1.1.json",
                    revision="squad-v1.1")


def xquad(lang: str) -> Resource:
    return Resource(f"xquad/xquad.{lang}.json",
                    f"https://raw.githubusercontent.com/deepmind/xquad/{XQUAD_COMMIT}/xquad.{lang}.json",
                    sha256=XQUAD_SHA256[lang], revision=XQUAD_COMMIT)


def mlqa() -> Resource:
    return Resource("mlqa/MLQA_V1.zip", "https://dl.fbaipublicfiles.com/MLQA/MLQA_V1.zip", revision="MLQA_V1")


def tydiqa(split: str) -> Resource:
    """TyDiQA-GoldP v1.1 (the gold-passage task), ``train`` (English, XTREME's training set) or ``dev`` (test)."""
    return Resource(f"tydiqa/tydiqa-goldp-v1.1-{split}.json",
                    f"https://storage.googleapis.com/tydiqa/v1.1/tydiqa-goldp-v1.1-{split}.json", revision="v1.1")


def xnli_mt() -> Resource:
    """XNLI-MT 1.0: MultiNLI train machine-translated into the XNLI languages (translate-train)."""
    return Resource("xnli/XNLI-MT-1.0.zip", "https://dl.fbaipublicfiles.com/XNLI/XNLI-MT-1.0.zip",
                    revision="XNLI-MT-1.0")


def squad_translate_train(lang: str) -> Resource:
    """XTREME's machine-translated SQuAD v1.1 train set in ``lang`` (translate-train for XQuAD / MLQA)."""
    return Resource(f"squad/squad.translate.train.en-{lang}.json", "https://storage.googleapis.com/xtreme_translations/"
                    f"SQuAD/translate-train/squad.translate.train.en-{lang}.json", revision="xtreme-translations")


# --------------------------------------------------------------------------- converters
def member(root: Path, name: str, archive: Path) -> Path:
    """The file called ``name`` (a glob pattern) anywhere under an extracted ``archive``'s folder ``root``."""
    found = next(root.rglob(name), None)
    if found is None:
        raise FileNotFoundError(f"{archive}: no member {name!r}")
    return found


def sample_cc100(path: Path, n: int, rng: random.Random) -> list[str]:
    """``n`` non-empty lines drawn uniformly (reservoir sampling) from a CC-100 .txt.xz, streamed."""
    def lines() -> Iterator[str]:  # text mode's line ends (\n, \r\n, \r), bad UTF-8 named by its \n-line
        with lzma.open(path, "rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise DataFormatError(path, lineno, f"invalid UTF-8 ({exc.reason} at byte {exc.start})") from None
                yield from (part.strip() for part in text.replace("\r\n", "\n").split("\r"))

    return reservoir_sample((s for s in lines() if s), n, rng)


def pawsx_layout(archive: Path, out: Path, langs: list[str]) -> dict[str, Any]:
    """x-final/{lang}/test_2k.tsv, x-final/en/train.tsv, x-final/{lang}/translated_train.tsv -> the manifest entry
    ``pair_classification.pawsx``."""
    root = extract(archive, out / "tmp_pawsx") / "x-final"
    entry: dict[str, Any] = {"train": str(out / "pawsx" / "train.en.tsv"), "test": {}, "translate_train": {}}
    (out / "pawsx").mkdir(parents=True, exist_ok=True)
    atomic_copy(root / "en" / "train.tsv", entry["train"])
    for lang in langs:
        entry["test"][lang] = str(out / "pawsx" / f"test.{lang}.tsv")
        atomic_copy(root / lang / "test_2k.tsv", entry["test"][lang])
        if lang != "en" and (root / lang / "translated_train.tsv").exists():
            entry["translate_train"][lang] = str(out / "pawsx" / f"translate_train.{lang}.tsv")
            atomic_copy(root / lang / "translated_train.tsv", entry["translate_train"][lang])
    shutil.rmtree(out / "tmp_pawsx")
    return entry


def conllu_to_conll(paths: list[Path], out: Path) -> int:
    """UD CoNLL-U files -> ``word<TAB>UPOS`` lines, a blank line between sentences (multi-word token ranges and
    empty nodes skipped, as XTREME's preprocessing). Returns the sentence count."""
    sentences: list[list[str]] = []
    words: list[str] = []
    for path in paths:
        for lineno, line in enumerate(read_lines(path), start=1):
            if not line.strip():
                if words:
                    sentences.append(words)
                    words = []
                continue
            if line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) != 10:
                raise DataFormatError(path, lineno, f"expected 10 CoNLL-U columns, found {len(cols)}")
            if "-" in cols[0] or "." in cols[0]:
                continue
            words.append(f"{cols[1]}\t{cols[3]}")
        if words:
            sentences.append(words)
            words = []
    with atomic_write(out) as fh:
        fh.write("".join("\n".join(s) + "\n\n" for s in sentences))
    return len(sentences)


def udpos_layout(archive: Path, out: Path, langs: list[str]) -> dict[str, Any]:
    """Every treebank's ``<code>_<name>-ud-{train,test}.conllu``: English train files -> the training set, each
    language's test files -> its test set (XTREME pools a language's treebanks)."""
    root = extract(archive, out / "tmp_udpos")
    files = sorted(root.rglob("*.conllu"))

    def of(lang: str, split: str) -> list[Path]:
        return [f for f in files if f.name.split("_")[0] == lang and f.name.endswith(f"-ud-{split}.conllu")]

    entry: dict[str, Any] = {"train": str(out / "udpos" / "train.en.conll"), "test": {}}
    conllu_to_conll(of("en", "train"), Path(entry["train"]))
    for lang in langs:
        tests = of(lang, "test")
        if not tests:
            raise FileNotFoundError(f"{archive}: no UD v2.5 test treebank for {lang!r}")
        entry["test"][lang] = str(out / "udpos" / f"test.{lang}.conll")
        conllu_to_conll(tests, Path(entry["test"][lang]))
    shutil.rmtree(out / "tmp_udpos")
    return entry


def panx_layout(manual: Path, out: Path, langs: list[str]) -> dict[str, Any]:
    """XTREME's PAN-X files (``panx_dataset/<lang>.tar.gz`` holding ``train``, ``dev``, ``test`` with
    ``<lang>:word<TAB>tag`` lines), placed by hand under ``manual`` -> CoNLL ``word<TAB>tag`` files."""
    entry: dict[str, Any] = {"train": str(out / "panx" / "train.en.conll"), "test": {}}
    for lang in langs:
        archive = manual / "panx_dataset" / f"{lang}.tar.gz"
        if not archive.exists():
            raise FileNotFoundError(f"WikiANN (PAN-X) needs a manual download (XTREME README: panx_dataset from "
                                    f"AmazonPhotos); place {archive}")
        d = extract(archive, out / "tmp_panx" / lang)
        for split in ("train", "test") if lang == "en" else ("test",):
            rows, src = [], member(d, split, archive)
            for lineno, line in enumerate(read_lines(src), start=1):
                if line.strip() and ":" not in line.split("\t", 1)[0]:
                    raise DataFormatError(src, lineno, f"expected '{lang}:word<TAB>tag'")
                rows.append(line.split(":", 1)[1] if line.strip() else "")
            target = out / "panx" / f"{split}.{lang}.conll"
            with atomic_write(target) as fh:
                fh.write("\n".join(rows) + "\n")
            if split == "test":
                entry["test"][lang] = str(target)
    shutil.rmtree(out / "tmp_panx", ignore_errors=True)
    return entry


def mlqa_layout(archive: Path, out: Path, langs: list[str]) -> dict[str, str]:
    """MLQA_V1/test/test-context-{l}-question-{l}.json (XTREME: context and question in the same language)."""
    root = extract(archive, out / "tmp_mlqa")
    test = {}
    for lang in langs:
        src = member(root, f"test-context-{lang}-question-{lang}.json", archive)
        test[lang] = str(out / "mlqa" / f"test.{lang}.json")
        atomic_copy(src, test[lang])
    shutil.rmtree(out / "tmp_mlqa")
    return test


def tydiqa_by_language(dev_json: Path, out: Path) -> dict[str, str]:
    """TyDiQA-GoldP dev (all languages in one SQuAD-format file; a question id starts with the language's name)
    -> one SQuAD-format file per language."""
    data = read_squad_json(dev_json)
    by_lang: dict[str, list[dict[str, Any]]] = {}
    for article in data:
        for para in article["paragraphs"]:
            for qa in para["qas"]:
                name = str(qa["id"]).split("-")[0]
                if name not in TYDIQA_LANGUAGES:
                    raise ValueError(f"{dev_json}: question id {qa['id']!r} names no TyDiQA language")
                by_lang.setdefault(TYDIQA_LANGUAGES[name], []).append(
                    {"title": article.get("title", ""), "paragraphs": [{"context": para["context"], "qas": [qa]}]})
    paths = {}
    for lang, articles in sorted(by_lang.items()):
        paths[lang] = str(out / "tydiqa" / f"test.{lang}.json")
        with atomic_write(paths[lang]) as fh:
            fh.write(json.dumps({"version": "tydiqa-goldp-v1.1", "data": articles}, ensure_ascii=False))
    return paths


def xnli_mt_layout(archive: Path, out: Path, langs: list[str]) -> dict[str, str]:
    """XNLI-MT-1.0/multinli/multinli.train.{lang}.tsv (header premise, hypo, label; 'contradictory') -> XTREME's
    XNLI TSV (premise, hypothesis, label)."""
    root = extract(archive, out / "tmp_xnli_mt")
    paths = {}
    for lang in langs:
        src = member(root, f"multinli.train.{lang}.tsv", archive)
        rows = []
        for lineno, line in enumerate(read_lines(src)[1:], start=2):
            cols = line.split("\t")
            if len(cols) != 3:
                raise DataFormatError(src, lineno, "expected premise<TAB>hypo<TAB>label")
            label = {"contradictory": "contradiction"}.get(cols[2].strip(), cols[2].strip())
            rows.append(f"{' '.join(cols[0].split())}\t{' '.join(cols[1].split())}\t{label}")
        paths[lang] = str(out / "xnli" / f"translate_train-{lang}.tsv")
        with atomic_write(paths[lang]) as fh:
            fh.write("\n".join(rows) + "\n")
    shutil.rmtree(out / "tmp_xnli_mt")
    return paths

"""Binarize parallel text for fairseq with a Hugging Face tokenizer, keeping its ids (``translation_hf`` task).

A data folder holds ``hf_tokenizer/`` (the encoder's tokenizer), ``hf_tokenizer_tgt/`` where the target side has a
dictionary of its own (:mod:`common.nmt.target_vocab`; else the target side uses the encoder's too), ``tags.json``
(the target-language tags), ``dict.src.txt`` / ``dict.tgt.txt`` (markers: the task builds both dictionaries from the
tokenizers) and, per split, fairseq's ``mmap`` indexed datasets ``<split>.src-tgt.{src,tgt}.{bin,idx}``. A source is
the tokenizer's ``[CLS] x [SEP]`` (its own special tokens; [SEP] is the dictionary's end of sentence); a target is
``<2lang> y </s>`` in the target dictionary's ids: the tag names the language to generate, so one decoder serves
every pair of a setting (stage 1 trains on all of them), and generation forces it as a one-token prefix
(``--prefix-size 1``).

``python -m common.nmt.binarize --tokenizer DIR --out DIR --tags de en fr --split train:de:en:TRAIN.de:TRAIN.en
--split valid:de:en:...`` (several ``--split`` entries of one split name are concatenated: stage 1's mix).
"""
from __future__ import annotations

import argparse
import itertools
import json
import logging
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

import torch
from fairseq.data import indexed_dataset
from transformers import AutoTokenizer

from common.data.loaders import iter_parallel
from common.nmt.fairseq_plugin.dictionary import HFDictionary
from common.nmt.target_vocab import TARGET_TOKENIZER

log = logging.getLogger(__name__)


CHUNK = 50_000  # pairs tokenized at a time: a split of any size (WMT'14 En-Fr: 36M pairs) streams through


class _SplitWriter:
    """fairseq's ``mmap`` indexed datasets of one split, both sides, filled a row at a time."""

    def __init__(self, out: Path, split: str, vocab_size: int):
        self.prefix = {side: str(out / f"{split}.src-tgt.{side}") for side in ("src", "tgt")}
        self.builders = {side: indexed_dataset.make_builder(f"{p}.bin", impl="mmap", vocab_size=vocab_size)
                         for side, p in self.prefix.items()}

    def add(self, src_ids: list[int], tgt_ids: list[int]) -> None:
        self.builders["src"].add_item(torch.tensor(src_ids, dtype=torch.int32))
        self.builders["tgt"].add_item(torch.tensor(tgt_ids, dtype=torch.int32))

    def finalize(self) -> None:
        for side, builder in self.builders.items():
            builder.finalize(f"{self.prefix[side]}.idx")


TEST_MAX_LENGTH = 512  # a test source is only cut at the encoder's position limit (BERT / XLM-R: 512)


def binarize(tokenizer_dir: str | Path, out: str | Path, tags: Sequence[str],
             splits: Mapping[str, Sequence[tuple[str, str, str | Path, str | Path]]],
             max_length: int = 256, target_tokenizer_dir: str | Path | None = None) -> dict[str, int]:
    """``splits``: split name -> [(source language, target language, source file, target file)]; files are
    line-aligned (checked). A training or validation pair with either side longer than ``max_length`` pieces is
    dropped (counted as ``<split>_too_long``); test splits (``test*``) keep every sentence, sources cut at
    ``TEST_MAX_LENGTH``. ``target_tokenizer_dir``: the target side's own tokenizer (else the encoder's). Returns
    counts per split."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    shutil.copytree(tokenizer_dir, out / "hf_tokenizer", dirs_exist_ok=True)
    tgt_tok = tok
    shutil.rmtree(out / TARGET_TOKENIZER, ignore_errors=True)  # the task reads one where it finds one
    if target_tokenizer_dir is not None:
        tgt_tok = AutoTokenizer.from_pretrained(target_tokenizer_dir)
        shutil.copytree(target_tokenizer_dir, out / TARGET_TOKENIZER)
    (out / "tags.json").write_text(json.dumps({"tags": list(tags)}) + "\n")
    for side in ("src", "tgt"):
        (out / f"dict.{side}.txt").write_text("# the translation_hf task builds this dictionary from hf_tokenizer/\n")
    d = HFDictionary(tgt_tok, tags)
    ids = max(len(d), len(HFDictionary(tok, tags)))  # one id width for both sides' files
    counts: dict[str, int] = {}
    for split, parts in splits.items():
        writer, kept, too_long = _SplitWriter(out, split, ids), 0, 0
        test = split.startswith("test")
        for _src_lang, tgt_lang, src_file, tgt_file in parts:
            if tgt_lang not in d.tags:
                raise ValueError(f"target language {tgt_lang!r} has no tag; tags: {sorted(d.tags)}")
            pairs, seen = iter_parallel(src_file, tgt_file), 0
            while chunk := list(itertools.islice(pairs, CHUNK)):
                seen += len(chunk)
                src = tok([a for a, _ in chunk], truncation=test, max_length=TEST_MAX_LENGTH if test else None)
                tgt = tgt_tok([b for _, b in chunk], add_special_tokens=False)["input_ids"]
                for s_ids, t_ids in zip(src["input_ids"], tgt):
                    if not test and max(len(s_ids), len(t_ids) + 2) > max_length:
                        too_long += 1
                        continue
                    writer.add(s_ids, [d.tags[tgt_lang], *t_ids, d.eos()])
                    kept += 1
            if not seen:
                raise ValueError(f"{src_file}: no {split} pairs (an empty {split} set of {_src_lang}-{tgt_lang})")
        writer.finalize()
        counts[split] = kept
        if too_long:
            counts[f"{split}_too_long"] = too_long
        log.info("%s: %d pairs", split, kept)
    (out / "counts.json").write_text(json.dumps(counts, indent=1) + "\n")
    return counts


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tokenizer", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--tags", nargs="+", required=True, help="target languages (one tag each)")
    p.add_argument("--split", action="append", required=True, metavar="NAME:SRC:TGT:SRCFILE:TGTFILE")
    p.add_argument("--max-length", type=int, default=256)
    p.add_argument("--target-tokenizer", help="the target side's own tokenizer (default: --tokenizer)")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    splits: dict[str, list[tuple[str, str, str, str]]] = {}
    for entry in a.split:
        name, src, tgt, sf, tf = entry.split(":", 4)
        splits.setdefault(name, []).append((src, tgt, sf, tf))
    binarize(a.tokenizer, a.out, a.tags, splits, a.max_length, a.target_tokenizer)


if __name__ == "__main__":
    main()

"""The smoke corpus (kind ``synthetic``): every training pair and evaluation set from :mod:`common.data.synthetic`."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from common.data import corpora, loaders, translation
from common.data.cleaning import PairCleaner
from common.data.corpus_parts import (
    BUCC_SPLITS,
    bucc_sentences,
    write_train,
)
from common.data.leakage import LeakageFilter
from common.data.synthetic import SyntheticSpec, write_synthetic_corpus

if TYPE_CHECKING:
    from common.data.download import Downloader

log = logging.getLogger(__name__)


def prepare_synthetic(out: Path, spec: dict[str, Any]) -> dict[str, Any]:
    syn = write_synthetic_corpus(out, SyntheticSpec(**spec))
    langs = syn["languages"]
    evals = LeakageFilter(bucc_sentences(out / "bucc", [f"{l}-en" for l in langs], BUCC_SPLITS))
    for lang in langs:
        evals.add(s for pair in zip(*loaders.read_tatoeba(out / "tatoeba", lang)) for s in pair)
    for p in (out / "nli").glob("dev-*.tsv"):
        nli = loaders.read_xnli_tsv(p)
        evals.add(nli.premise + nli.hypothesis)
    train, dropped = {}, {}
    for lang in langs:
        pairs = loaders.read_tsv_pairs(out / "train" / f"{lang}-en.tsv")
        train[lang], dropped[lang] = evals.filter_pairs(pairs)
    return {
        "kind": "synthetic", "train": write_train(out, train), "train_languages": langs,
        "tatoeba_dir": str(out / "tatoeba"), "tatoeba_languages": langs,
        "bucc_dir": str(out / "bucc"), "bucc_pairs": [f"{l}-en" for l in langs],
        "nli_dir": str(out / "nli"), "nli_languages": ["en"] + langs,
        "sts_dir": str(out / "sts"), "sts_kind": "synthetic", "nli_train": str(out / "nli" / "dev-en.tsv"),
        "sts17": [{"name": f"{lang}-en", "langs": [lang, "en"], "input": str(out / "sts" / f"STS.input.{lang}-en.txt"),
                   "gold": str(out / "sts" / f"STS.gs.{lang}-en.txt")} for lang in langs],
        **({"question_retrieval": {"bank": str(q / "bank.jsonl"), "nq": {"en": str(q / "nq.jsonl")},
                                   "mkqa": {lang: str(q / f"mkqa.{lang}.jsonl") for lang in langs},
                                   "description": "synthetic questions (common.data.synthetic)"}}
           if (q := out / "questions").is_dir() else {}),
        **({"translation": tr} if (tr := translation.synthetic_translation(out / "translation", langs)) else {}),
        **({"qa": {"xquad": {"train": str(qa / "train.en.json"),
                             "test": {lang: str(qa / f"test.{lang}.json") for lang in ["en", *langs]},
                             "description": "synthetic: find the sentence that entails the question"}}}
           if (qa := out / "qa").is_dir() else {}),
        "leakage": {"dropped": dropped, "dropped_total": sum(dropped.values()), "eval_sentences": len(evals)},
    }


@corpora.register_corpus("synthetic")
def _synthetic(out: Path, data_root: Path, spec: dict[str, Any], d: Downloader, cleaner: PairCleaner) -> dict[str, Any]:
    manifest = prepare_synthetic(out, {k: v for k, v in spec.items() if k != corpora.EVALUATION_ONLY})
    if spec.get(corpora.EVALUATION_ONLY):  # the generator draws both from one seed: the training files are not listed
        manifest["train"] = {}
    return manifest


corpora.EVALUATION_ONLY_KINDS.add("synthetic")

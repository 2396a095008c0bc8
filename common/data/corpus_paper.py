"""DAP's paper-scale corpus (kind ``paper``): OPUS bitext with English for the 36 XTREME languages, Tatoeba v1,
BUCC 2018, XNLI and MultiNLI."""
from __future__ import annotations

import logging
import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

from common.data import corpora, loaders
from common.data.cleaning import PairCleaner
from common.data.corpus_parts import (
    BUCC_SPLITS,
    bucc2018,
    bucc_sentences,
    reservoir_sample,
    write_language,
    xnli_paper,
)
from common.data.leakage import LeakageFilter
from common.languages import TO_ISO1

if TYPE_CHECKING:
    from common.data.download import Downloader

log = logging.getLogger(__name__)


def prepare_paper(out: Path, spec: dict[str, Any], d: Downloader, cleaner: PairCleaner) -> dict[str, Any]:
    """DAP section 4.1: OPUS bitext with English for the 36 XTREME languages (the corpora the
    paper names), at most ``max_pairs_per_language`` pairs per language drawn uniformly at random
    (reservoir sampling, seeded); Tatoeba v1 (pinned digests), BUCC 2018, XNLI test, MultiNLI train.
    A corpus that OPUS does not offer for a language (HTTP 404) is skipped and listed.

    The evaluation sets come first, so that each language's sample is filtered and written before the next is
    drawn: the job holds one language's sample at a time (1M pairs), not all 36."""
    from common.data import download as dl

    pins = dl.tatoeba_pins("tatoeba_v1.sha256.yaml", spec.get("tatoeba_languages"))
    for lang, sha in pins.items():
        for res in dl.tatoeba(lang, sha["src"], sha["eng"]):
            d.fetch(res)
    bucc_pairs, bucc_splits = bucc2018(d, out, spec["bucc_pairs"], spec.get("bucc_test_gold_dir"))
    nli_langs = xnli_paper(d, out)
    tat = d.dest / "tatoeba"
    evals = LeakageFilter(s for lang in pins for pair in zip(*loaders.read_tatoeba(tat, lang)) for s in pair)
    evals.add(bucc_sentences(out / "bucc", bucc_pairs, BUCC_SPLITS))  # every split, the reported one included
    for lang in nli_langs:
        ex = loaders.read_xnli_tsv(out / "xnli" / f"test-{lang}.tsv")
        evals.add(ex.premise + ex.hypothesis)
    to_iso3 = {v: k for k, v in TO_ISO1.items()}
    rng = random.Random(spec.get("seed", 1))
    train, dropped = {}, {}
    skipped: list[str] = []
    for xx in spec["opus_languages"]:
        lang = to_iso3.get(xx, xx)
        sample = reservoir_sample(dl.opus_pairs(d, spec["opus_corpora"], xx, "en", skipped, cleaner),
                                  spec["max_pairs_per_language"], rng)
        kept, dropped[lang] = evals.filter_pairs(sample)
        train[lang] = write_language(out, lang, kept)
    return {
        "kind": "paper", "train": dict(sorted(train.items())), "train_languages": sorted(train),
        "tatoeba_dir": str(tat), "tatoeba_languages": sorted(pins),
        "bucc_dir": str(out / "bucc"), "bucc_pairs": bucc_pairs, "bucc_splits": bucc_splits,
        "nli_dir": str(out / "xnli"), "nli_languages": nli_langs, "xnli_train": str(out / "xnli" / "train-en.tsv"),
        "opus_skipped": skipped,
        "leakage": {"dropped": dropped, "dropped_total": sum(dropped.values()),
                    "eval_sentences": len(evals)},
    }


@corpora.register_corpus("paper")
def _paper(out: Path, data_root: Path, spec: dict[str, Any], d: Downloader, cleaner: PairCleaner) -> dict[str, Any]:
    return prepare_paper(out, spec, d, cleaner)

"""Paper-scale English-Chinese corpus of MoCo-BERT (Wang et al. 2021, section 3.1, appendix A, Table 7).

Training pairs: each corpus of Table 7 sampled to its "# of sampled" size (uniformly, one
pass, seeded), then duplicates removed ("Duplicates are removed during preprocess") and
the leakage rule applied ("All parallel sentences that appear in the evaluation datasets
are excluded"). Tatoeba, News Commentary and the UN corpus come from OPUS releases (pinned
by version); the CWMT corpora are distributed only after registration with CWMT, so they
are read from ``<out>/manual/<name>.{zh,en}`` and a missing one is an error saying so.

Evaluation data: Tatoeba v1 cmn-eng (pinned digests), BUCC 2018 zh-en, the English STS
sets (read in place from ``data_root``; they are the public SentEval files), and for the
NLI variant SNLI + MultiNLI train (appendix B).
"""
from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from common.data import download as dl
from common.data import loaders
from common.data.bucc_mini import unique_pairs
from common.data.cleaning import PairCleaner
from common.data.corpora import reads_in_place, register_corpus
from common.data.corpus_parts import BUCC_SPLITS, bucc2018, bucc_sentences, reservoir_sample, write_train
from common.data.leakage import LeakageFilter
from common.data.sts_benchmark import english_sts, senteval7_paths
from common.io import write_lines


def _corpus_pairs(d: dl.Downloader, out: Path, c: dict[str, Any], cleaner: PairCleaner) -> Iterator[tuple[str, str]]:
    if c["kind"] == "opus":
        pairs = dl.iter_opus_pairs(d.fetch(dl.opus_moses(c["corpus"], c["version"], "zh", "en")),
                                   c["corpus"], "zh", "en")
        return cleaner.clean(pairs, c["name"])
    zh, en = out / "manual" / f"{c['name']}.zh", out / "manual" / f"{c['name']}.en"
    if not (zh.exists() and en.exists()):
        raise FileNotFoundError(f"{c['name']}: {c.get('note', 'not downloadable')}; "
                                f"place the line-aligned files at {zh} and {en}")
    return cleaner.clean(loaders.iter_parallel(zh, en), c["name"])


@reads_in_place("paper_enzh")
def in_place(data_root: Path, spec: dict[str, Any]) -> list[Path]:
    """The English STS sets, read in place (the evaluation and the leakage rule)."""
    return senteval7_paths(data_root / "sts")


@register_corpus("paper_enzh")
def prepare_paper_enzh(out: Path, data_root: Path, spec: dict[str, Any], d: dl.Downloader,
                       cleaner: PairCleaner) -> dict[str, Any]:
    rng = random.Random(spec["seed"])
    sampled, raw = {}, []
    for c in spec["corpora"]:
        pairs = reservoir_sample(_corpus_pairs(d, out, c, cleaner), spec["sample_sizes"][c["name"]], rng)
        sampled[c["name"]] = len(pairs)
        raw += pairs
    unique = unique_pairs(raw)
    pins = dl.tatoeba_pins("tatoeba_v1.sha256.yaml")
    for res in dl.tatoeba("cmn", pins["cmn"]["src"], pins["cmn"]["eng"]):
        d.fetch(res)
    bucc_pairs, bucc_splits = bucc2018(d, out, spec["bucc_pairs"], spec.get("bucc_test_gold_dir"))
    nli_rows = []
    for res, member in ((dl.multinli(), "multinli_1.0/multinli_1.0_train.txt"),
                        (dl.snli(), "snli_1.0/snli_1.0_train.txt")):
        folder = dl.extract(d.fetch(res), out / "tmp_nli")
        tsv = out / "nli" / f"{Path(member).stem}.tsv"
        dl.multinli_train_to_tsv(folder / member, tsv)
        nli_rows += loaders.read_lines(tsv)
    tat = d.dest / "tatoeba"
    evals = LeakageFilter(s for pair in zip(*loaders.read_tatoeba(tat, "cmn")) for s in pair)
    evals.add(bucc_sentences(out / "bucc", bucc_pairs, BUCC_SPLITS))  # all three splits were downloaded above
    sts_dir = Path(data_root) / "sts"
    datasets, _ = english_sts({"sts_dir": str(sts_dir)})
    evals.add(s for subsets in datasets.values() for sub in subsets for s in sub.sent1 + sub.sent2)
    train, dropped = evals.filter_pairs(unique)
    # the multi-task NLI data (appendix B) under the same rule: ours, not the paper's (papers/moco/README.md)
    nli, nli_dropped = evals.filter_tsv(nli_rows)
    write_lines(out / "nli" / "train-en.tsv", nli)
    return {
        "kind": "paper_enzh", "train": write_train(out, {"cmn": train}), "train_languages": ["cmn"],
        "tatoeba_dir": str(tat), "tatoeba_languages": ["cmn"], "bucc_dir": str(out / "bucc"), "bucc_pairs": bucc_pairs,
        "bucc_splits": bucc_splits,
        "sts_dir": str(sts_dir), "sts_kind": "senteval7", "nli_train": str(out / "nli" / "train-en.tsv"),
        "sampled": sampled,
        "leakage": {"dropped": {"cmn": dropped}, "dropped_total": dropped, "duplicates_removed": len(raw) - len(unique),
                    "eval_sentences": len(evals), "nli_dropped": nli_dropped},
    }

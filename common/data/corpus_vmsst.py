"""Paper-scale corpus of VMSST (Wieting et al. 2023, section 6.1 and appendix B, Table 15).

Training pairs: LASER's recipe (Artetxe & Schwenk 2019b) -- Europarl, United Nations, OpenSubtitles2018, Global
Voices, Tanzil and Tatoeba v2021-07-22 from OPUS (pinned releases), with English *and* Spanish as pivots: for
each language, every (corpus, pivot) bitext OPUS offers is streamed and ``languages[lang]`` pairs (Table 15's
counts) are drawn uniformly at random (reservoir sampling, seeded); a bitext OPUS does not offer (HTTP 404) is
skipped and listed. Pairs with an English pivot go to ``train/<lang>-en.tsv`` (manifest key ``<lang>``), those
with a Spanish pivot to ``train/<lang>-es.tsv`` (key ``<lang>-spa``). The leakage rule then drops every pair with
a sentence of any evaluation set -- all 112 Tatoeba languages ("we take care to not include any Tatoeba test data
in our training data"), BUCC 2018, the STS sets, STS17, the NQ and MKQA questions.

Evaluation data: Tatoeba v1 (all 112 languages, pinned digests), BUCC 2018 (public protocol unless the test gold
is supplied), English STS and STS17 read in place from ``data_root`` (the public SemEval files), and question
retrieval: NQ (DPR's test split) and MKQA questions against the PAQ question bank.
"""
from __future__ import annotations

import random
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from common.data import download as dl
from common.data import loaders
from common.data.cleaning import PairCleaner
from common.data.corpora import reads_in_place, register_corpus
from common.data.corpus_parts import (
    BUCC_SPLITS,
    STS17_EXCLUDED,
    bucc2018,
    bucc_sentences,
    reservoir_sample,
    sts17_sets,
    write_language,
)
from common.data.leakage import LeakageFilter
from common.data.questions import read_questions
from common.data.sts_benchmark import english_sts, senteval7_paths

# OPUS code -> Tatoeba v1 (ISO 639-3) code of the Table 15 languages that Tatoeba v1 has
TATOEBA_CODE = dict(pair.split(":") for pair in (
    "af:afr am:amh ar:ara az:aze be:bel ber:ber bg:bul bn:ben br:bre bs:bos ca:cat cbk:cbk cs:ces da:dan de:deu "
    "dtp:dtp el:ell eo:epo es:spa et:est eu:eus fi:fin fr:fra ga:gle gl:glg he:heb hi:hin hr:hrv hu:hun hy:hye "
    "ia:ina id:ind ie:ile io:ido is:isl it:ita ja:jpn ka:kat kab:kab kk:kaz km:khm ko:kor ku:kur kw:cor kzj:kzj "
    "la:lat lfn:lfn lt:lit lv:lvs mhr:mhr mk:mkd ml:mal mr:mar ms:zsm nb:nob nds:nds nl:nld oc:oci pl:pol pt:por "
    "ro:ron ru:rus sk:slk sl:slv sq:sqi sr:srp sv:swe sw:swh ta:tam te:tel th:tha tl:tgl tr:tur tt:tat ug:uig "
    "uk:ukr ur:urd uz:uzb vi:vie wuu:wuu yue:yue zh:cmn").split())
PIVOT_CODE = {"en": "", "es": "-spa"}


def _pairs(d: dl.Downloader, corpora: list[list[str]], lang: str, pivot: str, skipped: list[str],
           cleaner: PairCleaner) -> Iterator[tuple[str, str, str]]:
    yield from ((pivot, a, b) for a, b in dl.opus_pairs(d, corpora, lang, pivot, skipped, cleaner))


@reads_in_place("paper_vmsst")
def in_place(data_root: Path, spec: dict[str, Any]) -> list[Path]:
    """The English STS sets and STS17's scored tracks (input and gold), read in place."""
    return senteval7_paths(data_root / "sts") + [Path(s[f]) for s in sts17_sets(data_root) for f in ("input", "gold")]


@register_corpus("paper_vmsst")
def prepare_paper_vmsst(out: Path, data_root: Path, spec: dict[str, Any], d: dl.Downloader,
                        cleaner: PairCleaner) -> dict[str, Any]:
    """The evaluation sets come first, so that each language's sample is filtered and written before the next is
    drawn: the job holds one language's sample at a time (at most 9.4M pairs of Table 15), not all 221M."""
    pins = dl.tatoeba_pins("tatoeba_v1_all.sha256.yaml", spec.get("tatoeba_languages"))
    for lang, sha in pins.items():
        for res in dl.tatoeba(lang, sha["src"], sha["eng"]):
            d.fetch(res)
    tat = d.dest / "tatoeba"
    bucc_pairs, bucc_splits = bucc2018(d, out, spec["bucc_pairs"], spec.get("bucc_test_gold_dir"))
    qdir = out / "questions"
    paq_dir = dl.extract(d.fetch(dl.paq()), out / "tmp_paq")
    bank = qdir / "bank.jsonl"
    (paq_jsonl,) = paq_dir.rglob("*.jsonl")  # the archive holds one file
    dl.paq_to_bank(paq_jsonl, bank)
    shutil.rmtree(paq_dir)
    dl.nq_to_queries(d.fetch(dl.nq_test()), qdir / "nq.jsonl")
    mkqa = dl.mkqa_to_queries(d.fetch(dl.mkqa()), qdir, spec["mkqa_languages"])
    questions: dict[str, Any] = {"bank": str(bank), "nq": {"en": str(qdir / "nq.jsonl")}, "mkqa": mkqa,
                 "description": "NQ (DPR test split) and MKQA against PAQ"}
    # the leakage rule over every evaluation set
    evals = LeakageFilter(s for lang in pins for pair in zip(*loaders.read_tatoeba(tat, lang)) for s in pair)
    evals.add(bucc_sentences(out / "bucc", bucc_pairs, BUCC_SPLITS))
    datasets, _ = english_sts({"sts_dir": str(Path(data_root) / "sts")})
    evals.add(s for subsets in datasets.values() for sub in subsets for s in sub.sent1 + sub.sent2)
    for s17 in sts17_sets(data_root):
        evals.add(c for line in loaders.read_lines(s17["input"]) for c in line.split("\t"))
    for path in [questions["nq"]["en"], *mkqa.values()]:
        evals.add(r["question"] for r in read_questions(path))
    rng = random.Random(spec["seed"])
    skipped: list[str] = []
    train, dropped = {}, {}
    for lang, count in spec["languages"].items():
        if lang == "en":  # Table 15 counts the English-Spanish pairs for both: sampled once, as Spanish-English
            continue
        pivots = ["en"] if lang == "es" else spec["pivots"]
        streams = (p for pivot in pivots for p in _pairs(d, spec["opus_corpora"], lang, pivot, skipped, cleaner))
        rows = reservoir_sample(streams, count, rng)
        code = TATOEBA_CODE.get(lang, lang)
        for pivot, suffix in PIVOT_CODE.items():
            pairs = [(a, b) for p, a, b in rows if p == pivot]
            if pairs:
                kept, dropped[code + suffix] = evals.filter_pairs(pairs)
                train[code + suffix] = write_language(out, code + suffix, kept)
    return {
        "kind": "paper_vmsst", "train": dict(sorted(train.items())),
        "train_languages": sorted({k.split("-")[0] for k in train}),
        "tatoeba_dir": str(tat), "tatoeba_languages": sorted(pins), "bucc_dir": str(out / "bucc"),
        "bucc_pairs": bucc_pairs, "bucc_splits": bucc_splits, "sts_dir": str(Path(data_root) / "sts"),
        "sts_kind": "senteval7", "sts17": sts17_sets(data_root), "sts17_excluded": STS17_EXCLUDED,
        "question_retrieval": questions, "opus_skipped": skipped,
        "leakage": {"dropped": dropped, "dropped_total": sum(dropped.values()), "eval_sentences": len(evals)},
    }

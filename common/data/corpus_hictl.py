"""Paper-scale corpus of HICTL (Wei et al. 2021, section 4.1, appendix A, Tables 7-8) and its XTREME evaluation data.

Training data: monolingual text from CC-100 (the CCNet corpus of XLM-R; Table 7's languages,
``sentences_per_language`` lines drawn uniformly from each file) and the English-to-X parallel data of Table 8 from
OPUS (XLM's sources: MultiUN for fr, es, ar, zh, ru; IIT Bombay for hi; OpenSubtitles 2018 for tr, vi, th;
EUbookshop for de, el, bg; Tanzil for ur, sw; GlobalVoices for sw), Table 8's pair counts drawn uniformly
(reservoir sampling, seeded). The leakage rule then drops every training sentence (monolingual) or pair
(parallel) with a sentence of any evaluation set.

Evaluation data (XTREME, Hu et al. 2020): XNLI test and English MultiNLI train, PAWS-X, UD v2.5 POS, WikiANN NER
(placed by hand, :func:`common.data.xtreme.panx_layout`), SQuAD v1.1 train with XQuAD, MLQA and TyDiQA-GoldP, BUCC
2018 and the 36 Tatoeba languages; with ``translate_train`` also XNLI-MT, PAWS-X's translated train sets and
XTREME's translated SQuAD (the translate-train-all rows).

Translation data (section 4.2, Tables 4-6, :mod:`common.data.translation_paper`): the manifest's ``translation``
entry, whose test sets join the evaluation sentences of the leakage rule.
"""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from common.data import download as dl
from common.data import loaders, translation, translation_paper, xtreme
from common.data.cleaning import PairCleaner
from common.data.corpora import register_corpus
from common.data.corpus_parts import BUCC_SPLITS, bucc2018, bucc_sentences, reservoir_sample, write_language, xnli_paper
from common.data.leakage import LeakageFilter
from common.data.squad import read_squad
from common.io import write_lines
from common.languages import TO_ISO1


def _evaluation(d: dl.Downloader, out: Path, spec: dict[str, Any]) -> dict[str, Any]:
    """Download and convert every XTREME task's data; the manifest entries."""
    x = spec["xtreme"]
    m: dict[str, Any] = {"nli_languages": xnli_paper(d, out), "nli_dir": str(out / "xnli"),
               "xnli_train": str(out / "xnli" / "train-en.tsv")}
    m["pair_classification"] = {"pawsx": xtreme.pawsx_layout(d.fetch(xtreme.pawsx()), out, x["pawsx_languages"])}
    m["token_classification"] = {"udpos": xtreme.udpos_layout(d.fetch(xtreme.udpos()), out, x["pos_languages"]),
                                 "panx": xtreme.panx_layout(out / "manual", out, x["ner_languages"])}
    squad = str(d.fetch(xtreme.squad_train()))
    tydi_train = str(d.fetch(xtreme.tydiqa("train")))
    m["qa"] = {
        "xquad": {"train": squad, "test": {lang: str(d.fetch(xtreme.xquad(lang))) for lang in x["xquad_languages"]},
                  "description": "XQuAD (Artetxe et al. 2020), SQuAD v1.1 train"},
        "mlqa": {"train": squad, "test": xtreme.mlqa_layout(d.fetch(xtreme.mlqa()), out, x["mlqa_languages"]),
                 "description": "MLQA (Lewis et al. 2020), SQuAD v1.1 train"},
        "tydiqa": {"train": tydi_train, "test": xtreme.tydiqa_by_language(d.fetch(xtreme.tydiqa("dev")), out),
                   "description": "TyDiQA-GoldP v1.1 (Clark et al. 2020), its English train set"},
    }
    if x.get("translate_train"):
        langs = [lang for lang in m["nli_languages"] if lang != "en"]
        m["xnli_translate_train"] = xtreme.xnli_mt_layout(d.fetch(xtreme.xnli_mt()), out, langs)
        squad_tt = {lang: str(d.fetch(xtreme.squad_translate_train(lang))) for lang in x["xquad_languages"]
                    if lang != "en"}
        for name in ("xquad", "mlqa"):
            m["qa"][name]["translate_train"] = squad_tt
    return m


def _evaluation_sentences(m: dict[str, Any], tatoeba_dir: Path, tatoeba_langs: list[str], out: Path,
                          bucc_pairs: list[str]) -> LeakageFilter:
    evals = LeakageFilter(s for lang in tatoeba_langs for pair in zip(*loaders.read_tatoeba(tatoeba_dir, lang))
                          for s in pair)
    evals.add(bucc_sentences(out / "bucc", bucc_pairs, BUCC_SPLITS))
    for lang in m["nli_languages"]:
        ex = loaders.read_xnli_tsv(Path(m["nli_dir"]) / f"test-{lang}.tsv")
        evals.add(ex.premise + ex.hypothesis)
    for path in m["pair_classification"]["pawsx"]["test"].values():
        ex = loaders.read_pawsx_tsv(path)
        evals.add(ex.premise + ex.hypothesis)
    for entry in m["qa"].values():
        for path in entry["test"].values():
            for e in read_squad(path):
                evals.add([e.question, e.context])
    return evals


@register_corpus("paper_hictl")
def prepare_paper_hictl(out: Path, data_root: Path, spec: dict[str, Any], d: dl.Downloader,
                        cleaner: PairCleaner) -> dict[str, Any]:
    """The evaluation and translation sets come first, so that each language's sample is filtered and written
    before the next is drawn: the job holds one language's sample at a time (at most 13.2M pairs of Table 8, or
    ``sentences_per_language`` lines), not all of them (79M pairs and 188M lines)."""
    m = _evaluation(d, out, spec)
    pins = dl.tatoeba_pins("tatoeba_v1.sha256.yaml", spec.get("tatoeba_languages"))  # XTREME's 36
    for lang, sha in pins.items():
        for res in dl.tatoeba(lang, sha["src"], sha["eng"]):
            d.fetch(res)
    tat = d.dest / "tatoeba"
    bucc_pairs, bucc_splits = bucc2018(d, out, spec["bucc_pairs"], spec.get("bucc_test_gold_dir"))
    evals = _evaluation_sentences(m, tat, sorted(pins), out, bucc_pairs)
    tr = translation_paper.paper_translation(d, out, spec["translation"]) if spec.get("translation") else {}
    evals.add(translation.test_sentences(tr))  # the NMT test sets are evaluation sets too
    to_iso3 = {v: k for k, v in TO_ISO1.items()}
    rng = random.Random(spec["seed"])
    skipped: list[str] = []
    train, dropped = {}, {}
    for lang, entry in spec["parallel"].items():
        pairs = dl.opus_pairs(d, entry["corpora"], lang, "en", skipped, cleaner)
        kept, dropped[to_iso3.get(lang, lang)] = evals.filter_pairs(reservoir_sample(pairs, entry["pairs"], rng))
        train[to_iso3.get(lang, lang)] = write_language(out, to_iso3.get(lang, lang), kept)
    mono_spec = spec["monolingual"]
    mono_paths, mono_dropped = {}, {}
    for lang in mono_spec["languages"]:
        sents = xtreme.sample_cc100(d.fetch(xtreme.cc100(lang)), mono_spec["sentences_per_language"], rng)
        kept_sents = [s for s in sents if not evals.leaks(s)]
        mono_dropped[lang] = len(sents) - len(kept_sents)
        mono_paths[lang] = str(out / "mono" / f"{lang}.txt")
        write_lines(mono_paths[lang], kept_sents)
    return {
        "kind": "paper_hictl", "train": dict(sorted(train.items())), "train_languages": sorted(train),
        "monolingual": mono_paths, "tatoeba_dir": str(tat), "tatoeba_languages": sorted(pins),
        "bucc_dir": str(out / "bucc"), "bucc_pairs": bucc_pairs, "bucc_splits": bucc_splits, **m,
        "opus_skipped": skipped, **({"translation": tr} if tr else {}),
        "leakage": {"dropped": dropped, "dropped_total": sum(dropped.values()) + sum(mono_dropped.values()),
                    "monolingual_dropped": mono_dropped, "eval_sentences": len(evals)},
    }

"""The mini corpus (kind ``mini``): real public data of ``data_root``. Training pairs from multi30k (en-de/fr/cs),
``cmn.txt`` (en-zh), the stsb-multi-mt *train* sentences (each row gives two en-xx pairs) and, for en-zh, the WMT
zh-en/en-zh test sets (reference A); evaluation reads Tatoeba v1, XNLI dev and STS files in place (never copied).
Since no BUCC data is available, :mod:`common.data.bucc_mini` hides real held-out translations among non-parallel
sentences in the BUCC file format with sample / training / test splits, so the evaluator runs unchanged on real
BUCC 2018 files.

Each language's training file lists its pairs source by source; the manifest's ``train_sources`` gives the runs
(``[source, pairs]`` in file order), so a run can leave a source out (:func:`common.data.stream.without_sources`)."""
from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from common.data import bucc_mini, corpora, loaders, staged_pairs, translation, xquad_qa, xquad_questions, xquad_r
from common.data.cleaning import PairCleaner
from common.data.corpus_parts import (
    BUCC_SPLITS,
    STS17_EXCLUDED,
    bucc_sentences,
    sts17_sets,
    write_train,
)
from common.data.leakage import LeakageFilter
from common.data.sts_benchmark import senteval7_paths
from common.io import write_lines
from common.languages import XNLI_15, XTREME_36

if TYPE_CHECKING:
    from common.data.download import Downloader

log = logging.getLogger(__name__)
Sourced = tuple[tuple[str, str], str]  # a training pair and its source (the data_root folder it came from)

ISO3 = {"de": "deu", "fr": "fra", "cs": "ces", "es": "spa", "it": "ita", "ja": "jpn", "nl": "nld",
        "pl": "pol", "pt": "por", "ru": "rus", "zh": "cmn", "ar": "ara", "bg": "bul", "el": "ell",
        "hi": "hin", "sw": "swh", "th": "tha", "tr": "tur", "ur": "urd", "vi": "vie"}

def _stsb_mt_pairs(root: Path, lang: str, split: str) -> list[tuple[str, str]]:
    xx = loaders.read_stsb_multi_mt(root / f"stsb-{lang}-{split}.csv")
    en = loaders.read_stsb_multi_mt(root / f"stsb-en-{split}.csv")
    if len(xx) != len(en):
        raise loaders.DataFormatError(root / f"stsb-{lang}-{split}.csv", None,
                                      f"{len(xx)} rows but stsb-en-{split}.csv has {len(en)}")
    return list(zip(xx.sent1, en.sent1)) + list(zip(xx.sent2, en.sent2))


def _xnli_pairs(root: Path, lang: str) -> list[tuple[str, str]]:
    xx, en = loaders.read_xnli_tsv(root / f"dev-{lang}.tsv"), loaders.read_xnli_tsv(root / "dev-en.tsv")
    if len(xx) != len(en):
        raise loaders.DataFormatError(root / f"dev-{lang}.tsv", None, f"{len(xx)} items but dev-en.tsv has {len(en)}")
    return list(zip(xx.premise, en.premise)) + list(zip(xx.hypothesis, en.hypothesis))


def evaluation_sentences(data_root: Path) -> dict[str, list[str]]:
    """Every sentence of every real evaluation set, by source (for the leakage rule)."""
    out: dict[str, list[str]] = {}
    tat = data_root / "tatoeba_v1"
    out["tatoeba_v1"] = [s for lang in loaders.tatoeba_languages(tat) for pair in zip(*loaders.read_tatoeba(tat, lang))
                         for s in pair]
    sts: list[str] = []
    for inp in corpora.matching(data_root / "sts" / "sts12-16", "STS1*-en-test/STS.input.*.txt"):
        sts += [c for line in loaders.read_lines(inp) for c in line.split("\t")[:2]]
    # STSb and SICK-R are evaluated on their test splits (their train splits are training data).
    s = loaders.read_stsb(data_root / "sts" / "stsbenchmark" / "sts-test.csv")
    sts += s.sent1 + s.sent2
    s = loaders.read_sick(data_root / "sts" / "sick" / "SICK_test_annotated.txt")
    sts += s.sent1 + s.sent2
    for f in corpora.matching(data_root / "sts" / "sts17" / "STS2017.eval.v1.1", "STS.input.*.txt"):
        sts += [c for line in loaders.read_lines(f) for c in line.split("\t")]
    for f in corpora.matching(data_root / "sts" / "stsb_multi_mt", "stsb-*-test.csv") + \
            corpora.matching(data_root / "sts" / "stsb_multi_mt", "stsb-*-dev.csv"):
        s = loaders.read_stsb_multi_mt(f)
        sts += s.sent1 + s.sent2
    out["sts"] = sts
    out["xnli_dev"] = [s for lang in XNLI_15
                       for ex in [loaders.read_xnli_tsv(data_root / "xnli_dev" / f"dev-{lang}.tsv")]
                       for s in ex.premise + ex.hypothesis]
    return out


def _wmt_pairs(root: Path, name: str) -> list[tuple[str, str]]:
    """(zh, en) pairs of one WMT test set, e.g. ``newstest2021.zh-en`` (source + reference A)."""
    testset, pair = name.split(".")
    src, trg = pair.split("-")
    rows = loaders.read_parallel(root / testset / f"{name}.src.{src}", root / testset / f"{name}.ref.A.{trg}")
    return [(a, b) if trg == "en" else (b, a) for a, b in rows]


def prepare_mini(out: Path, data_root: Path, spec: dict[str, Any], evaluation_only: bool = False,
                 own: dict[str, dict[str, list[tuple[str, str]]]] | None = None) -> dict[str, Any]:
    """The mini corpus; ``evaluation_only``: the evaluation data alone, for scoring a model that is not trained here
    (no training or NLI files written, ``train`` empty). The training sources are still read: the BUCC-style
    benchmark's distractors avoid every training sentence, so its files equal the full corpus's, and the manifest
    keeps the leakage counts of the corpus the trained methods saw. ``own``: more training sources (source ->
    language -> pairs), taken as the staged ones are (the ``files`` kind's pairs, :mod:`common.data.corpus_files`)."""
    data_root = Path(data_root)
    questions = xquad_questions.build(out / "questions", data_root)
    evals_by_source = evaluation_sentences(data_root)
    qa = {}
    if spec.get("qa"):  # extractive QA stand-in (HICTL): its context sentences are evaluation data too
        qa["xquad"] = xquad_qa.build(out / "qa", data_root, spec["qa"]["train_articles"])
        evals_by_source["xquad_contexts"] = xquad_qa.context_sentences(data_root)
    tr = translation.mini_translation(data_root, spec["translation"]) if spec.get("translation") else {}
    if tr:  # the NMT test sets (HICTL section 4.2) are evaluation data for pre-training too
        evals_by_source["translation_tests"] = translation.test_sentences(tr)
    evals_by_source["xquad_questions"] = xquad_questions.sentences(questions)
    # a set that is training data in this corpus (VMSST trains on XNLI dev translations; it reports no XNLI)
    for source in spec.get("not_evaluated", []):
        evals_by_source.pop(source)
    staged = staged_sources(data_root, spec) | (own or {})
    sourced = _sourced_training_pairs(data_root, spec, evals_by_source, staged)
    # BUCC-style benchmark from held-out real translations (common.data.bucc_mini); its distractors avoid every
    # training sentence and every other evaluation set (a distractor seen elsewhere is no distractor)
    elsewhere = LeakageFilter(s for sents in evals_by_source.values() for s in sents)
    elsewhere.add(s for tagged in sourced.values() for pair, _ in tagged for s in pair)
    bucc_pairs, bucc_stats = bucc_mini.build(out / "bucc", data_root, spec["bucc"], exclude=elsewhere)
    evals_by_source["bucc_mini"] = bucc_sentences(out / "bucc", bucc_pairs, BUCC_SPLITS)
    evals = LeakageFilter(s for sents in evals_by_source.values() for s in sents)
    train, dropped, before, spans = {}, {}, {}, {}
    for lang, tagged in sourced.items():
        source_of: dict[tuple[str, str], str] = {}  # exact duplicates once, at their first source
        for pair, source in tagged:
            source_of.setdefault(pair, source)
        before[lang] = len(source_of)
        train[lang], dropped[lang] = evals.filter_pairs(source_of)
        spans[lang] = source_spans([(pair, source_of[pair]) for pair in train[lang]])
    # MoCo-BERT's multi-task NLI data (appendix B): the English XNLI dev items, the only labelled NLI pairs in
    # data_root, under the same rule against every other evaluation set (a paper that trains on them reports no XNLI)
    nli_evals = LeakageFilter(s for name, sents in evals_by_source.items() if name != "xnli_dev" for s in sents)
    nli, nli_dropped = nli_evals.filter_tsv(loaders.read_lines(data_root / "xnli_dev" / "dev-en.tsv"))
    if not evaluation_only:
        write_lines(out / "nli" / "train-en.tsv", nli)
    langs = sorted(train)
    tat = data_root / "tatoeba_v1"
    tatoeba_langs = loaders.tatoeba_languages(tat)
    if spec.get("tatoeba", "all") == "trained":
        tatoeba_langs = [lang for lang in tatoeba_langs if lang in train]
    elif spec.get("tatoeba") == "xtreme_and_trained":  # Table 1's groups plus every trained language
        tatoeba_langs = [lang for lang in tatoeba_langs if lang in train or lang in XTREME_36]
    return {
        "kind": "mini", "train": {} if evaluation_only else write_train(out, train), "train_languages": langs,
        "train_sources": spans,
        "tatoeba_dir": str(tat), "tatoeba_languages": tatoeba_langs,
        "bucc_dir": str(out / "bucc"), "bucc_pairs": bucc_pairs, "bucc_benchmark": bucc_stats,
        "nli_dir": str(data_root / "xnli_dev"), "nli_languages": XNLI_15,
        "sts_dir": str(data_root / "sts"), "sts_kind": "senteval7",
        **({} if evaluation_only else {"nli_train": str(out / "nli" / "train-en.tsv")}),
        "sts17": sts17_sets(data_root), "sts17_excluded": STS17_EXCLUDED, "question_retrieval": questions,
        **({"qa": qa} if qa else {}),
        **({"translation": tr} if tr else {}),
        "leakage": {"dropped": dropped, "dropped_total": sum(dropped.values()), "pairs_before": before,
                    "eval_sentences": len(evals), "eval_sources": {k: len(v) for k, v in evals_by_source.items()},
                    "bucc_distractors_excluded": sum(s["distractors_excluded"] for s in bucc_stats.values()),
                    "nli_dropped": nli_dropped,
                    **({"by_source": source_counts(staged, evals)} if staged else {})},
    }


def _mini_training_pairs(data_root: Path, spec: dict[str, Any], evals_by_source: dict[str, list[str]],
                         staged: dict[str, dict[str, list[tuple[str, str]]]]) -> dict[str, list[tuple[str, str]]]:
    """The mini corpus's training pairs per language before the leakage rule (``staged``: the staged sources'
    pairs, :func:`staged_sources`)."""
    return {lang: [pair for pair, _ in tagged] for lang, tagged in
            _sourced_training_pairs(data_root, spec, evals_by_source, staged).items()}


def _sourced_training_pairs(data_root: Path, spec: dict[str, Any], evals_by_source: dict[str, list[str]],
                            staged: dict[str, dict[str, list[tuple[str, str]]]]) -> dict[str, list[Sourced]]:
    """:func:`_mini_training_pairs` with each pair's source (the name of its data_root folder), in source order."""
    raw: dict[str, list[Sourced]] = {}

    def add(lang: str, source: str, pairs: Iterable[tuple[str, str]]) -> None:
        raw.setdefault(lang, []).extend((pair, source) for pair in pairs)

    for xx in spec["multi30k"]:
        add(ISO3[xx], "multi30k",
            ((a, b) for b, a in loaders.read_multi30k(data_root / "multi30k" / "raw", "train", "en", xx)))
    if spec["cmn"]:
        add("cmn", "en_zh_tatoeba_cmn",
            ((zh, en) for en, zh in loaders.read_tsv(data_root / "en_zh_tatoeba_cmn" / "cmn.txt", 2)))
    for xx in spec["stsb_multi_mt"]:
        add(ISO3[xx], "stsb_multi_mt", _stsb_mt_pairs(data_root / "sts" / "stsb_multi_mt", xx, "train"))
    for name in spec.get("wmt", []):
        add("cmn", "wmt", _wmt_pairs(data_root / "wmt", name))
    for source, by_lang in staged.items():
        for lang, pairs in by_lang.items():
            add(lang, source, pairs)
    for xx in spec.get("xnli_dev", []):
        if "xnli_dev" in evals_by_source:
            raise ValueError("corpus.mini.xnli_dev trains on XNLI dev: list 'xnli_dev' under not_evaluated too")
        add(ISO3[xx], "xnli_dev", _xnli_pairs(data_root / "xnli_dev", xx))
    return raw


def source_spans(tagged: list[Sourced]) -> list[list[Any]]:
    """[source, number of pairs] for each run of one source, in order (a language file's lines by source)."""
    spans: list[list[Any]] = []
    for _, source in tagged:
        if spans and spans[-1][0] == source:
            spans[-1][1] += 1
        else:
            spans.append([source, 1])
    return spans


def _staged(folder: Path, sel: staged_pairs.Selection) -> dict[str, list[tuple[str, str]]]:
    pairs = {}
    for lang in sel.languages:
        pairs[lang], short = staged_pairs.select(staged_pairs.read_source(folder, lang), sel, lang)
        if short:
            log.info("%s %s: %d pairs dropped, foreign side under %.2f of the English", folder.name, lang, short,
                     sel.min_length_ratio)
    return pairs


def staged_sources(data_root: Path, spec: dict[str, Any]) -> dict[str, dict[str, list[tuple[str, str]]]]:
    """Source -> language -> the pairs the config takes of the staged sources (``corpus.mini.parallel``)."""
    return {source: _staged(data_root / source, staged_pairs.Selection.from_config(sel))
            for source, sel in spec.get("parallel", {}).items()}


def source_counts(staged: dict[str, dict[str, list[tuple[str, str]]]],
                  evals: LeakageFilter) -> dict[str, dict[str, dict[str, int]]]:
    """Per staged source and language: the pairs taken (after the share and the length filter) and how many of
    them the leakage rule drops (counted before the corpus merges the sources and removes duplicates)."""
    return {source: {lang: {"taken": len(pairs), "leaked": evals.filter_pairs(pairs)[1]}
                     for lang, pairs in by_lang.items()} for source, by_lang in staged.items()}


def reads(data_root: Path, spec: dict[str, Any]) -> list[Path]:
    """Every folder and file of ``data_root`` that :func:`prepare_mini` reads with the config section ``spec``
    (a glob pattern where it reads whatever a folder holds): what the workflow checks before it plans a job."""
    root = Path(data_root)
    sts, m30, stsb, xnli = root / "sts", root / "multi30k" / "raw", root / "sts" / "stsb_multi_mt", root / "xnli_dev"
    paths = [root / "tatoeba_v1" / "tatoeba.*-eng.eng", *senteval7_paths(sts),
             sts / "sts17" / "STS2017.eval.v1.1" / "STS.input.*.txt",
             *(Path(s[k]) for s in sts17_sets(root) for k in ("input", "gold")),
             stsb / "stsb-*-test.csv", stsb / "stsb-*-dev.csv", *(xnli / f"dev-{lang}.tsv" for lang in XNLI_15),
             *(xquad_r.path(root, lang) for lang in ("en", *xquad_questions.LANGUAGES))]
    paths += [m30 / f"train.{lang}.gz" for xx in spec.get("multi30k", []) for lang in (xx, "en")]
    paths += [root / "en_zh_tatoeba_cmn" / "cmn.txt"] if spec.get("cmn") else []
    paths += [stsb / f"stsb-{lang}-train.csv" for xx in spec.get("stsb_multi_mt", []) for lang in (xx, "en")]
    for name in spec.get("wmt", []):
        testset, pair = name.split(".")
        src, trg = pair.split("-")
        paths += [root / "wmt" / testset / f"{name}.src.{src}", root / "wmt" / testset / f"{name}.ref.A.{trg}"]
    for source, sel in spec.get("parallel", {}).items():
        paths += [root / source / "MANIFEST.md", *(root / source / f"{lang}-eng.tsv.gz" for lang in sel["languages"])]
    tr = spec.get("translation", {})
    paths += [m30 / f"{split}.{lang}.gz" for xx in tr.get("multi30k", []) for split in ("train", "val")
              for lang in (xx, "en")]
    paths += [root / "iwslt14_deen_test" / "test.de", root / "iwslt14_deen_test" / "test.en"] \
        if tr.get("iwslt14") else []
    paths += [root / "wmt" / t / f"{t}.{pair}.{kind}" for t in tr.get("wmt", []) for pair in ("de-en", "en-de")
              for kind in (f"src.{pair[:2]}", f"ref.A.{pair[3:]}")]
    return list(dict.fromkeys(paths + bucc_mini.reads(root, spec.get("bucc", {}))))


@corpora.reads_in_place("mini")
def _reads(data_root: Path, spec: dict[str, Any]) -> list[Path]:
    return reads(data_root, spec)


@corpora.register_corpus("mini")
def _mini(out: Path, data_root: Path, spec: dict[str, Any], d: Downloader, cleaner: PairCleaner) -> dict[str, Any]:
    return prepare_mini(out, data_root, {k: v for k, v in spec.items() if k != corpora.EVALUATION_ONLY},
                        evaluation_only=bool(spec.get(corpora.EVALUATION_ONLY)))


corpora.EVALUATION_ONLY_KINDS.add("mini")

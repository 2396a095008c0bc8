"""Corpus preparation: training pairs after the leakage rule, plus where every evaluation set is.

``prepare(kind, out, data_root, spec)`` writes under ``out``:

* ``train/{lang}-en.tsv`` — ``non_english<TAB>english`` pairs, leakage-filtered;
* ``bucc/`` — BUCC-format mining sets (synthetic, or built from real held-out data);
* ``manifest.json`` — languages, the evaluation folders to read, and the leakage counts.

Smoke (``synthetic``): everything comes from :mod:`common.data.synthetic`.
Mini (``mini``): training pairs from multi30k (en-de/fr/cs), ``cmn.txt`` (en-zh), the
stsb-multi-mt *train* sentences (each row gives two en-xx pairs) and, for en-zh, the WMT
zh-en/en-zh test sets (reference A), all from ``data_root``;
evaluation reads Tatoeba v1, XNLI dev and STS files in place (never copied). Since no BUCC
data is available, :mod:`common.data.bucc_mini` hides real held-out translations among
non-parallel sentences in the BUCC file format with sample / training / test splits, so the
evaluator runs unchanged on real BUCC 2018 files.
"""
from __future__ import annotations

import argparse
import logging
import random
import shutil
from pathlib import Path

from common.data import bucc_mini, loaders, translation, xquad_qa, xquad_questions
from common.data.cleaning import PairCleaner
from common.data.leakage import LeakageFilter
from common.data.synthetic import SyntheticSpec, write_synthetic_corpus
from common.eval.tatoeba import XTREME_36
from common.io import read_json, write_json, write_lines

log = logging.getLogger(__name__)

ISO3 = {"de": "deu", "fr": "fra", "cs": "ces", "es": "spa", "it": "ita", "ja": "jpn", "nl": "nld",
        "pl": "pol", "pt": "por", "ru": "rus", "zh": "cmn", "ar": "ara", "bg": "bul", "el": "ell",
        "hi": "hin", "sw": "swh", "th": "tha", "tr": "tur", "ur": "urd", "vi": "vie"}
XNLI_LANGS = "ar bg de el en es fr hi ru sw th tr ur vi zh".split()
BUCC_SPLITS = ("sample", "training", "test")


def _bucc_sentences(root: Path, pairs: list[str], splits) -> list[str]:
    """Every sentence of the given BUCC splits (for the leakage rule)."""
    out: list[str] = []
    for pair in pairs:
        for split in splits:
            b = loaders.read_bucc(root, pair, split)
            out += list(b.src.values()) + list(b.trg.values())
    return out


def _write_train(out: Path, pairs_by_lang: dict[str, list[tuple[str, str]]]) -> dict[str, str]:
    paths = {}
    for lang, pairs in sorted(pairs_by_lang.items()):
        path = out / "train" / (f"{lang}.tsv" if "-" in lang else f"{lang}-en.tsv")  # "<xx>-<pivot>" or English
        # collapse internal white space: a few real sentences contain tabs (multi30k de)
        write_lines(path, (f"{' '.join(a.split())}\t{' '.join(b.split())}" for a, b in pairs))
        paths[lang] = str(path)
    return paths


# --------------------------------------------------------------------------- smoke
def prepare_synthetic(out: Path, spec: dict) -> dict:
    syn = write_synthetic_corpus(out, SyntheticSpec(**spec))
    langs = syn["languages"]
    evals = LeakageFilter(_bucc_sentences(out / "bucc", [f"{l}-en" for l in langs], BUCC_SPLITS))
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
        "kind": "synthetic", "train": _write_train(out, train), "train_languages": langs,
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


STS17_TRACKS = {"ar-ar": "track1.ar-ar", "ar-en": "track2.ar-en", "es-es": "track3.es-es", "es-en": "track4a.es-en"}
STS17_EXCLUDED = {
    "tr-en": "track6's input has 500 lines for 250 gold scores and nothing documents which 250 are scored",
    "es-en (track4b)": "the WMT news track; VMSST's es-en is the SNLI track 4a, as in Reimers & Gurevych (2020)",
}


def sts17_sets(data_root: Path) -> list[dict]:
    """SemEval-2017 STS sets of VMSST's Table 10 that can be scored (see ``STS17_EXCLUDED``)."""
    root = Path(data_root) / "sts" / "sts17"
    return [{"name": name, "langs": name.split("-"), "input": str(root / "STS2017.eval.v1.1" / f"STS.input.{t}.txt"),
             "gold": str(root / "STS2017.gs" / f"STS.gs.{t}.txt")} for name, t in STS17_TRACKS.items()]


# --------------------------------------------------------------------------- mini
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
    for inp in sorted((data_root / "sts" / "sts12-16").glob("STS1*-en-test/STS.input.*.txt")):
        sts += [c for line in loaders.read_lines(inp) for c in line.split("\t")[:2]]
    # STSb and SICK-R are evaluated on their test splits (their train splits are training data).
    s = loaders.read_stsb(data_root / "sts" / "stsbenchmark" / "sts-test.csv")
    sts += s.sent1 + s.sent2
    s = loaders.read_sick(data_root / "sts" / "sick" / "SICK_test_annotated.txt")
    sts += s.sent1 + s.sent2
    for f in sorted((data_root / "sts" / "sts17" / "STS2017.eval.v1.1").glob("STS.input.*.txt")):
        sts += [c for line in loaders.read_lines(f) for c in line.split("\t")]
    for f in sorted((data_root / "sts" / "stsb_multi_mt").glob("stsb-*-test.csv")) + \
            sorted((data_root / "sts" / "stsb_multi_mt").glob("stsb-*-dev.csv")):
        s = loaders.read_stsb_multi_mt(f)
        sts += s.sent1 + s.sent2
    out["sts"] = sts
    out["xnli_dev"] = [s for lang in XNLI_LANGS
                       for ex in [loaders.read_xnli_tsv(data_root / "xnli_dev" / f"dev-{lang}.tsv")]
                       for s in ex.premise + ex.hypothesis]
    return out


def _wmt_pairs(root: Path, name: str) -> list[tuple[str, str]]:
    """(zh, en) pairs of one WMT test set, e.g. ``newstest2021.zh-en`` (source + reference A)."""
    testset, pair = name.split(".")
    src, trg = pair.split("-")
    rows = loaders.read_parallel(root / testset / f"{name}.src.{src}", root / testset / f"{name}.ref.A.{trg}")
    return [(a, b) if trg == "en" else (b, a) for a, b in rows]


def prepare_mini(out: Path, data_root: Path, spec: dict) -> dict:
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
    raw = _mini_training_pairs(data_root, spec, evals_by_source)
    # BUCC-style benchmark from held-out real translations (common.data.bucc_mini); its distractors avoid every
    # training sentence and every other evaluation set (a distractor seen elsewhere is no distractor)
    elsewhere = LeakageFilter(s for sents in evals_by_source.values() for s in sents)
    elsewhere.add(s for pairs in raw.values() for pair in pairs for s in pair)
    bucc_pairs, bucc_stats = bucc_mini.build(out / "bucc", data_root, spec["bucc"], exclude=elsewhere)
    evals_by_source["bucc_mini"] = _bucc_sentences(out / "bucc", bucc_pairs, BUCC_SPLITS)
    evals = LeakageFilter(s for sents in evals_by_source.values() for s in sents)
    train, dropped, before = {}, {}, {}
    for lang, pairs in raw.items():
        pairs = list(dict.fromkeys(pairs))  # exact duplicates once
        before[lang] = len(pairs)
        train[lang], dropped[lang] = evals.filter_pairs(pairs)
    # MoCo-BERT's multi-task NLI data (appendix B): the English XNLI dev items, the only labelled NLI pairs in
    # data_root, under the same rule against every other evaluation set (a paper that trains on them reports no XNLI)
    nli_evals = LeakageFilter(s for name, sents in evals_by_source.items() if name != "xnli_dev" for s in sents)
    nli, nli_dropped = nli_evals.filter_tsv(loaders.read_lines(data_root / "xnli_dev" / "dev-en.tsv"))
    write_lines(out / "nli" / "train-en.tsv", nli)
    langs = sorted(train)
    tat = data_root / "tatoeba_v1"
    tatoeba_langs = loaders.tatoeba_languages(tat)
    if spec.get("tatoeba", "all") == "trained":
        tatoeba_langs = [lang for lang in tatoeba_langs if lang in train]
    elif spec.get("tatoeba") == "xtreme_and_trained":  # Table 1's groups plus every trained language
        tatoeba_langs = [lang for lang in tatoeba_langs if lang in train or lang in XTREME_36]
    return {
        "kind": "mini", "train": _write_train(out, train), "train_languages": langs,
        "tatoeba_dir": str(tat), "tatoeba_languages": tatoeba_langs,
        "bucc_dir": str(out / "bucc"), "bucc_pairs": bucc_pairs, "bucc_benchmark": bucc_stats,
        "nli_dir": str(data_root / "xnli_dev"), "nli_languages": XNLI_LANGS,
        "sts_dir": str(data_root / "sts"), "sts_kind": "senteval7",
        "nli_train": str(out / "nli" / "train-en.tsv"),
        "sts17": sts17_sets(data_root), "sts17_excluded": STS17_EXCLUDED, "question_retrieval": questions,
        **({"qa": qa} if qa else {}),
        **({"translation": tr} if tr else {}),
        "leakage": {"dropped": dropped, "dropped_total": sum(dropped.values()), "pairs_before": before,
                    "eval_sentences": len(evals), "eval_sources": {k: len(v) for k, v in evals_by_source.items()},
                    "bucc_distractors_excluded": sum(s["distractors_excluded"] for s in bucc_stats.values()),
                    "nli_dropped": nli_dropped},
    }


def _mini_training_pairs(data_root: Path, spec: dict, evals_by_source: dict) -> dict[str, list[tuple[str, str]]]:
    """The mini corpus's training pairs per language before the leakage rule."""
    raw: dict[str, list[tuple[str, str]]] = {}
    for xx in spec["multi30k"]:
        raw.setdefault(ISO3[xx], []).extend(
            (a, b) for b, a in loaders.read_multi30k(data_root / "multi30k" / "raw", "train", "en", xx))
    if spec["cmn"]:
        rows = loaders.read_tsv(data_root / "en_zh_tatoeba_cmn" / "cmn.txt", 2)
        raw.setdefault("cmn", []).extend((zh, en) for en, zh in rows)
    for xx in spec["stsb_multi_mt"]:
        raw.setdefault(ISO3[xx], []).extend(_stsb_mt_pairs(data_root / "sts" / "stsb_multi_mt", xx, "train"))
    for name in spec.get("wmt", []):
        raw.setdefault("cmn", []).extend(_wmt_pairs(data_root / "wmt", name))
    for xx in spec.get("xnli_dev", []):
        if "xnli_dev" in evals_by_source:
            raise ValueError("corpus.mini.xnli_dev trains on XNLI dev: list 'xnli_dev' under not_evaluated too")
        raw.setdefault(ISO3[xx], []).extend(_xnli_pairs(data_root / "xnli_dev", xx))
    return raw


# --------------------------------------------------------------------------- paper
PUBLIC_BUCC_SPLITS = {"tune": "sample", "test": "training"}  # XTREME: the 2018 test gold is not public
TEST_GOLD_BUCC_SPLITS = {"tune": "training", "test": "test"}  # LASER / DAP appendix B, with the test gold


def bucc2018(d, out: Path, langs: list[str], test_gold_dir: str | None) -> tuple[list[str], dict[str, str]]:
    """Download BUCC 2018 (sample, training, test) for ``{xx}-en`` into ``out/bucc``; return the pairs and the
    (tune, report) splits. Without the test gold, the public protocol: threshold on ``sample``, report on
    ``training`` (XTREME). With ``test_gold_dir`` holding ``{xx}-en.test.gold`` (obtained from the organisers),
    DAP's appendix B protocol: threshold on ``training``, report on ``test``."""
    from common.data import download as dl

    for xx in langs:
        for split in ("sample-gold", "training-gold", "test"):
            dl.bucc_layout(dl.extract(d.fetch(dl.bucc2018(f"{xx}-en", split)), out / "tmp_bucc"), out / "bucc")
    pairs = [f"{xx}-en" for xx in langs]
    if not test_gold_dir:
        return pairs, dict(PUBLIC_BUCC_SPLITS)
    for pair in pairs:
        gold = Path(test_gold_dir) / f"{pair}.test.gold"
        if not gold.exists():
            raise FileNotFoundError(f"bucc_test_gold_dir: {gold} is missing (one '{pair}.test.gold' per language pair)")
        shutil.copyfile(gold, out / "bucc" / gold.name)
    return pairs, dict(TEST_GOLD_BUCC_SPLITS)


def reservoir_sample(items, cap: int, rng: random.Random) -> list:
    """A uniform random sample of at most ``cap`` items of a stream, in one pass (Algorithm R)."""
    out: list = []
    for seen, item in enumerate(items, start=1):
        if len(out) < cap:
            out.append(item)
        elif (j := rng.randrange(seen)) < cap:
            out[j] = item
    return out


def xnli_paper(d, out: Path) -> list[str]:
    """XNLI 1.0 test (``xnli/test-{lang}.tsv``) and English MultiNLI train (``xnli/train-en.tsv``); the languages."""
    from common.data import download as dl

    xnli_dir = dl.extract(d.fetch(dl.xnli()), out / "tmp_xnli")
    nli_langs = dl.split_xnli_test((xnli_dir / "XNLI-1.0" / "xnli.test.tsv").read_text(encoding="utf-8"), out / "xnli")
    mnli_dir = dl.extract(d.fetch(dl.multinli()), out / "tmp_mnli")
    dl.multinli_train_to_tsv((mnli_dir / "multinli_1.0" / "multinli_1.0_train.txt").read_text(encoding="utf-8"),
                             out / "xnli" / "train-en.tsv")
    return nli_langs


def prepare_paper(out: Path, spec: dict, d, cleaner: PairCleaner) -> dict:
    """DAP section 4.1: OPUS bitext with English for the 36 XTREME languages (the corpora the
    paper names), at most ``max_pairs_per_language`` pairs per language drawn uniformly at random
    (reservoir sampling, seeded); Tatoeba v1 (pinned digests), BUCC 2018, XNLI test, MultiNLI train.
    A corpus that OPUS does not offer for a language (HTTP 404) is skipped and listed."""


    from common.data import download as dl
    from common.eval.tatoeba import TO_ISO1

    to_iso3 = {v: k for k, v in TO_ISO1.items()}
    rng = random.Random(spec.get("seed", 1))
    cap = spec["max_pairs_per_language"]
    raw, skipped = {}, []
    for xx in spec["opus_languages"]:
        raw[to_iso3.get(xx, xx)] = reservoir_sample(dl.opus_pairs(d, spec["opus_corpora"], xx, "en", skipped, cleaner),
                                                   cap, rng)
    pins = dl.tatoeba_pins("tatoeba_v1.sha256.yaml", spec.get("tatoeba_languages"))
    for lang, sha in pins.items():
        for res in dl.tatoeba(lang, sha["src"], sha["eng"]):
            d.fetch(res)
    bucc_pairs, bucc_splits = bucc2018(d, out, spec["bucc_pairs"], spec.get("bucc_test_gold_dir"))
    nli_langs = xnli_paper(d, out)
    tat = d.dest / "tatoeba"
    evals = LeakageFilter(s for lang in pins for pair in zip(*loaders.read_tatoeba(tat, lang)) for s in pair)
    evals.add(_bucc_sentences(out / "bucc", bucc_pairs, BUCC_SPLITS))  # every split, the reported one included
    for lang in nli_langs:
        ex = loaders.read_xnli_tsv(out / "xnli" / f"test-{lang}.tsv")
        evals.add(ex.premise + ex.hypothesis)
    train, dropped = {}, {}
    for lang, pairs in raw.items():
        train[lang], dropped[lang] = evals.filter_pairs(pairs)
    return {
        "kind": "paper", "train": _write_train(out, train), "train_languages": sorted(train),
        "tatoeba_dir": str(tat), "tatoeba_languages": sorted(pins),
        "bucc_dir": str(out / "bucc"), "bucc_pairs": bucc_pairs, "bucc_splits": bucc_splits,
        "nli_dir": str(out / "xnli"), "nli_languages": nli_langs, "xnli_train": str(out / "xnli" / "train-en.tsv"),
        "opus_skipped": skipped,
        "leakage": {"dropped": dropped, "dropped_total": sum(dropped.values()), "eval_sentences": len(evals)},
    }


def prepare(kind: str, out: str | Path, data_root: str | Path, spec: dict, base_url: str | None = None,
            pins: dict[str, str] | None = None) -> dict:
    """Write the corpus of ``kind``; paper corpora download from ``base_url`` (a mirror) when given, with ``pins``
    replacing the pins of the resources they name (the rehearsal mirror's own digests). The downloaded training
    bitext of the paper kinds passes a :class:`common.data.cleaning.PairCleaner` (``spec.max_chars``); its counts
    are the manifest's ``cleaning``."""
    from common.data import download as dl

    out = Path(out)
    d = dl.Downloader(out / "downloads", base_url=base_url, pins=pins)
    cleaner = PairCleaner(spec.get("max_chars", 1000))  # the downloaded training bitext (paper kinds)
    if kind == "synthetic":
        manifest = prepare_synthetic(out, spec)
    elif kind == "mini":
        manifest = prepare_mini(out, Path(data_root), spec)
    elif kind == "paper":
        manifest = prepare_paper(out, spec, d, cleaner)
    elif kind == "paper_enzh":
        from common.data.corpus_enzh import prepare_paper_enzh

        manifest = prepare_paper_enzh(out, Path(data_root), spec, d, cleaner)
    elif kind == "paper_vmsst":
        from common.data.corpus_vmsst import prepare_paper_vmsst

        manifest = prepare_paper_vmsst(out, Path(data_root), spec, d, cleaner)
    elif kind == "paper_hictl":
        from common.data.corpus_hictl import prepare_paper_hictl

        manifest = prepare_paper_hictl(out, Path(data_root), spec, d, cleaner)
    else:
        raise ValueError(f"unknown corpus kind {kind!r}")
    if kind.startswith("paper"):
        manifest["cleaning"] = cleaner.report()  # what was dropped from each downloaded source, and why
    write_json(out / "leakage.json", manifest["leakage"])
    write_json(out / "manifest.json", manifest)
    log.info("corpus %s: %s training pairs, %d dropped by the leakage rule", kind,
             {k: sum(1 for _ in open(v, encoding="utf-8")) for k, v in manifest["train"].items()},
             manifest["leakage"]["dropped_total"])
    return manifest


def load_manifest(path: str | Path) -> dict:
    return read_json(path)


def main(argv: list[str] | None = None) -> None:
    from common.config import load_config

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--experiment", required=True, help="a paper, or 'leaderboard' (whose corpus config to use)")
    p.add_argument("--scale", required=True)
    p.add_argument("--data-root", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--base-url", default=None, help="mirror replacing the scheme and host of download URLs")
    p.add_argument("--mirror", default=None, help="serve this rehearsal mirror folder and download from it")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    from common.rehearsal.mirror import place_manual, serving

    cfg = load_config(a.experiment, a.scale)["corpus"]
    place_manual(a.mirror, a.experiment, Path(a.out))  # what a user places by hand at paper scale
    with serving(a.mirror, a.base_url) as (base_url, pins):
        prepare(cfg["kind"], a.out, a.data_root, cfg.get(cfg["kind"], {}), base_url, pins)


if __name__ == "__main__":
    main()
